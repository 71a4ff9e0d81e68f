"""The pure core, without Blender: marching squares, the outline that never cuts the art, block maximum,
and the UV placement fit."""

import ast
from pathlib import Path

import numpy as np
import pytest
from vide_addon.core.contour import marching_squares, points_in_edges, points_in_rings, select_rings, signed_area
from vide_addon.core.errors import VideError
from vide_addon.core.placement import faces_flipped, fit_uv_to_local, uv_to_local
from vide_addon.core.simplify import _segments_meet, simplify_rings
from vide_addon.core.vectorize import block_max

CORE = Path(__file__).resolve().parents[2] / "vide_addon" / "core"


def test_core_imports_nothing_from_blender():
    for path in CORE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not [n for n in names if n.split(".")[0] in {"bpy", "bmesh", "mathutils", "bpy_extras"}], path


def random_blobs(seed, size=96):
    """A thresholded smooth noise field: islands, holes and narrow gaps of every kind."""
    rng = np.random.default_rng(seed)
    noise = rng.random((size // 8 + 2, size // 8 + 2))
    yy, xx = np.mgrid[0:size, 0:size] / 8.0
    i, j = yy.astype(int), xx.astype(int)
    fy, fx = yy - i, xx - j
    field = (noise[i, j] * (1 - fx) * (1 - fy) + noise[i, j + 1] * fx * (1 - fy)
             + noise[i + 1, j] * (1 - fx) * fy + noise[i + 1, j + 1] * fx * fy)
    return field.astype(np.float32)


def pixel_centres(mask):
    yy, xx = np.nonzero(mask)
    return np.stack([xx + 0.5, yy + 0.5], axis=1)


@pytest.mark.parametrize("seed", range(6))
def test_contour_separates_inside_from_outside_pixel_centres(seed):
    field = random_blobs(seed)
    rings = marching_squares(field, 0.5)
    assert points_in_rings(pixel_centres(field >= 0.5), rings).all()
    assert not points_in_rings(pixel_centres(field < 0.5), rings).any()


@pytest.mark.parametrize("band", [1, 7, 512])
def test_inside_test_in_height_bands_matches_one_band_for_all(band):
    """Bands split rows of equal height and put vertices exactly on band edges: the answer must not change."""
    rings = marching_squares(random_blobs(3), 0.5)
    a, b = np.vstack(rings), np.vstack([np.roll(r, -1, axis=0) for r in rings])
    yy, xx = np.mgrid[0:96:0.5, 0:96:0.5]
    pts = np.vstack([np.stack([xx.ravel(), yy.ravel()], axis=1), a])
    whole = points_in_edges(pts, a, b, band=len(pts))
    assert 0 < whole.sum() < len(pts)
    assert np.array_equal(points_in_edges(pts, a, b, band=band), whole)


def test_inside_test_counts_crossings_as_every_edge_tried_in_turn_does():
    """The banded test pairs each edge only with points at a height it spans: the crossing count must be that of
    every edge tried against every point (random points, lattice rows through vertex heights, the vertices)."""
    rings = marching_squares(random_blobs(5), 0.5)
    a, b = np.vstack(rings), np.vstack([np.roll(r, -1, axis=0) for r in rings])
    rng = np.random.default_rng(2)
    yy, xx = np.mgrid[0:96:1.0, 0:96:0.75]
    pts = np.vstack([rng.uniform(0, 96, (3000, 2)), np.stack([xx.ravel(), yy.ravel()], axis=1), a])
    px, py = pts[:, None, 0], pts[:, None, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        x_cross = (a[None, :, 0]
                   + (py - a[None, :, 1]) * (b[None, :, 0] - a[None, :, 0]) / (b[None, :, 1] - a[None, :, 1]))
    crossings = ((a[None, :, 1] > py) != (b[None, :, 1] > py)) & (px < x_cross)
    expected = crossings.sum(axis=1) % 2 == 1
    assert 0.2 < expected.mean() < 0.8
    assert np.array_equal(points_in_edges(pts, a, b), expected)


def test_rings_keep_inside_on_the_left():
    a = np.zeros((40, 40), np.float32)
    a[5:35, 5:35] = 1
    a[15:25, 15:25] = 0
    areas = sorted(signed_area(r) for r in marching_squares(a, 0.5))
    assert areas[0] < 0 < areas[1], "a hole runs clockwise, the outline counter-clockwise"
    assert areas[1] + areas[0] == pytest.approx(900 - 100, abs=2)


def test_subpixel_crossing_is_interpolated():
    a = np.zeros((3, 4), np.float32)
    a[:, :2] = 1.0
    a[:, 2] = 0.25  # the 0.5 crossing lies a third of the way from column 1 to column 2
    xs = np.concatenate(marching_squares(a, 0.5))[:, 0]
    assert np.isclose(xs.max(), 1.5 + 2 / 3, atol=1e-9)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("tolerance", [0.5, 1.0, 2.5])
def test_simplified_outline_never_cuts_the_art_and_never_crosses_itself(seed, tolerance):
    field = random_blobs(seed)
    rings = marching_squares(field, 0.5)
    simple = simplify_rings(rings, tolerance)
    assert sum(len(r) for r in simple) < sum(len(r) for r in rings)
    assert points_in_rings(pixel_centres(field >= 0.5), simple).all()
    a = np.vstack(simple)
    b = np.vstack([np.roll(r, -1, axis=0) for r in simple])
    n = len(a)
    i, j = np.triu_indices(n, 1)
    ends = np.concatenate([[0], np.cumsum([len(r) for r in simple])])
    ring_of = np.searchsorted(ends, np.arange(n), side="right") - 1
    first, last = ends[ring_of], ends[ring_of + 1] - 1
    adjacent = (ring_of[i] == ring_of[j]) & ((j == i + 1) | ((i == first[i]) & (j == last[i])))
    keep = ~adjacent
    assert not _segments_meet(a[i[keep]], b[i[keep]], a[j[keep]], b[j[keep]]).any()


def distance_to_edges(points, rings):
    """Distance from each point to the nearest edge of the closed `rings`."""
    a = np.vstack(rings)
    d = np.vstack([np.roll(r, -1, axis=0) for r in rings]) - a
    rel = points[:, None, :] - a[None]
    t = np.clip((rel * d).sum(axis=2) / (d * d).sum(axis=1), 0.0, 1.0)
    return np.hypot(*(rel - t[..., None] * d).transpose(2, 0, 1)).min(axis=1)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tolerance", [0.5, 1.0, 2.5])
def test_simplified_outline_never_passes_inside_the_contour(seed, tolerance):
    """The outline never cuts inwards: every contour point is inside the outline or on it (within the 0.001 px of
    rounding the simplification allows)."""
    rings = marching_squares(random_blobs(seed), 0.5)
    simple = simplify_rings(rings, tolerance)
    contour = np.vstack(rings)
    outside = contour[~points_in_rings(contour, simple)]
    assert len(outside) == 0 or distance_to_edges(outside, simple).max() <= 1e-3


@pytest.mark.parametrize("tolerance", [0.5, 1.0, 2.0])
def test_simplified_outline_stays_within_tolerance(tolerance):
    yy, xx = np.mgrid[0:200, 0:200] + 0.5
    disk = np.clip(70 - np.hypot(xx - 100, yy - 100) + 0.5, 0, 1).astype(np.float32)
    ring = simplify_rings(marching_squares(disk, 0.5), tolerance)[0]
    t = np.linspace(0, 1, 21)[:, None, None]
    samples = (ring + t * (np.roll(ring, -1, axis=0) - ring)).reshape(-1, 2)
    r = np.hypot(*(samples - 100).T)
    assert r.min() >= 70 - 0.02 and r.max() <= 70 + tolerance + 0.02


def test_select_rings_drops_specks_and_filled_holes_with_what_they_hold():
    a = np.zeros((60, 60), np.float32)
    a[5:55, 5:55] = 1
    a[15:45, 15:45] = 0  # a hole ...
    a[25:35, 25:35] = 1  # ... with an island in it
    a[1:3, 57:59] = 1  # a 4 px speck
    rings = marching_squares(a, 0.5)
    assert len(rings) == 4
    assert len(select_rings(rings, 8, keep_holes=True)) == 3
    assert len(select_rings(rings, 8, keep_holes=False)) == 1


def test_block_max_keeps_every_pixel_that_reaches_the_threshold():
    rng = np.random.default_rng(1)
    a = (rng.random((101, 77)) > 0.995).astype(np.float32)  # isolated single pixels
    b = block_max(a, 3)
    assert b.shape == (34, 26)
    ys, xs = np.nonzero(a)
    assert (b[ys // 3, xs // 3] == 1).all() and b.sum() <= len(ys)


def test_placement_fit_recovers_any_affine_plane_and_rejects_warped_uvs():
    rng = np.random.default_rng(2)
    m = rng.normal(size=(3, 3))
    uv = rng.random((12, 2))
    co = uv_to_local(m, uv)
    assert np.allclose(fit_uv_to_local(uv, co), m)
    normal = np.cross(m[0], m[1])
    assert not faces_flipped(m, normal) and faces_flipped(m, -normal)
    co[0] += 0.5
    with pytest.raises(VideError, match="UVs do not map the image flat"):
        fit_uv_to_local(uv, co)


@pytest.mark.parametrize("axis", [0, 1], ids=["left-right", "top-bottom"])
def test_a_mirror_symmetric_shape_gets_a_mirror_symmetric_outline(axis):
    """Blobs with islands and holes made exactly symmetric: the simplified outline is too (the simplification
    starts from the rings' extreme points and keeps every point tied for the one to keep), so mirrored art
    with a mirrored rig can get mirrored weights."""
    from scipy import ndimage
    from scipy.spatial import cKDTree
    from vide_addon.core.contour import marching_squares
    from vide_addon.core.simplify import simplify_rings

    field = ndimage.gaussian_filter(np.random.default_rng(5).uniform(0, 1, (120, 70)), 4)
    half = (field > np.median(field)).astype(float)
    alpha = np.concatenate([half, half[:, ::-1]], axis=1)
    if axis == 1:
        alpha = alpha.T.copy()
    outline = np.vstack(simplify_rings(marching_squares(alpha, 0.5), 1.0))
    size = alpha.shape[1 - axis] if axis == 0 else alpha.shape[0]
    mirrored = outline.copy()
    mirrored[:, axis] = size - mirrored[:, axis]
    assert cKDTree(outline).query(mirrored)[0].max() < 1e-9
