"""Meshfree C² weights (Xian, Jin and Wang, "Meshfree C²-Weighting for Shape Deformation", 2015), as
rebuilt in ../shared/spec/meshfree_c2.md.

Samples fill the shape (a square lattice at `spacing`, centred on it) and a graph of links
between near samples that never leave the shape gives intrinsic distances by Dijkstra. Mesh vertices are not in the
graph (so the weights do not depend on the mesh): each takes its distances in one straight step from a
sample it sees, and its weights from the same closed form. Each handle's basis is the quintic Bézier f(d / r_d) (1 at the handle, 0 beyond r_d, C² at both
ends), normalized to sum to 1. Radii follow the Voronoi cells of the handles: r_v (the cell's reach) < r_d <
r_h (the nearest other handle), so every point is covered and each handle interpolates. Where a cell reaches
past the nearest other handle, virtual handles are inserted at the farthest samples until none does; their
transforms are harmonic blends of the real ones on the Voronoi dual graph, solved directly, and the weights
collapse onto the real handles. Handles are sets of samples: a point, or the samples along a bone.
"""

from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import dijkstra
from scipy.sparse.linalg import spsolve
from scipy.spatial import cKDTree

from .errors import VideError
from .geodesic import Domain, pairs_within

LINK_RADIUS = 2.3  # in lattice spacings: links in 16 directions, graph distances within 3% of straight ones
K_NEIGHBOURS = 8  # samples each mesh vertex looks at
GAMMA = 1.0  # a cell may reach at most this fraction of the way to the nearest other handle
MAX_VIRTUAL = 500


def bezier_falloff(x):
    """f(x) = 1 - 10x³ + 15x⁴ - 6x⁵ on [0, 1] (the degree-5 Bézier with ordinates 1,1,1,0,0,0), 0 beyond:
    f(0) = 1, f(1) = 0, first and second derivatives 0 at both ends, decreasing in between."""
    x = np.clip(np.asarray(x, float), 0.0, 1.0)
    return 1.0 - x**3 * (10.0 - 15.0 * x + 6.0 * x * x)


@dataclass
class Samples:
    """Points filling the shape (a lattice, plus handle samples) and the graph of straight, inside links
    between near ones; and, for each mesh vertex, its straight links to the nearest samples it sees."""

    points: np.ndarray  # (n, 2): the lattice, then the extra (handle) samples
    lattice: int  # how many of them are lattice points
    spacing: float
    graph: csr_matrix
    domain: Domain
    vertex_near: np.ndarray  # (vertices, k) sample indices
    vertex_step: np.ndarray  # (vertices, k) straight lengths, inf where the vertex does not see the sample

    @classmethod
    def from_mesh(cls, points, tris, spacing, extra=()):
        """A lattice at `spacing` inside the mesh (centred on its bounding box, so two meshes of one shape
        share it) and the `extra` points (handle samples) as graph nodes; the mesh vertices linked to them."""
        domain = Domain.from_mesh(points, tris, links=False)
        lattice = _lattice(domain, spacing)
        pts = np.vstack([lattice, np.asarray(extra, float).reshape(-1, 2)])
        graph = _link_graph(domain, pts, LINK_RADIUS * spacing)
        k = min(K_NEIGHBOURS, len(pts))
        step, near = cKDTree(pts).query(domain.points, k=k)
        step, near = step.reshape(-1, k), near.reshape(-1, k)
        verts = np.arange(len(domain.points))
        for col in range(k):
            step[~domain.visible(verts, q=pts[near[:, col]]), col] = np.inf
        return cls(pts, len(lattice), spacing, graph, domain, near, step)

    def along(self, head, tail):
        """The lattice samples within 0.75 spacing of the segment head-tail (a bone drawn onto the lattice),
        or the one nearest to it."""
        pts = self.points[:self.lattice]
        ab = np.asarray(tail, float) - np.asarray(head, float)
        t = np.clip(((pts - head) @ ab) / max(float(ab @ ab), 1e-300), 0.0, 1.0)
        gap = np.hypot(*(pts - (head + t[:, None] * ab)).T)
        near = np.flatnonzero(gap <= 0.75 * self.spacing)
        return near if len(near) else np.array([int(np.argmin(gap))])

    def at_vertices(self, dist):
        """Distances (vertices, ...) at the mesh vertices from distances (samples, ...) at the samples: the
        shortest straight step from a sample each vertex sees."""
        dist = np.asarray(dist, float)
        out = np.full((len(self.vertex_near),) + dist.shape[1:], np.inf)
        for col in range(self.vertex_near.shape[1]):
            step = self.vertex_step[:, col].reshape((-1,) + (1,) * (dist.ndim - 1))
            np.minimum(out, dist[self.vertex_near[:, col]] + step, out=out)
        return out


