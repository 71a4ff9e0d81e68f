"""Meshfree C² weights (Xian, Jin and Wang, "Meshfree C²-Weighting for Shape Deformation", 2015), as
rebuilt in docs/meshfree_c2.md.

Samples fill the shape (a square lattice at `spacing`, centred on it) and a graph of links between near
samples that never leave the shape gives intrinsic distances by Dijkstra. Mesh vertices are not in the graph
(so the weights do not depend on the mesh): each takes its distances in one straight step from a sample it
sees, and its weights from the same closed form. Each handle's basis is the quintic Bézier f(d / r_d) (1 at
the handle, 0 beyond r_d, C² at both ends), normalized to sum to 1. Radii follow the Voronoi cells of the
handles: r_v (the cell's reach) < r_d < r_h (the nearest other real handle), so every point is covered and
each real handle interpolates. Where a cell reaches past r_h, virtual handles are inserted at the farthest
samples until none does; their transforms are harmonic blends of the real ones on the Voronoi dual graph,
solved directly, and the weights collapse onto the real handles. Handles are sets of samples: a point, or the
samples along a bone. Adding a handle later is local (`HandleSet.add`).
"""

from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import dijkstra
from scipy.spatial import cKDTree

from .errors import VideError
from .geodesic import Domain, Stages, _touch_xy, fast_hypot, median, one_per_cell
from .weights import bezier_falloff

LINK_RADIUS = 2.3  # in lattice spacings: links in 16 directions, graph distances within 3% of straight ones
K_NEIGHBOURS = 8  # samples each mesh vertex looks at
GAMMA = 1.0  # a cell may reach at most this fraction of the way to the nearest other real handle
TIE = 1e-6  # refinement: cells as crowded, or samples as far, to within this are tied (mesh vertices are float32)
TOUCH = 2.0  # in lattice spacings: real handles closer than this touch (the lattice cannot tell them apart)
MAX_VIRTUAL = 500
SPREAD = 0.5  # default λ in r_d = r_v + λ (r_h - r_v), midway between the cell and the nearest other handle
CHUNK = 16384  # segments `Outline.straight` tests at once (on the comb, 8k to 32k are alike; 500k: 1.6 times slower)


@dataclass
class Samples:
    """Points filling the shape (a lattice, plus handle samples) and the graph of straight, inside links
    between near ones; and, for each mesh vertex, its straight links to its nearest samples, those found to leave
    the mesh infinite (a link is traced only when it may matter: `vertex_untested`)."""

    points: np.ndarray  # (n, 2): the lattice, then the extra (handle) samples
    lattice: int  # how many of them are lattice points
    spacing: float
    graph: csr_matrix
    domain: Domain
    outline: "Outline"
    vertex_near: np.ndarray  # (vertices, k) sample indices
    vertex_step: np.ndarray  # (vertices, k) straight lengths, inf where the step leaves the mesh (once traced)
    vertex_untested: np.ndarray  # (vertices, k) the step may leave the mesh: tested when needed (`at_vertices`)
    clear: np.ndarray  # (n,) lower bounds of the samples' distances to the outline
    vertex_clear: np.ndarray  # (vertices,) and of the mesh vertices' (within their triangles: `_star_clearance`)
    sample_vertices: csr_matrix = None  # (samples, vertices): which vertices look at each sample
    tree: cKDTree = None  # of the samples
    # The graph with room for a handle's steps, made when first needed (a bone added later; 0.07-0.3 ms a bind)
    sourced: "_SourceGraph" = field(default=None, repr=False)
    stages: Stages = field(default=None, repr=False)  # seconds per stage of a bind (and insertions), for the bench

    @classmethod
    def from_mesh(cls, points, tris, spacing, extra=()):
        """A lattice at `spacing` inside the mesh (centred on its bounding box, so two meshes of one shape
        share it) and the `extra` points (handle samples) as graph nodes; the mesh vertices linked to them."""
        stages = Stages()
        domain = Domain.from_mesh(points, tris, links=False)
        outline = Outline(domain, spacing)
        extra = np.asarray(extra, float).reshape(-1, 2)
        lattice = Lattice(outline, spacing, extra)
        thin = _fill_thin_parts(outline, tris, lattice, spacing)
        lattice_pts = np.vstack([lattice.points, thin])
        pts = np.vstack([lattice_pts, extra])
        thin_clear = outline.clearance(thin, LINK_RADIUS * spacing) if len(thin) else np.zeros(0)
        clear = np.concatenate([lattice.clear, thin_clear, lattice.others_clear])
        # Unbalanced: built quicker, queried as fast (the same neighbours, equally near ones perhaps in another order;
        # sample character 0.27 -> 0.17 ms to build).
        tree = cKDTree(pts, balanced_tree=False, compact_nodes=False)
        k = min(K_NEIGHBOURS, len(pts))
        step, near = tree.query(domain.points, k=k)
        step, near = step.reshape(-1, k), near.reshape(-1, k)
        # A vertex sees a sample when their clear disks cover the step between them (leaving an outline vertex
        # inwards); the vertex's disk is the larger of its clearance and its triangles'. Other steps are traced
        # only where one may be a vertex's shortest (most never are), or where a vertex has no step known inside
        # until it has one (one that sees no sample gets its steps along mesh edges: `_along_edges`).
        vertex_clear = np.maximum(domain.clearance, _star_clearance(domain))
        untested = step > vertex_clear[:, None] + clear[near]
        # Of an outline vertex's steps, only those so covered may yet be: checked with the rounding tolerances and
        # the way they leave it (on the sample character 2,001 of their 7,392 steps, not all: 0.51 -> 0.34 ms).
        # (As flat step numbers, vertex * k + slot, and on coordinate columns: 0.55 -> 0.41 ms with the mask.)
        rim = np.flatnonzero(~untested & domain.on_boundary[:, None])
        v, s = rim // k, np.take(near, rim)
        (vx, vy), (sx, sy) = domain.points.T, pts.T
        np.put(untested, rim, ~outline.covers(vx[v], vy[v], sx[s], sy[s], v, vertex_clear[v], clear[s]))
        samples = cls(pts, len(lattice_pts), spacing, None, domain, outline, near, step, untested, clear,
                      vertex_clear, None, tree, None, stages)
        # Vertices with every step untested, nearest first, until each has a step known inside. The first round (most
        # need no other) is traced with the graph's links (from no vertex: -1), in one `Outline.straight` call: each
        # call costs ~0.2 ms besides its segments (sample character, 1,480 links and 187 steps: 0.2 ms less than two).
        blind, slot = _nearest_inward(samples, np.flatnonzero(~_any_in_rows(~untested)))
        # The graph's tables made only now and dropped once it is made: kept through the other steps, they left those
        # steps' arrays fresh memory to fault in (17k hand, 2 ms more).
        i, j, graph = _link_graph(outline, lattice, pts, clear, LINK_RADIUS * spacing)
        first = blind * k + slot
        s, links = np.take(near, first), len(i)
        inside = outline.straight_xy(*(np.concatenate(pair) for pair in (
            (sx[i], vx[blind]), (sy[i], vy[blind]), (sx[j], sx[s]), (sy[j], sy[s]), (np.full(links, -1), blind),
            (clear[i], vertex_clear[blind]), (clear[j], clear[s]))))
        samples.graph = graph(inside[:links])
        del graph
        np.put(step, first[~inside[links:]], np.inf)
        np.put(untested, first, False)
        blind = blind[np.isinf(step[blind, slot])]
        while len(blind):
            blind, slot = _nearest_inward(samples, blind)
            samples._test(blind * k + slot)
            blind = blind[np.isinf(step[blind, slot])]
        _along_edges(samples)
        # After `_along_edges`, which gives blind vertices other samples to look at; made now, so that inserting a
        # bone later (the part that must be quick) only writes its steps. As the transpose of (vertices, samples),
        # whose rows `near` gives: quicker than from COO (sample character 0.25 -> 0.20 ms, 63k hand 2.7 -> 2.1).
        # Indices as int32, which scipy would otherwise check and convert them to (0.21 -> 0.18 ms).
        starts = np.arange(0, near.size + 1, k, dtype=np.int32)
        looks = csr_matrix((np.ones(near.size), near.ravel().astype(np.int32), starts),
                           shape=(len(domain.points), len(pts)))
        samples.sample_vertices = looks.T.tocsr()
        stages.lap("sampling")
        return samples

    def distance(self, sources, offsets=None, limit=np.inf):
        """Distances from a handle: its samples `sources`, each a straight step (`offsets`) from it, up to
        `limit` (inf beyond)."""
        if offsets is None or not np.any(offsets):
            # The graph is stored symmetric, so it is read as directed: no conversion on every call.
            return dijkstra(self.graph, directed=True, indices=sources, min_only=True, limit=limit)
        if self.sourced is None or len(sources) > self.sourced.room:
            self.sourced = _SourceGraph(self.graph, max(len(sources), 4096))
        n = len(self.points)
        return dijkstra(self.sourced.linked(sources, offsets), directed=True, indices=n, limit=limit)[:n]

    def distances(self, handles, limit=np.inf):
        """Distances (samples, handles) from each handle (its samples), up to `limit` (inf beyond): one Dijkstra call
        for them all, from a node per handle linked to its samples (on the sample character, quicker than one call per
        handle cut at its needed reach: 3.7 against 4.8 ms). Its index arrays of the graph's dtype: scipy checks and
        converts others."""
        n, graph = len(self.points), self.graph
        counts = np.array([len(h) for h in handles], np.int64)
        linked = csr_matrix((np.concatenate([graph.data, np.full(counts.sum(), 1e-300)]),  # a link of length ~0
                             np.concatenate([graph.indices, *handles]).astype(graph.indices.dtype),
                             np.concatenate([graph.indptr, graph.nnz + np.cumsum(counts)]).astype(graph.indptr.dtype)),
                            shape=(n + len(handles),) * 2)
        d = dijkstra(linked, directed=True, indices=np.arange(n, n + len(handles)), limit=limit)[:, :n].T
        d[np.concatenate(handles), np.repeat(np.arange(len(handles)), counts)] = 0.0  # not 1e-300
        return d

    def vertices_near(self, rows, bounds=None):
        """(group, vertex) pairs, in no order: the mesh vertices that look at any of the samples `rows`, by groups of
        them (group g: rows[bounds[g]:bounds[g + 1]]; by default, one). A sparse product (groups, samples) (samples,
        vertices): on the comb of bench/weights.py, 5 ms for the handles of a bind against 29 by marking."""
        bounds = np.array([0, len(rows)]) if bounds is None else bounds
        # Indices as int32, which scipy would otherwise check and convert them to, and no .tocoo() after (sample
        # character bind: 0.30 -> 0.23 ms).
        picked = csr_matrix((np.ones(len(rows)), rows.astype(np.int32), bounds.astype(np.int32)),
                            shape=(len(bounds) - 1, len(self.points)))
        pairs = picked @ self.sample_vertices
        return np.repeat(np.arange(len(bounds) - 1), np.diff(pairs.indptr)), pairs.indices

    def at_vertices(self, dist, vertices, columns, reach=np.inf):
        """Distances at pairs of mesh vertices and columns from distances (samples, columns) at the samples: the
        shortest straight step from a sample the vertex sees. Steps not yet known to stay inside are traced (all
        at once) only where they are shorter than both the shortest step known inside and `reach` (where the
        shortest is `reach` or more, the value returned is too, but may be less than the distance)."""
        k, pairs = self.vertex_near.shape[1], len(vertices)
        # As (k, pairs): a minimum of each pair's k is many times quicker down the columns than along rows of k (63k
        # hand: 0.3 against 5.4 ms). Rows gathered by np.take (a fancy index of rows is many times slower), read
        # transposed; the distances by their flat index, into a (k, pairs) array made in that order.
        dist = np.asfortranarray(dist)
        at = np.add(np.take(self.vertex_near, vertices, axis=0).T, columns * len(dist), order="C")
        total = np.take(dist.ravel(order="F"), at)
        total += np.take(self.vertex_step, vertices, axis=0).T  # in place: fewer new (k, pairs) arrays
        untested = np.take(self.vertex_untested, vertices, axis=0).T
        known = (total + _inf_where(untested)).min(axis=0)
        doubt = np.flatnonzero(untested & (total < np.minimum(known, reach)))  # flat in (k, pairs)
        if len(doubt):
            step = vertices[doubt % pairs] * k + doubt // pairs
            traced = np.zeros(self.vertex_untested.size, bool)  # each step once, in order: quicker than np.unique
            traced[step] = True
            self._test(np.flatnonzero(traced))
            np.put(total, doubt[np.isinf(np.take(self.vertex_step, step))], np.inf)
        return total.min(axis=0)

    def _test(self, steps):
        """Traces the untested of `steps` (vertex * k + slot: the step from a vertex to its slot-th nearest sample)."""
        steps = steps[np.take(self.vertex_untested, steps)]
        v, s = steps // self.vertex_near.shape[1], np.take(self.vertex_near, steps)
        (vx, vy), (sx, sy) = self.domain.points.T, self.points.T
        inside = self.outline.straight_xy(vx[v], vy[v], sx[s], sy[s], v, self.vertex_clear[v], self.clear[s])
        np.put(self.vertex_step, steps[~inside], np.inf)
        np.put(self.vertex_untested, steps, False)

    def _steps(self, vertices):
        """All the steps (vertex * k + slot) from `vertices`."""
        k = self.vertex_near.shape[1]
        return (vertices[:, None] * k + np.arange(k)).ravel()


