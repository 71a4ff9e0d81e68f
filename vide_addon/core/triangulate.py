"""Quality triangle mesh inside simplified outlines.

Interior vertices sit on nested hexagonal lattices (equilateral triangles bend evenly), finer towards
short outline edges; long outline edges are cut into pieces that grow away from short neighbours. Then
Delaunay refinement (Ruppert: split encroached outline edges, insert circumcentres of skinny triangles)
brings every triangle's smallest angle to `min_angle`, except next to outline corners sharper than 60°
where no triangulation can. The constrained Delaunay triangulation itself is passed in as
`cdt(points, segments) -> triangles`, so this module stays free of Blender; the add-on passes
`mathutils.geometry.delaunay_2d_cdt`.
"""

import math
from dataclasses import dataclass
from itertools import chain

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from .contour import points_in_edges

SHARP_CORNER_DEG = 60.0
# A triangle whose doubled area is below this times its longest edge squared is flat (height < 1e-6 of it).
_FLAT = 1e-6
# No point is inserted closer than this (pixels) to another.
MIN_VERTEX_GAP = 0.02


@dataclass
class Outline:
    """Simplified rings resampled for meshing: points, their edges (index pairs), which points are sharp
    corners, and the local edge length at each point (the mesh size the outline asks for there)."""

    points: np.ndarray
    segments: np.ndarray
    sharp: np.ndarray
    size: np.ndarray

    @classmethod
    def from_rings(cls, rings, spacing):
        """Every ring vertex, plus points that split long edges: pieces no longer than `spacing`, growing
        gradually away from short neighbouring edges."""
        sharp_in = sharp_corners(rings)
        points, segments, sharp, offset, base = [], [], [], 0, 0
        for ring in rings:
            nxt = np.roll(ring, -1, axis=0)
            cuts = _edge_cuts(np.hypot(*(nxt - ring).T), spacing)
            counts = [len(c) for c in cuts]
            edge = np.repeat(np.arange(len(ring)), counts)
            t = np.fromiter(chain.from_iterable(cuts), float, count=sum(counts))
            pts = ring[edge] + t[:, None] * (nxt - ring)[edge]
            idx = np.arange(len(pts)) + offset
            points.append(pts)
            segments.append(np.stack([idx, np.roll(idx, -1)], axis=1))
            sharp.append((t == 0) & sharp_in[base + edge])
            offset += len(pts)
            base += len(ring)
        points, segments = np.vstack(points), np.vstack(segments)
        length = np.hypot(*(points[segments[:, 1]] - points[segments[:, 0]]).T)
        size = np.zeros(len(points))
        np.add.at(size, segments.ravel(), np.repeat(length / 2, 2))
        return cls(points, segments, np.concatenate(sharp), size)


def _edge_cuts(length, spacing, ratio=2.0):
    """Where to cut each edge of a closed ring, as fractions of it (each list starts with 0).

    Pieces grow by `ratio` from each end, starting from the neighbouring edge's length, up to `spacing`:
    a long edge next to a short one is cut finely only near the short one.
    """
    ends = np.minimum(np.roll(length, 1), spacing), np.minimum(np.roll(length, -1), spacing)
    whole = (length <= spacing) & (length <= ratio * np.minimum(*ends))
    cuts = [[0.0]] * len(length)
    for i in np.flatnonzero(~whole).tolist():  # plain floats: a few cuts each, numpy would cost more
        total, a, b = float(length[i]), float(ends[0][i]), float(ends[1][i])
        left = _growing(a, ratio, spacing, total / 2)
        right = _growing(b, ratio, spacing, total / 2)
        lo, hi = (left[-1] if left else 0.0), total - (right[-1] if right else 0.0)
        if left and right and hi - lo < 0.5 * min(_last_piece(left), _last_piece(right)):
            # The two runs meet in the middle: one cut there, not two a sliver apart.
            left[-1] = lo = hi = (lo + hi) / 2
            right.pop()
        pieces = max(math.ceil((hi - lo) / spacing), 1)
        middle = [lo + j * ((hi - lo) / pieces) for j in range(1, pieces)]
        inner = sorted({x / total for x in left + middle + [total - r for r in right]})
        cuts[i] = [0.0] + [x for x in inner if 1e-9 < x < 1 - 1e-9]
    return cuts


def _last_piece(cuts):
    return cuts[-1] - (cuts[-2] if len(cuts) > 1 else 0.0)


