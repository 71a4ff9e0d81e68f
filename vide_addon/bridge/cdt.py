"""Blender's constrained Delaunay triangulation behind the plain interface the core expects.

Only output type 0 (the full triangulation of the convex hull) is used: the core decides which
triangles are inside from the outline itself. In Blender 4.2 to 5.0 the other output types returned
the same hull triangles for our input, and the `orig_faces` ids did not match the input faces
(tests/blender/test_cdt.py checks what we rely on).
"""

import gc
from contextlib import contextmanager
from itertools import chain

import numpy as np
from mathutils.geometry import delaunay_2d_cdt

from ..core.errors import VideError

_FULL_HULL = 0
# Input and output coordinates of one vertex differ by float32 rounding only (local units, about 1e-8); distinct
# input vertices are 0.01 px apart at least, 2e-6 in local units on a 4096 px image.
_SAME = 1e-7


@contextmanager
def _without_gc():
    """Python's cyclic garbage collector paused: the CDT takes one list per vertex and returns one per face (83k
    lists on 4096² noise blobs), and the collections that so many new objects set off cost 0.07 s of its 0.23 s
    there. The lists hold numbers only: reference counting frees them."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def triangulate(points, segments):
    """Triangles (m, 3) indexing `points` (n, 2), with every segment an edge of the result (see _triangulate)."""
    with _without_gc():
        return _triangulate(points, segments)


def _triangulate(points, segments):
    """Triangles (m, 3) indexing `points` (n, 2), with every segment an edge of the result.

    Asked without vertex ids, Blender's CDT takes half the time; it then returns the input vertices in input
    order unless it merged or added some (outline edges that cross), which the coordinates show. Only then
    is it asked again with ids, to say what went wrong."""
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    scale = max(float(np.ptp(points, axis=0).max()), 1e-9)
    local = (points - centre) / scale  # float32 inside mathutils: keep numbers small
    args = (local.tolist(), segments.tolist(), [], _FULL_HULL, 1e-9)
    verts, _edges, faces, *_ids = delaunay_2d_cdt(*args, False)
    if len(verts) == len(points) and np.abs(_flat(verts, float).reshape(-1, 2) - local).max() < _SAME:
        return _flat(faces, np.int64).reshape(-1, 3)
    verts, _edges, faces, orig_verts, _e, _f = delaunay_2d_cdt(*args, True)
    source = np.array([o[0] if o else -1 for o in orig_verts])
    if len(verts) != len(points) or (source < 0).any():
        raise VideError("The outline crosses itself after simplification; lower Contour Tolerance and retry.")
    return source[np.array(faces, np.int64).reshape(-1, 3)]


def _flat(rows, dtype):
    """The numbers of a list of pairs or triples (mathutils vectors, triangles) in one flat array."""
    return np.fromiter(chain.from_iterable(rows), dtype, count=len(rows) * len(rows[0]) if rows else 0)