def _any_in_rows(mask):
    """mask.any(axis=1) for a mask of few columns (k), as a boolean matrix product: a reduction along rows so short is
    several times slower (sample character, (2,673, 8): 0.055 -> 0.012 ms)."""
    return mask @ np.ones(mask.shape[1], bool)


def _inf_where(mask):
    """inf where `mask`, else 0, made from the bit pattern of inf: np.where is several times slower on a mixed mask (its
    branches; sample character, 33k entries: 0.11 against 0.02 ms)."""
    return (mask.view(np.uint8) * np.float64(np.inf).view(np.uint64)).view(np.float64)


def _nearest_inward(samples, vertices):
    """(vertices, slots): each vertex's nearest untested step that leaves it inwards; those leaving outwards before
    it are marked outside the mesh without tracing (on the sample character, the vertices that see none of their
    nearest samples then have a step known inside after one trace instead of two). Vertices with none are left out."""
    found = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    k = samples.vertex_near.shape[1]
    (vx, vy), (sx, sy) = samples.domain.points.T, samples.points.T  # columns: rows of (n, 2) are slow to gather
    while len(vertices):
        left = np.take(samples.vertex_untested, vertices, axis=0)
        has = left.any(axis=1)
        vertices, slot = vertices[has], left[has].argmax(axis=1)
        s = np.take(samples.vertex_near, vertices * k + slot)
        out = ~samples.domain._leaves_inward(vertices, np.column_stack([sx[s] - vx[vertices], sy[s] - vy[vertices]]))
        np.put(samples.vertex_step, vertices[out] * k + slot[out], np.inf)
        np.put(samples.vertex_untested, vertices[out] * k + slot[out], False)
        found[0].append(vertices[~out])
        found[1].append(slot[~out])
        vertices = vertices[out]
    return np.concatenate(found[0]), np.concatenate(found[1])


def _along_edges(samples):
    """In place: a vertex that sees none of its nearest samples (in a part thinner than the spacing, such as
    a hoof a few pixels from the next) looks through the nearest vertex that does, along mesh edges. Never
    in a straight line: that could reach across the gap into the other leg. (A vertex with no step known inside
    has had them all traced.)"""
    domain, near, step = samples.domain, samples.vertex_near, samples.vertex_step
    sees = _any_in_rows(np.isfinite(step))
    lost, seeing = np.flatnonzero(~sees), np.flatnonzero(sees)
    if len(lost) == 0 or len(seeing) == 0:
        return
    n = len(domain.points)
    a, b = domain.edges.T
    length = np.hypot(*(domain.points[b] - domain.points[a]).T)
    graph = coo_matrix((length, (a, b)), shape=(n, n)).tocsr()
    dist, _pred, source = dijkstra(graph, directed=False, indices=seeing, min_only=True,
                                   return_predecessors=True)
    found = lost[source[lost] >= 0]
    samples._test(samples._steps(np.unique(source[found])))  # their steps are copied: known inside or not
    near[found] = near[source[found]]
    step[found] = step[source[found]] + dist[found, None]
    samples.vertex_untested[found] = False


class Lattice:
    """Square-lattice points inside the mesh, off its outline, centred on its bounding box: a shape that is
    mirror-symmetric about a vertical or horizontal axis gets a mirror-symmetric lattice. Kept with the grid, so
    that the lattice points near a point are found by rounding (no k-d tree over many points), and with the
    points' clearance (`Outline.clearance`), which also tells most of them off the outline; and the clearance of
    `others` (the handles' samples), measured with theirs (in one k-d tree query: sample character 0.1 ms less)."""

    # Empty grid nodes round the grid, so that offsets of up to a link's reach and half a cell (3 columns or rows),
    # from a node up to one beyond the grid (`nearest_node`), need no bound checks.
    PAD = int(np.ceil(LINK_RADIUS + 0.5)) + 1

    def __init__(self, outline, spacing, others=np.zeros((0, 2))):
        domain = outline.domain
        x, y = domain.points[:, 0], domain.points[:, 1]  # on columns: (n, 2).min(axis=0) takes 0.2 ms
        lo, hi = np.array([x.min(), y.min()]), np.array([x.max(), y.max()])
        centre = 0.5 * (lo + hi)
        half = np.floor(0.5 * (hi - lo) / spacing)
        gx = centre[0] + np.arange(-half[0], half[0] + 1) * spacing
        gy = centre[1] + np.arange(-half[1], half[1] + 1) * spacing
        row, col = np.nonzero(_inside_grid(gx, gy, outline.a, outline.b))  # the nodes inside, row by row
        pts = np.column_stack([gx[col], gy[row]])
        clear = outline.clearance(np.vstack([pts, others]), LINK_RADIUS * spacing)  # a link's reach: no more needed
        clear, self.others_clear = clear[:len(pts)], clear[len(pts):]
        off = _off_outline(outline, pts, spacing, clear)
        self.row, self.col = row[off], col[off]  # each point's grid row and column
        self.points, self.clear, self.origin, self.spacing = pts[off], clear[off], np.array([gx[0], gy[0]]), spacing
        self.gx, self.gy = gx, gy  # the grid columns' and rows' coordinates
        # The points' coordinates and clearances as columns (x, y, clear), ending with a point at infinity: the one
        # that empty grid nodes (index -1) name, which searches need not filter out.
        self.columns = (np.append(self.points[:, 0], np.inf), np.append(self.points[:, 1], np.inf),
                        np.append(self.clear, 0.0))
        # At each node of the padded grid (row by row), its lattice point (-1: none); each lattice point's node.
        self.shape, pad = np.array([len(gy), len(gx)]), self.PAD
        self.width = len(gx) + 2 * pad
        index = np.full((len(gy) + 2 * pad, self.width), -1)
        self.node = (self.row + pad) * self.width + self.col + pad
        index.ravel()[self.node] = np.arange(len(self.points))
        self.index = index.ravel()
        # The offsets to the nodes at most PAD - 1 columns and rows away, and their squared lengths in spacings, for
        # `shifts` (a few calls a bind, each 20 µs when made anew).
        dx = np.arange(1 - pad, pad)
        self.offsets, self.squared = (dx[:, None] * self.width + dx).ravel(), (dx[:, None] ** 2 + dx**2).ravel()

    def __len__(self):
        return len(self.points)

    def nearest_node(self, pts):
        """The grid node nearest to each point (in the padded grid; off the grid, one beyond its edge, where there
        is no lattice point)."""
        col = np.rint((pts[:, 0] - self.origin[0]) / self.spacing).astype(np.int64)
        row = np.rint((pts[:, 1] - self.origin[1]) / self.spacing).astype(np.int64)
        np.clip(col, -1, self.shape[1], out=col)
        np.clip(row, -1, self.shape[0], out=row)
        return (row + self.PAD) * self.width + col + self.PAD

    def shifts(self, reach):
        """Offsets from a node to the nodes within `reach` spacings of it (at most `PAD` - 1 columns or rows), the
        node itself included, increasing (as the lattice points' indices)."""
        return self.offsets[self.squared <= reach * reach * (1.0 + 1e-9)]


