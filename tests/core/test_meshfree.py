"""Meshfree C² weights without Blender: each property the method claims, as a test with numbers."""

from pathlib import Path

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.spatial import Delaunay
from test_geodesic_and_weights import ELL, LEGS, polygon_mesh
from vide_addon.core.geodesic import _touch, one_per_cell
from vide_addon.core.contour import points_in_edges
from vide_addon.core.meshfree import (LINK_RADIUS, Lattice, Samples, _fill_thin_parts, _inside_grid, _star_clearance,
                                      bezier_falloff, meshfree_weights)

# Five handles on two legs; the two on each leg sit close, so cells reach past their neighbours.
FIVE = np.array([(20.0, 10.0), (20.0, 30.0), (64.0, 10.0), (64.0, 30.0), (42.0, 118.0)])


def weights_for(poly, handles, mesh_spacing=3.0, spacing=2.0, jitter=0.2, seed=0, spread=0.5):
    pts, tris = polygon_mesh(poly, mesh_spacing, jitter=jitter, seed=seed)
    samples = Samples.from_mesh(pts, tris, spacing, extra=handles)
    ids = [[len(samples.points) - len(handles) + i] for i in range(len(handles))]
    return samples, ids, meshfree_weights(samples, ids, spread=spread)


def mirror_images(points, axis):
    """For each point, the index of the point at its mirror image across the vertical line x = `axis` (-1: none)."""
    index = {tuple(np.round(p, 6)): i for i, p in enumerate(points)}
    return np.array([index.get((round(2 * axis - x, 6), round(y, 6)), -1) for x, y in points])


def test_the_basis_is_one_then_zero_with_flat_c2_ends_and_never_rises():
    x = np.linspace(0, 1, 10001)
    f = bezier_falloff(x)
    assert f[0] == 1.0 and f[-1] == 0.0 and bezier_falloff(1.5) == 0.0
    assert (np.diff(f) <= 1e-15).all()
    assert np.allclose(f + f[::-1], 1.0)
    h = 1e-4
    for end in (0.0, 1.0):
        d1 = (bezier_falloff(end + h) - bezier_falloff(end - h)) / (2 * h)
        d2 = (bezier_falloff(end + h) - 2 * bezier_falloff(end) + bezier_falloff(end - h)) / h**2
        assert abs(d1) < 1e-6 and abs(d2) < 1e-2


@pytest.fixture(scope="module")
def five():
    return weights_for(LEGS, FIVE)


def test_weights_are_non_negative_and_sum_to_one(five):
    _samples, _ids, w = five
    assert w.values.min() >= -1e-12
    assert np.abs(w.values.sum(axis=1) - 1.0).max() < 1e-9


def test_each_handle_interpolates_at_its_origin(five):
    _samples, ids, w = five
    at = w.values[[i[0] for i in ids]]
    assert np.abs(at - np.eye(len(ids))).max() < 1e-12


def test_virtual_handles_were_needed_and_keep_cells_inside_their_handles_reach(five):
    _samples, _ids, w = five
    assert len(w.virtual) > 0, "five handles on two legs crowd each other"
    assert len(w.radii) == len(FIVE) + len(w.virtual)


def test_a_weight_is_zero_beyond_its_support():
    samples, ids, w = weights_for(LEGS, np.array([(20.0, 60.0), (64.0, 60.0)]))
    assert not w.virtual
    from scipy.sparse.csgraph import dijkstra

    for j, h in enumerate(ids):
        d = dijkstra(samples.graph, indices=h, min_only=True)
        beyond = d >= w.radii[j]
        assert beyond.any() and np.abs(w.values[beyond, j]).max() == 0.0
        assert (w.values[d < w.radii[j] * 0.99, j] > 0).all()


def test_no_local_maximum_stands_out_by_more_than_a_hundredth(five):
    samples, ids, w = five
    g = samples.graph.tocoo()
    handle_samples = {i[0] for i in ids}
    inner = samples.domain.clear.at(samples.points) > 2.5 * 2.0
    for j in range(len(ids)):
        wj = w.values[:, j]
        best_neighbour = np.full(len(wj), -np.inf)
        np.maximum.at(best_neighbour, g.row, wj[g.col])
        prominence = wj - best_neighbour
        candidates = inner & (wj < 0.999) & ~np.isin(np.arange(len(wj)), list(handle_samples))
        assert prominence[candidates].max() <= 1e-2, (j, prominence[candidates].max())


def test_the_basis_is_exact_relative_to_its_size_near_its_end():
    """Near x = 1 the basis is about 10 (1 - x)³. Where every handle's basis at a sample is that small (its radius a
    hair above the distance), the weights are their ratios, so each must be right relative to its own size; the
    expanded polynomial cancels there (a mirror-symmetric hand's sample went 0.10 off its mirror image). Against
    the polynomial evaluated exactly in rationals."""
    from fractions import Fraction

    x = 1.0 - np.logspace(-7, -1, 25)
    exact = np.array([float(1 - 10 * q**3 + 15 * q**4 - 6 * q**5) for q in map(Fraction, x)])
    assert np.abs(bezier_falloff(x) / exact - 1.0).max() < 1e-12


def test_mirrored_handles_give_mirrored_weights():
    # LEGS is symmetric about x = 42; the lattice (spacing 2, from the origin) is too, the mesh is not.
    samples, ids, w = weights_for(LEGS, FIVE)
    lattice = samples.points[:samples.lattice]
    values = w.values[:samples.lattice]
    mirror = mirror_images(lattice, 42.0)
    assert (mirror >= 0).mean() > 0.99
    swap = [2, 3, 0, 1, 4]  # left and right legs trade places, the top handle stays
    ok = mirror >= 0
    assert np.abs(values[ok] - values[mirror[ok]][:, swap]).max() < 0.02


@pytest.mark.parametrize("fingers, width, gap", [(3, 20.0, 5.0), (15, 23.0, 4.0), (10, 21.0, 2.0)],
                         ids=["finger-on-axis", "virtual-pair", "basis-near-its-end"])
