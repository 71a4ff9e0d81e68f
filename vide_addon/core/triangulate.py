"""Quality triangle mesh inside simplified outlines.

Interior vertices sit on a hexagonal lattice (equilateral triangles bend evenly), the outline is
resampled to the same spacing, and Delaunay refinement (Ruppert: split encroached outline segments,
insert circumcentres of skinny triangles) brings every triangle's smallest angle to `min_angle` except
next to outline corners sharper than 60°, where no triangulation can. The constrained Delaunay
triangulation itself is passed in as `cdt(points, segments) -> triangles`, so this module stays free
of Blender; the add-on passes `mathutils.geometry.delaunay_2d_cdt`.
"""

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from .contour import points_in_edges

SHARP_CORNER_DEG = 60.0


def lattice_points(field, level, contour, spacing):
    """Hexagonal lattice points at least half a spacing inside the shape.

    A lattice point is kept if the pixel it falls in reaches `level` in `field` (H, W) and it is at
    least 0.5 spacing + 1 px from `contour`, the dense marching-squares points.
    """
    h, w = field.shape
    dy = spacing * np.sqrt(3.0) / 2.0
    gx, gy = np.meshgrid(np.arange(spacing / 2, w, spacing), np.arange(dy / 2, h, dy))
    gx[1::2] += spacing / 2
    pts = np.stack([gx.ravel(), gy.ravel()], axis=1)
    pts = pts[pts[:, 0] < w]
    ij = pts.astype(np.int64)
    pts = pts[field[ij[:, 1], ij[:, 0]] >= level]
    if len(pts) == 0 or len(contour) == 0:
        return pts
    clearance, _ = cKDTree(contour).query(pts, distance_upper_bound=0.5 * spacing + 1.0)
    return pts[np.isinf(clearance)]


def quality_triangulation(rings, interior, spacing, cdt, min_angle=21.0, max_rounds=25):
    """Vertices (n, 2) and counter-clockwise triangles (m, 3) filling `rings` (inside on the left).

    Holes and separate islands come from the rings themselves: a triangle is kept when it lies inside
    an odd number of rings.
    """
    points, segments, sharp = _resample_outline(rings, spacing)
    points = np.vstack([points, interior]) if len(interior) else points
    sharp = np.concatenate([sharp, np.zeros(len(points) - len(sharp), bool)])
    seg_floor = max(spacing / 256.0, 0.02)
    tris = _inside_triangles(points, segments, cdt(points, segments))
    for _ in range(max_rounds):
        # One batch per round: split every encroached outline edge, insert every other circumcentre.
        new_points, enc = _circumcentres_to_add(points, segments, tris, sharp, min_angle, seg_floor)
        enc |= _encroached_segments(points, segments, tris, seg_floor)
        if not enc.any() and not len(new_points):
            break
        if enc.any():
            points, segments = _split_segments(points, segments, enc, sharp)
        points = np.vstack([points, new_points])
        sharp = np.concatenate([sharp, np.zeros(len(points) - len(sharp), bool)])
        tris = _inside_triangles(points, segments, cdt(points, segments))
    used = np.unique(tris)
    remap = np.full(len(points), -1)
    remap[used] = np.arange(len(used))
    return points[used], remap[tris]


