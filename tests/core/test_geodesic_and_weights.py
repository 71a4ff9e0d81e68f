"""Distances inside a shape against exact geodesics, and the weights made from them, without Blender.

Exact geodesics in a polygon are shortest paths in its visibility graph: straight lines that bend only at
reflex corners. The test meshes are Delaunay triangulations of lattice points inside the polygon.
"""

import heapq
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial import Delaunay, cKDTree
from vide_addon.core import geodesic
from vide_addon.core.geodesic import Domain, bone_distances
from vide_addon.core.weights import falloff_weights

# Two legs 4 units apart joined at the top: a source in the left leg reaches the right one around two
# reflex corners.
LEGS = np.array([(0, 0), (40, 0), (40, 100), (44, 100), (44, 0), (84, 0), (84, 130), (0, 130)], float)
# An L: one reflex corner.
ELL = np.array([(0, 0), (120, 0), (120, 40), (40, 40), (40, 120), (0, 120)], float)


def polygon_mesh(poly, spacing, jitter=0.0, seed=0):
    """Lattice points inside the polygon plus its edges sampled at half the spacing, Delaunay-triangulated;
    triangles whose centre is outside are dropped."""
    lo, hi = poly.min(axis=0), poly.max(axis=0)
    xx, yy = np.meshgrid(np.arange(lo[0], hi[0] + spacing, spacing), np.arange(lo[1], hi[1] + spacing, spacing))
    inner = np.column_stack([xx.ravel(), yy.ravel()])
    inner += np.random.default_rng(seed).uniform(-jitter, jitter, inner.shape) * spacing
    inner = inner[inside_polygon(inner, poly, margin=0.3 * spacing)]
    edge = []
    for a, b in zip(poly, np.roll(poly, -1, axis=0)):
        count = int(np.ceil(np.hypot(*(b - a)) / (spacing / 2)))
        edge.append(a + np.linspace(0, 1, count, endpoint=False)[:, None] * (b - a))
    pts = np.vstack([np.vstack(edge), inner])
    tris = Delaunay(pts).simplices
    keep = inside_polygon(pts[tris].mean(axis=1), poly)
    return pts, tris[keep]


def inside_polygon(pts, poly, margin=0.0):
    """Even-odd test; with a margin, also at least that far from every edge."""
    a, b = poly, np.roll(poly, -1, axis=0)
    px, py = pts[:, 0, None], pts[:, 1, None]
    straddle = (a[:, 1] > py) != (b[:, 1] > py)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_cross = a[:, 0] + (py - a[:, 1]) * (b[:, 0] - a[:, 0]) / (b[:, 1] - a[:, 1])
    inside = (np.count_nonzero(straddle & (px < x_cross), axis=1) % 2).astype(bool)
    if margin:
        inside &= ~on_polygon(pts, poly, tol=margin)
    return inside


def on_polygon(pts, poly, tol=1e-9):
    a, b = poly, np.roll(poly, -1, axis=0)
    ab = b - a
    t = np.clip(((pts[:, None] - a) * ab).sum(-1) / (ab * ab).sum(-1), 0, 1)
    return np.hypot(*(pts[:, None] - (a + t[..., None] * ab)).transpose(2, 0, 1)).min(axis=1) <= tol


def exact_geodesic(poly, source, targets):
    """Shortest path lengths inside the polygon from `source` to each target, through reflex corners."""
    n = len(poly)
    turn = [np.cross(poly[i] - poly[i - 1], poly[(i + 1) % n] - poly[i]) for i in range(n)]
    ccw = sum(np.cross(poly[i], poly[(i + 1) % n]) for i in range(n)) > 0
    nodes = np.vstack([source, poly[[i for i in range(n) if (turn[i] < 0) == ccw]]])

    def sees(p, qs):
        """Whether p sees each of qs: no edge crossed properly and the middle inside (or on the edge)."""
        ok = np.ones(len(qs), bool)
        for a, b in zip(poly, np.roll(poly, -1, axis=0)):
            d1, d2 = np.cross(b - a, p - a), np.cross(b - a, qs - a)
            d3, d4 = np.cross(qs - p, a - p), np.cross(qs - p, b - p)
            ok &= ~((d1 * d2 < -1e-9) & (d3 * d4 < -1e-9))
        mid = (p + qs) / 2
        return ok & (inside_polygon(mid, poly) | on_polygon(mid, poly))

    # Dijkstra over the source and the reflex corners.
    best = np.full(len(nodes), np.inf)
    best[0] = 0.0
    heap = [(0.0, 0)]
    while heap:
        d, i = heapq.heappop(heap)
        if d > best[i]:
            continue
        seen = sees(nodes[i], nodes)
        for j in np.flatnonzero(seen):
            nd = d + np.hypot(*(nodes[j] - nodes[i]))
            if j != i and nd < best[j] - 1e-12:
                best[j] = nd
                heapq.heappush(heap, (nd, j))
    out = np.full(len(targets), np.inf)
    for j in np.flatnonzero(np.isfinite(best)):
        via = np.where(sees(nodes[j], targets), best[j] + np.hypot(*(targets - nodes[j]).T), np.inf)
        out = np.minimum(out, via)
    return out


@pytest.mark.parametrize("poly, source", [(LEGS, (20.0, 20.0)), (ELL, (20.0, 100.0))], ids=["legs", "ell"])
@pytest.mark.parametrize("spacing, max_nodes", [(2.0, geodesic.MAX_NODES), (1.0, 3000)],
                         ids=["every-vertex-a-node", "thinned-graph"])
def test_distance_is_within_5_percent_of_the_exact_geodesic_and_2_percent_on_average(poly, source, spacing,
                                                                                      max_nodes):
    pts, tris = polygon_mesh(poly, spacing, jitter=0.2)
    domain = Domain.from_mesh(pts, tris, max_nodes=max_nodes)
    assert (len(domain.nodes) < len(pts)) == (max_nodes < len(pts))
    src = np.array([source])
    dist, outside = bone_distances(domain, src, src)
    exact = exact_geodesic(poly, np.array(source), pts)
    far = exact > spacing
    error = (dist[far, 0] - exact[far]) / exact[far]
    assert not outside.any()
    assert error.min() > -1e-6, "a path left the shape (shorter than the exact geodesic)"
    assert error.max() <= 0.05, error.max()
    assert error.mean() <= 0.02, error.mean()