def test_a_mirror_symmetric_hand_gets_mirrored_weights(fingers, width, gap):
    """Fingers under a palm, each with three bones and one in the palm, mirror-symmetric; checked at the samples
    (the lattice is centred on the shape, so every sample has its mirror image). Three ways it broke: three
    fingers: the middle finger's cells, cut in half by the axis, have their farthest samples as a mirror pair
    closer together than half a cell's reach, and the virtual handle went at the first of them (0.40 off);
    fifteen: a mirror pair of virtual handles of one round, measured one after the other, got a distance between
    them on one side only (0.026 off); ten: at a sample where every basis was about 1e-15 (a radius a hair above
    the distance), the basis's rounding, normalized, decided its weights (0.10 off)."""
    from vide_addon.core.meshfree_bones import BoneRig

    top, palm = 310.0, 60.0
    xs = [10.0 + i * (width + gap) for i in range(fingers)]
    right = xs[-1] + width
    poly = [(10.0, top + palm), (right, top + palm)]
    for x0 in xs[::-1]:
        poly += [(x0 + width, top), (x0 + width, 10.0), (x0, 10.0), (x0, top)]
    pts, tris = polygon_mesh(np.array(poly), 16.0)
    joints = np.linspace(top - 2.0, 15.0, 4)
    heads = np.array([(x0 + width / 2, y) for x0 in xs for y in [*joints[:3], top + 8.0]])
    tails = np.array([(x0 + width / 2, y) for x0 in xs for y in [*joints[1:], top + palm - 8.0]])
    rig = BoneRig(pts, tris, heads, tails, np.ptp(pts, axis=0).max() / 100)
    axis = 0.5 * (10.0 + right)
    points, values = rig.samples.points, rig.handles.values
    mirror = mirror_images(points, axis)
    swap = [int(np.argmin(np.hypot(*(heads - (2 * axis - h[0], h[1])).T))) for h in heads]
    assert (mirror >= 0).all() and len(rig.handles.handles) > len(heads), "virtual handles were needed"
    assert np.abs(values - values[mirror][:, swap]).max() < 1e-9


def test_a_tuning_fork_whose_prongs_meet_in_the_middle_of_a_gap_gets_mirrored_weights():
    """A stem, a crossbar and two prongs 70 long, 10 wide and 2 apart, with no bones in the prongs: the crossbar
    bone's cell reaches up both prongs, and its farthest samples (the prong tips, a mirror pair) have their middle
    in the gap, where the two nearest samples are a mirror pair again: taking the first of those made the weights
    0.41 off their mirror image; the virtual handles go in as mirror images instead."""
    from vide_addon.core.meshfree_bones import BoneRig

    x1, x2, tip = 51.0, 61.0, 130.0
    poly = [(44, 0), (56, 0), (56, 40), (100, 40), (100, 60), (x2, 60), (x2, tip), (x1, tip), (x1, 60), (100 - x1, 60),
            (100 - x1, tip), (100 - x2, tip), (100 - x2, 60), (0, 60), (0, 40), (44, 40)]
    pts, tris = polygon_mesh(np.array(poly, float), 2.0)
    heads = np.array([(50.0, 5.0), (46.0, 50.0), (5.0, 50.0), (95.0, 50.0)])
    tails = np.array([(50.0, 30.0), (54.0, 50.0), (25.0, 50.0), (75.0, 50.0)])
    rig = BoneRig(pts, tris, heads, tails, np.ptp(pts, axis=0).max() / 100)
    points, values = rig.samples.points, rig.handles.values
    mirror = mirror_images(points, 50.0)
    assert (mirror >= 0).all() and len(rig.handles.handles) > len(heads), "virtual handles were needed"
    assert np.abs(values - values[mirror][:, [0, 1, 3, 2]]).max() < 1e-9


def test_the_weights_do_not_depend_on_the_mesh():
    coarse, _, w_coarse = weights_for(LEGS, FIVE, mesh_spacing=5.0, seed=1)
    fine, _, w_fine = weights_for(LEGS, FIVE, mesh_spacing=1.5, seed=2)
    assert np.allclose(coarse.points, fine.points), "the same samples"
    assert np.abs(w_coarse.values - w_fine.values).max() < 0.02
    # Vertices the two meshes share (outline points) get the same weights too.
    coarse_at = {tuple(np.round(p, 6)): i for i, p in enumerate(coarse.domain.points)}
    shared = [(coarse_at[key], i) for i, p in enumerate(fine.domain.points)
              if (key := tuple(np.round(p, 6))) in coarse_at]
    assert len(shared) >= 10
    a, b = np.array(shared).T
    assert np.abs(w_coarse.at_vertices[a] - w_fine.at_vertices[b]).max() < 0.02


def test_second_differences_along_a_line_shrink_as_samples_get_denser():
    rect = np.array([(0, 0), (120, 0), (120, 40), (0, 40)], float)
    handles = np.array([(20.0, 20.0), (100.0, 20.0)])
    worst = []
    for spacing in (2.0, 1.0):
        samples, _ids, w = weights_for(rect, handles, mesh_spacing=4.0, spacing=spacing, jitter=0.0)
        on_line = np.flatnonzero((np.abs(samples.points[:, 1] - 20.0) < 1e-9)
                                 & (samples.points[:, 0] > 30) & (samples.points[:, 0] < 90))
        on_line = on_line[on_line < samples.lattice]
        order = on_line[np.argsort(samples.points[on_line, 0])]
        x = samples.points[order, 0]
        assert np.allclose(np.diff(x), spacing)
        worst.append(np.abs(np.diff(w.values[order, 0], 2)).max())
    assert worst[1] < 0.5 * worst[0], worst


# A leg chain on each side of LEGS, hanging from a hip bone: bones that share joints.
CHAIN_HEAD = np.array([(30.0, 115.0), (20.0, 95.0), (20.0, 50.0), (54.0, 115.0), (64.0, 95.0), (64.0, 50.0)])
CHAIN_TAIL = np.array([(20.0, 95.0), (20.0, 50.0), (20.0, 10.0), (64.0, 95.0), (64.0, 50.0), (64.0, 10.0)])


def chain_weights(joint_pull, gaussian):
    from vide_addon.core.meshfree_bones import bone_handles

    pts, tris = polygon_mesh(LEGS, 3.0, jitter=0.2)
    extra, slices = bone_handles(CHAIN_HEAD, CHAIN_TAIL, 2.0, joint_pull=joint_pull)
    samples = Samples.from_mesh(pts, tris, 2.0, extra=extra)
    first = len(samples.points) - len(extra)
    handles = [np.arange(first + s.start, first + s.stop) for s in slices]
    return samples, handles, meshfree_weights(samples, handles, gaussian=gaussian)


@pytest.mark.parametrize("joint_pull, gaussian", [(0.25, False), (0.0, True)], ids=["pulled-in-C2", "gaussian"])
def test_bone_chains_get_weights_that_sum_to_one_and_stay_on_their_own_leg(joint_pull, gaussian):
    samples, handles, w = chain_weights(joint_pull, gaussian)
    assert w.values.min() >= 0 and np.abs(w.values.sum(axis=1) - 1).max() < 1e-9
    pts = samples.points[:samples.lattice]
    right_foot = (pts[:, 0] > 44) & (pts[:, 1] < 30)
    left_bones = w.values[:samples.lattice][right_foot][:, :3]
    assert left_bones.max() < (0.01 if not gaussian else 0.2), left_bones.max()