def _inside_grid(gx, gy, a, b):
    """Even-odd inside test of the grid nodes (len(gy), len(gx)) against the closed edge set a[i]-b[i], as
    `contour.points_in_edges` (the same crossings, to the bit) but by grid rows: each edge crosses the rows at a
    height it spans (low <= y < high), and a crossing at x flips the nodes left of it (x < crossing), by a running sum
    along the row. Sample character, 3.3k nodes: 0.54 -> 0.10 ms; comb 3.7 -> 0.42 ms."""
    low, high = np.minimum(a[:, 1], b[:, 1]), np.maximum(a[:, 1], b[:, 1])
    first = np.searchsorted(gy, low, "left")
    edge, row = _runs(first, np.searchsorted(gy, high, "left") - first)
    ax, ay, bx, by, y = a[edge, 0], a[edge, 1], b[edge, 0], b[edge, 1], gy[row]
    x_cross = ax + (y - ay) * (bx - ax) / (by - ay)
    width = len(gx) + 1
    flips = np.bincount(row * width + np.searchsorted(gx, x_cross, "left"), minlength=len(gy) * width)
    # Nodes c < k lie left of a crossing that rounds to k: the crossings at k > c, summed from the right.
    return np.cumsum(flips.reshape(len(gy), width)[:, :0:-1], axis=1)[:, ::-1] % 2 == 1


def _star_clearance(domain):
    """Per vertex, how far every straight step from it into its triangles stays in them: the least distance to
    their far sides (less a few rounding tolerances); 0 for a vertex of no triangle. Near the outline this is
    often more than the clearance, and an inner vertex's triangles surround it. (On coordinate columns: four
    times as fast as on rows at 120k triangles; side lengths by square roots, not np.hypot: 0.24 -> 0.15 ms on the
    sample character.)"""
    x, y = domain.points[:, 0], domain.points[:, 1]
    a, b, c = domain.tris.T
    ax, ay, bx, by, cx, cy = x[a], y[a], x[b], y[b], x[c], y[c]
    twice_area = np.abs((bx - ax) * (cy - ay) - (by - ay) * (cx - ax))
    out = np.where(domain.star_count > 0, np.inf, 0.0)
    for corner, (ux, uy, vx, vy) in zip((a, b, c), ((bx, by, cx, cy), (cx, cy, ax, ay), (ax, ay, bx, by))):
        dx, dy = vx - ux, vy - uy
        np.minimum.at(out, corner, twice_area / np.maximum(np.sqrt(dx * dx + dy * dy), 1e-300))
    return np.maximum(out - 3.0 * domain.tolerance, 0.0)


def _fill_thin_parts(outline, tris, lattice, spacing):
    """Samples for the parts of the shape thinner than the lattice spacing (a hoof a few pixels wide), where
    the lattice may have none or a chain of them too far apart to link: triangle centres of the mesh that
    see no lattice sample within 1.5 spacings, at most one per half-spacing cell. Elsewhere the samples do
    not depend on the mesh."""
    # On coordinate columns, not (triangles, 3, 2) corners: 17k hand 8 -> 2 ms.
    x, y = outline.domain.points[:, 0], outline.domain.points[:, 1]
    a, b, c = np.asarray(tris, np.int64).reshape(-1, 3).T
    ax, ay, bx, by, cx, cy = x[a], y[a], x[b], y[b], x[c], y[c]
    px, py = (ax + bx + cx) / 3.0, (ay + by + cy) / 3.0
    centres = np.stack([px, py], axis=1)
    rest = np.arange(len(centres))
    radius = 1.5 * spacing
    if len(lattice):
        # Most centres (those deep inside) see the lattice point at their nearest grid node, its clear disk alone
        # covering the step: the rest of the work is left to the others (sample character: 4,422 -> 1,705), and so is
        # the measure of their own clearance (sample character 0.02-0.05 ms less than for all).
        lx, ly, lattice_clear = lattice.columns
        node = lattice.nearest_node(centres)
        near = lattice.index[node]
        rest = np.flatnonzero(_beyond(px - lx[near], py - ly[near], np.minimum(lattice_clear[near], radius)))
    clear = outline.domain.clear.at(centres[rest])
    # No outline edge enters a triangle, so its centre is a third of its least height or more from the outline.
    # (Side lengths by `fast_hypot`: a bound, and np.hypot took 0.14 ms of the sample character's 1.4.)
    ax, ay, bx, by, cx, cy = ax[rest], ay[rest], bx[rest], by[rest], cx[rest], cy[rest]
    ab, bc, ca = fast_hypot(bx - ax, by - ay), fast_hypot(cx - bx, cy - by), fast_hypot(ax - cx, ay - cy)
    sides = np.maximum(np.maximum(ab, bc), ca)
    twice_area = np.abs((bx - ax) * (cy - ay) - (by - ay) * (cx - ax))
    clear = np.maximum(clear, twice_area / (3.0 * np.maximum(sides, 1e-300)))
    off = _off_outline(outline, centres[rest], spacing, clear)
    rest, clear = rest[off], clear[off]
    if len(lattice):
        # Most of the others see a lattice point at their nearest grid node or one of its 8 neighbours, their clear
        # disks covering the step: the search is left to the rest. (On columns kept for the centres left, with empty
        # nodes not filtered out, and `_beyond`: the whole search on the sample character 1.54 -> 1.2 ms. All 9 at
        # once, as a (centres, 9) table, took 0.57 -> 0.35 ms there but 2 -> 7 ms on the 63k hand, 3 -> 16 on the 200k:
        # the loop drops most centres after a few nodes.)
        shifts = lattice.shifts(np.sqrt(2.0))
        rx, ry, rclear, rnode = px[rest], py[rest], clear, node[rest]
        for shift in np.concatenate([[0], shifts[shifts != 0]]):
            near = lattice.index[rnode + shift]
            left = _beyond(rx - lx[near], ry - ly[near], np.minimum(rclear + lattice_clear[near], radius))
            rest, rx, ry, rclear, rnode = rest[left], rx[left], ry[left], rclear[left], rnode[left]
        rest = rest[~_sees_any(outline, centres[rest], rclear, lattice, rnode, radius)]
    centres = centres[rest]
    return centres[one_per_cell(centres, np.arange(len(centres)), 0.5 * spacing)]


def _sees_any(outline, pts, clear, lattice, node, radius):
    """Whether each point sees (in a straight line inside the mesh) any lattice point within `radius` (`node`: the
    grid node nearest to it): the one whose clear disk reaches nearest to the point is tried first (inside if the
    clear disks of both ends cover the step; `clear`: lower bounds of the points' distances to the outline), the
    others only for the points that do not see it. They lie at the nodes within `radius` and half a grid cell's
    diagonal of `node`: no k-d tree. (Tried first, the nearest leaves twice as much of the step to trace, and on the
    sample character, 2 of the 406 traced points for a second call: 0.2 ms more.)"""
    near = lattice.index[node[:, None] + lattice.shifts(radius / lattice.spacing + np.sqrt(0.5))]
    lx, ly, lattice_clear = lattice.columns
    dx, dy = lx[near] - pts[:, None, 0], ly[near] - pts[:, None, 1]
    gap = fast_hypot(dx, dy)
    within = ~_beyond(dx, dy, radius, gap)
    reach = lattice_clear[near]
    row = np.arange(len(pts))
    first = np.argmax(np.where(within, reach - gap, -np.inf), axis=1)
    seen = within[row, first]
    best = near[row, first]
    test = np.flatnonzero(seen & (gap[row, first] > clear + reach[row, first]))
    if len(test):
        seen[test] = outline.straight(pts[test], lattice.points[best[test]], None, clear[test],
                                      lattice.clear[best[test]])
    within[row, first] = False
    query, slot = np.nonzero(within & ~seen[:, None])
    if len(query):  # (an empty call still costs a fifth of a millisecond)
        target = near[query, slot]
        seen[query[outline.straight(pts[query], lattice.points[target], None, clear[query],
                                    lattice.clear[target])]] = True
    return seen


def _beyond(dx, dy, bound, size=None):
    """Whether each vector (dx, dy) is longer than `bound` as np.hypot measures it (the thin-part search's 1.5 spacings
    is a hard cut-off: a centre an ulp inside it sees the lattice point, one outside may become a sample), from
    `geodesic.fast_hypot`, an ulp or so off np.hypot (`size`, if known): np.hypot decides only within a few ulps of the
    bound."""
    size = fast_hypot(dx, dy) if size is None else size
    beyond = size > bound
    bound = np.broadcast_to(bound, size.shape)
    close = np.flatnonzero(np.abs(size - bound) <= 1e-14 * bound)
    if len(close):
        beyond.flat[close] = np.hypot(dx.flat[close], dy.flat[close]) > bound.flat[close]
    return beyond


def _off_outline(outline, pts, spacing, bound):
    """Whether each point lies farther than a thousandth of `spacing` from the mesh outline (measured only
    where `bound`, lower bounds of the points' distances to it, does not already say so)."""
    off = bound > 1e-3 * spacing
    near = np.flatnonzero(~off)
    if len(near):
        off[near] = outline.distance(pts[near], 2e-3 * spacing) > 1e-3 * spacing
    return off