def test_distance_from_a_bone_segment_is_the_distance_to_the_segment_in_a_convex_shape():
    rect = np.array([(0, 0), (100, 0), (100, 60), (0, 60)], float)
    pts, tris = polygon_mesh(rect, 2.0, jitter=0.2)
    head, tail = np.array([20.0, 30.0]), np.array([70.0, 40.0])
    dist, _ = bone_distances(Domain.from_mesh(pts, tris), head[None], tail[None])
    ab = tail - head
    t = np.clip((pts - head) @ ab / (ab @ ab), 0, 1)
    exact = np.hypot(*(pts - (head + t[:, None] * ab)).T)
    assert np.abs(dist[:, 0] - exact).max() <= 0.02 * exact.max()


@pytest.mark.parametrize("turn", [0.0, 0.3, 2.0])
def test_the_other_leg_is_reached_only_around_the_top_of_the_gap(turn):
    """Also when turned and rounded to float32 as Blender's vertices are: the legs' bottom edges lie on one
    line, and a link along it past both corners of the gap must not count as inside."""
    pts, tris = polygon_mesh(LEGS, 2.0)
    rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    src = np.array([[20.0, 10.0]]) @ rot.T
    dist, _ = bone_distances(Domain.from_mesh((pts @ rot.T).astype(np.float32).astype(float), tris), src, src)
    right_foot = (pts[:, 0] > 44) & (pts[:, 1] < 20)
    # Straight across the gap it is about 25-60 units; around the top of it 178 at least (exactly, from the
    # polygon), and the float32 rounding moves a vertex by 1e-5 at most.
    exact = exact_geodesic(LEGS, np.array([20.0, 10.0]), pts[right_foot])
    assert exact.min() > 178
    assert (dist[right_foot, 0] >= exact - 1e-4).all()


def test_a_bone_outside_the_shape_starts_from_the_nearest_part():
    pts, tris = polygon_mesh(LEGS, 2.0)
    head, tail = np.array([[-30.0, 20.0]]), np.array([[-30.0, 60.0]])
    dist, outside = bone_distances(Domain.from_mesh(pts, tris), head, tail)
    assert outside.tolist() == [True]
    assert np.isfinite(dist).all()
    left_edge = pts[:, 0] == 0
    assert np.allclose(dist[left_edge & (pts[:, 1] >= 20) & (pts[:, 1] <= 60), 0], 30.0, atol=0.5)
    # Around the top of the gap: 30 to the shape, then 56.6 up to the gap's top, 4 across and 80 down
    # (about 170); straight across it would be about 80.
    right_foot = (pts[:, 0] > 44) & (pts[:, 1] < 20)
    assert dist[right_foot, 0].min() > 0.97 * (30 + np.hypot(40, 40) + 4 + 80)


@pytest.mark.parametrize("max_nodes", [geodesic.MAX_NODES, 300], ids=["every-vertex-a-node", "thinned-graph"])
def test_distances_within_the_reach_are_the_full_ones_and_infinite_beyond(max_nodes):
    """bone_distances(..., reach): the same distances wherever they are at most `reach` past the furthest node's
    nearest bone, infinite (never NaN) only where the full distance is beyond that (at the graph's nodes, two node
    spacings further), and the same Joint Blending seeds for smoothness up to reach / 30 (weights.MEASURED_REACH),
    equal or not."""
    from vide_addon.core.smooth_weights import exponential_seeds
    from vide_addon.core.weights import MEASURED_REACH

    # A long bar with a bone at each end and one in the middle, all of whose reaches are shorter than the bar.
    pts, tris = polygon_mesh(np.array([(0, 0), (300, 0), (300, 20), (0, 20)], float), 2.0, jitter=0.2)
    heads = np.array([[5.0, 10.0], [145.0, 10.0], [280.0, 10.0]])
    tails = np.array([[20.0, 10.0], [155.0, 10.0], [295.0, 10.0]])
    domain = Domain.from_mesh(pts, tris, max_nodes=max_nodes)
    full, _ = bone_distances(domain, heads, tails)
    reach = 60.0
    cut, _ = bone_distances(domain, heads, tails, reach)
    assert not np.isnan(cut).any()
    nearest = full[domain.nodes].min(axis=1).max()  # about 65: half way between two bones
    within = full <= nearest + reach - domain.spacing
    assert within.all(axis=1).sum() < 0.2 * len(pts), "the reach cuts every bone short of some vertices"
    assert np.array_equal(cut[within], full[within])
    beyond = full[domain.nodes] > nearest + reach + 2 * domain.spacing  # the graph's limit (vertices step from nodes)
    assert beyond.any() and np.isinf(cut[domain.nodes][beyond]).all()
    assert np.isfinite(cut).any(axis=1).all(), "every vertex keeps its nearest bone"
    # Joint Blending's seeds, with the largest smoothness the reach was measured for and smaller ones.
    for smoothness in (np.full(3, reach / MEASURED_REACH), reach / MEASURED_REACH * np.array([1.0, 0.5, 0.2])):
        assert np.abs(exponential_seeds(cut, smoothness) - exponential_seeds(full, smoothness)).max() < 1e-12


def test_an_island_no_bone_reaches_belongs_to_the_nearest_bone():
    a_pts, a_tris = polygon_mesh(np.array([(0, 0), (30, 0), (30, 30), (0, 30)], float), 3.0)
    b_pts, b_tris = polygon_mesh(np.array([(60, 0), (90, 0), (90, 30), (60, 30)], float), 3.0)
    pts, tris = np.vstack([a_pts, b_pts]), np.vstack([a_tris, b_tris + len(a_pts)])
    heads = np.array([[10.0, 15.0], [-40.0, 15.0]])
    tails = np.array([[20.0, 15.0], [-50.0, 15.0]])
    dist, outside = bone_distances(Domain.from_mesh(pts, tris), heads, tails)
    assert outside.tolist() == [False, True]
    island = np.arange(len(a_pts), len(pts))
    assert np.isfinite(dist[island, 0]).all() and np.isinf(dist[island, 1]).all()
    w = falloff_weights(dist, np.array([5.0, 5.0])).toarray()
    assert np.allclose(w[island], [1.0, 0.0])