def test_shrunk_bone_handles_interpolate_on_their_samples():
    _samples, handles, w = chain_weights(0.25, False)
    for j, h in enumerate(handles):
        assert np.abs(w.values[h, j] - 1).max() < 1e-9, "1 on the bone's own (inner) samples"


def test_handles_too_crowded_for_compact_weights_say_so(monkeypatch):
    from vide_addon.core import meshfree
    from vide_addon.core.errors import VideError

    monkeypatch.setattr(meshfree, "MAX_VIRTUAL", 2)  # FIVE needs more virtual handles than that
    with pytest.raises(VideError, match="too close"):
        weights_for(LEGS, FIVE)


def test_the_gaussian_fallback_is_global():
    samples, _handles, w = chain_weights(0.0, True)
    assert not w.virtual
    assert (w.values[:samples.lattice] > 0).mean() > 0.9, "C-infinity and global: hardly a zero anywhere"


def lattice_along(samples, head, tail):
    """The lattice samples within 0.75 spacing of the segment head-tail: a bone drawn onto the lattice."""
    pts = samples.points[:samples.lattice]
    ab = tail - head
    t = np.clip(((pts - head) @ ab) / float(ab @ ab), 0.0, 1.0)
    return np.flatnonzero(np.hypot(*(pts - (head + t[:, None] * ab)).T) <= 0.75 * samples.spacing)


def test_adding_a_handle_matches_computing_everything_again(monkeypatch):
    from vide_addon.core import meshfree

    pts, tris = polygon_mesh(LEGS, 3.0, jitter=0.2)
    samples = Samples.from_mesh(pts, tris, 2.0)
    along = [lattice_along(samples, h, t) for h, t in zip(CHAIN_HEAD[[1, 2, 4]], CHAIN_TAIL[[1, 2, 4]])]
    rig = meshfree.HandleSet(samples, along[:2])
    handles_before = len(rig.handles)
    calls = []  # the samples each Dijkstra starts from
    real_distance = meshfree.Samples.distance
    monkeypatch.setattr(meshfree.Samples, "distance",
                        lambda self, sources, *a, **k: calls.append(sources) or real_distance(self, sources, *a, **k))
    column = rig.add(along[2])
    result = rig.weights()
    added = result.values
    assert column == 2
    # Dijkstras only from the new handle and the virtual handles it called for (one cut short, and one in full
    # where a cell reached the cut); none for the handles there before.
    created = rig.handles[handles_before:]
    assert all(any(np.array_equal(c, h) for h in created) for c in calls)
    assert len(created) <= len(calls) <= 2 * len(created)
    monkeypatch.setattr(meshfree.Samples, "distance", real_distance)
    again = meshfree_weights(samples, along)
    assert np.abs(added.sum(axis=1) - 1).max() < 1e-9
    assert np.abs(added - again.values).max() < 0.02


@pytest.mark.parametrize("case", ["five", "chains", "bone-added"])
def test_distances_cut_short_are_exact_wherever_cells_and_supports_reach(case):
    """Each Dijkstra stops just past how far its handle's support and cell can reach. At the end every
    sample's nearest handle, and every handle's distances inside its support, must equal full, unlimited
    Dijkstras, also after a bone was added."""
    from vide_addon.core import meshfree
    from vide_addon.core.meshfree_bones import BoneRig

    if case == "five":
        samples, handles, _w = weights_for(LEGS, FIVE)
        rig = meshfree.HandleSet(samples, handles)
    elif case == "chains":
        samples, handles, _w = chain_weights(0.25, False)
        rig = meshfree.HandleSet(samples, handles)
    else:
        pts, tris = polygon_mesh(LEGS, 3.0, jitter=0.2)
        bones = BoneRig(pts, tris, CHAIN_HEAD[1:], CHAIN_TAIL[1:], 2.0)
        assert bones.add(CHAIN_HEAD[0], CHAIN_TAIL[0])
        rig = bones.handles
    live = np.flatnonzero(rig.alive)  # handles dropped on the way have no distances any more
    assert not np.isfinite(rig._d[:, live]).all(), "some Dijkstra was cut short"
    full = np.stack([rig.samples.distance(rig.handles[i], rig.offsets[i]) for i in live], axis=1)
    assert np.allclose(rig.nearest, full.min(axis=1), rtol=1e-12, atol=1e-12)
    inside = full < rig._radius[live][None, :]
    assert np.allclose(rig._d[:, live][inside], full[inside], rtol=1e-12, atol=1e-12)
    if case == "bone-added":
        assert not all(rig.alive), "the new bone left virtual handles crowded, and they were dropped"
    # The Voronoi dual graph, kept by counting links as cells changed, is the one all cells give at once.
    cells = csr_matrix(np.isfinite(rig.nearest)[:, None] & (full <= rig.nearest[:, None] * (1 + 1e-9) + 1e-12))
    links = (rig.samples.graph > 0).astype(float)
    touching = ((cells.T @ cells + cells.T @ links @ cells) > 0).toarray()
    np.fill_diagonal(touching, False)
    assert np.array_equal(rig._dual(len(rig.handles))[np.ix_(live, live)], touching)


def test_a_binds_handles_put_in_at_once_leave_what_putting_them_in_one_by_one_does_with_exact_gaps():
    """A bind puts its real handles in at once (HandleSet._add_all). Against `_add` for one after another: the
    same nearest handle, owner and ties at every sample and the same reach of every cell. The distances between
    handles that the weights read (r_h, and the weights of the harmonic blend's links between neighbouring cells)
    are exact, as full Dijkstras give them, where one by one they were left infinite for handles beyond the later
    one's cut: which made them depend on the order of the bones (the 63k hand of bench/weights.py had weights 0.11
    off its mirror image). At once, they are cut only beyond where any of those lies (`HandleSet._columns`), the
    same for every order."""
    from vide_addon.core.meshfree import TOUCH, HandleSet

    samples, handles, _w = chain_weights(0.25, False)
    handles = [np.atleast_1d(np.asarray(h, np.int64)) for h in handles]
    at_once, one_by_one = HandleSet(samples, []), HandleSet(samples, [])
    at_once._add_all(handles)
    for h in handles:
        one_by_one._add(h, None, real=True)
    for name in ("owner", "tied"):
        assert np.array_equal(getattr(at_once, name), getattr(one_by_one, name)), name
    # (A handle's samples are linked to it by 1e-300, not 0, in the Dijkstra for them all.)
    assert np.allclose(at_once.nearest, one_by_one.nearest, rtol=0, atol=1e-12)
    count = len(handles)
    assert np.allclose(at_once._reach[:count], one_by_one._reach[:count], rtol=0, atol=1e-12)
    assert np.array_equal(at_once._dual(count), one_by_one._dual(count))
    full = samples.distances(handles)
    exact = np.stack([full[h].min(axis=0) for h in handles])  # [j, i]: from handle i to handle j
    exact = np.minimum(exact, exact.T)
    exact[exact <= TOUCH * samples.spacing] = np.inf
    np.fill_diagonal(exact, np.inf)
    between = at_once._between[:count, :count]
    kept = np.isfinite(between)
    assert np.array_equal(between[kept], exact[kept])
    assert np.array_equal(at_once._nearest_real(), exact.min(axis=1)), "r_h"
    assert not (at_once._dual(count) & ~kept).any(), "every link of the harmonic blend"
    assert np.array_equal(HandleSet(samples, handles[::-1])._between[:count, :count], between[::-1, ::-1])
    was = one_by_one._between[:count, :count]
    assert np.allclose(was[np.isfinite(was)], exact[np.isfinite(was)], rtol=0, atol=1e-12)
    assert (np.isinf(was) & np.isfinite(exact)).any(), "one by one, some distances between handles were cut"


