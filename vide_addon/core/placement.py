"""Where the image lies in the plane's local space: an affine map from UV to local coordinates.

Images as Planes (any alignment, size or offset) maps UVs linearly onto a flat quad, so a least-squares
fit over the plane's loops recovers the map exactly; a large residual means the mesh is no image plane.
"""

import numpy as np

from .errors import VideError


def fit_uv_to_local(uv, co):
    """3x3 matrix M with co = [u, v, 1] @ M, fitted over loops (uv (n, 2), co (n, 3))."""
    if len(uv) < 3:
        raise VideError("The mesh has fewer than 3 UV-mapped corners: it is not an image plane.")
    a = np.column_stack([uv, np.ones(len(uv))])
    m, _res, rank, _sv = np.linalg.lstsq(a, co, rcond=None)
    size = max(float(np.ptp(co, axis=0).max()), 1e-12)
    if rank < 3 or np.abs(a @ m - co).max() > 1e-4 * size:
        raise VideError("The mesh's UVs do not map the image flat onto it (is it an image plane made with "
                        "Import Images as Planes?). Reset its UVs or re-import the image.")
    return m


def uv_to_local(m, uv):
    """Local coordinates (n, 3) of UV points (n, 2)."""
    return np.column_stack([uv, np.ones(len(uv))]) @ m


def faces_flipped(m, normal):
    """Whether triangles counter-clockwise in UV space face away from `normal` in local space."""
    return float(np.dot(np.cross(m[0], m[1]), normal)) < 0.0