def _growing(start, ratio, spacing, limit):
    """Positions of cuts whose pieces grow from `start` by `ratio` up to `spacing`, before `limit`."""
    out, pos, piece = [], 0.0, start
    while True:
        piece = min(piece * ratio, spacing)
        if pos + piece > limit:
            return out
        pos += piece
        out.append(pos)


def graded_lattice(field, level, contour, outline, spacing, grading=1.0):
    """Interior points on nested hexagonal lattices, so that the first triangulation is already graded.

    The size asked for at p is h(p) = min(spacing, min_b size(b) + grading * |p - b|) over outline points
    b. Lattice k has spacing s_k = spacing / 2^k and contributes the points where s_k <= h < 2 s_k
    (the finest lattice takes all smaller h). The lattices are nested, so points of two lattices never
    crowd each other. A point is kept if its pixel reaches `level` in `field` and it is at least half
    its spacing (and at least a pixel) from the dense marching-squares `contour`.
    """
    finest = max(float(outline.size.min()), spacing / 64.0)
    levels = int(np.clip(np.ceil(np.log2(spacing / finest)), 0, 6))
    contour_tree, outline_tree = cKDTree(contour), cKDTree(outline.points)
    k_near = min(8, len(outline.points))
    outline_size = np.append(outline.size, np.inf)  # the size where the tree finds no point
    h, w = field.shape
    keep = []
    for k in range(levels + 1):
        s_k = spacing / 2**k
        if k == 0:
            cand = _lattice_in_box(s_k, 0.0, 0.0, w, h)
        else:
            need = outline.size < 2 * s_k
            reach = (2 * s_k - outline.size[need]) / grading
            cand = _lattice_near(s_k, outline.points[need], reach)
        if len(cand) == 0:
            continue
        ij = cand.astype(np.int64)
        inside = (cand[:, 0] >= 0) & (cand[:, 1] >= 0) & (ij[:, 0] < w) & (ij[:, 1] < h)
        cand = cand[inside]
        ij = ij[inside]
        cand = cand[field[ij[:, 1], ij[:, 0]] >= level]
        if len(cand) == 0:
            continue
        # Outline points farther than 2 s_k (spacing at k = 0) cannot bring h below it: the query stops there.
        bound = spacing if k == 0 else 2 * s_k
        dist, idx = outline_tree.query(cand, k=k_near, distance_upper_bound=bound / grading)
        dist, idx = dist.reshape(len(cand), -1), idx.reshape(len(cand), -1)
        size = np.minimum((outline_size[idx] + grading * dist).min(axis=1), spacing)
        wanted = size >= s_k if k == 0 else (size < 2 * s_k) & ((size >= s_k) | (k == levels))
        cand = cand[wanted]
        clear, _ = contour_tree.query(cand, distance_upper_bound=max(0.5 * s_k, 1.0))
        keep.append(cand[np.isinf(clear)])
    return np.vstack(keep) if keep else np.empty((0, 2))


def _lattice_in_box(s, x0, y0, x1, y1):
    """Points of the hexagonal lattice of spacing `s` (origin at 0, nested across s / 2^k) in a box."""
    dy = s * np.sqrt(3.0) / 2.0
    rows = np.arange(np.floor(y0 / dy), np.ceil(y1 / dy) + 1)
    cols = np.arange(np.floor(x0 / s) - 1, np.ceil(x1 / s) + 1)
    gx, gy = np.meshgrid(cols, rows)
    x = (gx + 0.5 * (gy % 2)) * s
    pts = np.stack([x.ravel(), (gy * dy).ravel()], axis=1)
    return pts[(pts[:, 0] >= x0) & (pts[:, 0] <= x1) & (pts[:, 1] >= y0) & (pts[:, 1] <= y1)]


