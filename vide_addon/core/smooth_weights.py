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

The matrix is factored once per mesh and bones, and each bone's column is solved on its own, so re-weighting
after one bone's smoothness changed is one solve. Rows are normalized after the diffusion.
"""

from functools import partial

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import splu
from scipy.spatial import cKDTree

from .weights import strongest

WIDTH_FLOOR = 0.5  # on a bone, weights are held as hard as half the way to the outline
GEODESIC_REACH = 1e-8  # exp(-d / s) seeds this small are about 18 smoothness lengths further than the nearest bone
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


def cotangent_laplacian(points, tris, finest=0.0, anchor=0.0):
    """K + diag(anchor) (n, n, CSC), K the stiffness matrix with cotangent weights (K @ ones = 0). A triangle whose
    longest edge h is under `finest` of the median triangle's longest edge counts (finest × median / h)² times: as
    stiff as one of that size."""
    n = len(points)
    corners = points[tris]
    longest = longest_edges(corners)
    finest = finest * np.median(longest) if len(longest) else 0.0
    stiffer = np.maximum(finest / np.maximum(longest, 1e-300), 1.0) ** 2
    rows, cols, vals = [], [], []
    for k in range(3):  # the edge opposite corner k, weighted by half the cotangent of the angle at k
        i, j = tris[:, (k + 1) % 3], tris[:, (k + 2) % 3]
        u, v = corners[:, (k + 1) % 3] - corners[:, k], corners[:, (k + 2) % 3] - corners[:, k]
        half_cot = stiffer * 0.5 * np.einsum("ij,ij->i", u, v) / np.maximum(np.abs(np.cross(u, v)), 1e-300)
        rows += [i, j]
        cols += [j, i]
        vals += [-half_cot, -half_cot]
    rows, cols, vals = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    # One conversion, duplicates summed: the diagonal is minus the sum of its row's other entries.
    diagonal = np.arange(n)
    return sparse.coo_matrix((np.r_[vals, anchor - np.bincount(rows, vals, n)],
                              (np.r_[rows, diagonal], np.r_[cols, diagonal])), (n, n)).tocsc()


def lumped_areas(points, tris):
    """Each vertex's lumped area (n,): a third of its triangles' areas."""
    corners = points[tris]
    area = 0.5 * np.abs(np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]))
    return np.bincount(tris.ravel(), np.repeat(area / 3.0, 3), len(points))


def longest_edges(corners):
    """Each triangle's longest edge (m,), from its corners (m, 3, 2)."""
    return np.max([np.hypot(*(corners[:, (k + 1) % 3] - corners[:, k]).T) for k in range(3)], axis=0)


def bone_clearance(points, heads, tails):
    """Straight distance from each point (n, 2) to its nearest bone segment."""
    x, y = (np.ascontiguousarray(c) for c in np.asarray(points, float).T)  # contiguous: 8 times faster at 63k
    best = np.full(len(x), np.inf)
    for (ax, ay), (bx, by) in zip(heads, tails):
        abx, aby = bx - ax, by - ay
        dx, dy = x - ax, y - ay
        t = np.clip((dx * abx + dy * aby) / max(abx * abx + aby * aby, 1e-300), 0.0, 1.0)
        dx -= t * abx
        dy -= t * aby
        np.minimum(best, dx * dx + dy * dy, out=best)
    return np.sqrt(best)


