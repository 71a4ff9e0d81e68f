"""Joint blending: bone weights diffused over the mesh, so that a bend spreads over about the width of the limb.

Blender's bone heat solves -Δw + H (w - p) = 0 on the mesh, with H = 1 / d² (d: distance to the nearest bone)
and p the nearest visible bone: smooth, because the Laplacian averages each weight with its neighbours'
over a length that grows with the distance from the bones, but leaky, because p comes from straight-line
visibility. Here p is VIDE's own weights, measured inside the shape, and the Laplacian (cotangent weights,
lumped areas) links only vertices that share a triangle, so nothing can reach across the gap between two legs
that the weights did not already. Near a bone (H large) the weights stay VIDE's; between bones, where the
distance to the nearest bone is about the limb's half width, they are averaged over that width. Meshfree C²
weights are held along the handles instead (the bones pulled in by Joint Pull-In, where the rig gives them
exactly), so that they blend over the whole of each joint: theirs turn over in narrower bands; and at the middle
of each joint, so that the joint stays where the rig turns it over (`BoneRig.held`).

Near an outline corner that turns inwards, a diffused weight's gradient grows without bound (like r^(π/α - 1) at
a corner of angle α > π); the vectorizer puts sub-pixel triangles in such corners, which resolve it and then fold
when a joint nearby bends (the sample character's 90° knee, where its cape's hem meets the leg). So each
triangle resists a gradient as if it were at least FINEST of the median triangle's size: the weights are not
resolved below that, and a tiny triangle moves with its neighbours.

The matrix is factored once per mesh and bones (on its zone, below), and each bone's column
is solved on its own, so re-weighting after one bone's smoothness changed is one solve. Rows are normalized after the
diffusion.

The seeds are one-hot (within ZONE) over much of a mesh with many bones, along a comb's teeth or a hand's fingers:
Geodesic's fall off exponentially, Meshfree C²'s are 1 where one bone's support is alone. There the diffusion moves
nothing (K @ ones = 0), so the blend is solved only on the *zone*: the vertices where a second bone's seed is ZONE or
more of the largest, and those within ZONE_REACH diffusion lengths of them (d / √strength: the length over which the
diffusion's kernel falls by e). The others keep their seeds, and hold the zone's edge where they border it. On the
comb of bench/weights.py (72k vertices, 60 teeth) that is under half the vertices, and the weights differ from the
solve over every vertex by under 1e-6 (3e-5 with a tenth of the smoothness, whose seeds mix over less and leave more
to the diffusion's reach); with Meshfree C², 65% of its vertices and 2e-6.

Seeds, diffused weights and weights are kept as CSR matrices (but the diffused weights of a mesh solved whole in one
block of rows: `JointBlend._blended`); what is dense is the zone's rows of SOLVE_COLUMNS columns per solve, or a block
of rows (`weights.block_rows`): a vertex has a few bones that matter, and a dense (vertices, bones) array at 72k x 60
is 35 MB, each temporary of that size a fresh mapping whose page faults cost more than the work on it inside Blender
(bench/weights.py's comb, binds alternating with the dense code's: Geodesic 1.8-2.4 -> 2.5-2.7 times as fast as
Automatic Weights). Seeds under SEED_FLOOR and diffused weights under DROP are left out (the weights move by under
1e-8; on the bench meshes by 3e-10 at most).
"""

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph
from scipy.sparse.linalg import splu
from scipy.spatial import cKDTree

from .errors import VideError
from .geodesic import median
from .weights import BLOCK, along_rows, block_rows, by_rows, entry_rows, flat_csr, row_max, stacked, strongest, to_csr

