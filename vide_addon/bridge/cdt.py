"""Blender's constrained Delaunay triangulation behind the plain interface the core expects.

Only output type 0 (the full triangulation of the convex hull) is used: the core decides which
triangles are inside from the outline itself. In Blender 4.2 to 5.0 the other output types returned
the same hull triangles for our input, and the `orig_faces` ids did not match the input faces
(tests/blender/test_cdt.py checks what we rely on).
"""

import numpy as np
from mathutils.geometry import delaunay_2d_cdt

from ..core.errors import VideError

_FULL_HULL = 0


def triangulate(points, segments):
    """Triangles (m, 3) indexing `points` (n, 2), with every segment an edge of the result."""
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    scale = max(float(np.ptp(points, axis=0).max()), 1e-9)
    local = ((points - centre) / scale).tolist()  # float32 inside mathutils: keep numbers small
    verts, _edges, faces, orig_verts, _e, _f = delaunay_2d_cdt(local, segments.tolist(), [], _FULL_HULL, 1e-9, True)
    source = np.array([o[0] if o else -1 for o in orig_verts])
    if len(verts) != len(points) or (source < 0).any():
        raise VideError("The outline crosses itself after simplification; lower Contour Tolerance and retry.")
    return source[np.array(faces, np.int64).reshape(-1, 3)]