def test_weights_sum_to_one_over_at_most_max_influences_none_negative_and_no_underflow():
    rng = np.random.default_rng(1)
    dist = rng.uniform(0, 100, (500, 12))
    dist[:50] += 1e6  # far from every bone: exp would underflow without the row maximum taken out
    smooth = rng.uniform(1, 20, 12)
    for k in (1, 2, 4, 8):
        w = falloff_weights(dist, smooth, max_influences=k, prune=0.01).toarray()
        assert np.allclose(w.sum(axis=1), 1.0, atol=1e-12)
        assert (np.count_nonzero(w, axis=1) <= k).all()
        assert w.min() >= 0.0
        # Weights fade out below twice Prune Below: none is left where it was under Prune Below.
        unpruned = falloff_weights(dist, smooth, max_influences=k, prune=0.0).toarray()
        assert (w[unpruned < 0.01] == 0).all() and (w[unpruned >= 0.02] > 0).all()
        assert (w.argmax(axis=1) == (dist / smooth).argmin(axis=1)).all()


def test_weights_follow_exp_of_minus_distance_over_smoothness_faded_far_past_the_nearest_bone():
    from vide_addon.core.weights import REACH, bezier_falloff

    dist = np.array([[1.0, 3.0, np.inf]])
    smooth = np.array([2.0, 1.0, 1.0])
    w = falloff_weights(dist, smooth, max_influences=4, prune=0.0).toarray()
    e = np.exp([-0.5, -3.0]) * bezier_falloff(np.array([0.0, 2.5]) / REACH)
    assert np.allclose(w[0, :2], e / e.sum())
    assert w[0, 2] == 0.0
    far = falloff_weights(np.array([[0.0, REACH * 1.0, REACH * 0.999]]), np.ones(3), prune=0.0).toarray()
    assert far[0, 1] == 0.0 and 0.0 < far[0, 2] < 1e-9, "exactly 0 from REACH smoothness lengths past the nearest"


def test_max_influences_treats_tied_bones_alike_and_changes_continuously():
    """Two bones tied for the last place both drop (so a mirrored rig keeps mirrored weights), and a small
    change of the weights makes a small change of the result where the strongest few change hands."""
    from vide_addon.core.weights import strongest

    w = strongest(np.array([[0.3, 0.3, 0.2, 0.1, 0.1]]), max_influences=4, prune=0.0).toarray()
    assert np.allclose(w, [[0.4, 0.4, 0.2, 0.0, 0.0]])
    rng = np.random.default_rng(3)
    raw = np.sort(rng.uniform(0, 1, (2000, 8)), axis=1)[:, ::-1]  # falling, so columns 3 and 4 are 4th and 5th
    raw[:, 4] = raw[:, 3] + rng.uniform(-1e-7, 1e-7, 2000)  # two bones about to swap places
    a = strongest(raw.copy(), max_influences=4, prune=0.0).toarray()
    b = strongest(raw + rng.uniform(-1e-7, 1e-7, raw.shape), max_influences=4, prune=0.0).toarray()
    assert np.abs(a - b).max() < 1e-4
    perm = rng.permutation(8)
    assert np.allclose(strongest(raw[:, perm], 4, 0.0).toarray(), a[:, perm]), "the order of the bones does not matter"
    assert np.allclose(strongest(np.full((1, 6), 1 / 6), 4, 0.0).toarray().sum(), 1.0), "all tied: still weighted"


def test_every_vertex_is_a_node_when_there_are_few_and_few_bones_and_at_most_max_nodes_otherwise():
    pts, tris = polygon_mesh(ELL, 1.0)
    assert len(Domain.from_mesh(pts, tris, max_nodes=3000, bones=2).nodes) == len(pts)
    assert len(Domain.from_mesh(pts, tris, max_nodes=3000, bones=geodesic.ALL_NODES_WORK).nodes) <= 3000
    assert len(Domain.from_mesh(pts, tris, max_nodes=3000).nodes) <= 3000
    big, big_tris = polygon_mesh(LEGS, 0.45)
    assert len(big) > geodesic.ALL_NODES_MAX
    assert len(Domain.from_mesh(big, big_tris, bones=1).nodes) <= geodesic.MAX_NODES


def test_a_loose_vertex_in_no_triangle_takes_its_straight_distance_to_the_nearest_bone():
    pts, tris = polygon_mesh(ELL, 4.0)
    pts = np.vstack([pts, [[200.0, 200.0]]])  # in no triangle: every vertex of a triangle is still a node
    head, tail = np.array([[20.0, 100.0]]), np.array([[20.0, 60.0]])
    domain = Domain.from_mesh(pts, tris)
    assert len(domain.nodes) == len(pts) - 1
    dist, _ = bone_distances(domain, head, tail)
    assert np.isfinite(dist).all()
    assert np.isclose(dist[-1, 0], np.hypot(180.0, 100.0))


def test_a_bone_outside_the_mesh_nearest_a_loose_vertex_still_weights_the_nearest_part_of_the_mesh():
    """The vertices an outside bone starts from are graph nodes: a loose vertex nearest to it would reach nothing."""
    pts, tris = polygon_mesh(ELL, 4.0)
    pts = np.vstack([pts, [[200.0, 200.0]]])
    heads, tails = np.array([[20.0, 100.0], [205.0, 205.0]]), np.array([[20.0, 60.0], [215.0, 215.0]])
    dist, outside = bone_distances(Domain.from_mesh(pts, tris), heads, tails)
    assert list(outside) == [False, True]
    assert np.isfinite(dist[:-1, 1]).all(), "the outside bone reaches the whole mesh"


def segments_and_cells(domain, count, seed=0):
    """Random vertex-to-vertex segments, whether each has a point in a cell taken as outside (what spares its walk),
    and the corners of those cells."""
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(domain.points), (2, count))
    domain.outside = domain._outside_cells()
    _covered, out = domain.clear.covers(domain.points[i], domain.points[j], domain.outside)
    cells = np.argwhere(domain.outside)
    corners = domain.clear.lo + (cells[:, None, :] + [[0, 0], [0, 1], [1, 0], [1, 1]]) * domain.clear.cell
    return i, j, out, corners.reshape(-1, 2)


def test_cells_taken_as_outside_lie_outside_and_only_segments_the_walk_blocks_go_through_them():
    pts, tris = polygon_mesh(LEGS, 2.0)
    domain = Domain.from_mesh(pts, tris, links=False)
    i, j, out, corners = segments_and_cells(domain, 4000)
    assert not inside_polygon(corners, LEGS).any()
    gap = domain.clear._cells(np.array([42.0]), np.array([50.0]))[0]
    assert domain.outside.ravel()[gap].all(), "the gap between the legs is known to be outside"
    assert out.sum() > 100
    assert not domain.walk(i[out], pts[j[out]], j[out]).any()