def full_columns(self, handles):
    """HandleSet._columns as it was: every real handle's distances in full."""
    d = self.samples.distances(handles)
    return d, self._gaps(d, handles)


def bind_then_add(pts, tris, heads, tails, head, tail):
    """A bone rig's weights at a bind, and after the bone head-tail is added; and its handles."""
    from vide_addon.core.meshfree_bones import BoneRig

    rig = BoneRig(pts, tris, heads, tails, 2.0)
    bound = rig.vertex_weights()
    assert rig.add(head, tail)
    return rig.handles, bound, rig.vertex_weights()


@pytest.mark.parametrize("added", range(len(CHAIN_HEAD)))
def test_a_binds_columns_cut_where_nothing_reads_them_bind_and_insert_as_full_columns_do(added, monkeypatch):
    """HandleSet._columns cuts the real handles' Dijkstra at a bind at twice the farthest any sample lies from its
    nearest handle, plus a link. Against full columns: the same weights, to the last bit, at the bind and after a
    bone is added (it reads the bind's columns at its own samples), though the cut left distances out."""
    from vide_addon.core.meshfree import HandleSet

    pts, tris = polygon_mesh(LEGS, 3.0, jitter=0.2)
    keep = np.arange(len(CHAIN_HEAD)) != added
    bones = (pts, tris, CHAIN_HEAD[keep], CHAIN_TAIL[keep], CHAIN_HEAD[added], CHAIN_TAIL[added])
    handles, bound, inserted = bind_then_add(*bones)
    assert not np.isfinite(handles._d[:, :keep.sum()]).all(), "the bind cut some columns"
    monkeypatch.setattr(HandleSet, "_columns", full_columns)
    handles, full_bound, full_inserted = bind_then_add(*bones)
    assert np.isfinite(handles._d[:, :keep.sum()]).all()
    assert np.array_equal(bound, full_bound) and np.array_equal(inserted, full_inserted)


def test_handles_whose_nearest_untouched_handle_lies_beyond_the_binds_cut_get_the_weights_of_full_columns(monkeypatch):
    """A chain of bones that touch (Joint Pull-In 0) along a strip 12 wide: each handle's nearest handle it does not
    touch (r_h) lies a bone's length away, 40, beyond the bind's cut (twice the farthest any sample lies from its
    nearest handle, plus a link: 13.6), so HandleSet._columns measures theirs in full. The weights are those of
    full columns, to the last bit (with the cut columns, r_h was lost and they were 0.51 off)."""
    from vide_addon.core.meshfree import HandleSet
    from vide_addon.core.meshfree_bones import BoneRig

    pts, tris = polygon_mesh(np.array([(0, 0), (200, 0), (200, 12), (0, 12)], float), 2.0, jitter=0.2)
    ends = np.column_stack([[4.0, 40, 80, 120, 160, 196], np.full(6, 6.0)])
    rig = BoneRig(pts, tris, ends[:-1], ends[1:], 2.0, joint_pull=0.0)
    assert np.isfinite(rig.handles._d[:, :5]).all(), "in full, not cut"
    monkeypatch.setattr(HandleSet, "_columns", full_columns)
    full = BoneRig(pts, tris, ends[:-1], ends[1:], 2.0, joint_pull=0.0)
    assert np.array_equal(rig.vertex_weights(), full.vertex_weights())


@pytest.mark.parametrize("spread", [1.0, 3.0])
def test_a_spread_over_one_reaching_past_the_binds_cut_gets_the_weights_of_full_columns(spread, monkeypatch):
    """HandleSet._columns cuts a bind's columns where no support reaches while r_d = r_v + λ (r_h - r_v) stays
    within r_h (λ, the spread, at most 1). Five bones apart along a strip, at λ 3 (which the core takes, though the
    add-on offers at most 0.95): the weights are those of full columns, to the last bit (cut, they were 0.13 off)."""
    from vide_addon.core.meshfree import HandleSet
    from vide_addon.core.meshfree_bones import BoneRig

    pts, tris = polygon_mesh(np.array([(0, 0), (200, 0), (200, 12), (0, 12)], float), 2.0, jitter=0.2)
    heads = np.column_stack([[10.0, 50, 90, 130, 170], np.full(5, 6.0)])
    rig = BoneRig(pts, tris, heads, heads + [20.0, 0.0], 2.0, spread=spread)
    assert np.isfinite(rig.handles._d[:, :5]).all() == (spread > 1.0), "cut at λ <= 1 only"
    monkeypatch.setattr(HandleSet, "_columns", full_columns)
    full = BoneRig(pts, tris, heads, heads + [20.0, 0.0], 2.0, spread=spread)
    assert np.array_equal(rig.vertex_weights(), full.vertex_weights())


def test_vertex_steps_traced_only_when_they_may_be_shortest_give_the_distances_that_tracing_every_step_gives():
    """Samples.at_vertices traces a vertex's step to a sample only when it is shorter than the shortest known to
    stay inside and than the reach asked for. Against a copy with every step traced first: the same distances wherever
    the result is below the reach, and the reach or more elsewhere; most steps were never traced. The strip a
    pixel and a half beside the body has vertices whose nearest samples lie across the slit."""
    import copy

    poly = np.array([(0, 0), (50, 0), (50, 60), (51.5, 60), (51.5, 10), (53.5, 10), (53.5, 62), (0, 62)], float)
    pts, tris = polygon_mesh(poly, 1.0, jitter=0.1, seed=1)
    lazy = Samples.from_mesh(pts, tris, 4.0, extra=[(10.0, 50.0), (52.5, 12.0)])
    full = copy.deepcopy(lazy)
    untested = lazy.vertex_untested.sum()
    full._test(full._steps(np.arange(len(pts))))
    assert not full.vertex_untested.any() and np.isinf(full.vertex_step).any(), "some steps leave the mesh"
    dist = np.stack([lazy.distance([len(lazy.points) - 2]), lazy.distance([len(lazy.points) - 1])], axis=1)
    verts, cols = np.repeat(np.arange(len(pts)), 2), np.tile([0, 1], len(pts))
    expected = full.at_vertices(dist, verts, cols)
    reach = np.where(cols == 0, 30.0, np.inf)
    got = lazy.at_vertices(dist, verts, cols, reach)
    below = expected < reach
    assert np.array_equal(got[below], expected[below]) and (got[~below] >= reach[~below]).all()
    assert below.mean() < 0.9 and np.isfinite(expected[cols == 1]).all()
    assert lazy.vertex_untested.sum() > 0.5 * untested, "most untested steps stayed untested"
    strip = pts[:, 0] > 51
    assert np.isinf(full.vertex_step[strip]).any(), "from the strip, some nearest samples are across the slit"