def _lattice_near(s, centres, reach):
    """Lattice points (spacing `s`) within boxes of half-size `reach` around `centres`, without repeats, in rows
    from the bottom."""
    dy = s * np.sqrt(3.0) / 2.0
    r0 = np.floor((centres[:, 1] - reach) / dy).astype(np.int64)
    r1 = np.ceil((centres[:, 1] + reach) / dy).astype(np.int64)
    c0 = np.floor((centres[:, 0] - reach) / s).astype(np.int64) - 1
    c1 = np.ceil((centres[:, 0] + reach) / s).astype(np.int64)
    bottom, left = r0.min(), c0.min()
    width = c1.max() - left + 1
    # Each box as its rows, each row as its run of columns: the key row * width + column of every point.
    rows_per_box = r1 - r0 + 1
    box = np.repeat(np.arange(len(centres)), rows_per_box)
    row = r0[box] + _ranks(rows_per_box)
    run = c1[box] - c0[box] + 1
    key = np.repeat((row - bottom) * width + c0[box] - left, run) + _ranks(run)
    key = _distinct(key, (r1.max() - bottom + 1) * width)
    rows, cols = key // width + bottom, key % width + left
    return np.stack([(cols + 0.5 * (rows % 2)) * s, rows * dy], axis=1)


def _ranks(counts):
    """0, 1, ..., counts[0] - 1, 0, 1, ..., counts[1] - 1, ...: each item's place in its group."""
    return np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)


def _distinct(keys, limit):
    """The distinct values of `keys` (integers in [0, limit)), sorted: marked in a boolean array when `limit`
    is not much more than their count, else by sorting."""
    if limit > 4 * len(keys):
        return np.unique(keys)
    seen = np.zeros(limit, bool)
    seen[keys] = True
    return np.flatnonzero(seen)


def quality_triangulation(outline, interior, cdt, min_angle=21.0, max_rounds=25):
    """Vertices (n, 2) and counter-clockwise triangles (m, 3) filling the outline's rings.

    Holes and separate islands come from the rings themselves (see `_inside_triangles`). The first
    triangulation is global; each refinement round then triangulates again only the triangles the new
    points change, and looks again only at those and at the ones it could not fix yet (a triangle that
    was good stays good while it exists).
    """
    points, segments, sharp = outline.points, outline.segments, outline.sharp
    points = np.vstack([points, interior]) if len(interior) else points
    sharp = np.concatenate([sharp, np.zeros(len(points) - len(sharp), bool)])
    seg_floor = max(float(np.median(outline.size)) / 256.0, 0.02)
    grid = _Grid.over(points)
    mesh = _Triangles.of(points, _inside_triangles(points, segments, cdt(points, segments)), grid)
    # Points only ever get added: the first ones' k-d tree serves every round, the added ones get a small one.
    first_tree, first_count = cKDTree(points), len(points)
    for _ in range(max_rounds):
        # One batch per round: split every encroached outline edge, insert every other circumcentre.
        seen = np.flatnonzero(mesh.look)
        new_points, enc, bad = _circumcentres_to_add(points, segments, mesh.tris[seen], sharp, min_angle, seg_floor)
        enc_by, encroaching = _encroached_segments(points, segments, mesh.tris[seen], seg_floor)
        enc |= enc_by
        mesh.look[:] = False
        mesh.look[seen[bad | encroaching]] = True
        trees = [first_tree] + ([cKDTree(points[first_count:])] if len(points) > first_count else [])
        mid, ok = _clear_splits(trees, points, segments, enc, sharp)
        enc[np.flatnonzero(enc)[~ok]] = False
        mid = mid[ok]
        new_points = new_points[_clear_of(trees + ([cKDTree(mid)] if len(mid) else []), new_points)]
        if not enc.any() and not len(new_points):
            break
        first_new, split = len(points), segments[enc]
        if enc.any():
            points, segments = _split_segments(points, segments, enc, mid)
        points = np.vstack([points, new_points])
        sharp = np.concatenate([sharp, np.zeros(len(points) - len(sharp), bool)])
        mesh = _retriangulate(points, mesh, grid, first_new, split, cdt)
    tris = mesh.tris
    used = _distinct(tris.ravel(), len(points))
    remap = np.full(len(points), -1)
    remap[used] = np.arange(len(used))
    return points[used], remap[tris]