WIDTH_FLOOR = 0.5  # on a bone, weights are held as hard as half the way to the outline
GEODESIC_REACH = 1e-8  # exp(-d / s) seeds this small are about 18 smoothness lengths further than the nearest bone
# Geodesic seeds under this are left out: faded by seed / GEODESIC_REACH, their diffused weight would be under 1e-8.
SEED_FLOOR = GEODESIC_REACH ** 2
# Meshfree C²: weights anchored 2.5 times more weakly, held on a handle as hard as 0.35 of the way to the outline, from
# seeds w^0.7 (larger where bones share: 0.25 becomes 0.38). Measured in bench/deform_quality.py: held on the whole
# bones with 2, 0.5 and w, a 90° knee collapsed 3 triangles, and 3 other poses stretched more than Automatic Weights.
MESHFREE_SCALE = 2.5
MESHFREE_WIDTH_FLOOR = 0.35
MESHFREE_POWER = 0.7
# Triangles whose longest edge is under this fraction of the median one are stiffened (see above). On the characters
# and poses of bench/deform_quality.py: from 0.1 to 0.6 no triangle in the sample's inward corners folds at its 90°
# knee any more; at 0.25, p99 σ1/σ2 drops by up to 8% in 5 of the 50 pose/method pairs and rises in none.
FINEST = 0.25
# The zone (see above): solved only where a second bone's seed reaches this fraction of the largest, and within
# ZONE_REACH diffusion lengths of there. On the comb of bench/weights.py, with its smoothness and a tenth of it, the
# largest change in the weights from the solve over every vertex is 4e-7 and 2e-5 at ZONE_REACH 4 (47% and 37% of
# the vertices solved), 3e-4 and 1e-2 at 2 lengths (39%, 28%), 3e-2 and 0.6 at none (32%, 8%).
ZONE = 1e-2
ZONE_REACH = 4.0
ZONE_ALL = 0.75  # a zone of more than this fraction of the vertices is all of them (see JointBlend._factor)
ZONE_GROWN = 0.5  # and so is one where the seeds mix on more than this (the character: 74%, with 100% grown)
ZONE_VERTICES = 3000  # a mesh of fewer vertices is solved whole, no zone searched (see JointBlend._factor)
ALL = slice(None)
# `bone_clearance` by bands from this many bones: with fewer, a loop over the bones and all the points is as fast (17k
# hand, 20 bones: 2.4 ms either way; 200k hand, 5 bones: 6.4 against 10.4 ms). BAND_CELL: points per cell of the grid
# that bounds the distance to the nearest bone.
BAND_BONES = 32
BAND_CELL = 128
# Columns per solve: the triangular solves' dense work then stays in cache, and SuperLU's block updates do not go to
# threaded BLAS. On the comb's zone (34k vertices, 60 columns), 8 at a time took 73-84 ms, all 60 at once 134-226 ms,
# one at a time 205-212 ms; with BLAS on both cores 8 at a time took 181 ms and all at once 921 ms (solving Aᵀx = b
# instead, which avoids the block updates: 182 and 187 ms, and 183 ms for 8 at a time on one core).
SOLVE_COLUMNS = 8
# Diffused weights under this are not kept. Only each row's few largest weights and its sum reach the result
# (`weights.strongest`), and the rows sum to about 1, so the weights move by about bones x DROP at most.
DROP = 1e-10
RADIX_SIDES = 1 << 15  # triangle sides up to which `cotangent_laplacian` sorts by radix
# A triangle whose height is under this fraction of its longest side is flat: collinear or coincident corners, as a
# stray face of an unmerged mesh has, where round-off leaves some area (the vectorizer's meshes: 0.2 at least).
FLAT = 1e-8


def triangle_terms(points, corners, finest=0.0):
    """One pass over the triangles of points (n, 2), given by their corners (3, t): each vertex's lumped area (n,), a
    third of its triangles' areas, and each triangle's half cotangent weights (3, t), that of the edge opposite corner
    k (from corner k + 1 to k + 2) half the cotangent of the angle at k. A triangle whose longest edge h is under
    `finest` of the median triangle's longest edge counts (finest × median / h)² times: as stiff as one of that size.
    A FLAT triangle has no cotangent weights."""
    # On coordinate columns, one per corner or side: row operations on (t, 3) arrays took 2.4 times as long (comb),
    # on (3, t) arrays 0.27 ms against 0.24 (the sample character).
    x, y = (np.ascontiguousarray(c) for c in np.asarray(points, float).T)
    x, y = [x[c] for c in corners], [y[c] for c in corners]
    # Side k runs from corner k to corner k + 1; the angle at k is between side k and side k - 1 reversed.
    sx, sy = [x[(k + 1) % 3] - x[k] for k in range(3)], [y[(k + 1) % 3] - y[k] for k in range(3)]
    squared = [sx[k] * sx[k] + sy[k] * sy[k] for k in range(3)]
    most = np.maximum(np.maximum(squared[0], squared[1]), squared[2])
    longest = np.sqrt(most)
    finest = finest * median(longest) if len(longest) else 0.0  # np.median's, without its checks (0.03 -> 0.01 ms)
    twice_area = np.abs(sx[0] * sy[1] - sy[0] * sx[1])
    # Summed triangle by triangle, in the order of their corners (a large mesh's blend is sensitive to round-off).
    areas = np.bincount(corners.T.ravel(), np.repeat(0.5 * twice_area / 3.0, 3), len(points))
    flat = twice_area <= FLAT * most
    if flat.any():  # no area to speak of, no cotangent weights (else huge ones of both signs, cancelling to 0 pivots)
        longest[flat] = twice_area[flat] = np.inf
    stiffer = np.maximum(finest / np.maximum(longest, 1e-300), 1.0) ** 2
    scale = 0.5 * stiffer / np.maximum(twice_area, 1e-300)
    return areas, np.stack([scale * -(sx[k] * sx[k - 1] + sy[k] * sy[k - 1]) for k in range(3)])