def _link_graph(outline, lattice, pts, clear, radius):
    """Symmetric graph of straight links between samples (`pts`, the `lattice` points first) closer than `radius`
    that stay inside (`clear`: a lower bound of each sample's distance to the outline). A radius, not k nearest: on a
    lattice, ties among equally near points would be broken by index, and mirrored input would get an unmirrored
    graph. Links to lattice points are read off the grid, the lattice's own at fixed offsets and in order: the matrix
    comes out canonical with nothing to sort (sample character: 3.9 -> 2.3 ms; query_pairs of all samples and
    coo -> csr's sort of 37k entries; -> 1.95 ms with the table below and fewer numpy calls).

    Returned as (i, j, graph): the pairs of samples whose links need tracing, and graph(inside), the matrix given
    whether each of those stays inside (`Outline.straight`), so that they may be traced with other segments."""
    n, m = len(pts), len(lattice)
    x, y = pts[:, 0], pts[:, 1]
    # The offsets to the nodes in reach, increasing: each lattice point's neighbours come in increasing order, the
    # offset in column k the opposite of the one in column len - 1 - k, the positive ones (the second half) giving
    # each pair i < j once.
    shift = lattice.shifts(radius / lattice.spacing)
    shift = shift[shift != 0]
    near = lattice.index[lattice.node[:, None] + shift]  # (m, offsets), -1: none
    wide, half = len(shift), len(shift) // 2
    # The lattice's links over the whole table, each pair from both ends (not over the pairs, then copied to both):
    # squared lengths from the grid columns' and rows' coordinates, tabled by column and by row (offsets of fewer than
    # PAD columns and rows), the same bits as from the points' (a - b is -(b - a)); and the clear disks' test.
    dc = (shift + lattice.PAD) % lattice.width - lattice.PAD
    dr = (shift - dc) // lattice.width
    gx, gy = lattice.gx, lattice.gy
    by_column = (gx.take(np.arange(len(gx))[:, None] + dc, mode="clip") - gx[:, None]) ** 2
    by_row = (gy.take(np.arange(len(gy))[:, None] + dr, mode="clip") - gy[:, None]) ** 2
    squared = by_column[lattice.col] + by_row[lattice.row]
    length = np.sqrt(squared)
    close = (near >= 0) & (squared <= radius ** 2)
    linked = close & (length <= clear[near] + clear[:m, None])  # the two ends' clear disks cover the link
    # The others traced, each pair once, from its lower end (in the second half).
    row, col = np.divmod(np.flatnonzero(close & ~linked), wide)
    row, col = row[col >= half], col[col >= half]
    i, j = row, near[row, col]
    if n > m:  # the other samples' links: to the lattice and to other samples before them
        # The lattice points in reach from the grid: those within a link's reach and half a cell, in columns and
        # rows, of the nearest node (off the grid, of the node one beyond its edge, nearer still). The other samples
        # from a k-d tree of theirs. (Sample character: 0.25 ms quicker than a k-d tree query of all.)
        square = lattice.shifts((lattice.PAD - 1) * np.sqrt(2.0))
        near_other = lattice.index[lattice.nearest_node(pts[m:])[:, None] + square]
        other, slot = np.nonzero(near_other >= 0)
        pairs = cKDTree(pts[m:]).query_pairs(radius * (1.0 + 1e-9), output_type="ndarray") + m
        oi = np.concatenate([near_other[other, slot], pairs[:, 0]])
        oj = np.concatenate([other + m, pairs[:, 1]])
        # Within `radius` as the k-d tree measures it (squared): the same links however they are found.
        o_squared = (x[oj] - x[oi]) ** 2 + (y[oj] - y[oi]) ** 2
        o_length = np.sqrt(o_squared)
        o_close = o_squared <= radius ** 2
        o_inside = o_close & (o_length <= clear[oi] + clear[oj])
        o_rest = np.flatnonzero(o_close & ~o_inside)
        i, j = np.concatenate([i, oi[o_rest]]), np.concatenate([j, oj[o_rest]])

    def graph(inside):
        """The matrix, given whether each link of (i, j) stays inside."""
        lat = len(row)
        linked[row, col] = linked[j[:lat], (wide - 1) - col] = inside[:lat]
        at = np.flatnonzero(linked)
        indices, data = near.ravel()[at], length.ravel()[at]
        # Where each row's lattice links end: a running count of the rows' counts, those by a product with ones, in
        # uint8 (the table has 20 columns at LINK_RADIUS 2.3, fewer than 256). A running count over the whole table,
        # cast to int64, cost the sample character's bind ~0.3 ms more (interleaved binds).
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(linked.view(np.uint8) @ np.ones(wide, np.uint8), out=indptr[1:m + 1])
        indptr[m + 1:] = len(at)
        if n > m:
            o_inside[o_rest] = inside[lat:]
            keep = np.flatnonzero(o_inside)
            r, c = np.concatenate([oi[keep], oj[keep]]), np.concatenate([oj[keep], oi[keep]])
            # By row, then column (the pairs are distinct): of fewer than 65,536 samples by two 16-bit radix
            # passes (sample character, 4.4k links: 0.12 -> 0.06 ms).
            order = np.lexsort((c.astype(np.uint16), r.astype(np.uint16))) if n <= 65536 else np.argsort(r * n + c)
            r, c = r[order], c[order]
            # Each goes after its row's lattice links: where it lands once those before it are in.
            place = indptr[r + 1] + np.arange(len(r))
            lattice_link = np.ones(len(indices) + len(r), bool)
            lattice_link[place] = False
            merged_indices, merged_data = np.empty(len(lattice_link), np.int32), np.empty(len(lattice_link))
            merged_indices[lattice_link], merged_data[lattice_link] = indices, data
            merged_indices[place], merged_data[place] = c, np.concatenate([o_length[keep], o_length[keep]])[order]
            indices, data = merged_indices, merged_data
            indptr[1:] += np.cumsum(np.bincount(r, minlength=n))
        return csr_matrix((data, indices.astype(np.int32, copy=False), indptr.astype(np.int32)), shape=(n, n))

    return i, j, graph