@dataclass
class _Grid:
    """Square cells over the mesh's bounding box, to find the circumcircles near a few new points without a
    look at every circle: each circle is known by the cells its bounding box covers."""

    lo: np.ndarray
    size: float
    nx: int
    ny: int

    @classmethod
    def over(cls, points, cells=256):
        lo, extent = points.min(axis=0), np.ptp(points, axis=0)
        size = max(float(extent.max()) / cells, 1e-9)
        nx, ny = (np.floor(extent / size).astype(np.int64) + 1).tolist()
        return cls(lo, size, nx, ny)

    def boxes(self, centre, radius):
        """(m, 4): the cells x0 <= x < x1, y0 <= y < y1 that the circles' bounding boxes meet, a hair wider so
        that rounding never loses a point on a circle."""
        reach = (radius * (1.0 + 1e-9) + self.size * 1e-6)[:, None]
        with np.errstate(invalid="ignore"):  # a flat triangle's circle: no cells
            low = np.floor((centre - reach - self.lo) / self.size)
            high = np.floor((centre + reach - self.lo) / self.size) + 1
        box = np.nan_to_num(np.hstack([low, high]), nan=0.0)
        return np.minimum(np.maximum(box, 0), [self.nx, self.ny, self.nx, self.ny]).astype(np.int32)

    def holding(self, boxes, new):
        """Which boxes hold at least one of the points `new` (a summed-area table of them per cell)."""
        cell = np.clip(np.floor((new - self.lo) / self.size).astype(np.int64), 0, [self.nx - 1, self.ny - 1])
        count = np.zeros((self.ny + 1, self.nx + 1), np.int32)
        count[1:, 1:] = np.bincount(cell[:, 1] * self.nx + cell[:, 0], minlength=self.nx * self.ny).reshape(
            self.ny, self.nx)
        table = count.cumsum(axis=0).cumsum(axis=1)
        x0, y0, x1, y1 = boxes.T
        return table[y1, x1] - table[y0, x1] - table[y1, x0] + table[y0, x0] > 0


@dataclass
class _Triangles:
    """The triangles being refined, their circumcircles and the grid cells these meet, and which triangles
    the next round looks at."""

    tris: np.ndarray
    centre: np.ndarray
    radius: np.ndarray
    boxes: np.ndarray
    look: np.ndarray

    @classmethod
    def of(cls, points, tris, grid):
        centre, radius = _circumcircles(points[tris[:, 0]], points[tris[:, 1]], points[tris[:, 2]])
        return cls(tris, centre, radius, grid.boxes(centre, radius), np.ones(len(tris), bool))

    def replaced(self, drop, points, tris, grid):
        """These triangles without the ones flagged in `drop`, plus `tris` (looked at next round)."""
        new = _Triangles.of(points, tris, grid)
        keep = np.flatnonzero(~drop)
        return _Triangles(*(np.concatenate([getattr(self, f)[keep], getattr(new, f)])
                            for f in ("tris", "centre", "radius", "boxes", "look")))


def _retriangulate(points, mesh, grid, first_new, split, cdt):
    """`mesh` (a _Triangles on `grid`) with the points from `first_new` on inserted: the outline edges `split`
    were cut at the points first_new, first_new + 1, ... in order, the rest are interior points.

    The cavity is every triangle whose circumcircle holds a new point (Bowyer-Watson), which includes the
    triangle each point falls in and the one along each split edge. Only the cavity is triangulated again,
    its boundary kept as constrained edges (inside on their left, as the outline's), so a round costs in
    proportion to what it changes, not to the whole mesh.
    """
    new = points[first_new:]
    near = np.flatnonzero(grid.holding(mesh.boxes, new))
    dist, _ = cKDTree(new).query(mesh.centre[near])
    cavity = np.zeros(len(mesh.tris), bool)
    cavity[near[dist <= mesh.radius[near] * (1.0 + 1e-9)]] = True
    hole = mesh.tris[cavity]
    edges = np.concatenate([hole[:, [0, 1]], hole[:, [1, 2]], hole[:, [2, 0]]])
    n = len(points)
    # An edge is on the cavity's boundary if the cavity does not hold it the other way round too.
    inner, _ = _find(edges[:, 0] * n + edges[:, 1], edges[:, 1] * n + edges[:, 0])
    boundary = edges[~inner]
    # A split outline edge on the cavity's boundary becomes its two halves.
    if len(split):
        is_split, where = _find(split[:, 0] * n + split[:, 1], boundary[:, 0] * n + boundary[:, 1])
        halves = first_new + where[is_split]
        boundary = np.vstack([boundary[~is_split], np.stack([boundary[is_split, 0], halves], axis=1),
                              np.stack([halves, boundary[is_split, 1]], axis=1)])
    local = _distinct(np.concatenate([hole.ravel(), np.arange(first_new, n)]), n)
    to_local = np.full(n, -1)
    to_local[local] = np.arange(len(local))
    sub_points, sub_segments = points[local], to_local[boundary]
    sub = _inside_triangles(sub_points, sub_segments, cdt(sub_points, sub_segments))
    return mesh.replaced(cavity, points, local[sub], grid)