def test_every_vertex_is_listed_under_the_samples_it_looks_at_even_across_a_part_thinner_than_the_spacing():
    """Samples.sample_vertices (which vertices a handle's new distances reach) lists each vertex under every sample
    in its vertex_near, also those a blind vertex was given along mesh edges: a vertex left out gets no weight from
    the handles and goes wholly to the bone nearest in a straight line, across the slit. At a spacing 5 times the
    strip's width, the strip's bone puts little weight on the body away from the joint (under 0.1)."""
    from vide_addon.core.meshfree_bones import BoneRig

    poly = np.array([(0, 0), (50, 0), (50, 60), (51.5, 60), (51.5, 10), (53.5, 10), (53.5, 62), (0, 62)], float)
    pts, tris = polygon_mesh(poly, 1.0, jitter=0.1, seed=1)
    heads, tails = np.array([(52.5, 15.0), (25.0, 10.0)]), np.array([(52.5, 55.0), (25.0, 50.0)])
    rig = BoneRig(pts, tris, heads, tails, 8.0)
    samples = rig.samples
    listed = samples.sample_vertices.toarray() > 0
    near = samples.vertex_near
    assert listed[near, np.arange(len(pts))[:, None]].all()
    w = rig.vertex_weights()
    body = (pts[:, 0] < 49) & (pts[:, 1] < 50)
    assert w[body, 0].max() < 0.1


def test_a_bone_added_to_a_bone_rig_weights_as_if_bound_with_it():
    """A bone added later starts from the lattice samples it links to (a straight step from each) instead of
    samples of its own, and the virtual handles placed before it that it does not crowd stay: the weights are
    still those of binding all bones at once, but for single vertices where only the ends of supports reach."""
    from vide_addon.core.meshfree_bones import BoneRig

    pts, tris = polygon_mesh(LEGS, 3.0, jitter=0.2)
    heads, tails = np.array([(42., 122.), (20., 90.), (64., 90.)]), np.array([(42., 140.), (20., 20.), (64., 20.)])
    new_head, new_tail = np.array([30., 126.]), np.array([15., 126.])
    rig = BoneRig(pts, tris, heads, tails, 2.0)
    samples = rig.samples
    assert rig.add(new_head, new_tail)
    assert rig.samples is samples and len(rig.heads) == 4 and rig.outside == [False] * 4
    added = rig.vertex_weights()
    bound = BoneRig(pts, tris, np.vstack([heads, new_head]), np.vstack([tails, new_tail]), 2.0).vertex_weights()
    assert np.abs(added.sum(axis=1) - 1).max() < 1e-9
    assert np.abs(added - bound).mean() < 0.01


@pytest.mark.parametrize("chains", ["PULL_IN", "GAUSSIAN"])
def test_a_bone_that_would_change_every_handle_is_refused(chains):
    """The first bone to share a joint pulls every handle in from its joints (or turns the weights
    Gaussian): it cannot go in alone, and the rig is left as it was."""
    from vide_addon.core.meshfree_bones import BoneRig

    pts, tris = polygon_mesh(LEGS, 3.0, jitter=0.2)
    rig = BoneRig(pts, tris, CHAIN_HEAD[[1, 4]], CHAIN_TAIL[[1, 4]], 2.0, chains=chains)
    before = rig.vertex_weights()
    assert not rig.add(CHAIN_HEAD[2], CHAIN_TAIL[2])  # the left shin, from the left knee
    assert len(rig.heads) == 2 and np.array_equal(rig.vertex_weights(), before)


def test_an_island_with_a_bone_of_its_own_leaves_the_other_islands_weights_as_they_were():
    """Islands share no sample link: a second island with its own bone, placed so that the lattice stays where it was
    (within the first's height, widening the bounding box by a whole number of two spacings), leaves the first
    island's weights as they were. Four bones crossing a small bar (two past its side) call for many virtual
    handles. How far a virtual handle's Dijkstra runs, and with it which distances between handles the harmonic
    blend links, must not depend on how far the farthest sample of the whole mesh is from its nearest handle: cut
    there, the bar alone had weights 0.08 off those it has beside the island (whose bone's cell is wide)."""
    from vide_addon.core.meshfree_bones import BoneRig

    spacing = 1.52
    heads = np.array([(4.6, 36.5), (14.6, 0.5), (10.1, 37.4), (9.8, 34.8)])
    tails = np.array([(28.8, 38.4), (8.7, 3.2), (7.1, 26.1), (26.1, 44.9)])
    pts, tris = polygon_mesh(np.array([(0, 0), (25, 0), (25, 51), (0, 51)], float), 2.5, jitter=0.2)
    bar = BoneRig(pts, tris, heads, tails, spacing)
    alone = bar.vertex_weights()
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    x0, x1 = hi[0] + 15.0, hi[0] + 2 * 20 * spacing
    island = np.array([(x0, lo[1]), (x1, lo[1]), (x1, hi[1]), (x0, hi[1])])
    more, more_tris = polygon_mesh(island, 2.5, jitter=0.2)
    middle = island.mean(axis=0)
    both = BoneRig(np.vstack([pts, more]), np.vstack([tris, more_tris + len(pts)]),
                   np.vstack([heads, middle - (10.0, 0.0)]), np.vstack([tails, middle + (10.0, 0.0)]), spacing)
    lattice = both.samples.points[:both.samples.lattice]
    same = bar.samples.points[:bar.samples.lattice]
    assert np.allclose(lattice[lattice[:, 0] < hi[0]], same, rtol=0, atol=1e-12), "the same lattice"
    assert len(bar.handles.handles) > 10, "virtual handles"
    beside = both.vertex_weights()
    assert beside[:len(pts), 4].max() == 0.0
    assert np.abs(beside[:len(pts), :4] - alone).max() < 1e-9