def _lattice(domain, spacing):
    """Square-lattice points inside the mesh, off its outline, centred on its bounding box: a shape that is
    mirror-symmetric about a vertical or horizontal axis gets a mirror-symmetric lattice."""
    lo, hi = domain.points.min(axis=0), domain.points.max(axis=0)
    centre = 0.5 * (lo + hi)
    half = np.floor(0.5 * (hi - lo) / spacing)
    gx = centre[0] + np.arange(-half[0], half[0] + 1) * spacing
    gy = centre[1] + np.arange(-half[1], half[1] + 1) * spacing
    pts = np.stack(np.meshgrid(gx, gy), axis=-1).reshape(-1, 2)
    pts = pts[domain.inside(pts)] if len(pts) else pts
    return pts[_outline_distance(domain, pts, spacing) > 1e-3 * spacing]


def _outline_distance(domain, pts, cap):
    """Distance from each point to the mesh outline, exact up to `cap` (cap beyond)."""
    a, b = domain.points[domain.boundary[:, 0]], domain.points[domain.boundary[:, 1]]
    reach = 0.5 * float(np.hypot(*(b - a).T).max())
    query, edge = pairs_within(cKDTree(0.5 * (a + b)), pts, np.full(len(pts), cap + reach))
    ab = b[edge] - a[edge]
    t = np.clip(((pts[query] - a[edge]) * ab).sum(axis=1) / np.maximum((ab * ab).sum(axis=1), 1e-300), 0, 1)
    gap = np.hypot(*(pts[query] - a[edge] - t[:, None] * ab).T)
    out = np.full(len(pts), float(cap))
    np.minimum.at(out, query, gap)
    return out


def _link_graph(domain, pts, radius):
    """Symmetric graph of straight links between samples closer than `radius` that stay inside. A radius,
    not k nearest: on a lattice, ties among equally near points would be broken by index, and mirrored
    input would get an unmirrored graph."""
    n = len(pts)
    pairs = cKDTree(pts).query_pairs(radius, output_type='ndarray')
    p, q = pts[pairs[:, 0]], pts[pairs[:, 1]]
    ok = domain.clear.covers(p, q)
    rest = np.flatnonzero(~ok)
    if len(rest):
        none = np.full(len(rest), -1)
        ok[rest] = domain.exactly_visible(p[rest], q[rest], none, none)
    pairs = pairs[ok]
    length = np.hypot(*(pts[pairs[:, 1]] - pts[pairs[:, 0]]).T)
    rows = np.concatenate([pairs[:, 0], pairs[:, 1]])
    cols = np.concatenate([pairs[:, 1], pairs[:, 0]])
    return coo_matrix((np.concatenate([length, length]), (rows, cols)), shape=(n, n)).tocsr()


@dataclass
class Weights:
    """Weights of the real handles at every sample and every mesh vertex (rows sum to 1), and what the
    construction needed."""

    values: np.ndarray  # (samples, real handles)
    at_vertices: np.ndarray  # (mesh vertices, real handles)
    virtual: list = field(default_factory=list)  # sample indices of the virtual handles
    radii: np.ndarray = None  # r_d of every handle, real then virtual (Gaussian: the widths c)


def bone_handles(head, tail, spacing, shrink=0.0):
    """Sample points along each bone segment (about half a lattice spacing apart), and for each bone the
    slice of them that is its handle. With `shrink` > 0, each end is pulled in by that fraction of the
    bone's length, so bones that share a joint do not touch (see `meshfree_weights`)."""
    points, slices, start = [], [], 0
    for h, t in zip(np.asarray(head, float), np.asarray(tail, float)):
        a, b = h + shrink * (t - h), t - shrink * (t - h)
        count = max(int(np.ceil(np.hypot(*(b - a)) / (0.5 * spacing))), 1) + 1
        points.append(a + np.linspace(0.0, 1.0, count)[:, None] * (b - a))
        slices.append(slice(start, start + count))
        start += count
    return (np.vstack(points) if points else np.empty((0, 2))), slices