class Outline:
    """The mesh's boundary edges filed in a grid of square cells, for testing many short segments: a segment
    can only touch the edges whose boxes meet its box."""

    def __init__(self, domain, cell):
        """`cell`: the largest cell size (about the length of the segments to test)."""
        self.domain = domain
        self.a, self.b = domain.points[domain.boundary[:, 0]], domain.points[domain.boundary[:, 1]]
        lo, hi = self._boxes(self.a, self.b)
        # The edges' boxes as columns (low, high) and their ends, for `_near`.
        self.box_x = np.ascontiguousarray(lo[:, 0]), np.ascontiguousarray(hi[:, 0])
        self.box_y = np.ascontiguousarray(lo[:, 1]), np.ascontiguousarray(hi[:, 1])
        self.tail, self.head = np.ascontiguousarray(domain.boundary[:, 0]), np.ascontiguousarray(domain.boundary[:, 1])
        # And their ends and lengths as columns, for `_touch_xy`.
        self.ax, self.ay = np.ascontiguousarray(self.a[:, 0]), np.ascontiguousarray(self.a[:, 1])
        self.bx, self.by = np.ascontiguousarray(self.b[:, 0]), np.ascontiguousarray(self.b[:, 1])
        self.length = np.maximum(np.hypot(self.bx - self.ax, self.by - self.ay), 1e-300)
        self.lo = np.array([lo[:, 0].min(), lo[:, 1].min()])  # on columns: quicker
        extent = np.array([hi[:, 0].max(), hi[:, 1].max()]) - self.lo
        edge_length = median(self.length)
        self.cell = max(min(float(cell), 2.0 * edge_length), float(extent.max()) / 512, 1e-12)
        self.shape = np.floor(extent / self.cell).astype(np.int64) + 1
        edge, key = self._cells(lo, hi)
        order = np.argsort(key, kind="stable")
        self.edges = edge[order]
        self.start = np.zeros(int(np.prod(self.shape)) + 1, np.int64)  # each cell's first in `edges`, and the end
        np.cumsum(np.bincount(key, minlength=len(self.start) - 1), out=self.start[1:])
        self.step = float(cell) / 8.0
        self._outline_points = None  # for `clearance`, made when first needed (Geodesic never needs it)

    def clearance(self, pts, reach=np.inf):
        """Lower bounds of each point's distance to the outline, for few points (samples): the domain's grid
        bound is a cell and more below the distance (on the sample character about a spacing, so it rarely spared a
        sample link its test), this one half a `step` and a few rounding tolerances, from points at most a step
        apart along the outline. Sample character: 5,715 -> 1,480 sample links and 15,886 -> 12,540 vertex links
        tested.

        Exact to that up to `reach` (`reach` or more beyond): samples farther than a link from the outline are
        searched for no more (the sample character's samples, half of them deep: 1.8 -> 1.0 ms)."""
        if self._outline_points is None:  # points at most a step apart along the outline
            count = np.maximum(np.ceil(self.length / self.step).astype(np.int64), 1)
            edge, k = _runs(np.zeros(len(count), np.int64), count)
            # On coordinate columns (the same bits as on rows of (n, 2): sample character 0.15 -> 0.06 ms).
            t, ax, ay = k / count[edge], self.ax[edge], self.ay[edge]
            along = np.column_stack([ax + t * (self.bx[edge] - ax), ay + t * (self.by[edge] - ay)])
            # Unbalanced: built in 0.28 ms instead of 0.49 on the sample character, queried as fast.
            self._outline_points = cKDTree(along, balanced_tree=False, compact_nodes=False)
        bound = self.domain.clear.at(pts)
        slack = 0.5 * self.step + 3.0 * self.domain.tolerance
        near = np.flatnonzero(bound < reach)
        gap = self._outline_points.query(pts[near], distance_upper_bound=reach + slack)[0] - slack  # inf: none
        bound[near] = np.maximum(bound[near], np.minimum(gap, reach))
        return bound

    def distance(self, pts, cap):
        """Distance from each point to the outline, exact up to `cap` (cap beyond), for a small `cap` (a cell or
        less): from the edges filed in the grid cells that the square within `cap` of the point meets (no k-d tree
        to build: sample character, 15 points, 0.48 -> 0.19 ms; comb 7.7 -> 0.18 ms)."""
        query, key = self._cells(pts - cap, pts + cap)
        first = self.start[key]
        query, at = _runs(first, self.start[key + 1] - first, query)
        edge = self.edges[at]
        a, ab = self.a[edge], self.b[edge] - self.a[edge]
        t = np.clip(((pts[query] - a) * ab).sum(axis=1) / np.maximum((ab * ab).sum(axis=1), 1e-300), 0, 1)
        gap = np.hypot(*(pts[query] - a - t[:, None] * ab).T)
        out = np.full(len(pts), float(cap))
        np.minimum.at(out, query, gap)
        return out

    def straight(self, p, q, start=None, clear_p=0.0, clear_q=0.0):
        """Whether each segment p-q (from vertex `start`, or from a point) stays inside the mesh: leaving its
        start vertex inwards and touching no boundary edge but at its ends. Exact for every segment: clear disks
        along it (Clearance.covers) as a shortcut cost more than the tests they spared, on every bench mesh.
        `clear_p`, `clear_q`: lower bounds of the ends' distances to the outline. No edge comes within the
        rounding tolerance of the segment inside those disks (less a few tolerances), so only the rest of it is
        traced: fewer grid cells."""
        return self.straight_xy(p[:, 0], p[:, 1], q[:, 0], q[:, 1], start, clear_p, clear_q)

    def straight_xy(self, px, py, qx, qy, start=None, clear_p=0.0, clear_q=0.0):
        """`straight` on coordinate columns (gathers from rows of (n, 2) arrays are slow).

        Tested CHUNK segments at a time: each segment spreads into a few grid cells and pairs of edges, and
        arrays of that many stay in the processor's cache (the comb of bench/weights.py, 500k vertex links:
        0.87 s at once, 0.54 s in chunks)."""
        n = len(px)
        if n == 0:
            return np.zeros(0, bool)
        clear_p, clear_q = np.broadcast_to(clear_p, (n,)), np.broadcast_to(clear_q, (n,))
        if n <= CHUNK:
            return self._straight(px, py, qx, qy, start, clear_p, clear_q)
        parts = [slice(i, i + CHUNK) for i in range(0, n, CHUNK)]
        return np.concatenate([self._straight(px[k], py[k], qx[k], qy[k], None if start is None else start[k],
                                              clear_p[k], clear_q[k]) for k in parts])

    def covers(self, px, py, qx, qy, start, clear_p, clear_q):
        """Whether each segment p-q from vertex `start` is inside without tracing it (`straight` would say so): it
        leaves its start inwards and the clear disks of its ends (less a few rounding tolerances) cover it. On
        coordinate columns."""
        slack = 3.0 * self.domain.tolerance
        cut = np.maximum(clear_p - slack, 0.0) + np.maximum(clear_q - slack, 0.0)
        dx, dy = qx - px, qy - py
        covered = cut >= fast_hypot(dx, dy)
        at = np.flatnonzero(covered)
        covered[at] = self.domain._leaves_inward(start[at], np.column_stack([dx[at], dy[at]]))
        return covered

    def _straight(self, px, py, qx, qy, start, clear_p, clear_q):
        # Few numpy calls (on the sample character, most calls test a few hundred segments), on coordinate columns;
        # the segments leaving their start outwards and those their clear disks cover are dropped at once, before
        # cutting. Lengths by square roots, not np.hypot (3 times as slow).
        slack = 3.0 * self.domain.tolerance
        dx, dy = qx - px, qy - py
        size = fast_hypot(dx, dy)
        cut_p, cut_q = np.maximum(clear_p - slack, 0.0), np.maximum(clear_q - slack, 0.0)
        if start is None:
            clear, traced = np.ones(len(px), bool), np.flatnonzero(cut_p + cut_q < size)
        else:
            clear = self.domain._leaves_inward(start, np.column_stack([dx, dy]))
            traced = np.flatnonzero((cut_p + cut_q < size) & clear)
        tp, tq = cut_p[traced] / size[traced], cut_q[traced] / size[traced]
        dx, dy = dx[traced], dy[traced]
        px, py, qx, qy = px[traced] + tp * dx, py[traced] + tp * dy, qx[traced] - tq * dx, qy[traced] - tq * dy
        seg, edge = self._near_xy(px, py, qx, qy, None if start is None else start[traced])
        touch = _touch_xy(px[seg], py[seg], qx[seg], qy[seg], self.ax[edge], self.ay[edge], self.bx[edge],
                          self.by[edge], self.domain.tolerance, self.length[edge])
        clear[traced[seg[touch]]] = False
        return clear

    def _boxes(self, p, q):
        tol = self.domain.tolerance
        return np.minimum(p, q) - tol, np.maximum(p, q) + tol

    def _cells(self, lo, hi):
        """(box, cell key) for every grid cell each box [lo, hi] overlaps. On coordinate columns, each box's cells
        counted off from its first (sample character, 924 outline edges: 0.14 -> 0.06 ms)."""
        x0, y0 = self._index(lo[:, 0], 0), self._index(lo[:, 1], 1)
        rows = self._index(hi[:, 1], 1) - y0 + 1
        box, k = _runs(np.zeros(len(lo), np.int64), (self._index(hi[:, 0], 0) - x0 + 1) * rows)
        x, y = np.divmod(k, rows[box])
        return box, (x0[box] + x) * self.shape[1] + y0[box] + y

    def _near(self, p, q, start=None):
        """(segment, edge) pairs whose boxes meet, from the grid cells along each segment (not every cell of its
        box: a long slanted segment would read many times more), but the edges at the segment's `start` vertex
        (if given: `straight` does not count them). A pair may come more than once."""
        return self._near_xy(p[:, 0], p[:, 1], q[:, 0], q[:, 1], start)

    def _near_xy(self, px, py, qx, qy, start=None):
        """`_near` on coordinate columns (gathers from rows of (n, 2) arrays are slow), with few numpy calls: most
        calls test a few hundred segments."""
        tol = self.domain.tolerance
        lo_x, hi_x = np.minimum(px, qx) - tol, np.maximum(px, qx) + tol
        lo_y, hi_y = np.minimum(py, qy) - tol, np.maximum(py, qy) + tol
        seg, first, end = self._along(px, py, qx, qy, lo_x, hi_x)
        seg, at = _runs(first, end - first, seg)
        edge = self.edges[at]
        # The boxes that meet across, then (of those, a third on the sample character) up: fewer gathers.
        across = np.flatnonzero((lo_x[seg] <= self.box_x[1][edge]) & (self.box_x[0][edge] <= hi_x[seg]))
        seg, edge = seg[across], edge[across]
        meet = (lo_y[seg] <= self.box_y[1][edge]) & (self.box_y[0][edge] <= hi_y[seg])
        if start is not None:
            from_start = start[seg]
            meet &= (self.tail[edge] != from_start) & (self.head[edge] != from_start)
        return seg[meet], edge[meet]

    def _along(self, px, py, qx, qy, x0, x1):
        """(segment, first, end) for every grid column that a segment p-q, widened by the tolerance, crosses: the
        edges filed in the cells it meets there, `edges[first:end]` (the rows that the segment spans over the column
        are consecutive cells, whose edges are filed one after another: one run of edges per column, not one per
        cell; sample character, 2,783 vertex steps: 1.09 -> 1.0 ms). On coordinate columns; x0, x1: the segments'
        least and greatest x, widened by the tolerance."""
        tol = self.domain.tolerance
        c0, c1 = self._index(x0, 0), self._index(x1, 0)
        count = c1 - c0 + 1
        seg, col = _runs(c0, count)
        # Where the segment is over the column, plus the tolerance either side; from its ends in the first and
        # last columns (which take in any part of it beyond the grid). (Set at the runs' ends, not by np.where, and
        # clipped by np.minimum and np.maximum, not np.clip: a few µs each. Every segment spans one column or more,
        # x0 <= x1 and `_index` clamps, so each run has a first and a last.)
        last = np.cumsum(count) - 1
        xa = self.lo[0] + col * self.cell - tol
        xb = xa + self.cell + 2 * tol
        xa[last - count + 1], xb[last] = -np.inf, np.inf
        dx, dy = qx - px, qy - py
        px, py, dx, dy = px[seg], py[seg], dx[seg], dy[seg]
        slanted = np.abs(dx) > tol  # upright: all of it (t from 0 to 1), with no division by ~0
        ta = np.divide(xa - px, dx, out=np.zeros(len(dx)), where=slanted)
        tb = np.divide(xb - px, dx, out=np.ones(len(dx)), where=slanted)
        for t in ta, tb:
            np.minimum(np.maximum(t, 0.0, out=t), 1.0, out=t)
        ya, yb = py + ta * dy, py + tb * dy
        r0, r1 = self._index(np.minimum(ya, yb) - tol, 1), self._index(np.maximum(ya, yb) + tol, 1)
        key = col * self.shape[1]
        return seg, self.start[key + r0], self.start[key + r1 + 1]

    def _index(self, v, axis):
        """The grid column (axis 0) or row (axis 1) of coordinates `v`, the nearest one off the grid (truncated, not
        floored: the same once clipped)."""
        index = ((v - self.lo[axis]) / self.cell).astype(np.int64)
        return np.minimum(np.maximum(index, 0, out=index), self.shape[axis] - 1, out=index)  # np.clip: a few µs more


def _runs(first, count, runs=None):
    """(run, value) for runs of consecutive integers: count[i] of them from first[i] (`runs`: the run numbers, else
    0, 1, ...)."""
    end = np.cumsum(count)
    run = np.repeat(np.arange(len(first)), count)  # one repeat, the rest gathers: quicker for short runs
    value = np.arange(len(run)) + (first - end + count)[run]
    return (run if runs is None else runs[run]), value


@dataclass
class Weights:
    """Weights of the real handles at every sample and every mesh vertex (rows sum to 1), and what the
    construction needed."""

    values: np.ndarray  # (samples, real handles)
    at_vertices: np.ndarray  # (mesh vertices, real handles)
    virtual: list = field(default_factory=list)  # sample indices of the virtual handles
    radii: np.ndarray = None  # r_d of every handle, real then virtual (Gaussian: the widths c)


def meshfree_weights(samples, handles, spread=SPREAD, gaussian=False):
    """C² weights for handles given as lists of sample indices (a point, or the samples along a bone).

    `spread` is λ in r_d = r_v + λ (r_h - r_v): small gives near-Voronoi transitions, 1 the widest overlap.
    Handles that touch (bones sharing a joint) cannot meet r_d < r_h; the paper then uses a global
    Gaussian, exp(-d² / 2c²) with c half the distance to the nearest handle that does not touch
    (`gaussian=True`: C-infinity, approximating, no virtual handles). The other way keeps the compact C²
    basis: handles pulled in from the joints (`bone_handles(..., joint_pull)`), which no longer touch.
    """
    if not gaussian:
        return HandleSet(samples, handles, spread).weights()
    handles = [np.atleast_1d(np.asarray(h, np.int64)) for h in handles]
    d = samples.distances(handles)
    _, reach, nearest = _cells(d, handles, TOUCH * samples.spacing)
    width = np.where(np.isfinite(nearest), nearest, 2.0 * np.maximum(reach, 1e-12)) / 2.0
    values = _normalized(np.exp(-0.5 * (d / width) ** 2))
    verts, d = np.arange(len(samples.vertex_near)), np.asfortranarray(d)  # as at_vertices reads it: made once
    at = np.stack([samples.at_vertices(d, verts, np.full(len(verts), i)) for i in range(len(handles))], axis=1)
    vertex = _normalized(np.exp(-0.5 * (at / width) ** 2))
    return Weights(values, vertex, [], width)