def test_a_bone_added_outside_the_mesh_starts_from_the_nearest_sample():
    from vide_addon.core.meshfree_bones import BoneRig

    pts, tris = polygon_mesh(LEGS, 3.0, jitter=0.2)
    rig = BoneRig(pts, tris, CHAIN_HEAD[[1, 4]], CHAIN_TAIL[[1, 4]], 2.0)
    assert rig.add(np.array([120., 60.]), np.array([140., 60.]))  # right of the shape
    w = rig.vertex_weights()
    assert rig.outside[-1] and np.abs(w.sum(axis=1) - 1).max() < 1e-9
    assert w[rig.samples.domain.points[:, 0] > 80, 2].max() > 0.9, "it weights the nearest part of the mesh"


def test_pulling_chained_bones_further_in_widens_the_bend_at_their_joint():
    """Two bones meeting in the middle of a bar: the band where the joint's weights mix (0.05 to 0.95) grows
    with the pull-in, which is what lets a 90° bend spread over more triangles."""
    from vide_addon.core.meshfree_bones import BoneRig

    bar = np.array([(0, 0), (240, 0), (240, 30), (0, 30)], float)
    pts, tris = polygon_mesh(bar, 3.0, jitter=0.2)
    heads, tails = np.array([(10., 15.), (120., 15.)]), np.array([(120., 15.), (230., 15.)])
    width = {}
    for pull in (0.15, 0.45):
        w = BoneRig(pts, tris, heads, tails, 2.0, joint_pull=pull).vertex_weights()[:, 1]
        mixed = pts[(w > 0.05) & (w < 0.95), 0]
        assert mixed.min() < 120 < mixed.max(), "the band sits on the joint"
        width[pull] = mixed.max() - mixed.min()
    assert width[0.45] > 2 * width[0.15], width


def outline_gap(x, a, b):
    """Distance from each point to the nearest of the edges a-b."""
    ab = (b - a)[None]
    t = np.clip(((x[:, None] - a[None]) * ab).sum(axis=2) / (ab * ab).sum(axis=2), 0.0, 1.0)
    return np.hypot(*(x[:, None] - a[None] - t[..., None] * ab).transpose(2, 0, 1)).min(axis=1)


def crosses(p, q, a, b):
    """Whether segments p-q and a-b (n of each, m edges) properly cross: (n, m), exact orientation signs."""
    def orient(o, u, v):
        return np.sign((u[..., 0] - o[..., 0]) * (v[..., 1] - o[..., 1])
                       - (u[..., 1] - o[..., 1]) * (v[..., 0] - o[..., 0]))
    p, q, a, b = p[:, None], q[:, None], a[None], b[None]
    return (orient(a, b, p) * orient(a, b, q) < 0) & (orient(p, q, a) * orient(p, q, b) < 0)


@pytest.mark.parametrize("poly", [LEGS, ELL])
def test_the_outline_grid_tells_inside_segments_as_a_brute_force_crossing_test_does(poly):
    """Outline.straight (the samples' and vertex links' visibility test) against every boundary edge tried in
    turn: a segment stays inside when it leaves its start inwards and properly crosses no boundary edge
    (random ends, none within a hundredth of a pixel of the outline, where the test's rounding tolerance
    would count it as touching)."""
    pts, tris = polygon_mesh(poly, 3.0, jitter=0.2, seed=3)
    samples = Samples.from_mesh(pts, tris, 2.0)
    domain, outline = samples.domain, samples.outline
    a, b = domain.points[domain.boundary[:, 0]], domain.points[domain.boundary[:, 1]]
    rng = np.random.default_rng(5)
    lo, hi = domain.points.min(axis=0), domain.points.max(axis=0)
    inside = rng.uniform(lo, hi, (6000, 2))
    inside = inside[domain.inside(inside) & (outline_gap(inside, a, b) > 0.01)]
    # From a point: to a point up to 4 spacings away. From a vertex (a third of them on the outline): likewise.
    p = inside[:2000]
    q = p + rng.normal(0.0, 4.0, p.shape)
    far = outline_gap(q, a, b) > 0.01
    p, q = p[far], q[far]
    start = rng.choice(np.flatnonzero(domain.on_boundary), 1000)
    start = np.concatenate([start, rng.integers(0, len(domain.points), 2000)])
    vq = domain.points[start] + rng.normal(0.0, 4.0, (len(start), 2))
    far = outline_gap(vq, a, b) > 0.01
    start, vq = start[far], vq[far]
    ends_inside = domain.inside(q)
    expected = ends_inside & ~crosses(p, q, a, b).any(axis=1)
    assert np.array_equal(outline.straight(p, q), expected)
    # Given lower bounds of the ends' distances to the outline, it traces only the rest: the same answers.
    clear = domain.clear.at
    assert np.array_equal(outline.straight(p, q, None, clear(p), clear(q)), expected)
    assert (clear(p) > 0).mean() > 0.5, "most segments start in a clear disk, so the shortcut is exercised"
    step = 1e-6 * (vq - domain.points[start])
    leaves = domain.inside(domain.points[start] + step) | ~domain.on_boundary[start]
    own = (domain.boundary[None, :, 0] == start[:, None]) | (domain.boundary[None, :, 1] == start[:, None])
    expected = domain.inside(vq) & leaves & ~(crosses(domain.points[start], vq, a, b) & ~own).any(axis=1)
    got = outline.straight(domain.points[start], vq, start)
    assert np.array_equal(got, expected)
    assert np.array_equal(outline.straight(domain.points[start], vq, start, domain.clearance[start], clear(vq)),
                          expected)
    # The vertex links trim with the larger disk of a vertex's triangles: the same answers. Segments that their
    # disks cover (not traced at all) are among the inside ones.
    star = _star_clearance(domain)[start]
    assert np.array_equal(outline.straight(domain.points[start], vq, start, star, clear(vq)), expected)
    covered = outline.covers(*domain.points[start].T, *vq.T, start, star, clear(vq))
    assert covered.sum() > 50 and expected[covered].all()
    assert 0.2 < got.mean() < 0.9 and 0.2 < expected[:1000].mean(), "both kinds of answer were tested"


@pytest.mark.parametrize("poly", [LEGS, ELL])
def test_steps_from_a_vertex_within_its_star_clearance_stay_inside(poly):
    """_star_clearance, the clear disk of a vertex's own triangles (the vertex links skip tracing within it): no
    boundary edge comes that near an inner vertex (exact distances), and every step that short leaving an outline
    vertex inwards crosses no boundary edge but its own (brute force). It is more than the clearance grid's bound
    at most outline vertices (where the links are tested), so the shortcut is exercised."""
    pts, tris = polygon_mesh(poly, 3.0, jitter=0.2, seed=4)
    domain = Samples.from_mesh(pts, tris, 2.0).domain
    a, b = domain.points[domain.boundary[:, 0]], domain.points[domain.boundary[:, 1]]
    star = _star_clearance(domain)
    inner = np.flatnonzero(~domain.on_boundary)
    assert (outline_gap(domain.points[inner], a, b) >= star[inner]).all()
    rim = np.flatnonzero(domain.on_boundary)
    assert (star[rim] > domain.clearance[rim]).mean() > 0.9
    rng = np.random.default_rng(2)
    start = np.repeat(rim, 16)
    angle = rng.uniform(0.0, 2.0 * np.pi, len(start))
    step = np.column_stack([np.cos(angle), np.sin(angle)]) * star[start, None]
    inward = domain.inside(domain.points[start] + 1e-6 * step)
    start, step = start[inward], step[inward]
    own = (domain.boundary[None, :, 0] == start[:, None]) | (domain.boundary[None, :, 1] == start[:, None])
    assert not (crosses(domain.points[start], domain.points[start] + step, a, b) & ~own).any()
    assert len(start) > 4 * len(rim), "most outline vertices open by about half a turn"