def meshfree_weights(samples, handles, spread=0.5, gaussian=False):
    """C² weights for handles given as lists of sample indices (a point, or the samples along a bone).

    `spread` is λ in r_d = r_v + λ (r_h - r_v): small gives near-Voronoi transitions, 1 the widest overlap.
    Handles that touch (bones sharing a joint) cannot meet r_d < r_h; the paper then uses a global
    Gaussian, exp(-d² / 2c²) with c half the distance to the nearest handle that does not touch
    (`gaussian=True`: C-infinity, approximating, no virtual handles). The other way keeps the compact C²
    basis: handles shrunk away from the joints (`bone_handles(..., shrink)`), which no longer touch.
    """
    if not gaussian:
        return HandleSet(samples, handles, spread).weights()
    handles = [np.atleast_1d(np.asarray(h, np.int64)) for h in handles]
    d = np.stack([_distance(samples.graph, h) for h in handles], axis=1)
    _, reach, nearest = _cells(d, handles)
    width = np.where(np.isfinite(nearest), nearest, 2.0 * np.maximum(reach, 1e-12)) / 2.0
    values = _normalized(np.exp(-0.5 * (d / width) ** 2))
    vertex = _normalized(np.exp(-0.5 * (samples.at_vertices(d) / width) ** 2))
    return Weights(values, vertex, [], width)


class HandleSet:
    """Real handles, the virtual ones they need, and every handle's distances, kept: adding a handle costs
    one Dijkstra from it (and from any virtual handle it calls for) plus arithmetic over the samples, linear
    in their number, instead of a full recompute."""

    def __init__(self, samples, handles, spread=0.5):
        self.samples, self.spread = samples, spread
        self.handles, self.real = [], []
        self._d = np.empty((len(samples.points), max(2 * len(handles), 8)))  # grows by doubling
        for h in handles:
            self._add(h, real=True)
        self._refine()

    @property
    def dist(self):
        """Distances (samples, handles) from every handle, in the order they were added."""
        return self._d[:, :len(self.handles)]

    def add(self, handle):
        """A new real handle (sample indices); returns its column in `weights()`."""
        self._add(handle, real=True)
        self._refine()
        return sum(self.real) - 1

    def _add(self, handle, real):
        handle = np.atleast_1d(np.asarray(handle, np.int64))
        if len(self.handles) == self._d.shape[1]:
            self._d = np.hstack([self._d, np.empty_like(self._d)])
        self._d[:, len(self.handles)] = _distance(self.samples.graph, handle)
        self.handles.append(handle)
        self.real.append(real)

    def _refine(self):
        """Virtual handles at the farthest samples of the most crowded cells until no cell reaches past
        the nearest other handle."""
        points = self.samples.points
        start = len(self.handles)
        while True:
            cells, reach, nearest = _cells(self.dist, self.handles)
            crowded = np.flatnonzero(reach >= GAMMA * nearest)
            if len(crowded) == 0:
                return
            if len(self.handles) - start >= MAX_VIRTUAL:
                raise VideError(f"The handles are too close together for compact C² weights ({MAX_VIRTUAL} "
                                "virtual handles did not separate them): move them apart, shrink bones further "
                                "from their joints, or use the Gaussian.")
            ratio = reach / nearest
            ties = crowded[ratio[crowded] >= ratio[crowded].max() * (1 - 1e-9)]
            new = []
            for cell in ties:  # tied cells are refined together, so symmetric input stays symmetric
                own = np.flatnonzero(cells[:, cell])
                d = self.dist[own, cell]
                # Equally far samples of one cell: mirror images are far apart and all go in; neighbours on
                # the lattice would crowd each other, so only one of a close group does.
                for q in own[d >= d.max() * (1 - 1e-9)]:
                    if all(np.hypot(*(points[q] - points[p])) > 0.5 * reach[cell] for p in new):
                        new.append(q)
            for q in dict.fromkeys(new):
                self._add([q], real=False)

    def weights(self):
        real = np.flatnonzero(self.real)
        order = np.concatenate([real, np.flatnonzero(~np.array(self.real))])
        d = self.dist[:, order]
        cells, reach, nearest = _cells(d, [self.handles[i] for i in order])
        radius = reach + self.spread * (nearest - reach)
        radius = np.where(np.isfinite(radius), radius, np.maximum(reach * 1.5, 1e-12))  # a lone handle
        alpha = _harmonic_blend(self.samples.graph, cells, len(real), len(order)) if len(order) > len(real) else None
        values = _blend(d, radius, len(real), alpha)
        at_vertices = _blend(self.samples.at_vertices(d), radius, len(real), alpha)
        return Weights(values, at_vertices, [int(self.handles[i][0]) for i in order[len(real):]], radius)


def _blend(d, radius, real, alpha):
    """Normalized bases from distances (points, handles), collapsed onto the real handles."""
    w = _normalized(bezier_falloff(d / radius[None, :]))
    return w if alpha is None else w[:, :real] + w[:, real:] @ alpha


def _normalized(basis):
    total = basis.sum(axis=1, keepdims=True)
    return basis / np.where(total > 0, total, 1.0)  # points no handle reaches (another island) stay 0


def _distance(graph, sources):
    # The graph is stored symmetric, so it is read as directed: no conversion on every call.
    return dijkstra(graph, directed=True, indices=sources, min_only=True)