def triangle_angles(points, tris):
    """Angles (m, 3) in degrees at each corner of each triangle."""
    a, b, c = points[tris[:, 0]], points[tris[:, 1]], points[tris[:, 2]]
    angles = []
    for p, q, r in ((a, b, c), (b, c, a), (c, a, b)):
        u, v = q - p, r - p
        cos = np.einsum("ij,ij->i", u, v) / np.maximum(np.hypot(*u.T) * np.hypot(*v.T), 1e-300)
        angles.append(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
    return np.stack(angles, axis=1)


def sharp_corners(rings):
    """Per ring vertex (concatenated): True where the inside angle is below 60°."""
    out = []
    for ring in rings:
        d_in = ring - np.roll(ring, 1, axis=0)
        d_out = np.roll(ring, -1, axis=0) - ring
        turn = np.arctan2(d_in[:, 0] * d_out[:, 1] - d_in[:, 1] * d_out[:, 0], np.einsum("ij,ij->i", d_in, d_out))
        out.append(np.degrees(np.pi - turn) < SHARP_CORNER_DEG)
    return np.concatenate(out)


def _resample_outline(rings, spacing):
    """Outline points (every ring vertex plus points on long edges), their edges, and sharp-corner flags."""
    sharp_in = sharp_corners(rings)
    points, segments, sharp, offset, base = [], [], [], 0, 0
    for ring in rings:
        nxt = np.roll(ring, -1, axis=0)
        pieces = np.maximum(np.ceil(np.hypot(*(nxt - ring).T) / spacing).astype(np.int64), 1)
        edge = np.repeat(np.arange(len(ring)), pieces)
        t = (np.arange(pieces.sum()) - np.repeat(np.cumsum(pieces) - pieces, pieces)) / pieces[edge]
        pts = ring[edge] + t[:, None] * (nxt - ring)[edge]
        idx = np.arange(len(pts)) + offset
        points.append(pts)
        segments.append(np.stack([idx, np.roll(idx, -1)], axis=1))
        sharp.append((t == 0) & sharp_in[base + edge])
        offset += len(pts)
        base += len(ring)
    return np.vstack(points), np.vstack(segments), np.concatenate(sharp)


def _inside_triangles(points, segments, tris):
    """Counter-clockwise triangles of `tris` that lie inside an odd number of outline rings.

    Triangles connected without crossing an outline edge form a region; one even-odd test per region
    classifies all of its triangles.
    """
    tris = np.asarray(tris, np.int64).reshape(-1, 3)
    a, b, c = points[tris[:, 0]], points[tris[:, 1]], points[tris[:, 2]]
    area2 = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])
    tris = np.where((area2 < 0)[:, None], tris[:, ::-1], tris)
    # Flat triangles between collinear outline points: rounding gives them a sign, not an area.
    longest = np.max([np.hypot(*(q - p).T) for p, q in ((a, b), (b, c), (c, a))], axis=0)
    solid = np.abs(area2) > 1e-9 * longest**2
    tris, area2 = tris[solid], np.abs(area2[solid])

    m = len(tris)
    edges = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])
    owner = np.tile(np.arange(m), 3)
    key = _edge_key(edges, len(points))
    constrained = np.isin(key, _edge_key(segments, len(points)))
    order = np.argsort(key, kind="stable")
    k, o, cons = key[order], owner[order], constrained[order]
    shared = (k[1:] == k[:-1]) & ~cons[1:]
    adj = coo_matrix((np.ones(shared.sum()), (o[:-1][shared], o[1:][shared])), shape=(m, m))
    n_regions, region = connected_components(adj, directed=False)
    # The probe of a region is the centroid of its largest triangle: a sliver's centroid may sit on the outline.
    biggest = np.lexsort((area2, region))
    last = np.r_[np.flatnonzero(np.diff(region[biggest])), len(biggest) - 1]
    probes = points[tris[biggest[last]]].mean(axis=1)
    inside = points_in_edges(probes, points[segments[:, 0]], points[segments[:, 1]])
    return tris[inside[region]]


def _edge_key(edges, n):
    e = np.sort(edges, axis=1)
    return e[:, 0] * n + e[:, 1]


def _encroached_segments(points, segments, tris, seg_floor):
    """Outline edges whose diametral circle holds the opposite vertex of their inside triangle."""
    n = len(points)
    enc = np.zeros(len(segments), bool)
    seg_key = _edge_key(segments, n)
    order = np.argsort(seg_key)
    for i, j, opp in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        key = _edge_key(tris[:, [i, j]], n)
        pos = np.clip(np.searchsorted(seg_key[order], key), 0, len(order) - 1)
        hit = seg_key[order][pos] == key
        u = points[tris[hit, i]] - points[tris[hit, opp]]
        v = points[tris[hit, j]] - points[tris[hit, opp]]
        obtuse = np.einsum("ij,ij->i", u, v) < -1e-12 * np.einsum("ij,ij->i", u, u)
        enc[order[pos[hit][obtuse]]] = True
    length = np.hypot(*(points[segments[:, 1]] - points[segments[:, 0]]).T)
    return enc & (length > 2 * seg_floor)