@pytest.mark.parametrize("poly", [LEGS, ELL])
def test_the_outline_grid_offers_every_edge_a_segment_touches(poly):
    """Outline._near (the cells along a segment, not its whole box) against every boundary edge tried in turn
    with the exact touch test: no edge a segment crosses or comes within the rounding tolerance of is left
    out, for segments of any slope and length, ending on the outline, or running along it."""
    pts, tris = polygon_mesh(poly, 3.0, jitter=0.2, seed=4)
    outline = Samples.from_mesh(pts, tris, 2.0).outline
    domain = outline.domain
    a, b = outline.a, outline.b
    rng = np.random.default_rng(7)
    p = rng.uniform(domain.points.min(axis=0), domain.points.max(axis=0), (3000, 2))
    q = p + rng.normal(0.0, 6.0, p.shape) * rng.choice([0.1, 1.0, 4.0], (len(p), 1))
    edge = rng.integers(0, len(a), 1000)  # from a point on an edge, and along one past its ends
    on = a[edge] + rng.uniform(0, 1, (len(edge), 1)) * (b[edge] - a[edge])
    p = np.vstack([p, on, a[edge] - 0.5 * (b[edge] - a[edge])])
    q = np.vstack([q, on + rng.normal(0.0, 5.0, on.shape), b[edge] + 0.5 * (b[edge] - a[edge])])
    n, m = len(p), len(a)
    seg, edge = np.repeat(np.arange(n), m), np.tile(np.arange(m), n)
    touch = _touch(p[seg], q[seg], a[edge], b[edge], domain.tolerance)
    expected = set(zip(seg[touch].tolist(), edge[touch].tolist()))
    found = set(zip(*(x.tolist() for x in outline._near(p, q))))
    assert len(expected) > 2000, "segments touching the outline were tested"
    assert expected <= found


def test_the_lattice_point_at_the_nearest_grid_node_is_the_nearest_lattice_point():
    """Lattice.nearest_node (the thin-part search's shortcut) against every lattice point tried in turn: where
    it names one, no lattice point is nearer; where it names none, none lies within half a spacing (the square
    around a grid node that rounds to it)."""
    pts, tris = polygon_mesh(LEGS, 3.0, jitter=0.2, seed=1)
    outline = Samples.from_mesh(pts, tris, 4.0).outline
    domain, lattice = outline.domain, Lattice(outline, 4.0)
    rng = np.random.default_rng(3)
    query = rng.uniform(domain.points.min(axis=0) - 5.0, domain.points.max(axis=0) + 5.0, (3000, 2))
    node = lattice.index[lattice.nearest_node(query)]
    gaps = np.hypot(*(query[:, None] - lattice.points[None]).transpose(2, 0, 1))
    named = node >= 0
    assert np.allclose(gaps[named, node[named]], gaps[named].min(axis=1), rtol=0, atol=1e-12)
    assert (gaps[~named].min(axis=1) > 2.0 - 1e-12).all()
    assert named.sum() > 1000 and (~named).sum() > 50, "both answers were tested"


def test_the_sample_graph_links_every_pair_in_reach_that_stays_inside():
    """The sample graph (lattice links read off the grid, the other samples' from the grid and a k-d tree of theirs)
    against every pair of samples within the link radius tried in turn with Outline.straight: the same links, their
    lengths the distances, stored canonical and symmetric. The extra samples lie anywhere, some beyond the outermost
    grid nodes and the bounding box (the grid search starts from a node one beyond its edge), some near each other."""
    pts, tris = polygon_mesh(LEGS, 3.0, jitter=0.2, seed=1)
    spacing = 4.0
    rng = np.random.default_rng(5)
    extra = np.vstack([rng.uniform(pts.min(axis=0) - 6.0, pts.max(axis=0) + 6.0, (60, 2)),
                       [(0.5, 0.5), (83.5, 129.5), (-5.0, 65.0), (89.0, 131.0), (42.0, 50.0), (42.3, 50.2)]])
    samples = Samples.from_mesh(pts, tris, spacing, extra=extra)
    p, graph = samples.points, samples.graph
    i, j = np.triu_indices(len(p), 1)
    near = np.flatnonzero(np.hypot(*(p[j] - p[i]).T) <= LINK_RADIUS * spacing)
    i, j = i[near], j[near]
    inside = samples.outline.straight(p[i], p[j])
    expected = set(zip(i[inside].tolist(), j[inside].tolist()))
    found = graph.tocoo()
    assert set(zip(found.row.tolist(), found.col.tolist())) == expected | {(b, a) for a, b in expected}
    assert np.allclose(found.data, np.hypot(*(p[found.col] - p[found.row]).T), rtol=1e-12, atol=0)
    assert graph.has_canonical_format
    assert 0 < len(expected) < len(i), "links found inside and left out"
    outside_grid = (extra < pts.min(axis=0)) | (extra > pts.max(axis=0))
    assert outside_grid.any(axis=1).sum() > 5


def test_the_grid_inside_test_is_the_point_inside_test():
    """Lattice's inside test by grid rows (_inside_grid) against contour.points_in_edges on every node, bit for bit,
    where it is hardest: a grid whose rows and columns pass through outline vertices (ties at a vertex's height, nodes
    on edges), a finer one, and one larger than the shape (nodes outside every edge's reach)."""
    poly = np.array([(0, 0), (40, 0), (40, 20), (20, 20), (20, 40), (30, 40), (30, 60), (0, 60), (10, 30)], float)
    a, b = poly, np.roll(poly, -1, axis=0)
    grids = [(np.arange(0.0, 41.0, 5.0), np.arange(0.0, 61.0, 5.0)),
             (np.linspace(-1, 41, 97), np.linspace(-2, 61, 131)),
             (np.arange(-20.0, 61.0, 10.0), np.arange(-20.0, 81.0, 10.0))]
    for gx, gy in grids:
        expected = points_in_edges(np.stack(np.meshgrid(gx, gy), axis=-1).reshape(-1, 2), a, b)
        assert np.array_equal(_inside_grid(gx, gy, a, b).ravel(), expected)
        assert expected.any() and not expected.all(), "both answers were tested"