class HandleSet:
    """Real handles, the virtual ones they need, and every handle's distances, kept, so that adding a handle
    is local: one Dijkstra from it (and from each virtual handle it calls for), each stopped one link past an
    upper bound of its r_h, then cells, radii and weights redone only where they changed.

    A handle is a set of samples (a point, or the samples along a bone), optionally with a straight step
    from each (`offsets`: a bone added later starts from the samples near it). Columns are exact up to their
    Dijkstra's limit, and that is enough: a basis only reaches r_d < r_h, and a cell that reached past its
    handle's limit would reach past r_h, which the refinement does not allow.

    A new real handle makes the virtual handles near it crowded: they were placed for the handles before it,
    so they are dropped (their samples go back to the nearest live handles) and the refinement starts from
    there. Without that, insertion would keep splitting them, and the result would drift from binding
    everything at once.
    """

    def __init__(self, samples, handles, spread=SPREAD):
        n = len(samples.points)
        self.samples, self.spread = samples, spread
        self.handles, self.offsets, self.real, self.region = [], [], [], []
        self.alive = []  # False for a dropped virtual handle (its index stays, with no samples)
        self.nearest = np.full(n, np.inf)  # each sample's distance to its nearest handle
        self.owner = np.full(n, -1, np.int32)  # the first handle whose cell holds the sample
        self.tied = np.zeros(n, bool)  # the sample lies in more than one cell
        self._d = np.full((n, 0), np.inf, order="F")  # (samples, handles), a column per handle
        self._between = np.full((0, 0), np.inf)  # distances between handles (touching ones: inf)
        self._reach, self._far = np.zeros(0), np.zeros(0, np.int64)  # r_v, and the sample that sets it
        self._links = np.zeros((0, 0), np.int64)  # graph links from one cell (by owner) to another
        self._owned_before = np.full(n, -2, np.int32)  # owner when the links were last counted (-2: same)
        self._radius, self._blend = np.zeros(0), np.zeros((0, 0))  # r_d; each handle onto the real ones
        self._stale = np.zeros(n, bool)  # samples whose weights a dropped handle reached
        self._vertex_values = np.zeros((len(samples.vertex_near), 0))  # (vertices, real handles; more columns free)
        # f(d / r_d) (vertices, handles), before normalizing and blending. The samples' weights are made only when
        # asked for (`values`): a bind or an insertion needs the vertices' alone.
        self._vertex_basis = np.zeros((len(samples.vertex_near), 0))
        if handles:
            self._add_all([np.atleast_1d(np.asarray(h, np.int64)) for h in handles])
        self._refine()
        self._update_weights()

    def _add_all(self, handles):
        """The real handles of a bind, at once, from one Dijkstra for them all: the cells, owners and reaches that
        `_add` for one after another leaves, but the columns cut alike, where nothing reads them (`_columns`), rather
        than where a Dijkstra for each would stop, so the distances between handles are exact (one after another, a
        pair beyond the later one's cut got none, depending on the order of the bones)."""
        count = len(handles)
        cols, gap = self._columns(handles)
        self._grow(count)
        self._d[:, :count] = cols
        self.handles, self.offsets = list(handles), [np.zeros(len(h)) for h in handles]
        self.real, self.alive = [True] * count, [True] * count
        finite = np.isfinite(cols)
        # Where every column reaches every sample (the cut beyond the far end): one array for all (0.04 -> 0.01 ms).
        self.region = [np.arange(len(cols))] * count if finite.all() else \
            [np.flatnonzero(finite[:, i]) for i in range(count)]
        self.nearest = cols.min(axis=1)
        member = np.isfinite(self.nearest)[:, None] & (cols <= _tie(self.nearest)[:, None])
        joined = np.flatnonzero(member.any(axis=1))
        self.owner[joined] = member[joined].argmax(axis=1)  # the first handle whose cell holds it
        self.tied = member.sum(axis=1) > 1
        self._note_owners(joined, np.full(len(joined), -1, np.int32))
        self._between[:count, :count] = gap
        # Each cell's r_v and the sample that sets it (its first farthest), as `_measure_reach` gives, for all at once
        # from the membership (sample character: 0.24 -> 0.03 ms).
        far = np.where(member, self.nearest[:, None], -np.inf).argmax(axis=0)
        has = member.any(axis=0)
        self._reach[:count] = np.where(has, self.nearest[far], 0.0)
        self._far[:count] = np.where(has, far, [h[0] for h in handles])

    def _columns(self, handles):
        """The real handles' distances at a bind, and the distances between them (touching ones: inf).

        Cut at 2R + a link, R the farthest any sample is from its nearest handle (one Dijkstra from all): no bind or
        later insertion reads further. Cells only shrink as handles go in, so a sample's nearest handle stays within
        R, and two handles whose cells meet within r_v + a link + r_v; r_d < r_h, the distance to the nearest real
        handle not touching, checked to lie within the cut: a handle with none there (alone on an island, or a chain
        of touching bones, Joint Pull-In 0) gets its column in full. A bone added later starts a link at most from
        its samples, each within R of a handle. Sample character 3.5 -> 2.5 ms (a twelfth of the bind), 17k hand 20
        -> 5.5 ms; the same weights (to a few ulps where a handle alone takes its r_h from its own full column only,
        not also from the other's cut one: path sums in opposite directions differ in the last bits). With a spread
        over 1 (not offered: Spread is at most 0.95), r_d passes r_h and may pass the cut: the columns are then in
        full (cut, a strip's weights moved 0.13 at spread 3)."""
        samples, limit = self.samples, np.inf
        if len(handles) > 1 and self.spread <= 1.0:
            nearest = dijkstra(samples.graph, directed=True, indices=np.concatenate(handles), min_only=True)
            limit = 2.0 * nearest[np.isfinite(nearest)].max(initial=0.0) + 1.01 * LINK_RADIUS * samples.spacing
        d = samples.distances(handles, limit)
        gap = self._gaps(d, handles)
        alone = np.flatnonzero(np.isinf(gap.min(axis=1)))
        if np.isfinite(limit) and len(alone):
            d[:, alone] = samples.distances([handles[i] for i in alone])
            gap = self._gaps(d, handles)
        return d, gap

    def _gaps(self, d, handles):
        """Distances between the handles, from their columns `d` (touching ones: inf)."""
        starts = np.cumsum([0] + [len(h) for h in handles[:-1]])
        gap = np.minimum.reduceat(d[np.concatenate(handles)], starts, axis=0)  # [j, i]: handle i to handle j
        gap = np.minimum(gap, gap.T)
        gap[gap <= TOUCH * self.samples.spacing] = np.inf  # touching real handles do not count (`_add`)
        np.fill_diagonal(gap, np.inf)
        return gap

    def add(self, handle, offsets=None):
        """A new real handle (sample indices, and the straight steps from them); returns its column."""
        self._add(handle, offsets, real=True)
        nearest = self._nearest_real()
        self._drop([i for i in range(len(self.handles) - 1)
                    if self.alive[i] and not self.real[i] and self._reach[i] >= GAMMA * nearest[i]])
        self._refine()
        self._update_weights()
        return sum(self.real) - 1

    def weights(self):
        virtual = [int(self.handles[i][0]) for i in self._order()[sum(self.real):]]
        return Weights(self.values, self.vertex_values.copy(), virtual, self._radius[self._order()])

    def _order(self):
        """Live handle indices, real ones first: the order of the harmonic blend and of `weights()`."""
        real, alive = np.array(self.real, bool), np.array(self.alive, bool)
        return np.concatenate([np.flatnonzero(real), np.flatnonzero(~real & alive)])

    def _add(self, handle, offsets, real, col=None):
        """`col`: the handle's distances, when they were measured already (`_column`)."""
        idx = np.atleast_1d(np.asarray(handle, np.int64))
        off = np.zeros(len(idx)) if offsets is None else np.asarray(offsets, float)
        k = len(self.handles)
        self._grow(k + 1)
        if col is None:
            col = self._column(idx, off)
        region = np.flatnonzero(np.isfinite(col))
        joins = region[col[region] <= _tie(self.nearest[region])]  # the samples the new cell takes or shares
        was = np.isfinite(self.nearest[joins])[:, None] & (self._d[joins, :k] <= _tie(self.nearest[joins])[:, None])
        shrunk = np.flatnonzero(was.any(axis=0))
        far = self._far[shrunk]
        shrunk = shrunk[col[far] <= _tie(self.nearest[far])]  # a cell that kept its farthest sample keeps r_v
        self.nearest[joins] = np.minimum(self.nearest[joins], col[joins])
        self._d[:, k] = col
        member = self._d[joins, :k + 1] <= _tie(self.nearest[joins])[:, None]
        before = self.owner[joins]
        self.owner[joins] = member.argmax(axis=1)
        self.tied[joins] = member.sum(axis=1) > 1
        self._note_owners(joins, before)
        if k:
            ends = np.cumsum([len(h) for h in self.handles])
            every, every_off = np.concatenate(self.handles), np.concatenate(self.offsets)
            to_them = np.minimum.reduceat(col[every] + every_off, np.r_[0, ends[:-1]])
            to_it = (self._d[idx, :k] + off[:, None]).min(axis=0)
            gap = np.minimum(to_them, to_it)
            # Touching real handles (a joint, bones drawn across each other) do not count: their supports may
            # cover each other, rather than calling for virtual handles without end. A virtual handle is never
            # touching: one that a new bone's samples reach at 0 is crowded (r_h 0) and dropped. Taken as touching
            # (gap inf), it stayed, cut off from the new bone, and could be left with no link to any real handle
            # (the harmonic blend's matrix singular: an uncaught LinAlgError when a bone was added).
            touching = np.array(self.real) & real
            gap[(touching & (gap <= TOUCH * self.samples.spacing)) | ~np.array(self.alive)] = np.inf
            self._between[k, :k] = self._between[:k, k] = gap
        self.handles.append(idx)
        self.offsets.append(off)
        self.real.append(real)
        self.alive.append(True)
        self.region.append(region)
        for i in [k, *shrunk.tolist()]:
            self._measure_reach(i)

    def _column(self, idx, off):
        """A new handle's distances (samples `idx`, steps `off` from them), by a Dijkstra cut short just past an
        upper bound of its r_h (as far as its support can reach), and further while its cell reaches the cut."""
        link = 1.01 * LINK_RADIUS * self.samples.spacing
        limit = self._reach_needed(idx, off) + link
        col = self.samples.distance(idx, off, limit)
        while np.isfinite(limit) and _cell_reach(col, self.nearest) >= limit - link:
            # Its cell reaches the limit and may go on past it; the refinement reads the cell's true reach to
            # place virtual handles (cut short, it would depend on which handles went in first, and mirrored
            # handles would get different virtual handles): measure it further, until the cell ends inside.
            # Doubled, not cut at the farthest any sample is from its nearest handle (which bounds the cell): the
            # distances to other handles read from the column (the harmonic blend's links) would then depend on a
            # far part of the mesh (a small bar's weights moved 0.08 beside an island with a wide cell).
            limit *= 2.0
            col = self.samples.distance(idx, off, limit)
        return col

    def _drop(self, ids):
        """Removes virtual handles: their samples go to the nearest live handles, whose cells grow."""
        if not ids:
            return
        rows = np.unique(np.concatenate([self._cell(i) for i in ids]))
        for i in ids:
            reached = self.region[i][self._d[self.region[i], i] < self._radius[i]]
            self._stale[reached] = True
            self._vertex_basis[:, i] = 0.0
            self._d[:, i] = np.inf
            self._between[i, :] = self._between[:, i] = np.inf
            self._reach[i], self.region[i], self.alive[i] = 0.0, np.empty(0, np.int64), False
        live = np.flatnonzero(self.alive)
        d = self._d[np.ix_(rows, live)]
        self.nearest[rows] = d.min(axis=1)
        member = np.isfinite(self.nearest[rows])[:, None] & (d <= _tie(self.nearest[rows])[:, None])
        before = self.owner[rows]
        self.owner[rows] = np.where(member.any(axis=1), live[member.argmax(axis=1)], -1)
        self.tied[rows] = member.sum(axis=1) > 1
        self._note_owners(rows, before)
        for i in live[member.any(axis=0)]:
            self._measure_reach(i)

    def _measure_reach(self, i):
        """r_v of handle i from its cell, and the sample that sets it."""
        cell = self._cell(i)
        far = cell[np.argmax(self.nearest[cell])] if len(cell) else self.handles[i][0]
        self._reach[i], self._far[i] = (self.nearest[far] if len(cell) else 0.0), far

    def _reach_needed(self, idx, off):
        """An upper bound of r_h (the distance to the nearest real handle) for a new handle: how far its
        distances must be exact, for its support and its cell. A real handle whose distances reach it gives
        one; so does the handle whose cell it lies in, plus that handle's own r_h. (inf: a full Dijkstra.)"""
        real = np.flatnonzero(self.real)
        bound = float((self._d[np.ix_(idx, real)] + off[:, None]).min(initial=np.inf))
        if bound <= TOUCH * self.samples.spacing:  # it touches a real handle, which r_h leaves out
            return np.inf
        owner = self.owner[idx]
        held = owner >= 0
        if held.any():
            via = self.nearest[idx[held]] + off[held] + self._nearest_real()[owner[held]]
            bound = min(bound, float(via.min()))
        return bound

    def _grow(self, size):
        cap = self._d.shape[1]
        if size <= cap:
            return
        more = max(cap, 32, size - cap)
        d = np.full((len(self.nearest), cap + more), np.inf, order="F")
        d[:, :cap] = self._d
        self._d = d
        self._between = _grown(self._between, more, np.inf)
        self._reach, self._far = _grown(self._reach, more), _grown(self._far, more)
        self._links = _grown(self._links, more)

    def _note_owners(self, rows, before):
        """Remembers the owners `rows` had when the links were last counted (once per update: a sample that
        changes hands several times while a bone goes in is counted once)."""
        first = self._owned_before[rows] == -2
        self._owned_before[rows[first]] = before[first]

    def _relink(self):
        """Brings the count of links between cells up to date with the owners that changed since."""
        rows = np.flatnonzero(self._owned_before != -2)
        before = self._owned_before[rows]
        self._owned_before[rows] = -2
        moved = before != self.owner[rows]
        rows, before = rows[moved], before[moved]
        if len(rows) == 0:
            return
        cap = len(self._links)
        if 2 * len(rows) > len(self.nearest):  # most samples (a bind): counted afresh, quicker than the changes
            graph = self.samples.graph
            a, b = self.owner[graph.indices], np.repeat(self.owner, np.diff(graph.indptr))
            ok = (a != b) & (a >= 0) & (b >= 0)
            self._links = np.bincount(a[ok] * cap + b[ok], minlength=cap * cap).reshape(cap, cap)
            return
        src, dst, _ = _links_from(self.samples.graph, rows)
        where = np.full(len(self.nearest), -1, np.int32)
        where[rows] = np.arange(len(rows))
        at = where[dst]
        now_s, now_t = self.owner[rows][src], self.owner[dst]
        was_s, was_t = before[src], np.where(at >= 0, before[at], now_t)
        between = (was_s != was_t) | (now_s != now_t)  # links inside one cell, before and after, do not count
        now_s, now_t, was_s, was_t, at = now_s[between], now_t[between], was_s[between], was_t[between], at[between]
        out = at < 0  # a link to a sample that kept its owner is also stored the other way round
        a = np.concatenate([was_s, was_t[out], now_s, now_t[out]])
        b = np.concatenate([was_t, was_s[out], now_t, now_s[out]])
        sign = np.repeat([-1.0, -1.0, 1.0, 1.0], [len(was_s), out.sum(), len(now_s), out.sum()])
        ok = (a >= 0) & (b >= 0) & (a != b)
        self._links += np.rint(np.bincount(a[ok] * cap + b[ok], sign[ok], cap * cap)).astype(np.int64).reshape(cap, cap)

    def _cell(self, i):
        """The samples in handle i's Voronoi cell (ties in both cells)."""
        rows = self.region[i]
        return rows[self._d[rows, i] <= _tie(self.nearest[rows])]

    def _nearest_real(self):
        """r_h: each handle's distance to the nearest real handle other than itself. Only real handles
        count: a support may cover a virtual handle (its transform is a blend anyway), so a virtual handle
        never crowds its neighbours into more virtual handles."""
        count = len(self.handles)
        return self._between[:count, :count][:, np.array(self.real, bool)].min(axis=1, initial=np.inf)

    def _refine(self):
        """Virtual handles at the farthest samples of the most crowded cells until no cell reaches past
        the nearest other real handle."""
        points = self.samples.points
        start = len(self.handles)
        while True:
            count = len(self.handles)
            reach, nearest = self._reach[:count].copy(), self._nearest_real()
            crowded = np.flatnonzero(reach >= GAMMA * nearest)
            if len(crowded) == 0:
                return
            if count - start >= MAX_VIRTUAL:
                raise VideError(f"The handles are too close together for compact C² weights ({MAX_VIRTUAL} "
                                "virtual handles did not separate them): move them apart, raise Joint Pull-In, "
                                "or use the Gaussian.")
            ratio = reach / nearest
            ties = crowded[ratio[crowded] >= ratio[crowded].max() * (1 - TIE)]
            new = []
            for cell in ties:  # tied cells are refined together, so symmetric input stays symmetric
                own = self._cell(cell)
                d = self._d[own, cell]
                new += _spread_picks(points, own, d, 0.5 * reach[cell])
            # Each one's distances measured from the state before the round: one after another, a later one's cut
            # would depend on the earlier ones (a mirror pair of them got a distance on one side only).
            new = list(dict.fromkeys(new))
            columns = [self._column(np.array([q]), np.zeros(1)) for q in new]
            for q, col in zip(new, columns):
                self._add([q], None, real=False, col=col)

    def _update_weights(self):
        """Radii, the harmonic blend and the vertices' weights, recomputed only at the vertices that look at the samples
        where a handle whose radius or blend changed reaches."""
        count, order = len(self.handles), self._order()
        reach, nearest = self._reach[:count], self._nearest_real()
        radius = reach + self.spread * (nearest - reach)
        radius = np.where(np.isfinite(radius), radius, np.maximum(reach * 1.5, 1e-12))  # a lone handle
        real_ids = np.flatnonzero(self.real)
        real = len(real_ids)
        virtual = order[real:]
        blend = np.zeros((count, real))  # each handle onto the real ones: itself if real, α if virtual
        blend[real_ids, np.arange(real)] = 1.0
        gap = self._between[:count, :count]
        coupling = np.where(self._dual(count) & np.isfinite(gap), 1.0 / np.maximum(gap, self.samples.spacing), 0.0)
        blend[virtual] = _harmonic_blend(coupling[np.ix_(order, order)], real)
        old = len(self._radius)
        before = np.zeros((count, real))
        before[:old, :self._blend.shape[1]] = self._blend
        reblended = np.abs(blend - before).max(axis=1, initial=0.0) > 1e-12
        # A handle's basis f(d / r_d) changes only if its radius did; the weights change wherever such a basis
        # reaches (it is normalized with its neighbours), wherever a virtual handle whose blend changed
        # reaches, and wherever a dropped one did.
        # As wide as the handles at a bind, not as `_d` (which keeps room for more): the vertex arrays are large.
        self._vertex_basis, self._vertex_values = _widen(self._vertex_basis, count), _widen(self._vertex_values, real)
        rows, self._stale = self._stale, np.zeros(len(self.nearest), bool)
        resized = np.array([i >= old or radius[i] != self._radius[i] for i in order], bool)
        # The samples each handle due reaches, old support or new, for all handles at once.
        due = order[resized | reblended[order]]
        sizes = [len(self.region[i]) for i in due]
        at, col = np.concatenate([np.zeros(0, np.int64), *(self.region[i] for i in due)]), np.repeat(due, sizes)
        was = np.zeros(count)
        was[:old] = self._radius
        d = np.take(self._d.ravel(order="F"), at + col * len(self._d))  # by flat index: quicker than [at, col]
        keep = d < np.maximum(radius, was)[col]
        rows[at[keep]] = True
        grown = np.zeros(count, bool)
        grown[order[resized]] = True
        keep &= grown[col]
        at, col = at[keep], col[keep]
        # The vertices looking at the samples that a resized handle reached: at any other, its basis was and stays 0.
        counts = np.bincount(col, minlength=count)[order[resized]]  # `col` runs through them in that order
        ids, verts = self.samples.vertices_near(at, np.concatenate([[0], np.cumsum(counts)]))
        ids = order[resized][ids]
        self.samples.stages.lap("handles")
        if len(verts):  # all handles at once: the steps they need traced in one go
            at = self.samples.at_vertices(self._d, verts, ids, reach=radius[ids])
            flat = verts.astype(np.int64) * self._vertex_basis.shape[1] + ids  # (vertices, width) by flat index
            np.put(self._vertex_basis, flat, bezier_falloff(at / radius[ids]))
        rows = np.flatnonzero(rows)
        # Every vertex looks at some sample: with all samples to redo (a bind), all vertices are.
        verts = np.arange(len(self._vertex_values)) if len(rows) == len(self.nearest) else \
            self.samples.vertices_near(rows)[1]
        if len(verts) == len(self._vertex_values):  # all of them (a bind): no copy in and out, 35 MB each on the comb
            self._vertex_values = _blended(self._vertex_basis, real_ids, virtual, blend[virtual])
        else:
            self._vertex_values[verts, :real] = _blended(self._vertex_basis[verts], real_ids, virtual, blend[virtual])
        self._radius, self._blend = radius, blend
        self.samples.stages.lap("vertices")

    @property
    def values(self):
        """The weights (samples, real handles), made anew from the kept distances."""
        order, real = self._order(), sum(self.real)
        basis = np.zeros((len(self.nearest), len(self.handles)))
        for i in order:
            reached = self.region[i][self._d[self.region[i], i] < self._radius[i]]
            basis[reached, i] = bezier_falloff(self._d[reached, i] / self._radius[i])
        return _blended(basis, np.flatnonzero(self.real), order[real:], self._blend[order[real:]])

    @property
    def vertex_values(self):
        """The weights (mesh vertices, real handles)."""
        return self._vertex_values[:, :sum(self.real)]

    def _dual(self, count):
        """The Voronoi dual graph: two cells are neighbours when a graph link joins them or a sample lies in
        both. Links are counted by owner as cells change; the few samples in several cells are added here."""
        self._relink()
        links = self._links[:count, :count]
        dual = (links > 0) | (links.T > 0)
        tied = np.flatnonzero(self.tied)
        if len(tied):
            src, dst, _ = _links_from(self.samples.graph, tied)
            ends = np.unique(np.concatenate([tied, dst]))
            member = (self._d[ends, :count] <= _tie(self.nearest[ends])[:, None]).astype(float)
            at_tied = member[np.searchsorted(ends, tied)]
            dual |= (at_tied.T @ at_tied) > 0
            dual |= (at_tied[src].T @ member[np.searchsorted(ends, dst)]) > 0
            dual |= dual.T
        np.fill_diagonal(dual, False)
        return dual