def _split_segments(points, segments, enc, sharp):
    """Splits the flagged outline edges: at the middle, or at a power-of-two distance from a sharp corner
    (concentric shells, so that splits on the two sides of a sharp corner do not chase each other)."""
    a, b = segments[enc, 0], segments[enc, 1]
    pa, pb = points[a], points[b]
    length = np.hypot(*(pb - pa).T)
    t = np.full(len(a), 0.5)
    shell = 2.0 ** np.round(np.log2(np.maximum(length / 2, 1e-12)))
    t = np.where(sharp[a] & ~sharp[b], shell / length, t)
    t = np.where(sharp[b] & ~sharp[a], 1.0 - shell / length, t)
    t = np.clip(t, 0.25, 0.75)
    mid = pa + t[:, None] * (pb - pa)
    new = np.arange(len(points), len(points) + len(mid))
    segments = np.vstack([segments[~enc], np.stack([a, new], axis=1), np.stack([new, b], axis=1)])
    return np.vstack([points, mid]), segments


def _circumcentres_to_add(points, segments, tris, sharp, min_angle, seg_floor):
    """Circumcentres of skinny triangles to insert, and the outline edges they encroach (split instead)."""
    angles = triangle_angles(points, tris)
    bad = (angles.min(axis=1) < min_angle) & ~sharp[tris].any(axis=1)
    enc = np.zeros(len(segments), bool)
    if not bad.any():
        return np.empty((0, 2)), enc
    t = tris[bad]
    a, b, c = points[t[:, 0]], points[t[:, 1]], points[t[:, 2]]
    cc, radius = _circumcircles(a, b, c)

    pa, pb = points[segments[:, 0]], points[segments[:, 1]]
    mid, half = (pa + pb) / 2, np.hypot(*(pb - pa).T) / 2
    near = cKDTree(mid).query_ball_point(cc, r=half.max() + 1e-9)
    encroaching = np.zeros(len(cc), bool)
    for k, cand in enumerate(near):
        cand = np.asarray(cand, np.int64)
        hit = cand[np.hypot(*(mid[cand] - cc[k]).T) < half[cand]]
        if hit.size:
            encroaching[k] = True
            enc[hit] = True
    length = 2 * half
    enc &= length > 2 * seg_floor
    cc, radius = cc[~encroaching], radius[~encroaching]
    keep = points_in_edges(cc, pa, pb) if len(cc) else np.zeros(0, bool)
    cc, radius = cc[keep], radius[keep]
    return _spread_out(cc, radius), enc


def _circumcircles(a, b, c):
    """Centres and radii of the circles through a, b, c."""
    b_, c_ = b - a, c - a
    d = 2.0 * (b_[:, 0] * c_[:, 1] - b_[:, 1] * c_[:, 0])
    bb, cc = np.einsum("ij,ij->i", b_, b_), np.einsum("ij,ij->i", c_, c_)
    ux = (c_[:, 1] * bb - b_[:, 1] * cc) / d
    uy = (b_[:, 0] * cc - c_[:, 0] * bb) / d
    centre = a + np.stack([ux, uy], axis=1)
    return centre, np.hypot(ux, uy)


def _spread_out(cc, radius):
    """Drops circumcentres that fall within half a circumradius of one already taken (batch insertion)."""
    if len(cc) < 2:
        return cc
    order = np.argsort(-radius)
    tree = cKDTree(cc)
    taken = np.zeros(len(cc), bool)
    blocked = np.zeros(len(cc), bool)
    for k in order:
        if blocked[k]:
            continue
        taken[k] = True
        blocked[tree.query_ball_point(cc[k], 0.5 * radius[k])] = True
    return cc[taken]