def cotangent_laplacian(corners, half_cot, anchor):
    """K + diag(anchor) (n, n, CSC) for n = len(anchor), K the stiffness matrix of triangles given by their corners
    (3, t; int32, the matrix's own index type) with the cotangent weights of `triangle_terms` (K @ ones = 0). Made
    canonical here (rows sorted in each column, one entry per edge; a triangle that repeats a corner leaves that
    vertex's diagonal entry more than once, which splu sums), not by scipy's sum of duplicates over both
    halves, which sorted each column of twice as many entries: the sides summed per edge below the diagonal, those
    put in order, then each column's entries above the diagonal, on it and below it put in place. Of up to
    RADIX_SIDES sides by 16-bit radix sorts (`_by_radix`); of more (those sorts then miss the cache), by scipy's sum
    of duplicates below the diagonal only and its conversion to columns. Min of interleaved runs, before -> after:
    sample character (13k sides) 0.75 -> 0.70 ms, 17k hand 7.4 -> 4.2 ms, 63k hand 29 -> 20 ms, comb 29 -> 16 ms,
    203k hand 78 -> 55 ms."""
    n = len(anchor)
    first, second = corners[[1, 2, 0]].ravel(), corners[[2, 0, 1]].ravel()  # the side opposite each corner
    low, high = np.minimum(first, second), np.maximum(first, second)
    off = -half_cot.ravel()
    if len(first) <= RADIX_SIDES and n <= 1 << 16:
        return _by_radix(low, high, off, anchor)
    lower = sparse.csr_matrix((off, (high, low)), (n, n))  # each edge once, summed, below the diagonal
    upper = lower.tocsc()  # the same entries by column: each row's entries right of the diagonal, in order
    left, right = np.diff(lower.indptr), np.diff(upper.indptr)
    indptr = np.zeros(n + 1, np.int32)
    np.cumsum(left + right + 1, out=indptr[1:])
    at_diagonal = indptr[:-1] + left
    indices, values = np.empty(indptr[-1], np.int32), np.empty(indptr[-1])
    indices[at_diagonal] = np.arange(n, dtype=np.int32)
    # Less its row's other entries, summed side by side in the triangles' order, first ends then second ends (add.at
    # goes on in order from bincount's sums): the weights of the 203k hand's Meshfree C² blend moved by 3e-12 when
    # summed in another order.
    by_triangle = -half_cot.T.ravel()
    summed = np.bincount(corners[[1, 2, 0]].T.ravel(), by_triangle, n)
    np.add.at(summed, corners[[2, 0, 1]].T.ravel(), by_triangle)
    values[at_diagonal] = anchor - summed
    for part, counts, starts in ((lower, left, indptr[:-1]), (upper, right, at_diagonal + 1)):
        at = np.arange(part.nnz) + np.repeat(starts - part.indptr[:-1], counts)
        indices[at], values[at] = part.indices, part.data
    return sparse.csc_matrix((values, indices, indptr), (n, n))  # symmetric: its rows are its columns


def _by_radix(low, high, off, anchor):
    """`cotangent_laplacian` of sides (low, high) with values `off`, by 16-bit radix sorts: the sides by their ends and
    summed per edge, then each edge's entries above the diagonal, in column `high`, and below it, in column `low`, put
    in place by one stable sort by column. The diagonal summed per edge: the character's weights move by 2e-15."""
    n = len(anchor)
    order = np.lexsort((low.astype(np.uint16), high.astype(np.uint16)))
    low, high = low[order], high[order]
    new = np.empty(len(low), bool)
    new[:1] = True
    np.not_equal(low[1:], low[:-1], out=new[1:])
    new[1:] |= high[1:] != high[:-1]
    off = np.bincount(np.cumsum(new) - 1, off[order])  # per edge, by (high, low)
    new = np.flatnonzero(new)  # each edge's first side: taken, not masked (4 times as quick)
    low, high, diagonal = low[new], high[new], np.arange(n, dtype=np.int32)
    columns = np.concatenate([high, diagonal, low])
    order = np.argsort(columns.astype(np.uint16), kind="stable")
    indptr = np.zeros(n + 1, np.int32)
    np.cumsum(np.bincount(columns, minlength=n), out=indptr[1:])
    values = np.concatenate([off, anchor - np.bincount(low, off, n) - np.bincount(high, off, n), off])[order]
    return sparse.csc_matrix((values, np.concatenate([low, diagonal, high])[order], indptr), (n, n))


