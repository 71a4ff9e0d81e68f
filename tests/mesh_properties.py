"""The properties every Vectorize Image mesh must have (issue #12), measured on plain arrays so that the tests
and `bench/vectorize_corpus.py` judge a mesh the same way.

A mesh is given in image pixels (y up), its triangles as vertex index triples. `mesh_problems` returns one
entry per property with the count of violations (0 is a pass) and the figure behind it.
"""

import numpy as np
from scipy.spatial import cKDTree

from vide_addon.core.contour import marching_squares, points_in_rings, select_rings

MIN_AREA = 1e-6  # px²: a triangle this small or smaller (or inverted) is degenerate
MIN_DISTANCE = 0.01  # px: two vertices closer than this are near-duplicates
MIN_ANGLE = 20.0  # degrees, except in triangles touching an outline corner sharper than SHARP_CORNER
SHARP_CORNER = 60.0


def signed_areas(pts, tris):
    a, b, c = pts[tris[:, 0]], pts[tris[:, 1]], pts[tris[:, 2]]
    return 0.5 * ((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0]))


def min_angles(pts, tris):
    a, b, c = pts[tris[:, 0]], pts[tris[:, 1]], pts[tris[:, 2]]
    out = []
    for p, q, r in ((a, b, c), (b, c, a), (c, a, b)):
        u, v = q - p, r - p
        cos = (u * v).sum(1) / np.maximum(np.hypot(*u.T) * np.hypot(*v.T), 1e-300)
        out.append(np.degrees(np.arccos(np.clip(cos, -1, 1))))
    return np.min(out, axis=0)


def boundary_edges(tris):
    """Edges used by exactly one triangle, oriented as in that triangle."""
    e = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])
    _, idx, counts = np.unique(np.sort(e, axis=1), axis=0, return_index=True, return_counts=True)
    return e[idx[counts == 1]]


def sharp_corner_vertices(pts, tris, limit=SHARP_CORNER):
    """Boundary vertices where the inside angle between their boundary edges is below `limit` degrees (a
    vertex on several boundary loops counts every pair of its edges)."""
    e = boundary_edges(tris)
    order_in, order_out = np.argsort(e[:, 1]), np.argsort(e[:, 0])
    sharp = []
    for v in np.unique(e[:, 0]):
        ins = e[order_in[np.searchsorted(e[order_in, 1], v):np.searchsorted(e[order_in, 1], v, 'right')], 0]
        outs = e[order_out[np.searchsorted(e[order_out, 0], v):np.searchsorted(e[order_out, 0], v, 'right')], 1]
        for p in ins:
            for n in outs:
                d_in, d_out = pts[v] - pts[p], pts[n] - pts[v]
                turn = np.arctan2(d_in[0] * d_out[1] - d_in[1] * d_out[0], d_in @ d_out)
                if np.degrees(np.pi - turn) < limit:
                    sharp.append(v)
    return np.unique(np.array(sharp, np.int64))


def required_pixels(alpha, level=0.5, min_island_area=8.0):
    """(h, w) mask of the pixels the mesh must cover: at or above `level`, inside a contour ring (marching
    squares, the definition of the shape) that Min Island Area keeps, holes kept."""
    opaque = alpha >= level
    rings = marching_squares(alpha, level)
    if opaque.all():
        return opaque
    rings = select_rings(rings, min_island_area, True)
    ys, xs = np.nonzero(opaque)
    out = np.zeros_like(opaque)
    if rings:
        out[ys, xs] = points_in_rings(np.stack([xs + 0.5, ys + 0.5], axis=1), rings)
    return out


def covered_pixels(pts, tris, shape, eps=1e-9):
    """(h, w) mask of the pixel centres inside (or on an edge of) some triangle; triangles counter-clockwise.
    Every triangle's bounding box of pixel centres is expanded into one flat array and tested at once."""
    h, w = shape
    p = pts[tris]
    lo = np.clip(np.floor(p.min(axis=1) - 0.5).astype(np.int64), 0, [w - 1, h - 1])
    hi = np.clip(np.ceil(p.max(axis=1) - 0.5).astype(np.int64), 0, [w - 1, h - 1])
    size = hi - lo + 1
    counts = size[:, 0] * size[:, 1]
    owner = np.repeat(np.arange(len(tris)), counts)
    local = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    x = lo[owner, 0] + local % size[owner, 0]
    y = lo[owner, 1] + local // size[owner, 0]
    inside = np.ones(len(owner), bool)
    for i in range(3):
        a, b = p[owner, i], p[owner, (i + 1) % 3]
        d = b - a
        cross = d[:, 0] * (y + 0.5 - a[:, 1]) - d[:, 1] * (x + 0.5 - a[:, 0])
        inside &= cross >= -eps * np.hypot(*d.T)
    out = np.zeros(shape, bool)
    out[y[inside], x[inside]] = True
    return out


def mesh_problems(alpha, pts, tris, level=0.5, min_island_area=8.0):
    """{property: (violations, figure)} for a mesh (pts in pixels, tris) of `alpha` at default settings.

    - degenerate: triangles with signed area <= MIN_AREA (inverted ones included); figure: smallest area
    - near_duplicates: vertex pairs closer than MIN_DISTANCE; figure: closest distance
    - angle: triangles with a smallest angle below MIN_ANGLE that touch no sharp outline corner; figure:
      the smallest such angle
    - non_manifold: edges used more than twice or twice the same way (overlapping triangles)
    - coverage: required pixels (see `required_pixels`) no triangle covers; figure: the share covered
    """
    pts, tris = np.asarray(pts, float), np.asarray(tris, np.int64)
    out = {}
    area = signed_areas(pts, tris)
    out["degenerate"] = (int((area <= MIN_AREA).sum()), float(area.min()) if len(area) else 0.0)
    pairs = cKDTree(pts).query_pairs(MIN_DISTANCE, output_type="ndarray")
    closest = cKDTree(pts).query(pts, k=2)[0][:, 1].min() if len(pts) > 1 else np.inf
    out["near_duplicates"] = (len(pairs), float(closest))
    good = tris[area > MIN_AREA]
    angles = min_angles(pts, good)
    away = ~np.isin(good, sharp_corner_vertices(pts, good)).any(axis=1)
    low = angles[away] < MIN_ANGLE
    out["angle"] = (int(low.sum()), float(angles[away].min()) if away.any() else 90.0)
    e = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])
    _, undirected = np.unique(np.sort(e, axis=1), axis=0, return_counts=True)
    _, directed = np.unique(e, axis=0, return_counts=True)
    out["non_manifold"] = (int((undirected > 2).sum() + (directed > 1).sum()), 0.0)
    need = required_pixels(alpha, level, min_island_area)
    missed = need & ~covered_pixels(pts, good, alpha.shape)
    out["coverage"] = (int(missed.sum()), 1.0 - missed.sum() / max(need.sum(), 1))
    return out


def failures(problems):
    """The names of the properties with violations."""
    return [name for name, (count, _figure) in problems.items() if count]