def outline_vertices(tris, n):
    """The vertices (of n) on the mesh's outline: on an edge of one triangle only."""
    edges = np.sort(np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]]), axis=1)
    keys, counts = np.unique(edges[:, 0] * n + edges[:, 1], return_counts=True)
    return np.unique(np.concatenate([keys[counts == 1] // n, keys[counts == 1] % n]))


class JointBlend:
    """Diffuses weights (n, bones) over one mesh: w = (K + M H)⁻¹ M H p with H = strength / d², d the
    distance to the nearest bone, or `width_floor` of the distance to the outline if that is more (so the weights on a
    bone near a joint are held no harder than beside it), bounded to the mesh's size and a thousandth of it; K is
    stiffened on triangles under FINEST of the median one (`cotangent_laplacian`). Larger strength keeps the weights
    closer to p. The columns are solved and kept: a call where one bone's seeds changed (its smoothness) solves only
    that column.

    `outline`: the outline's vertices when they are known (Geodesic's domain), else found from the triangles.
    With `coarse` (nodes, triangles of nodes, interpolation (n, nodes): Geodesic's thinned graph on a large mesh,
    `Domain.interpolation`), K and M are those of the coarser triangles, which lie inside the mesh (so no more
    reaches across a gap), the seeds are taken at the nodes only (`nodes`) and the other vertices interpolate the
    diffused weights, averaged over two rings of mesh neighbours (`_smoothed`; those that interpolate from no node
    keep their seeds). On the 63k-vertex hand of bench/weights.py (5,558 nodes) the blend then adds 0.06 to 0.1 s
    to the bind instead of 1.06 s, and its weights differ from the solve over every vertex by 0.023 at the 99th percentile
    (0.073 at worst)."""

    def __init__(self, points, tris, heads, tails, strength, reach=0.0, width_floor=WIDTH_FLOOR, outline=None,
                 coarse=None):
        points = np.asarray(points, float)
        tris = np.asarray(tris, np.int64).reshape(-1, 3)
        size = float(np.ptp(points, axis=0).max())
        if outline is None:
            outline = outline_vertices(tris, len(points))
        self.nodes, self.interpolation, at = slice(None), None, points
        if coarse is not None:
            nodes, coarse_tris, interpolation = coarse
            interpolation = _smoothed(interpolation, tris, len(points))
            self.nodes, tris, self.interpolation = _with_lost_vertices(nodes, coarse_tris, interpolation)
            at = points[self.nodes]
        d = bone_clearance(at, np.asarray(heads, float), np.asarray(tails, float))
        # The distance to the nearest outline vertex: about the local half width.
        d = np.maximum(d, width_floor * cKDTree(points[outline]).query(at)[0])
        d = np.clip(d, 1e-3 * size, size)
        mass = np.maximum(lumped_areas(at, tris), 1e-12 * size * size)  # vertices in no triangle keep their weights
        self.anchor = mass * strength / (d * d)
        # Symmetric positive definite: no pivoting, and a fill-reducing order of A + Aᵀ (half the fill of COLAMD).
        lu = splu(cotangent_laplacian(at, tris, FINEST, self.anchor), permc_spec="MMD_AT_PLUS_A",
                  diag_pivot_thresh=0.0, options={"SymmetricMode": True})
        # Solved as Aᵀ x = b (the same system): SuperLU's other way calls BLAS for its block updates, slow when its
        # threads share the cores with other work. 60 columns of the 72k comb of bench/weights.py, best of 7: 0.43 s
        # against 0.96 s with the default threads, 0.26 s against 0.33 s on one thread.
        self._solve = partial(lu.solve, trans="T")
        self.reach = reach
        self._seeds = self._diffused = None

    def __call__(self, seeds, max_influences, prune):
        """Weights (n, bones) from seeds (at `nodes`, bones; rows need not sum to 1): diffused, normalized, limited
        to `max_influences` and pruned without jumps (`weights.strongest`)."""
        seeds = np.array(seeds, np.float64)
        if self._seeds is None or self._seeds.shape != seeds.shape:
            self._seeds, self._diffused = np.zeros_like(seeds), np.zeros_like(seeds)
            changed = np.arange(seeds.shape[1])
        else:
            changed = np.flatnonzero((self._seeds != seeds).any(axis=0))
        if len(changed):
            new = seeds[:, changed]
            diffused = self._solve(self.anchor[:, None] * new)
            if self.reach:  # only where the bone reaches: its diffused weight fades in as its seed grows to `reach`
                diffused *= np.clip(new / self.reach, 0.0, 1.0)
            self._diffused[:, changed] = diffused
            self._seeds[:, changed] = new
        weights = self._diffused.copy() if self.interpolation is None else self.interpolation @ self._diffused
        return strongest(weights, max_influences, prune)


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
    """exp(-(d - d_nearest) / s) per bone (n, bones), from inside distances (n, bones) and one smoothness per
    bone: 1 for the nearest bone, and a bone's column depends on its own smoothness only (see JointBlend).
    Rows no bone reaches are 1 everywhere."""
    dist = np.asarray(dist, np.float64)
    nearest = dist.min(axis=1, keepdims=True)
    nearest[~np.isfinite(nearest)] = 0.0
    seeds = np.exp(-(dist - nearest) / np.asarray(smoothness, np.float64)[None, :])
    seeds[~np.isfinite(dist).any(axis=1)] = 1.0
    return seeds


def meshfree_seeds(weights):
    """Seeds (n, bones) for blending Meshfree C² weights: w^MESHFREE_POWER, larger where bones share a vertex, so
    the blend starts from softer joints (the blend normalizes the rows). Round-off below 0 counts as 0."""
    return np.power(np.maximum(weights, 0.0), MESHFREE_POWER)