def test_overlapping_islands_or_a_folded_sheet_leave_no_cell_outside_the_mesh():
    """Where two islands overlap, the outline crosses itself: an even-odd test would put the overlap outside. A
    sheet folded back over the square along its right side leaves that side out of the outline: the winding
    number there would be 0."""
    square = np.array([(0, 0), (40, 0), (40, 40), (0, 40)], float)
    pts, tris = polygon_mesh(square, 2.0)
    both = np.vstack([pts, pts + 20.0]), np.vstack([tris, tris + len(pts)])
    domain = Domain.from_mesh(*both, links=False)
    i, j, out, corners = segments_and_cells(domain, 4000)
    assert len(corners) and not inside_polygon(corners, square).any() and not inside_polygon(corners - 20, square).any()
    assert not domain.walk(i[out], domain.points[j[out]], j[out]).any()
    folded = pts.copy()
    folded[:, 0] = 40.0 - 0.5 * (40.0 - folded[:, 0])  # on the same side of the fold, x from 20 to 40
    fold = np.flatnonzero(pts[:, 0] == 40.0)
    index = np.arange(len(pts)) + len(pts)
    index[fold] = fold  # the second sheet shares the vertices of the fold
    domain = Domain.from_mesh(np.vstack([pts, folded]), np.vstack([tris, index[tris]]), links=False)
    i, j, out, corners = segments_and_cells(domain, 10)
    assert not inside_polygon(corners, square).any()


def test_the_walk_left_of_test_skips_the_side_length_only_where_it_cannot_matter():
    """Points within tol |b - a| of the line count as on it; the length is computed only where tol (|dx| + |dy|)
    leaves a doubt. Points around that band, on lines of every slope, get the answer of the plain formula."""
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(2, 20000, 2)) * 10
    b[::4, 1] = a[::4, 1]  # horizontal lines: the bound is exact there
    tol = 1e-3
    d = b - a
    normal = np.column_stack([-d[:, 1], d[:, 0]]) / np.hypot(*d.T)[:, None]
    # Signed distances from the line in units of tol: inside, at and just past both ends of the band.
    offset = rng.choice([-2.0, -1.0001, -0.9999, -0.5, 0.5], 20000) * tol
    x = a + rng.uniform(0, 1, (20000, 1)) * d + normal * offset[:, None]
    left = geodesic._left_of_xy(a[:, 0], a[:, 1], b[:, 0], b[:, 1], x[:, 0], x[:, 1], tol)
    plain = d[:, 0] * (x[:, 1] - a[:, 1]) - d[:, 1] * (x[:, 0] - a[:, 0]) >= -tol * np.hypot(*d.T)
    assert np.array_equal(left, plain)
    assert left.sum() > 10000 and (~left).sum() > 6000


def scipy_barycentric(tri, queries):
    """Each query's triangle by scipy's find_simplex and its barycentric coordinates by Delaunay.transform: the
    reference `geodesic.locate` replaces."""
    simplex = tri.find_simplex(queries)
    t = tri.transform[np.maximum(simplex, 0)]
    lam = np.einsum("nij,nj->ni", t[:, :2], queries - t[:, 2])
    return simplex, np.column_stack([lam, 1.0 - lam.sum(axis=1)])


def test_locate_finds_the_triangle_and_barycentric_coordinates_scipy_finds():
    """Inside a triangle: scipy's triangle and coordinates (to round-off). On a side or at a corner: a triangle
    holding it whose coordinates give the point back. Outside all triangles: none."""
    rng = np.random.default_rng(5)
    pts = np.vstack([rng.uniform(0, 100, (400, 2)), [[0, 0], [100, 0], [100, 100], [0, 100]]])
    tri = Delaunay(pts)
    s = tri.simplices
    on_side = pts[s[:, 0]] + rng.uniform(0, 1, (len(s), 1)) * (pts[s[:, 1]] - pts[s[:, 0]])
    queries = np.vstack([rng.uniform(-10, 110, (5000, 2)), pts, on_side])
    held, bary = geodesic.locate(pts, s, queries)
    simplex, lam = scipy_barycentric(tri, queries)
    assert np.array_equal(held >= 0, simplex >= 0)
    clear = lam.min(axis=1) > 1e-9
    assert clear.sum() > 3000 and np.array_equal(held[clear], simplex[clear])
    assert np.abs(bary[clear] - lam[clear]).max() < 1e-9
    found = held >= 0
    assert bary[found].min() > -1e-9
    assert np.abs(np.einsum("nk,nkd->nd", bary[found], pts[s[held[found]]]) - queries[found]).max() < 1e-9


def test_the_thinned_graph_interpolates_as_scipys_delaunay_triangles_do():
    """Each vertex that scipy's Delaunay places in a triangle of nodes inside the mesh is interpolated with its
    barycentric coordinates there (to float32 round-off; a vertex on a side shared by two such triangles may get
    either, with the same weights)."""
    pts, tris = polygon_mesh(LEGS, 1.0, jitter=0.2)
    domain = Domain.from_mesh(pts, tris, max_nodes=1500)
    src = np.array([[20.0, 20.0]])
    bone_distances(domain, src, src)
    tri, inside = domain.coarse
    rest = np.setdiff1d(np.arange(len(pts)), domain.nodes)
    simplex, lam = scipy_barycentric(tri, pts[rest])
    held = (simplex >= 0) & inside[np.maximum(simplex, 0)]
    assert held.sum() > 0.8 * len(rest)
    expected = np.zeros((held.sum(), len(domain.nodes)))
    np.add.at(expected, (np.arange(held.sum())[:, None], tri.simplices[simplex[held]]), np.maximum(lam[held], 0))
    expected /= expected.sum(axis=1, keepdims=True)
    assert np.abs(domain.interpolation[rest[held]].toarray() - expected).max() < 2e-6