def _spread_picks(points, cell, d, apart):
    """Where virtual handles go in a crowded cell (its samples `cell`, at distances `d` from its handle), from its
    equally far samples: mirror images far apart all go in; neighbours on the lattice would crowd each other, so
    only one of a close group does. When they are all one close group (the two mirror images of a cell that a mirror
    axis cuts in half), the sample nearest their middle does, of those nearly as far (the far ones' distance less
    `apart`): for a mirror pair it lies on the axis, where the first of the pair would break the symmetry (a
    15-finger hand's weights were 0.32 off their mirror image). When two are equally near it (the middle in a gap
    between mirror images), the rule above decides."""
    far = cell[d >= d.max() * (1 - TIE)]
    gaps = np.hypot(*(points[far][:, None] - points[far][None]).transpose(2, 0, 1))
    if len(far) > 1 and gaps.max() <= apart:
        near_end = cell[d >= d.max() - apart]
        to_middle = np.hypot(*(points[near_end] - points[far].mean(axis=0)).T)
        first, second = np.partition(to_middle, 1)[:2]
        if second - first > 1e-6 * apart:
            return [near_end[np.argmin(to_middle)]]
    picked = []
    for i in range(len(far)):
        if all(gaps[i, j] > apart for j in picked):
            picked.append(i)
    return [far[i] for i in picked]