def _find(table, keys):
    """For each of `keys` (integers): whether `table` holds it, and at which index."""
    if not len(table):
        return np.zeros(len(keys), bool), np.zeros(len(keys), np.int64)
    order = np.argsort(table)
    pos = np.clip(np.searchsorted(table[order], keys), 0, len(table) - 1)
    return table[order][pos] == keys, order[pos]


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


def _inside_triangles(points, segments, tris):
    """Counter-clockwise triangles of `tris` on the inside of the outline.

    Triangles connected without crossing an outline edge form a region. Every outline edge keeps the
    inside on its left, so a region whose triangles run along outline edges in their own direction is
    inside, and one that runs along them backwards is outside: no point-in-polygon test, which a sliver's
    centroid on the outline could fool. Flat triangles (between collinear outline points, where rounding
    gives them a sign but no area) are dropped first.
    """
    tris = np.asarray(tris, np.int64).reshape(-1, 3)
    a, b, c = points[tris[:, 0]], points[tris[:, 1]], points[tris[:, 2]]
    area2 = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])
    tris = np.where((area2 < 0)[:, None], tris[:, ::-1], tris)
    longest = np.max([np.hypot(*(q - p).T) for p, q in ((a, b), (b, c), (c, a))], axis=0)
    tris = tris[np.abs(area2) > _FLAT * longest**2]

    m, n = len(tris), len(points)
    if not m:
        return tris
    edges = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])
    key = _edge_key(edges, n)
    order = np.argsort(key)
    k, o = key[order], np.tile(np.arange(m), 3)[order]
    # Per sorted edge: +1 along an outline edge, -1 against it, 0 off the outline. Each outline edge is one or
    # two of the sorted edges (one per triangle along it), found from the outline's side: far fewer lookups.
    vote = np.zeros(len(k), np.int64)
    seg_key = _edge_key(segments, n)
    first = np.searchsorted(k, seg_key)
    for step in (0, 1):
        pos = np.minimum(first + step, len(k) - 1)
        on = k[pos] == seg_key
        vote[pos[on]] = np.where(edges[order[pos[on]], 0] == segments[on, 0], 1, -1)
    shared = (k[1:] == k[:-1]) & (vote[1:] == 0)
    adj = coo_matrix((np.ones(shared.sum()), (o[:-1][shared], o[1:][shared])), shape=(m, m))
    n_regions, region = connected_components(adj, directed=False)
    votes = np.bincount(region[o], vote, minlength=n_regions)
    return tris[votes[region] > 0]


def _edge_key(edges, n):
    return np.minimum(edges[:, 0], edges[:, 1]) * n + np.maximum(edges[:, 0], edges[:, 1])


def _encroached_segments(points, segments, tris, seg_floor):
    """Outline edges whose diametral circle holds the opposite vertex of their inside triangle, and which
    of `tris` are those triangles."""
    n, m = len(points), len(tris)
    # Each triangle's three corners as (edge start, edge end, opposite vertex), the first edges first.
    corner = np.concatenate([tris, np.roll(tris, -1, axis=1), np.roll(tris, -2, axis=1)])
    hit, where = _find(_edge_key(segments, n), _edge_key(corner, n))
    i, j, opp = corner[hit].T
    u, v = points[i] - points[opp], points[j] - points[opp]
    obtuse = np.einsum("ij,ij->i", u, v) < -1e-12 * np.einsum("ij,ij->i", u, u)
    enc = np.zeros(len(segments), bool)
    enc[where[hit][obtuse]] = True
    encroaching = np.bincount(np.flatnonzero(hit)[obtuse] % m, minlength=m) > 0
    length = np.hypot(*(points[segments[:, 1]] - points[segments[:, 0]]).T)
    return enc & (length > 2 * seg_floor), encroaching


def _split_points(points, segments, enc, sharp, shift=0.0):
    """Where to split the flagged outline edges: at the middle, or at a power-of-two distance from a sharp
    corner (concentric shells, so that splits on the two sides of a sharp corner do not chase each other);
    `shift` moves the points along their edges by that fraction of the edge."""
    a, b = segments[enc, 0], segments[enc, 1]
    pa, pb = points[a], points[b]
    length = np.hypot(*(pb - pa).T)
    t = np.full(len(a), 0.5)
    shell = 2.0 ** np.round(np.log2(np.maximum(length / 2, 1e-12)))
    t = np.where(sharp[a] & ~sharp[b], shell / length, t)
    t = np.where(sharp[b] & ~sharp[a], 1.0 - shell / length, t)
    t = np.clip(t + shift, 0.25, 0.75)
    return pa + t[:, None] * (pb - pa)