def test_a_thinned_graphs_segments_that_touch_no_outline_edge_are_ones_the_walk_finds_inside():
    """`visible` takes a segment that leaves its start inwards and touches no outline edge as inside without a walk
    (thinned nodes): the walk agrees on every such segment, and some segments the walk finds inside touch the
    outline (the walk still decides those)."""
    pts, tris = polygon_mesh(LEGS, 1.0, jitter=0.2)
    domain = Domain.from_mesh(pts, tris, max_nodes=1500)
    assert domain.outline is not None
    i = np.random.default_rng(2).integers(0, len(pts), 1000)
    near = cKDTree(pts).query(pts[i], k=40)[1]  # out to about 3.5 units
    i, j = np.repeat(i, 39), near[:, 1:].ravel()
    straight = domain.outline.straight(pts[i], pts[j], i)
    walked = domain.walk(i, pts[j], j)
    assert straight.sum() > 1000 and (walked & ~straight).sum() > 100 and (~walked).sum() > 20  # some cross the gap
    assert not (straight & ~walked).any()
    assert np.array_equal(domain.visible(i, j), walked), "visible, with its clearances, decides as the walk does"
    q = pts[j] + np.random.default_rng(3).normal(0.0, 0.7, (len(j), 2))  # points, some outside the mesh
    assert np.array_equal(domain.visible(i, q=q), domain.walk(i, q, np.full(len(i), -1)))
    assert Domain.from_mesh(pts, tris, bones=1).outline is None, "every vertex a node: links cross few triangles"


def test_segments_visible_decides_without_a_walk_along_or_across_the_outline_are_ones_the_walk_agrees_on():
    """Two shortcuts of `visible` that spare walks: a segment between outline vertices with the outline running from
    one to the other within the rounding tolerance of it is inside, and one that crosses an outline edge cleanly is
    not. On the legs (straight sides sampled at half the spacing, a gap between the legs) each shortcut takes many
    segments, and the walk agrees on every one; segments bent off the outline by more than the tolerance are left to
    the walk."""
    pts, tris = polygon_mesh(LEGS, 1.0, jitter=0.2)
    domain = Domain.from_mesh(pts, tris, max_nodes=1500)
    rng = np.random.default_rng(4)
    i = rng.choice(np.flatnonzero(domain.on_boundary), 2000)
    near = cKDTree(pts).query(pts[i], k=12)[1]
    i, j = np.repeat(i, 11), near[:, 1:].ravel()
    along = domain._along_outline(i, j)
    assert along.sum() > 10000 and domain.walk(i[along], pts[j[along]], j[along]).all()
    apart = along & (domain.following[i] != j) & (domain.following[j] != i)  # not the two ends of an outline edge
    assert apart.sum() > 5000
    bent = pts.copy()
    bent[domain.on_boundary] += rng.normal(0.0, 1e3 * domain.tolerance, (domain.on_boundary.sum(), 2))
    assert not Domain.from_mesh(bent, tris, links=False)._along_outline(i[apart], j[apart]).any()
    # Across the gap between the legs (x 40 to 44, below 100), and any pairs near it.
    left = np.flatnonzero((pts[:, 0] > 30) & (pts[:, 0] < 40) & (pts[:, 1] < 95))
    right = np.flatnonzero((pts[:, 0] > 44) & (pts[:, 0] < 54) & (pts[:, 1] < 95))
    i, j = np.r_[rng.choice(left, 1000), rng.choice(left, 1000)], np.r_[rng.choice(right, 1000), rng.choice(left, 1000)]
    cross = domain._crosses_outline(pts[i], pts[j], i)
    walked = domain.walk(i, pts[j], j)
    assert cross[:1000].sum() > 950 and not cross[1000:].any() and not walked[cross].any()


def test_where_pieces_overlap_a_segment_crossing_another_pieces_outline_is_left_to_the_walk():
    """Two squares overlapping (one mesh of two pieces): a segment inside one square crosses the other's outline
    cleanly yet stays inside the mesh. `visible` takes a clean crossing as blocked only on a mesh of one piece without
    folds, so here it decides as the walk does; the legs are one piece."""
    square = np.array([(0, 0), (40, 0), (40, 40), (0, 40)], float)
    pts, tris = polygon_mesh(square, 1.0, jitter=0.2)
    both = np.vstack([pts, pts + 20.0]), np.vstack([tris, tris + len(pts)])
    domain = Domain.from_mesh(*both, max_nodes=1500)
    assert domain.outline is not None and not domain._one_piece()
    rng = np.random.default_rng(5)
    i = rng.choice(np.flatnonzero(inside_polygon(pts, square, margin=1.0) & (pts[:, 0] > 25)), 500)
    j = rng.choice(np.flatnonzero(inside_polygon(pts, square, margin=1.0) & (pts[:, 1] > 25)), 500)
    crossing = domain._crosses_outline(pts[i], pts[j], i)  # the second square's edges at x = 20 or y = 20
    walked = domain.walk(i, pts[j], j)
    assert (crossing & walked).sum() > 50, "inside the first square across the second's outline"
    assert np.array_equal(domain.visible(i, j), walked)
    legs = Domain.from_mesh(*polygon_mesh(LEGS, 1.0, jitter=0.2), max_nodes=1500)
    assert legs._one_piece()


def wound_strip(angle):
    """A strip 10 wide round a circle of radius 10, from angle 0 to each of `angle` (ascending): its points (6 across
    at each angle) and triangles."""
    rows = len(angle)
    t, r = np.meshgrid(angle, np.linspace(10.0, 20.0, 6), indexing="ij")
    pts = np.column_stack([(r * np.cos(t)).ravel(), (r * np.sin(t)).ravel()])
    idx = np.arange(rows * 6).reshape(rows, 6)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    return pts, np.vstack([np.column_stack([a, b, c]), np.column_stack([a, c, d])])


def test_a_strip_wound_over_itself_leaves_segments_crossing_its_own_outline_to_the_walk():
    """A strip wound 1.3 times round (one piece, no folds) lies over itself: its start lies inside the second turn,
    so a segment along the second turn crosses the start's end cleanly yet stays inside the mesh. The outline crosses
    itself there, so the mesh does not count as one piece for the shortcut, and `visible` decides as the walk does."""
    angle = np.linspace(0.0, 2.6 * np.pi, 300)
    pts, tris = wound_strip(angle)
    domain = Domain.from_mesh(pts, tris, max_nodes=500)
    assert domain.outline is not None and not domain._folded() and not domain._one_piece()
    # Across the start's end (angle 0 = 2 pi), along the second turn's middle.
    before, after = np.abs(angle - (2 * np.pi - 0.15)).argmin(), np.abs(angle - (2 * np.pi + 0.15)).argmin()
    i, j = np.array([before * 6 + 2]), np.array([after * 6 + 2])
    assert domain._crosses_outline(pts[i], pts[j], i).all() and domain.walk(i, pts[j], j).all()
    assert domain.visible(i, j).all()


