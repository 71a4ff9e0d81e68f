"""Vectorize Image on real art nobody on the project drew (Kenney's CC0 sprites, bilinear resizes) and on
generated hard shapes, at default settings: it never fails, and every mesh has every property of
tests/mesh_properties.py (no degenerate triangle, no near-duplicate vertices, smallest angle at least 20° away
from sharp outline corners, a manifold mesh, every opaque pixel of every kept piece covered).

All sprites at 1x, a rotating subset at 2x, 2.5x, 3x and 8x; bench/vectorize_corpus.py runs every sprite at
every scale and the hard shapes at larger sizes.
"""

import numpy as np
import pytest
from corpus import HARD_SHAPES, kenney_files, load_alpha, resize_bilinear
from mesh_properties import failures, mesh_problems

# (scale, every n-th sprite): all at 1x; at the other scales a subset, offset per scale so that
# together they cover different sprites.
SUBSETS = {1: 1, 2: 12, 2.5: 6, 3: 12, 8: 96}


def check(vide, alpha):
    """The properties a mesh of `alpha` violates (or the error Vectorize stopped with)."""
    core, bridge = vide.vide_addon.core, vide.vide_addon.bridge
    try:
        result = core.vectorize.vectorize(alpha, core.vectorize.Settings(), bridge.cdt.triangulate)
    except core.errors.VideError as error:
        return [f"failed: {error}"]
    problems = mesh_problems(alpha, result.points, result.triangles)
    return [f"{p} {problems[p]}" for p in failures(problems)]


@pytest.fixture(scope="module")
def sprites(vide):
    return [(path.stem, load_alpha(path)) for path in kenney_files()]


def test_the_corpus_holds_at_least_100_real_sprites_with_alpha(sprites):
    assert len(sprites) >= 100
    shares = [float((alpha >= 0.5).mean()) for _name, alpha in sprites]
    assert min(shares) > 0.0 and max(shares) < 1.0, "each has transparent and opaque pixels"


@pytest.mark.parametrize("scale", SUBSETS)
def test_every_sprite_vectorizes_with_every_mesh_property(vide, sprites, scale):
    step = SUBSETS[scale]
    chosen = sprites[list(SUBSETS).index(scale) % step::step]
    bad = {name: found for name, alpha in chosen if (found := check(vide, resize_bilinear(alpha, scale)))}
    assert not bad, f"{len(bad)} of {len(chosen)} sprites at {scale}x: {bad}"


@pytest.mark.parametrize("name", HARD_SHAPES)
@pytest.mark.parametrize("size", [96, 200])
def test_hard_shapes_vectorize_with_every_mesh_property(vide, name, size):
    """Combs and spirals with 1 px gaps, checkerboards and diagonal pixels touching at corners, one-pixel
    lines, shapes along the image border, noise blobs with islands and holes, no transparency at all."""
    assert check(vide, HARD_SHAPES[name](size)) == []


def test_the_checker_sees_a_cut_a_sliver_and_a_duplicate(vide):
    """The properties can fail: a mesh missing a corner triangle, with a flat triangle and a doubled vertex."""
    alpha = np.zeros((20, 20), np.float32)
    alpha[5:15, 5:15] = 1
    pts = np.array([[4.5, 4.5], [15.5, 4.5], [15.5, 15.5], [4.5, 15.5], [10, 4.5], [10.001, 4.5]])
    whole = np.array([[0, 1, 2], [0, 2, 3]])
    assert failures(mesh_problems(alpha, pts[:4], whole)) == []
    assert failures(mesh_problems(alpha, pts[:4], whole[:1])) == ["coverage"]
    sliver = np.array([[0, 4, 2], [4, 5, 2], [5, 1, 2], [0, 2, 3]])
    assert set(failures(mesh_problems(alpha, pts, sliver))) == {"near_duplicates", "angle"}
    flat = np.vstack([whole, [[0, 4, 1]]])
    assert "degenerate" in failures(mesh_problems(alpha, pts, flat))