def _clear_splits(trees, points, segments, enc, sharp, gap=MIN_VERTEX_GAP):
    """Split points for the flagged outline edges, and which of them have room: one that falls within `gap`
    of another point (a vertex of a ring that passes a hair away) moves along its edge instead. `trees`:
    cKDTrees that hold `points` between them."""
    mid = _split_points(points, segments, enc, sharp)
    found = np.zeros(len(mid), bool)
    for shift in (0.0, -0.2, 0.2):
        alt = _split_points(points, segments, enc, sharp, shift)
        take = ~found & _far_from(trees, alt, gap)
        mid[take] = alt[take]
        found |= take
    return mid, found & _clear_of([], mid, gap)


def _split_segments(points, segments, enc, mid):
    """Splits the flagged outline edges at `mid` (one point each, in order)."""
    a, b = segments[enc, 0], segments[enc, 1]
    new = np.arange(len(points), len(points) + len(mid))
    segments = np.vstack([segments[~enc], np.stack([a, new], axis=1), np.stack([new, b], axis=1)])
    return np.vstack([points, mid]), segments


def _clear_of(trees, new, gap=MIN_VERTEX_GAP):
    """Mask of the `new` points at least `gap` from every point in `trees` (cKDTrees) and from each other (of
    two that crowd each other, the first stays). Two sides of a needle-sharp corner would otherwise be split a
    hair apart."""
    if not len(new):
        return np.zeros(0, bool)
    ok = _far_from(trees, new, gap)
    ok[cKDTree(new).query_pairs(gap, output_type="ndarray").max(axis=1, initial=-1)] = False
    return ok


def _far_from(trees, points, gap):
    """Mask of `points` at least `gap` from every point in `trees` (cKDTrees)."""
    ok = np.ones(len(points), bool)
    for tree in trees:
        ok &= np.isinf(tree.query(points, distance_upper_bound=gap)[0])
    return ok


def _circumcentres_to_add(points, segments, tris, sharp, min_angle, seg_floor):
    """Circumcentres of skinny triangles to insert, the outline edges they encroach (split instead), and
    which of `tris` are skinny."""
    angles = triangle_angles(points, tris)
    bad = (angles.min(axis=1) < min_angle) & ~sharp[tris].any(axis=1)
    enc = np.zeros(len(segments), bool)
    if not bad.any():
        return np.empty((0, 2)), enc, bad
    t = tris[bad]
    a, b, c = points[t[:, 0]], points[t[:, 1]], points[t[:, 2]]
    cc, radius = _circumcircles(a, b, c)

    pa, pb = points[segments[:, 0]], points[segments[:, 1]]
    mid, half = (pa + pb) / 2, np.hypot(*(pb - pa).T) / 2
    near = cKDTree(mid).query_ball_point(cc, r=half.max() + 1e-9, return_sorted=False)
    counts = np.fromiter(map(len, near), np.int64, count=len(near))
    seg = np.fromiter(chain.from_iterable(near), np.int64, count=counts.sum())
    centre = np.repeat(np.arange(len(cc)), counts)
    hit = np.hypot(*(mid[seg] - cc[centre]).T) < half[seg]
    enc[seg[hit]] = True
    encroaching = np.bincount(centre[hit], minlength=len(cc)) > 0
    length = 2 * half
    enc &= length > 2 * seg_floor
    cc, radius = cc[~encroaching], radius[~encroaching]
    # A few hundred centres spread over the whole image: narrow bands keep each band's edges few (5x faster).
    keep = points_in_edges(cc, pa, pb, band=64) if len(cc) else np.zeros(0, bool)
    cc, radius = cc[keep], radius[keep]
    return _spread_out(cc, radius), enc, bad


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
    near = cKDTree(cc).query_ball_point(cc, 0.5 * radius, return_sorted=False)
    taken = np.zeros(len(cc), bool)
    blocked = np.zeros(len(cc), bool)
    for k in np.argsort(-radius).tolist():
        if not blocked[k]:
            taken[k] = True
            blocked[near[k]] = True
    return cc[taken]