def test_an_outline_with_more_reflex_corners_than_nodes_allowed_still_gets_a_graph_within_them():
    """The inner side of a strip wound round a circle bends by 1.8° at each of its 150 vertices: reflex corners, which
    thinning keeps as nodes. With room for 100 nodes, keeping them all left no room and the spacing grew for ever;
    they are thinned like the rest and the graph keeps within the 100. The distances from a bone at the strip's start
    are then less close to the exact ones (straight while that clears the inner circle, else round it) than the 5%
    of other meshes: 13% at worst, the thinned corners cutting the inner bend less closely."""
    pts, tris = wound_strip(np.linspace(0.0, 1.5 * np.pi, 150))
    domain = Domain.from_mesh(pts, tris, max_nodes=100)
    assert np.count_nonzero(domain.on_boundary & ~(domain.opening <= np.radians(181.0))) > 100
    assert len(domain.nodes) <= 100
    dist, _outside = bone_distances(domain, np.array([[15.0, 0.0]]), np.array([[15.0, 1e-3]]))
    r, angle = np.hypot(*pts.T), np.arctan2(pts[:, 1], pts[:, 0]) % (2 * np.pi)
    far = np.flatnonzero((r > 10.5) & (angle > 0.3))
    r, angle = r[far], angle[far]
    round_it = angle > np.arccos(10.0 / 15.0) + np.arccos(10.0 / r)  # the straight line would cut the inner circle
    exact = np.where(round_it, np.sqrt(15.0**2 - 100.0) + np.sqrt(r**2 - 100.0)
                     + 10.0 * (angle - np.arccos(10.0 / 15.0) - np.arccos(10.0 / r)),
                     np.hypot(r * np.cos(angle) - 15.0, r * np.sin(angle)))
    assert round_it.sum() > 100
    assert np.abs(dist[far, 0] / exact - 1.0).max() < 0.15


def test_dense_work_in_blocks_of_rows_gives_what_one_block_gives(monkeypatch):
    """The weights' dense work runs on blocks of rows (weights.BLOCK entries): with blocks of a few rows (and the
    zone's seeds too many to take dense at once), the falloff, the blended weights on a zone (its rows found block by
    block), a live re-weight of one bone and Meshfree C²'s blend give the same weights as with one block for the
    whole mesh."""
    from vide_addon.core import bind_weights, smooth_weights, weights
    from vide_addon.core.bind_settings import BindSettings
    from vide_addon.core.meshfree_bones import BoneRig

    pts, tris = polygon_mesh(np.array([(0, 0), (600, 0), (600, 16), (0, 16)], float), 2.0, jitter=0.2)
    x = np.linspace(5, 595, 5)  # four bones end to end down a long strip: the zone is around the joints
    heads, tails = np.c_[x[:-1], np.full(4, 8.0)], np.c_[x[1:], np.full(4, 8.0)]
    domain = Domain.from_mesh(pts, tris, bones=4)
    dist, _outside = bone_distances(domain, heads, tails)
    blended, meshfree = BindSettings(), BindSettings(method="MESHFREE")
    rig = BoneRig(pts, tris, heads, tails, meshfree.spacing(pts))

    def all_weights():
        smooth = np.full(4, 2.0)
        blend = bind_weights.joint_blend(pts, tris, heads, tails, blended, domain)
        fresh = bind_weights.geodesic_weights(dist, smooth, blend, blended)
        assert blend._inside is not smooth_weights.ALL, "solved on a zone"
        live = bind_weights.geodesic_weights(dist, np.array([5.0, 2.0, 2.0, 2.0]), blend, blended)
        mf = bind_weights.meshfree_weights(rig.vertex_weights(),
                                           bind_weights.joint_blend(pts, tris, *rig.held(), meshfree,
                                                                    rig.samples.domain), meshfree)
        return [weights.falloff_weights(dist, smooth), fresh, live, mf]

    whole = all_weights()
    monkeypatch.setattr(weights, "BLOCK", 37)  # 9 rows of 4 bones
    monkeypatch.setattr(smooth_weights, "BLOCK", 37)  # the zone's seeds taken sparse, a few columns at a time
    assert len(weights.block_rows((len(pts), 4))) > 100
    for one, blocks in zip(whole, all_weights()):
        assert np.abs(one - blocks).max() < 1e-12


@pytest.mark.parametrize("bones", [1, 3, 8, 32, 33, 60])
def test_along_rows_a_column_at_a_time_or_by_numpy_is_numpys_row_reduction(bones):
    """weights.along_rows gives each row's smallest and largest value as numpy's reduction along rows does, with few
    columns (one call per column) as with many (numpy's), infinities included."""
    from vide_addon.core.weights import FEW_COLUMNS, along_rows

    assert 32 <= FEW_COLUMNS < 33  # the cases above fall on both sides of it
    w = np.random.default_rng(bones).normal(size=(500, bones))
    w[np.random.default_rng(1).random(w.shape) < 0.2] = np.inf
    w[:3] = -np.inf
    for ufunc in (np.minimum, np.maximum):
        out = along_rows(ufunc, w)
        assert out.shape == (500,) and np.array_equal(out, ufunc.reduce(w, axis=1))
    assert not np.shares_memory(along_rows(np.minimum, w), w)


@pytest.mark.parametrize("per_row", [0.0, 1.5, 6.0, 10.0, 20.0, 59.0])
def test_flat_csr_holds_the_values_at_their_flat_indices_however_many_per_row(per_row):
    """weights.flat_csr puts each value at its flat index, in a canonical CSR matrix with int32 indices, whether
    every entry is given (laid out), up to FEW_PER_ROW per row (rows by division) or more (rows searched)."""
    from vide_addon.core.weights import FEW_PER_ROW, flat_csr

    assert FEW_PER_ROW == 8  # the cases above fall on each side of it
    n, k = 300, 60
    rng = np.random.default_rng(int(per_row * 10))
    dense = rng.random((n, k)) + 0.5
    dense[rng.random((n, k)) >= per_row / k] = 0.0
    dense[7] = 0.0  # an empty row
    at = np.flatnonzero(dense)
    assert (len(at) <= FEW_PER_ROW * n) == (per_row < FEW_PER_ROW) and len(at) < n * k
    m = flat_csr(at, dense.reshape(-1)[at], (n, k))
    m.check_format(full_check=True)
    assert m.has_canonical_format and m.indices.dtype == m.indptr.dtype == np.int32
    assert np.array_equal(m.toarray(), dense)


