"""What VIDE relies on in Blender's delaunay_2d_cdt, and the quality triangulation built on it."""

import bpy  # noqa: F401  (mathutils is importable once bpy is)
import numpy as np
import pytest
from mathutils.geometry import delaunay_2d_cdt
from vide_addon.core.triangulate import Outline, graded_lattice, quality_triangulation, triangle_angles


def square_with_hole():
    outer = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], float)
    hole = np.array([[4, 4], [4, 6], [6, 6], [6, 4]], float)  # clockwise: inside (material) on its left
    return outer, hole


def test_output_type_0_returns_hull_triangles_with_input_vertex_ids():
    outer, hole = square_with_hole()
    pts = np.vstack([outer, hole, [[2, 2], [8, 8]]])
    verts, _edges, faces, orig_verts, _oe, _of = delaunay_2d_cdt(pts.tolist(), [], [[0, 1, 2, 3], [4, 5, 6, 7]], 0,
                                                                  1e-9, True)
    assert [o for o in orig_verts] == [[i] for i in range(len(pts))], "vertices keep their input order"
    assert all(len(f) == 3 for f in faces)
    area = sum(abs(np.cross(pts[f[1]] - pts[f[0]], pts[f[2]] - pts[f[0]])) / 2 for f in faces)
    assert area == pytest.approx(100.0), "the whole hull, the hole included: we classify inside ourselves"


def test_bridge_keeps_every_outline_segment_as_an_edge(vide):
    triangulate = vide.vide_addon.bridge.cdt.triangulate
    rng = np.random.default_rng(0)
    ring = np.array([[np.cos(t) * r, np.sin(t) * r] for t, r in
                     zip(np.linspace(0, 2 * np.pi, 40, endpoint=False), 5 + rng.random(40))])
    pts = np.vstack([ring, rng.random((50, 2)) * 3 - 1.5])
    segs = np.stack([np.arange(40), np.roll(np.arange(40), -1)], axis=1)
    tris = triangulate(pts, segs)
    edges = {tuple(sorted(e)) for t in tris for e in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0]))}
    assert all(tuple(sorted(s)) in edges for s in segs.tolist())


def test_bridge_triangles_are_the_cdts_with_vertex_ids_and_crossing_outlines_are_reported(vide, monkeypatch):
    """The bridge asks Blender's CDT without vertex ids (faster) and trusts the input order: its triangles are
    those of the call with ids, from that one call; where the CDT adds a vertex (crossing outline edges) or merges
    two, it says so."""
    cdt = vide.vide_addon.bridge.cdt
    triangulate, error = cdt.triangulate, vide.vide_addon.core.errors.VideError
    calls = []
    monkeypatch.setattr(cdt, "delaunay_2d_cdt", lambda *args: calls.append(args[-1]) or delaunay_2d_cdt(*args))
    rng = np.random.default_rng(1)
    ring = np.array([[np.cos(t) * r, np.sin(t) * r] for t, r in
                     zip(np.linspace(0, 2 * np.pi, 60, endpoint=False), 5 + rng.random(60))]) * 100
    pts = np.vstack([ring, rng.random((300, 2)) * 600 - 300])
    segs = np.stack([np.arange(60), np.roll(np.arange(60), -1)], axis=1)
    local = ((pts - (pts.min(axis=0) + pts.max(axis=0)) / 2) / np.ptp(pts, axis=0).max()).tolist()
    _v, _e, faces, orig, _oe, _of = delaunay_2d_cdt(local, segs.tolist(), [], 0, 1e-9, True)
    with_ids = np.array([[orig[i][0] for i in f] for f in faces])
    assert np.array_equal(triangulate(pts, segs), with_ids)
    assert calls == [False], "one call, without vertex ids"
    bow_tie = np.array([[0, 0], [10, 10], [10, 0], [0, 10]], float)
    with pytest.raises(error, match="crosses itself"):
        triangulate(bow_tie, np.array([[0, 1], [1, 2], [2, 3], [3, 0]]))
    doubled = np.array([[0, 0], [10, 0], [10, 10], [10, 10 + 1e-9], [0, 10]], float)
    with pytest.raises(error, match="crosses itself"):
        triangulate(doubled, np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]]))


def test_bridge_pauses_the_garbage_collector_only_during_the_call_and_restores_it(vide, monkeypatch):
    """The CDT runs with the cyclic collector paused (its many small lists set off costly collections); after the
    call, and after a failed one, the collector is as it was, on or off."""
    import gc

    cdt = vide.vide_addon.bridge.cdt
    seen = []
    monkeypatch.setattr(cdt, "delaunay_2d_cdt", lambda *args: seen.append(gc.isenabled()) or delaunay_2d_cdt(*args))
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float)
    ring = np.array([[0, 1], [1, 2], [2, 3], [3, 0]])
    bow_tie = square[[0, 2, 1, 3]]
    try:
        for enabled in (True, False):
            gc.enable() if enabled else gc.disable()
            cdt.triangulate(square, ring)
            assert gc.isenabled() == enabled
            with pytest.raises(vide.vide_addon.core.errors.VideError):
                cdt.triangulate(bow_tie, ring)
            assert gc.isenabled() == enabled
    finally:
        gc.enable()
    assert seen and not any(seen), "paused in every call"


def test_quality_triangulation_fills_islands_and_keeps_holes(vide):
    triangulate = vide.vide_addon.bridge.cdt.triangulate
    outer, hole = square_with_hole()
    island = np.array([[12, 0], [14, 0], [14, 2], [12, 2]], float)
    pts, tris = quality_triangulation(Outline.from_rings([outer, hole, island], 1.0), np.empty((0, 2)), triangulate)
    a, b, c = pts[tris[:, 0]], pts[tris[:, 1]], pts[tris[:, 2]]
    area = np.cross(b - a, c - a) / 2
    assert (area > 0).all(), "counter-clockwise, none degenerate"
    assert area.sum() == pytest.approx(100 - 4 + 4)
    assert triangle_angles(pts, tris).min() >= 20.0


def test_graded_lattice_keeps_half_a_spacing_from_the_outline_and_refines_towards_short_edges():
    field = np.zeros((200, 200), np.float32)
    field[10:190, 10:190] = 1
    square = np.array([[10, 10], [190, 10], [190, 190], [10, 190]], float)
    contour = np.vstack([square[i] + t * (square[(i + 1) % 4] - square[i])
                         for i in range(4) for t in np.linspace(0, 1, 361)[:-1, None]])
    coarse = Outline.from_rings([square], 16.0)
    pts = graded_lattice(field, 0.5, contour, coarse, 16.0)
    assert len(pts) > 50 and pts.min() >= 10 + 8 and pts.max() <= 190 - 8
    # A short outline edge in one corner asks for finer points near it (and along its edge), not elsewhere.
    notched = np.array([[10, 10], [12, 10], [190, 10], [190, 190], [10, 190]], float)
    fine = graded_lattice(field, 0.5, contour, Outline.from_rings([notched], 16.0), 16.0)
    near = lambda p: np.hypot(*(p - [11, 10]).T) < 40  # noqa: E731
    far = lambda p: p[:, 1] > 100  # noqa: E731
    assert near(fine).sum() > near(pts).sum()
    assert far(fine).sum() == far(pts).sum()