def bone_clearance(points, heads, tails):
    """Straight distance from each point (n, 2) to its nearest bone segment. On a large mesh with many bones, each bone
    is measured only to the points in a band across the mesh's longer axis that may have it nearest: those within R
    of the bone along that axis, R a bound of every point's distance to its nearest bone (from a grid's cell centres,
    measured to every bone), with BAND_BONES bones or more. The comb of bench/weights.py: Geodesic's 60 bones 24 -> 7
    ms, Meshfree C²'s 178 held segments 65 -> 25 ms; the same distances."""
    x, y = (np.ascontiguousarray(c) for c in np.asarray(points, float).T)  # contiguous: 8 times faster at 63k
    heads, tails = np.asarray(heads, float).reshape(-1, 2), np.asarray(tails, float).reshape(-1, 2)
    if len(heads) < BAND_BONES or len(x) == 0:
        return np.sqrt(_nearest_squared(x + 1j * y, heads, tails))
    if np.ptp(y) > np.ptp(x):  # the bands across x (the longer axis)
        x, y, heads, tails = y, x, heads[:, ::-1], tails[:, ::-1]
    lo = np.array([x.min(), y.min()])
    cell = max(np.sqrt((np.ptp(x) * np.ptp(y) + 1e-300) * BAND_CELL / len(x)), np.ptp(x) / 4096, 1e-300)
    # Cells by truncation (the coordinates are at least `lo`): numpy's floor division of floats took 4 times as long.
    across, along = ((x - lo[0]) / cell).astype(np.int64), ((y - lo[1]) / cell).astype(np.int64)
    rows = int(along.max()) + 1
    cells = np.flatnonzero(np.bincount(across * rows + along))
    centres = lo + (np.column_stack(np.divmod(cells, rows)) + 0.5) * cell
    reach = np.sqrt(_nearest_squared(centres[:, 0] + 1j * centres[:, 1], heads, tails).max()) + cell * np.sqrt(0.5)
    reach = reach * (1.0 + 1e-9) + 1e-12 * cell  # round-off
    order = np.argsort(across.astype(np.int16) if across.max() < 1 << 15 else across, kind="stable")  # radix
    starts = np.r_[0, np.cumsum(np.bincount(across))]
    zs = (x + 1j * y)[order]
    best = np.full(len(x), np.inf)
    for head, tail in zip(heads, tails):
        first = min(max(int((min(head[0], tail[0]) - reach - lo[0]) // cell), 0), len(starts) - 1)
        last = min(max(int((max(head[0], tail[0]) + reach - lo[0]) // cell) + 1, 0), len(starts) - 1)
        band = slice(starts[first], starts[last])
        _nearest_squared(zs[band], head[None], tail[None], best[band])
    distance = np.empty(len(x))
    distance[order] = np.sqrt(best)
    return distance


def _nearest_squared(z, heads, tails, best=None):
    """The squared distance from each point z (complex: x + iy) to its nearest segment (heads, tails), the smaller of
    it and `best` (changed) when given. Measured in each segment's frame, the points turned so that it runs along the
    real axis from 0: fewer numpy calls than projecting on it (the character's 12 held segments 0.41 -> 0.31 ms, the
    203k hand's 13: 13.4 -> 11.0 ms, the comb's 178 in bands 23.2 -> 18.2 ms)."""
    best = np.full(len(z), np.inf) if best is None else best
    w, beyond = np.empty_like(z), np.empty(len(z))
    for (ax, ay), (bx, by) in zip(heads, tails):
        ab = complex(bx - ax, by - ay)
        np.subtract(z, complex(ax, ay), out=w)
        along = w.real  # a view: the distance past either end, in place
        if ab:  # a point (Meshfree C²'s joints: 4 of the character's 12) is measured to as it is
            w *= ab.conjugate() / abs(ab)
            along -= np.clip(along, 0.0, abs(ab), out=beyond)
        np.minimum(best, along * along + w.imag * w.imag, out=best)
    return best


def held_widths(points, outline, d, width_floor, per_cell=16):
    """max(d, width_floor × the distance from each point (n, 2) to its nearest outline point), d (n,): looked up only
    where it can exceed d. An upper bound of that distance first, to the outline point nearest the centre of the
    point's cell in a grid of about n / per_cell cells; on the comb of bench/weights.py 36% of the points are then
    looked up, and it takes 24 ms instead of 34."""
    # Built in half the time (comb), found the same; leaves of 32 points, boxes not shrunk to them: the sample
    # character 0.53 -> 0.48 ms, the 17k hand 3.5 -> 3.2 ms.
    tree = cKDTree(outline, leafsize=32, balanced_tree=False, compact_nodes=False)
    x, y = (np.ascontiguousarray(c) for c in np.asarray(points, float).T)
    if len(x) == 0 or len(outline) == 0:
        return np.maximum(d, width_floor * tree.query(points)[0])
    lo = np.array([x.min(), y.min()])
    extent = np.array([x.max(), y.max()]) - lo
    cell = max(np.sqrt(extent[0] * extent[1] * per_cell / len(x)), float(extent.max()) / 1024, 1e-300)
    shape = (extent // cell).astype(np.int64) + 1
    across, along = np.divmod(np.arange(shape[0] * shape[1]), shape[1])
    nearest = tree.query(np.column_stack([lo[0] + (across + 0.5) * cell, lo[1] + (along + 0.5) * cell]))[1]
    # Cells by truncation, not numpy's slow floor division of floats (any cell's outline point bounds the distance).
    across = np.minimum(((x - lo[0]) / cell).astype(np.int64), shape[0] - 1)
    along = np.minimum(((y - lo[1]) / cell).astype(np.int64), shape[1] - 1)
    near = outline[nearest[across * shape[1] + along]]
    bound = np.hypot(x - near[:, 0], y - near[:, 1])
    look = np.flatnonzero(width_floor * bound > d)
    d = d.copy()
    if len(look):  # the search cut off past the largest bound (comb: 12 -> 10 ms)
        found = tree.query(points[look], distance_upper_bound=bound[look].max() * (1.0 + 1e-9))[0]
        d[look] = np.maximum(d[look], width_floor * found)
    return d


def outline_vertices(tris, n):
    """The vertices (of n) on the mesh's outline: on an edge of one triangle only."""
    edges = np.sort(np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]]), axis=1)
    keys, counts = np.unique(edges[:, 0] * n + edges[:, 1], return_counts=True)
    return np.unique(np.concatenate([keys[counts == 1] // n, keys[counts == 1] % n]))


class JointBlend:
    """Diffuses weights (n, bones) over one mesh: w = (K + M H)⁻¹ M H p with H = strength / d², d the
    distance to the nearest bone, or `width_floor` of the distance to the outline if that is more (so the weights on a
    bone near a joint are held no harder than beside it), bounded to the mesh's size and a thousandth of it; K is
    stiffened on triangles under FINEST of the median one (`triangle_terms`). Larger strength keeps the weights
    closer to p. The columns are solved and kept: a call where one bone's seeds changed (its smoothness) solves only
    that column.

    `outline`: the outline's vertices when they are known (Geodesic's domain), else found from the triangles.
    With `coarse` (nodes, triangles of nodes, interpolation (n, nodes): Geodesic's thinned graph on a large mesh,
    `Domain.interpolation`), K and M are those of the coarser triangles, which lie inside the mesh (so no more
    reaches across a gap), the seeds are taken at the nodes only (`nodes`) and the other vertices interpolate the
    diffused weights, averaged over two rings of mesh neighbours (`_smoothed`; those that interpolate from no node
    keep their seeds). On the 63k-vertex hand of bench/weights.py (5,558 nodes) the blend then adds 0.06 to 0.1 s
    to the bind instead of 1.06 s, and its weights differ from the solve over every vertex by 0.023 at the 99th
    percentile (0.073 at worst).
    With `zone` (ZONE), only the zone is solved (see above), factored on the first call. New seeds in a few columns
    (a bone's smoothness) that mix where the zone does not reach are solved on their own zone."""

    def __init__(self, points, tris, heads, tails, strength, reach=0.0, width_floor=WIDTH_FLOOR, outline=None,
                 coarse=None, zone=0.0):
        points = np.asarray(points, float)
        tris = np.asarray(tris, np.int64).reshape(-1, 3)
        size = max(float(np.ptp(c)) for c in points.T)  # by columns: np.ptp(points, axis=0) took 0.2 ms (character)
        if outline is None:
            outline = outline_vertices(tris, len(points))
        self.nodes, self.interpolation, at = slice(None), None, points
        if coarse is not None:
            nodes, coarse_tris, interpolation = coarse
            interpolation = _smoothed(interpolation, tris, len(points))
            self.nodes, tris, self.interpolation = _with_lost_vertices(nodes, coarse_tris, interpolation)
            at = points[self.nodes]
        d = bone_clearance(at, np.asarray(heads, float), np.asarray(tails, float))
        # The distance to the nearest outline vertex: about the local half width (0 on the outline: not looked up).
        inner = np.ones(len(points), bool)
        inner[outline] = False
        inner = np.flatnonzero(inner if coarse is None else inner[self.nodes])
        d[inner] = held_widths(at[inner], points[outline], d[inner], width_floor)
        d = np.clip(d, 1e-3 * size, size)
        areas, half_cot = triangle_terms(at, tris.T, FINEST)  # gathers by int64 (numpy's own) indices
        mass = np.maximum(areas, 1e-12 * size * size)  # vertices in no triangle keep their weights
        self.anchor = mass * strength / (d * d)
        self.matrix = cotangent_laplacian(np.ascontiguousarray(tris.T, dtype=np.int32), half_cot, self.anchor)
        self.zone, self.reach = zone, reach
        self._at, self._per_length, self._lengths = at, np.sqrt(strength) / d, None  # diffusion length: d / √strength
        self._seeds = self._diffused = self._solve = self._mixed = None

    def __call__(self, seeds, max_influences, prune):
        """Weights (n, bones, CSR) from seeds (at `nodes`, bones; an array or a sparse matrix; rows need not sum to 1):
        diffused, normalized, limited to `max_influences` and pruned without jumps (`weights.strongest`)."""
        # A matrix of its own (sharing the arrays), even of CSR float64 seeds: kept as the last seeds, the caller's
        # object changed by the caller would compare equal to itself on the next call.
        seeds = sparse.csr_matrix(seeds, dtype=np.float64)
        seeds.sum_duplicates()  # canonical, so that != compares entry by entry
        if self._seeds is None or self._seeds.shape != seeds.shape:
            self._mixed = None  # a zone for these seeds alone
            self._factor(seeds)
            self._diffused = self._blended(seeds)
        else:
            changed = np.unique((self._seeds != seeds).indices)
            if len(changed):
                new = self._blended(seeds[:, changed], self._own_zone(seeds, changed))
                diffused = self._diffused.copy()
                if not sparse.issparse(diffused):  # one dense block (`_blended`)
                    diffused[:, changed] = _dense(new)
                    self._diffused = diffused
                else:
                    diffused.data[np.isin(diffused.indices, changed)] = 0.0  # those columns replaced by the new ones
                    diffused.eliminate_zeros()
                    to_columns = sparse.csr_matrix((np.ones(len(changed)), (np.arange(len(changed)), changed)),
                                                   (len(changed), seeds.shape[1]))
                    # Sparse: a few columns solved whole come in one block, dense, and dense + sparse is np.matrix.
                    new = new if sparse.issparse(new) else to_csr(new)
                    self._diffused = diffused + new @ to_columns
        self._seeds = seeds
        diffused = self._diffused if self.interpolation is None else self.interpolation @ self._diffused
        return strongest(diffused, max_influences, prune)

    def _blended(self, seeds, system=None):
        """The seeds (n, k, CSR) diffused on the zone (or on the rows of `system`, from `_system`), the others keeping
        their seeds, as a CSR matrix without the diffused weights under DROP: the zone's rows put together a block of
        rows at a time (`block_rows`), then set among the others' seeds (comb: 117 -> 108 ms with the solves, against
        making every block of rows dense). Solved on every vertex of a mesh without `interpolation` in one block of
        rows, they stay the dense array they are, which `weights.strongest` takes as it is (the sample character:
        0.4 ms less, no CSR made and made dense again)."""
        rows = (system or (self._inside,))[0]
        n, k = seeds.shape
        solved = self._solved(seeds, system)
        shape = (n if rows is ALL else len(rows), k)
        blocks, whole = [], rows is ALL and self.interpolation is None and len(block_rows(shape)) == 1
        for start, stop in block_rows(shape):
            diffused = solved[0][start:stop] if len(solved) == 1 else np.hstack([part[start:stop] for part in solved])
            diffused[np.abs(diffused) < DROP] = 0.0
            if whole:
                return diffused
            blocks.append(to_csr(diffused))
        zone = stacked(blocks, shape)
        if rows is ALL:
            return zone
        outside = seeds.copy()
        inside = np.zeros(n, bool)
        inside[rows] = True
        outside.data[inside[entry_rows(outside)]] = 0.0
        outside.eliminate_zeros()
        counts = np.zeros(n, np.int64)
        counts[rows] = np.diff(zone.indptr)
        return outside + sparse.csr_matrix((zone.data, zone.indices, np.r_[0, np.cumsum(counts)]), (n, k))

    def _solved(self, seeds, system=None):
        """The seeds (n, k, CSR) diffused on the zone's vertices (or on those of `system`): a list of dense (zone
        vertices, SOLVE_COLUMNS) arrays, one per solve."""
        rows, anchor, rim, held, solve = system or (self._inside, self._anchor, self._rim, self._held, self._solve)
        inside = seeds if rows is ALL else seeds[rows]
        # One block of dense work (the character) at once, fewer sparse matrices made; else a few columns at a time.
        inside = inside.toarray() if inside.shape[0] * inside.shape[1] <= BLOCK else inside.tocsc()
        # The vertices outside that border the zone are held: their seeds' pull on the zone's rows, for all columns at
        # once and sparse (a few rows), not a dense product per solve.
        pull = None if held is None else (held @ seeds[rim]).tocsc()
        parts = []
        for i in range(0, seeds.shape[1], SOLVE_COLUMNS):
            columns = _dense(inside[:, i:i + SOLVE_COLUMNS])
            rhs = columns * anchor[:, None]
            if pull is not None:
                part = pull[:, i:i + SOLVE_COLUMNS]
                rhs[part.indices, np.repeat(np.arange(part.shape[1]), np.diff(part.indptr))] -= part.data
            solved = solve(rhs)
            if self.reach:  # only where the bone reaches: its diffused weight fades in as its seed grows to `reach`
                solved *= np.minimum(columns / self.reach, 1.0)
            parts.append(solved)
        return parts

    def _factor(self, seeds):
        """Factors the matrix on the vertices solved for: all of them, or with `zone` those of the zone (a zone of most
        vertices, ZONE_ALL, is all of them). A mesh of fewer than ZONE_VERTICES is solved whole: there the search and
        the zone's own work cost about what the smaller factorization saves (a 20-wide arm's Geodesic blend, its zone
        searched or not: 2,631 vertices, zone 44%: 6.40 / 6.34 ms; 3,281 vertices, zone 35%: 7.16 / 7.98 ms), and
        the sample character's zone grows to all of it after a 1 ms search."""
        if not self.zone and self._solve is not None:
            return
        inside = None
        if self.zone and len(self.anchor) >= ZONE_VERTICES:
            self._mixed = self._mixing(seeds)
            few = np.count_nonzero(self._mixed) <= ZONE_GROWN * len(self._mixed)
            inside = self._grown(self._mixed) if few else None
            if inside is not None and np.count_nonzero(inside) > ZONE_ALL * len(inside):
                inside = None
        self._inside, self._anchor, self._rim, self._held, self._solve = self._system(inside)

    def _own_zone(self, seeds, changed):
        """After new seeds in columns `changed`: None if the zone holds where they mix, else their own zone's system
        (`_system`): the mixed rows where their seeds are ZONE² of the largest or more (a margin the zone of every
        bone has from the others' rows: with ZONE alone the comb's live weights moved 2e-5 from a fresh blend's, the
        203k hand's 1e-4; with ZONE², 1e-7 and 2e-7), grown by ZONE_REACH. Solving them there, not on a zone grown
        for all the bones, keeps a live re-weight to a small factorization (comb: 0.15 s instead of 0.24-0.30)."""
        if not self.zone or self._inside is ALL:
            return None
        top = row_max(seeds)
        theirs = self._mixing(seeds, top) & (_at_least(seeds[:, changed], self.zone ** 2 * top) > 0)
        if not (theirs & ~self._mixed).any():
            return None
        return self._system(self._grown(theirs))

    def _mixing(self, seeds, top=None):
        """The rows (n,) where a second bone's seed is `zone` of the first's or more."""
        top = row_max(seeds) if top is None else top
        return _at_least(seeds, self.zone * top) >= 2

    def _grown(self, rows):
        """The vertices (n,) within ZONE_REACH diffusion lengths of `rows` (n,)."""
        return np.isfinite(csgraph.dijkstra(self._diffusion_lengths(), indices=np.flatnonzero(rows), min_only=True,
                                            limit=ZONE_REACH))

    def _system(self, inside):
        """(rows, their anchors, rim, held, solve) for solving on the vertices `inside` (n,), or on all if None: the rim
        is the vertices outside that border them, whose seeds are held (their matrix entries `held` go to the
        right-hand side)."""
        if inside is None:
            return ALL, self.anchor, None, None, _factored(self.matrix)
        rows = np.flatnonzero(inside)
        entries = self.matrix.T[rows]  # symmetric: its transpose is its rows
        rim = np.flatnonzero(~inside & (np.bincount(entries.indices, minlength=len(inside)) > 0))
        solve = _factored(entries[:, rows]) if len(rows) else (lambda rhs: rhs)
        return rows, self.anchor[rows], rim, entries[:, rim], solve

    def _diffusion_lengths(self):
        """The mesh's edges (the matrix's entries off the diagonal) in diffusion lengths, averaged over their ends."""
        if self._lengths is None:
            m = self.matrix
            i, counts = m.indices, np.diff(m.indptr)
            x, y, per_length = *(np.ascontiguousarray(c) for c in self._at.T), self._per_length  # on columns: 2x faster
            # Each column's own values repeated along its entries, not gathered through their column numbers.
            lengths = np.hypot(x[i] - np.repeat(x, counts), y[i] - np.repeat(y, counts))
            lengths *= 0.5 * (per_length[i] + np.repeat(per_length, counts))
            # As CSR (the same, symmetric), which scipy's Dijkstra would otherwise convert it to.
            self._lengths = sparse.csr_matrix((lengths, m.indices, m.indptr), m.shape)
        return self._lengths


def _dense(m):
    """m as a dense array, sparse or not."""
    return m.toarray() if sparse.issparse(m) else m


def _at_least(m, level):
    """How many entries of each row of the CSR matrix m (n, k) are `level` (n,) or more, its zeros included."""
    stored, counts = np.diff(m.indptr), np.zeros(m.shape[0], np.int64)
    filled = np.flatnonzero(stored)
    if len(filled):  # summed along each row's entries, not counted by their rows (comb 4.4 -> 3.4 ms)
        counts[filled] = np.add.reduceat((m.data >= np.repeat(level, stored)).astype(np.int64), m.indptr[filled])
    return counts + np.where(level <= 0, m.shape[1] - stored, 0)


def _factored(matrix):
    """The solve of a symmetric positive definite sparse matrix: no pivoting, a fill-reducing order of A + Aᵀ (half
    the fill of COLAMD), and panels of one column: the factorization's CPU time, min of interleaved runs, on the
    sample character's matrix 3.9 -> 3.0 ms, the 17k hand's 19.7 -> 13.0 ms, the whole comb's 42 -> 24 ms (SuperLU's
    default panels; the same factors to round-off). A CSR matrix (a zone's) is its own transpose, CSC with the same
    arrays: not converted. A singular matrix (none is known since flat triangles have no weights) is bad input: a
    message, not a traceback."""
    try:
        return splu(matrix if matrix.format == "csc" else matrix.T, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                    panel_size=1, options={"SymmetricMode": True}).solve
    except RuntimeError as err:  # SuperLU's "Factor is exactly singular"
        raise VideError("Joint Blending has no solution on its triangles (a singular matrix): merge its vertices by "
                        "distance, or bind with Joint Blending 0") from err


def _smoothed(interpolation, tris, n, rounds=2):
    """The interpolation (n, nodes) averaged `rounds` times over each vertex and its mesh neighbours (edges of
    `tris`, so nothing crosses a gap): linear inside each node triangle, the weights would bend at the triangles'
    sides, and posed, the mesh creases there. Measured on the 63k hand bent 60° at every finger joint (core
    linear blend skinning): 33 triangles flipped and a p99 stretch of 2.03 unsmoothed, 19 and 1.96 smoothed twice,
    25 and 1.92 with the blend solved over every vertex."""
    edges = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])
    around = sparse.csr_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), (n, n))
    around = (around + around.T + sparse.eye(n)).tocsr()
    around.data[:] = 1.0
    around = sparse.diags(1.0 / np.asarray(around.sum(axis=1)).ravel()) @ around
    for _ in range(rounds):
        interpolation = around @ interpolation
    return interpolation.tocsr()


def _with_lost_vertices(nodes, tris, interpolation):
    """A coarse mesh where the vertices that interpolate from no node (an island or a sliver with no node in sight)
    are nodes of their own, in no triangle, so that they keep their seeds as vertices in no triangle do."""
    interpolation = sparse.csr_matrix(interpolation)
    lost = np.flatnonzero(np.diff(interpolation.indptr) == 0)
    if len(lost) == 0:
        return nodes, tris, interpolation
    own = sparse.csr_matrix((np.ones(len(lost)), (lost, np.arange(len(lost)))), (interpolation.shape[0], len(lost)))
    return np.r_[nodes, lost], tris, sparse.hstack([interpolation, own]).tocsr()


def exponential_seeds(dist, smoothness):
    """exp(-(d - d_nearest) / s) per bone (n, bones, CSR), from inside distances (n, bones) and one smoothness per
    bone: 1 for the nearest bone, and a bone's column depends on its own smoothness only (see JointBlend).
    Rows no bone reaches are 1 everywhere. Seeds under SEED_FLOOR are left out."""
    per_length = -1.0 / np.asarray(smoothness, np.float64)[None, :]

    def block(seeds):
        nearest = along_rows(np.minimum, seeds)[:, None]
        unreached = ~np.isfinite(nearest[:, 0])
        nearest[unreached] = 0.0
        seeds -= nearest
        seeds *= per_length
        seeds[unreached] = 0.0  # exp(0)
        flat = seeds.reshape(-1)
        at = np.flatnonzero(flat >= np.log(SEED_FLOOR))  # exp only there: most entries are beyond it, or inf
        return flat_csr(at, np.exp(flat[at]), seeds.shape)

    return by_rows(dist, block)


def meshfree_seeds(weights):
    """Seeds (n, bones, CSR) for blending Meshfree C² weights (n, bones): w^MESHFREE_POWER, larger where bones share
    a vertex, so the blend starts from softer joints (the blend normalizes the rows). Round-off below 0 counts as 0.
    Only the weights above 0 are raised and kept (a vertex has a few bones)."""
    flat = np.ascontiguousarray(weights, np.float64).reshape(-1)
    at = np.flatnonzero(flat > 0.0)
    return flat_csr(at, np.power(flat[at], MESHFREE_POWER), np.shape(weights))