@pytest.mark.parametrize("shape", [(300, 8), (50, 60), (1, 1), (0, 4)])
def test_flat_csr_of_every_entry_is_the_dense_array(shape):
    """weights.flat_csr with every flat index given (a small mesh's Geodesic seeds) is the whole array, canonical."""
    from vide_addon.core.weights import flat_csr

    dense = np.random.default_rng(0).random(shape) + 0.5
    m = flat_csr(np.arange(dense.size), dense.reshape(-1), shape)
    m.check_format(full_check=True)
    assert m.has_canonical_format and m.indices.dtype == m.indptr.dtype == np.int32
    assert m.shape == shape and m.nnz == dense.size and np.array_equal(m.toarray(), dense)


@pytest.mark.parametrize("block", [1 << 17, 64])
def test_strongest_on_sparse_or_dense_weights_is_the_rule_applied_row_by_row(monkeypatch, block):
    """strongest, from a sparse matrix or an array (row- or column-major, as a solve gives it), on dense blocks of
    rows (one block, or several: then the rows whose other weights are all under Prune of their largest are set to
    that bone without the steps), gives what the rule gives applied to each row on its own (the next largest taken
    off, normalized, faded below twice Prune, normalized; the strongest stays)."""
    from scipy import sparse
    from vide_addon.core import weights
    from vide_addon.core.weights import strongest

    monkeypatch.setattr(weights, "BLOCK", block)

    def rule(row, k, prune):
        w = row.copy()
        if len(w) > k:
            next_largest = np.sort(w)[-(k + 1)]
            w = np.maximum(w - next_largest, 0.0)
            if w.sum() == 0 and next_largest > 0:
                w[np.argmax(row)] = 1.0
        w = w / (w.sum() or 1.0)
        if prune:
            top = np.argmax(w)
            w = w * np.clip(w / prune - 1.0, 0.0, 1.0)
            if w.sum() == 0:
                w[top] = 1.0
            w = w / (w.sum() or 1.0)
        return w

    rng = np.random.default_rng(5)
    raw = rng.random((3000, 9)) ** 3 * (rng.random((3000, 9)) < rng.uniform(0.05, 0.9, (3000, 1)))
    raw[::50] = 0.0  # rows with no weight
    raw[1::50, :6] = 0.2  # more tied than Max Influences
    raw[2::50, 3] = -1e-17  # round-off below 0
    raw[3::50] = np.r_[1.0, 0.00999, 0.0099, np.zeros(6)]  # the others just under Prune of the largest
    raw[4::50] = np.r_[0.0, 0.5, 0.004, 0.002, np.zeros(5)]  # one bone, whatever the steps
    mostly_one = raw * np.where(rng.random((len(raw), 1)) < 0.8, 0.002, 1.0)  # most rows: one bone and crumbs
    mostly_one[np.arange(len(raw)), rng.integers(0, 9, len(raw))] += 0.5
    for weights_ in (raw, mostly_one):
        unsorted = sparse.csr_matrix(weights_)  # each row's entries in reverse order, as a product may leave them
        rows = np.repeat(np.arange(len(weights_)), np.diff(unsorted.indptr))
        order = np.lexsort((-unsorted.indices, rows))
        unsorted = sparse.csr_matrix((unsorted.data[order], unsorted.indices[order], unsorted.indptr), raw.shape)
        for k, prune in ((4, 0.01), (4, 0.0), (2, 0.3), (9, 0.01), (1, 0.01)):
            expected = np.array([rule(row, k, prune) for row in weights_])
            for given in (weights_, np.asfortranarray(weights_), sparse.csr_matrix(weights_), unsorted):
                assert np.abs(strongest(given, k, prune).toarray() - expected).max() < 1e-12


def test_segment_distance_is_the_nearest_point_of_the_segment():
    """segment_distance (one segment, or one per point; a segment may be a single point) gives a foot on the segment
    at the returned distance, and no point of the segment (sampled densely) is nearer than that."""
    rng = np.random.default_rng(11)
    points = rng.uniform(-5.0, 15.0, (400, 2))
    a, b = rng.uniform(0.0, 10.0, (400, 2)), rng.uniform(0.0, 10.0, (400, 2))
    b[::7] = a[::7]  # single points
    t = np.linspace(0.0, 1.0, 2001)
    for heads, tails in ((a, b), (a[0], b[0]), (a[7], b[7])):
        gap, foot = geodesic.segment_distance(points, heads, tails)
        h, e = np.broadcast_to(heads, points.shape), np.broadcast_to(tails, points.shape)
        samples = h[:, None] + t[None, :, None] * (e - h)[:, None]  # (n, samples, 2)
        nearest = np.hypot(*(samples - points[:, None]).transpose(2, 0, 1)).min(axis=1)
        length = np.hypot(*(e - h).T)
        assert np.all(gap <= nearest + 1e-12)
        assert np.all(nearest - gap <= length / 2000.0 + 1e-12)
        assert np.allclose(np.hypot(*(foot - points).T), gap, rtol=0.0, atol=1e-12)
        # The foot on the segment: between its ends, on its line.
        along = np.einsum("ij,ij->i", foot - h, e - h)
        assert np.all((along >= -1e-12) & (along <= length**2 + 1e-9))
        assert np.allclose((e - h)[:, 0] * (foot - h)[:, 1] - (e - h)[:, 1] * (foot - h)[:, 0], 0.0, atol=1e-9)