def test_thin_parts_get_the_samples_that_every_centre_tried_in_turn_gives():
    """The thin-part search (whose shortcuts skip most centres: a third of a triangle's least height from the
    outline, clear disks at both ends) against every triangle centre tried in turn: the centres farther than a
    thousandth of a spacing from the outline (exact distance) that see no lattice sample within 1.5 spacings
    (Outline.straight against every one in reach), the first in each half-spacing cell. A strip thinner than
    the spacing hangs beside the body, 1.5 px from it, between two lattice columns: its nearest samples are
    across the slit."""
    poly = np.array([(0, 0), (50, 0), (50, 60), (51.5, 60), (51.5, 10), (53.5, 10), (53.5, 62), (0, 62)], float)
    pts, tris = polygon_mesh(poly, 1.0, jitter=0.1, seed=1)
    spacing = 4.0
    outline = Samples.from_mesh(pts, tris, spacing).outline
    domain = outline.domain
    grid = Lattice(outline, spacing)
    lattice = grid.points
    centres = domain.points[tris].mean(axis=1)
    off = outline_gap(centres, outline.a, outline.b) > 1e-3 * spacing
    query, near = np.nonzero(np.hypot(*(centres[:, None] - lattice[None]).transpose(2, 0, 1)) <= 1.5 * spacing)
    seen = outline.straight(centres[query], lattice[near])
    sees = np.bincount(query[seen], minlength=len(centres)) > 0
    found = centres[off & ~sees]
    expected = found[one_per_cell(found, np.arange(len(found)), 0.5 * spacing)]
    assert len(expected) >= 10 and (expected[:, 0] > 50).all(), "the strip and the bar above it, only, are thin"
    assert np.array_equal(_fill_thin_parts(outline, tris, grid, spacing), expected)


def _strip_centre_at_one_and_a_half_spacings():
    """A block and a slanted strip 0.04 wide (thinner than the spacing, 1) whose bounding box is centred on the origin,
    so the lattice has a node at (0, 0); one strip vertex moved until a triangle's centre lies 1.5 spacings from it to
    the last bit: within as np.hypot measures it, an ulp beyond as sqrt(dx² + dy²) does. Returns (points, triangles
    with that one first, its centre)."""
    u, n, w = np.array([0.6, 0.8]), np.array([-0.8, 0.6]), 0.04
    t = np.arange(0.0, 2.21, 0.1)
    left, right = t[:, None] * u + 0.5 * w * n, t[:, None] * u - 0.5 * w * n
    hi = np.array([right[:, 0].max(), left[:, 1].max()])
    lo = -hi
    block = [[lo[0], lo[1]], [0.3, lo[1]], [0.3, 0.3], [lo[0], 0.3], [-0.5, -0.5], [0.0, -1.0], [-1.0, 0.0]]
    pts = np.vstack([block, left, right])
    tris = Delaunay(pts).simplices
    c = pts[tris].mean(axis=1)
    in_block = (c[:, 0] <= 0.3) & (c[:, 1] <= 0.3)
    in_strip = (np.abs(c @ n) <= 0.5 * w) & (c @ u >= 0) & (c @ u <= 2.2)
    tris = tris[in_block | in_strip]
    c = pts[tris].mean(axis=1)
    target = int(np.argmin(np.abs(np.hypot(*c.T) - 1.5)))
    v = tris[target][np.argmax(pts[tris[target]] @ u)]
    base, shift = pts[v].copy(), 0.0
    for _ in range(6):  # Newton: its centre 1.5 from the origin
        pts[v] = base + shift * u
        cen = pts[tris[target]].mean(axis=0)
        d = np.hypot(*cen)
        shift += 3.0 * (1.5 - d) / (u @ cen / d)
    for j in range(400):  # then by ulps, until np.hypot says within 1.5 and sqrt(dx² + dy²) does not
        for k in range(-60, 60):
            pts[v] = base + shift * u + j * 3e-14 * n + k * 4e-16 * u
            a, b, cc = tris[target]
            px = (pts[a, 0] + pts[b, 0] + pts[cc, 0]) / 3.0
            py = (pts[a, 1] + pts[b, 1] + pts[cc, 1]) / 3.0
            if np.hypot(px, py) <= 1.5 < np.sqrt(px * px + py * py):
                order = np.r_[target, np.delete(np.arange(len(tris)), target)]  # first in its half-spacing cell
                return pts, tris[order], np.array([px, py])
    raise AssertionError("no such placement found")


def test_a_triangle_centre_within_one_and_a_half_spacings_of_a_lattice_point_it_sees_is_no_thin_part_sample():
    """The thin-part search's 1.5 spacings is a hard cut-off, measured as np.hypot measures it: a centre on it to the
    last bit that sees the lattice point is no sample (square roots alone put it an ulp beyond: a sample, and weights
    0.049 away)."""
    pts, tris, centre = _strip_centre_at_one_and_a_half_spacings()
    samples = Samples.from_mesh(pts, tris, 1.0)
    assert not np.all(samples.points == centre, axis=1).any()


def test_a_virtual_handle_that_a_new_bones_samples_reach_is_dropped_and_the_bone_goes_in():
    """A bone added later whose samples include a virtual handle's sample (a step of 0) crowds it to r_h 0: it is
    dropped, as any virtual handle the new bone crowds. Counted as touching the new bone instead (a gap of 0, taken
    for inf), it stayed, linked to no real handle, and the harmonic blend's matrix was singular (numpy's LinAlgError
    out of `BoneRig.add`). Found by fuzzing: a mirrored spiral strip, Gaussian chains, spread 0.05."""
    from vide_addon.core.meshfree_bones import BoneRig

    case = np.load(Path(__file__).parent.parent / "data" / "meshes" / "virtual_handle_on_new_bone.npz")
    heads, tails, bound = case["heads"], case["tails"], int(case["bound"])
    rig = BoneRig(case["points"], case["tris"], heads[:bound], tails[:bound], float(case["spacing"]),
                  float(case["spread"]), str(case["chains"]), float(case["joint_pull"]))
    added = [rig.add(h, t) for h, t in zip(heads[bound:], tails[bound:])]
    assert sum(added) >= 2, "the bone that met the virtual handle, and others, went in"
    handles = rig.handles
    live_virtual = [i for i in range(len(handles.handles)) if handles.alive[i] and not handles.real[i]]
    real_samples = np.concatenate([h for h, r in zip(handles.handles, handles.real) if r])
    assert not np.isin([handles.handles[i][0] for i in live_virtual], real_samples).any()
    weights = rig.vertex_weights()
    assert np.isfinite(weights).all() and np.abs(weights.sum(axis=1) - 1).max() < 1e-9