def _links_from(graph, rows):
    """The graph links leaving `rows`, as (position in `rows`, other end, entry in the matrix's arrays):
    cheaper than slicing the matrix."""
    starts = graph.indptr[rows]
    counts = graph.indptr[rows + 1] - starts
    src = np.repeat(np.arange(len(rows)), counts)
    entry = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(len(src))
    return src, graph.indices[entry], entry


def _cell_reach(col, nearest):
    """How far a new handle's cell reaches, from its distances `col` (inf beyond its Dijkstra's cut-off)."""
    return col[np.isfinite(col) & (col <= _tie(nearest))].max(initial=0.0)


def _tie(d):
    """A sample whose distance to a handle is at most this is in its cell: equal, to within rounding."""
    return d * (1 + 1e-9) + 1e-12


def _grown(a, more, fill=0):
    """`a` (a vector, or a square matrix) with `more` entries (rows and columns) of `fill` after its own: np.pad is a
    few times slower on these small arrays (sample character bind: 0.08 -> 0.03 ms)."""
    out = np.full(tuple(size + more for size in a.shape), fill, a.dtype)
    out[tuple(slice(size) for size in a.shape)] = a
    return out


def _widen(a, columns):
    """`a` with zero columns added up to `columns`, or to twice its width if more: bones inserted one at a time
    do not copy it each time, and a bind makes it no wider than its handles."""
    if a.shape[1] >= columns:
        return a
    wide = np.zeros((a.shape[0], max(columns, 2 * a.shape[1])), a.dtype)  # not np.pad: it writes every zero
    wide[:, :a.shape[1]] = a
    return wide


def _blended(basis, real, virtual, blend):
    """Bases (points, handles) normalized to sum to 1 and blended onto the real handles: each real handle's own,
    plus the virtual handles' by their `blend` (virtual, real). (Not one product with a blend that is the identity
    on the real handles: on the 63k hand 68 columns against 8.)"""
    # Each row's sum as a matrix-vector product: a reduction along rows of a few handles is several times slower
    # (sample character, 2,673 x 10: 0.07 -> 0.02 ms; the sums alike to a few units in the last place).
    total = (basis @ np.ones(basis.shape[1]))[:, None]
    np.place(total, total == 0, 1.0)  # points no handle reaches (another island) stay 0
    first = np.array_equal(real, np.arange(len(real)))  # as after a bind: a view, not a copy
    own = basis[:, :len(real)] if first else basis[:, real]
    if len(virtual) == 0:
        return own / total
    # In place: a new array of this size is slow to fill the first time (35 MB on the 63k hand: about 0.1 s).
    out = basis[:, virtual] @ blend
    out += own
    out /= total
    return out


def _normalized(basis):
    total = basis.sum(axis=1, keepdims=True)
    return basis / np.where(total > 0, total, 1.0)  # points no handle reaches (another island) stay 0


class _SourceGraph:
    """The sample graph with one more node, linked to a handle's samples by straight steps: a Dijkstra from
    it gives the distances from a handle that starts a step away from its samples. The arrays are made once,
    with room for the extra links, so each use only writes those."""

    def __init__(self, graph, room):
        n, self.used, self.room = graph.shape[0], graph.nnz, room
        self.data = np.concatenate([graph.data, np.zeros(room)])
        self.indices = np.concatenate([graph.indices, np.zeros(room, graph.indices.dtype)])
        self.matrix = csr_matrix((graph.data, graph.indices, np.append(graph.indptr, graph.nnz)), shape=(n + 1, n + 1))

    def linked(self, sources, steps):
        end = self.used + len(sources)
        self.data[self.used:end] = np.maximum(steps, 1e-300)  # an explicit zero would be no link
        self.indices[self.used:end] = sources
        self.matrix.data, self.matrix.indices = self.data[:end], self.indices[:end]
        self.matrix.indptr[-1] = end
        return self.matrix


def _cells(d, handles, touch=0.0):
    """Voronoi cells of the handles (a sample equally near two handles, to within rounding, is in both),
    each cell's reach r_v and each handle's nearest other handle r_h (handles that touch do not count).
    `d` holds the distances (samples, handles). (The Gaussian fallback's widths come from these.)"""
    nearest_d = d.min(axis=1)
    cells = np.isfinite(nearest_d)[:, None] & (d <= _tie(nearest_d)[:, None])
    q, i = np.nonzero(cells)
    reach = np.zeros(d.shape[1])
    np.maximum.at(reach, i, nearest_d[q])
    between = np.stack([d[h].min(axis=0) for h in handles])  # between[j, i]: from handle i to handle j
    np.fill_diagonal(between, np.inf)
    between[between <= touch] = np.inf
    return cells, reach, between.min(axis=0)


def _harmonic_blend(coupling, real):
    """α (virtual, real): each virtual handle's transform as a blend of the real ones, from harmonic fields
    on the Voronoi dual graph (`coupling`: its links, weighted by 1 / the distance between the two handles;
    handles in order real then virtual; real handles fixed), solved directly; each row less a fifth of its
    largest, then renormalized.

    On a plain graph Laplacian a virtual handle in one foot took a few hundredths from the other leg's thigh
    (round through the crotch, a few cells away): weighting by distance and taking the small share off keeps
    a virtual handle's transform to the bones near it, continuously."""
    total = len(coupling)
    if total == real:
        return np.zeros((0, real))
    lap = np.diag(coupling.sum(axis=1)) - coupling
    alpha = np.linalg.solve(lap[real:, real:], -lap[real:, :real])
    alpha = np.maximum(alpha - 0.2 * alpha.max(axis=1, keepdims=True), 0.0)
    sums = alpha.sum(axis=1, keepdims=True)
    return np.where(sums > 0, alpha / np.where(sums > 0, sums, 1.0), 1.0 / real)