def test_sides_pair_each_inner_side_with_its_reverse():
    """_sides: each side 3 t + k (corner k to corner k + 1) is paired with the side of another triangle that runs over
    the same edge the other way, exactly when the edge has two triangles; follow steps round the triangle; the
    boundary is the unpaired sides, and the edges are every distinct edge once."""
    rng = np.random.default_rng(3)
    points = rng.random((300, 2))
    tris = Delaunay(points).simplices
    tris = tris[rng.random(len(tris)) < 0.8]  # holes: more boundary
    (x, y), (i, j, k) = points.T, tris.T
    flip = (x[j] - x[i]) * (y[k] - y[i]) - (y[j] - y[i]) * (x[k] - x[i]) < 0
    tris = np.column_stack([i, np.where(flip, k, j), np.where(flip, j, k)])
    edges, boundary, (follow, twin) = geodesic._sides(tris, len(points))
    flat = tris.ravel()
    start, end = flat, flat[follow]
    assert np.array_equal(follow.reshape(-1, 3) - 3 * np.arange(len(tris))[:, None], np.tile([1, 2, 0], (len(tris), 1)))
    count = {}
    for s, e in zip(start, end):
        count[frozenset((s, e))] = count.get(frozenset((s, e)), 0) + 1
    paired = np.flatnonzero(twin >= 0)
    assert np.array_equal(twin[twin[paired]], paired)
    assert np.array_equal(start[twin[paired]], end[paired]) and np.array_equal(end[twin[paired]], start[paired])
    assert np.all(twin[paired] // 3 != paired // 3)
    inner = np.array([count[frozenset((s, e))] == 2 for s, e in zip(start, end)])
    assert np.array_equal(twin >= 0, inner)
    assert sorted(map(tuple, boundary)) == sorted(zip(start[~inner], end[~inner]))
    assert set(map(frozenset, edges.tolist())) == set(count) and len(edges) == len(count)


def test_sides_by_radix_sort_as_by_timsort(monkeypatch):
    """_sides sorts few sides by two 16-bit radix passes and many by timsort: both give the same edges (in the same
    order and direction), boundary and steps, on a mesh in a scrambled order with holes."""
    rng = np.random.default_rng(5)
    points = rng.random((400, 2))
    tris = Delaunay(points).simplices
    tris = tris[rng.permutation(len(tris))][rng.random(len(tris)) < 0.8]
    radix = geodesic._sides(tris, len(points))
    monkeypatch.setattr(geodesic, "SMALL_SORT", 0)
    timsort = geodesic._sides(tris, len(points))
    for a, b in zip([radix[0], radix[1], *radix[2]], [timsort[0], timsort[1], *timsort[2]]):
        assert np.array_equal(a, b)


def test_clearance_covers_in_chunks_as_at_once():
    """Clearance.covers on more segments than COVERS_CHUNK (tested a chunk at a time) answers each segment as a call
    on a few segments does, and the answers are not all alike (the test can tell them apart)."""
    rng = np.random.default_rng(8)
    points = rng.random((400, 2)) * 10.0
    tris = Delaunay(points).simplices
    domain = Domain.from_mesh(points, tris[rng.random(len(tris)) < 0.85], links=False)
    n = 2 * geodesic.COVERS_CHUNK + 77
    p, q = rng.random((n, 2)) * 10.0, rng.random((n, 2)) * 10.0
    q[::3] = p[::3] + rng.normal(0.0, 0.1, (len(q[::3]), 2))  # short ones: some covered
    outside = np.zeros(domain.clear.shape, bool)
    outside[::2] = True
    inside, out = domain.clear.covers(p, q, outside)
    few = [domain.clear.covers(p[k:k + 500], q[k:k + 500], outside) for k in range(0, n, 500)]
    assert np.array_equal(inside, np.concatenate([a for a, _b in few]))
    assert np.array_equal(out, np.concatenate([b for _a, b in few]))
    assert 0 < inside.sum() < n and 0 < out.sum() < n


def test_median_is_numpys_to_the_bit():
    """geodesic.median (by np.partition alone, for the grids' cell sizes) against np.median, bit for bit: odd and
    even lengths, repeated values, values over twelve orders of magnitude."""
    rng = np.random.default_rng(7)
    for n in [*range(1, 40), 923, 924]:
        for _ in range(20):
            v = rng.random(n) * 10.0 ** rng.uniform(-6, 6, n)
            if n > 3:
                v[: n // 3] = v[-1]  # ties
            assert geodesic.median(v) == float(np.median(v))


def _einsum_ccw_angle(u, v):
    """The counter-clockwise angle from rows u to rows v with the dot product summed by np.einsum (as the inward-leaving
    test and the corner openings measured it before they took coordinate columns)."""
    return np.mod(np.arctan2(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0], np.einsum("ij,ij->i", u, v)), 2.0 * np.pi)


def test_the_outline_opening_at_a_doubled_vertex_is_the_counter_clockwise_angle_between_its_edges():
    """Domain's corner openings (read by the inward-leaving test and the thinning) are the counter-clockwise angle
    with np.einsum's dot product to the bit, also where the outgoing outline edge has no length (a vertex listed twice):
    0, not pi (-0.0 + -0.0 in the dot product)."""
    points = np.array([[0, 0], [1, 1], [1, 1], [0, 2], [0.3, 1.0]], float)  # vertex 2 doubles vertex 1
    tris = np.array([[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]])
    domain = geodesic.Domain.from_mesh(points, tris, links=False)
    u, v = points[2] - points[1], points[0] - points[1]
    assert domain.opening[1] == _einsum_ccw_angle(u[None], v[None])[0] == 0.0


def test_the_counter_clockwise_angle_on_columns_is_np_einsums_to_the_bit():
    """`_ccw_angle` on coordinate columns (the inward-leaving test's turn) against the angle with np.einsum's dot
    product, on random vectors of many scales with exact zeros of either sign, parallel and opposite ones."""
    rng = np.random.default_rng(5)
    n = 4000
    u = rng.normal(size=(n, 2)) * 10.0 ** rng.uniform(-6, 6, (n, 1))
    v = rng.normal(size=(n, 2)) * 10.0 ** rng.uniform(-6, 6, (n, 1))
    u[:500] = rng.choice([0.0, -0.0], size=(500, 2))
    v[250:750] = rng.choice([0.0, -0.0, 1.0, -1.0], size=(500, 2))
    v[1000:1200], v[1200:1400] = 3.0 * u[1000:1200], -u[1200:1400]
    angle = geodesic._ccw_angle(u[:, 0], u[:, 1], v[:, 0], v[:, 1])
    assert np.array_equal(angle, _einsum_ccw_angle(u, v))


def test_walks_across_a_flat_triangle_end_within_one_step_per_triangle_and_vertex(monkeypatch):
    # A walk that stays inside enters each triangle and vertex at most once. Across this mesh's flat triangle one came
    # back to its start and went round for 100,000 steps (23 s, 200,001 calls of _left_of_xy: up to two in a triangle
    # and one leaving a vertex a step).
    mesh = np.load(Path(__file__).parent.parent / "data" / "meshes" / "flat_triangle_star.npz")
    points, tris, heads, tails = (mesh[k] for k in ("points", "tris", "heads", "tails"))
    calls = []
    left_of = geodesic._left_of_xy
    monkeypatch.setattr(geodesic, "_left_of_xy", lambda *a: calls.append(1) or left_of(*a))
    dist = bone_distances(Domain.from_mesh(points, tris, bones=len(heads)), heads, tails,
                          30 * 0.03 * np.ptp(points, axis=0).max())[0]
    assert len(calls) <= 3 * (len(tris) + len(points) + 1)
    assert np.isfinite(dist).all() and (dist >= 0).all()