def _cells(d, handles):
    """Voronoi cells of the handles (a sample equally near two handles, to within rounding, is in both),
    each cell's reach r_v and each handle's nearest other handle r_h (handles that touch do not count).
    `d` holds the distances (samples, handles)."""
    nearest_d = d.min(axis=1)
    cells = np.isfinite(nearest_d)[:, None] & (d <= nearest_d[:, None] * (1 + 1e-9) + 1e-12)
    q, i = np.nonzero(cells)
    reach = np.zeros(d.shape[1])
    np.maximum.at(reach, i, nearest_d[q])
    between = np.stack([d[h].min(axis=0) for h in handles])  # between[j, i]: from handle i to handle j
    np.fill_diagonal(between, np.inf)
    between[between <= 0] = np.inf
    return cells, reach, between.min(axis=0)


def _harmonic_blend(graph, cells, real, total):
    """α (virtual, real): each virtual handle's transform as a blend of the real ones, from harmonic fields on
    the Voronoi dual graph (uniform Laplacian, real handles fixed), solved directly; rows renormalized.
    Two cells are neighbours when a graph link joins them or a sample lies in both."""
    g = graph.tocoo()
    cells = csr_matrix(cells.astype(float))
    touching = cells.T @ cells + cells.T @ (coo_matrix((np.ones(len(g.row)), (g.row, g.col)),
                                                       shape=graph.shape).tocsr() @ cells)
    dual = (touching + touching.T) > 0
    dual.setdiag(False)
    dual = dual.astype(float)
    lap = (coo_matrix((np.asarray(dual.sum(axis=1)).ravel(), (np.arange(total), np.arange(total))),
                      shape=(total, total)) - dual).tocsr()
    virtual = np.arange(real, total)
    alpha = spsolve(lap[virtual][:, virtual].tocsc(), -lap[virtual][:, :real].toarray())
    alpha = np.maximum(np.asarray(alpha).reshape(len(virtual), real), 0.0)
    sums = alpha.sum(axis=1, keepdims=True)
    return np.where(sums > 0, alpha / np.where(sums > 0, sums, 1.0), 1.0 / real)


def bone_weights(points, tris, heads, tails, spacing, spread=0.5, chains="SHRINK", shrink=0.25):
    """Meshfree weights (mesh vertices, bones) of a flat mesh for bone segments, and per bone whether it lies
    wholly outside the mesh (it then starts from the sample nearest to it).

    Bones that share a joint are handled by `chains`: "SHRINK" pulls every bone's handle in from both ends
    by `shrink` of its length and keeps the compact C² basis, "GAUSSIAN" uses the paper's global Gaussian.
    A vertex no handle reaches (an island without bones) goes wholly to the bone nearest to it.
    """
    heads, tails = np.asarray(heads, float), np.asarray(tails, float)
    ends = np.vstack([heads, tails])
    size = max(float(np.ptp(np.asarray(points, float), axis=0).max()), 1e-12)
    gaps = np.hypot(*(ends[:, None] - ends[None]).transpose(2, 0, 1))
    np.fill_diagonal(gaps, np.inf)
    bones = len(heads)
    same_bone = np.abs(np.arange(2 * bones)[:, None] - np.arange(2 * bones)[None]) == bones
    touching = bool((gaps[~same_bone] < 1e-6 * size).any())
    pull = shrink if (touching and chains == "SHRINK") else 0.0
    extra, slices = bone_handles(heads, tails, spacing, pull)
    samples = Samples.from_mesh(points, tris, spacing, extra=extra)
    first = len(samples.points) - len(extra)
    inside = samples.domain.inside(extra)
    handles, outside = [], []
    lattice = cKDTree(samples.points[:samples.lattice])
    for s in slices:
        own = first + np.arange(s.start, s.stop)[inside[s]]
        outside.append(len(own) == 0)
        if len(own) == 0:
            gap, nearest = lattice.query(extra[s])
            own = np.array([nearest[np.argmin(gap)]])
        handles.append(own)
    w = meshfree_weights(samples, handles, spread, gaussian=touching and chains == "GAUSSIAN").at_vertices
    lost = np.flatnonzero(w.sum(axis=1) == 0)
    if len(lost):
        verts = samples.domain.points[lost]
        gap = np.stack([np.hypot(*(verts - (h + np.clip(((verts - h) @ (t - h)) / max((t - h) @ (t - h), 1e-300),
                                                         0, 1)[:, None] * (t - h))).T)
                        for h, t in zip(heads, tails)], axis=1)
        w[lost] = 0.0
        w[lost, np.argmin(gap, axis=1)] = 1.0
    return w, np.array(outside, bool)
