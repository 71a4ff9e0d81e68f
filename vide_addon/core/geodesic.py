"""Distances from bones measured inside a flat triangle mesh: paths may not leave it, so the distance from
one leg to the other runs up through the hip, never across the gap between them.

Shortest paths inside a polygon are straight lines that bend only at its reflex corners. So the domain is
a graph over nodes with straight links that stay inside the mesh, in many directions, so that graph
distances stay within a few percent of the true geodesic (about 1% on average). The links join nodes that
see each other across up to a few triangles (WINDOW_DEPTH), found without any visibility test: wedges of directions
carried from triangle to triangle. With few vertices, or few vertices times bones, every vertex is a node
and the triangles are the mesh's. Otherwise the nodes are thinned to at most `MAX_NODES` (the reflex
corners, the boundary and the interior about a spacing apart), so the time per bone does not grow with the
mesh, and the triangles are their Delaunay triangles that lie inside the mesh. Whether a segment lies inside
is known exactly: it is if disks of clearance cover it, not if a cell known to lie outside the mesh holds a point
of it, with thinned nodes if it touches no outline edge, and otherwise if walking the triangles it crosses never
meets the outline.
Each bone is a source linked straight to the nodes near it that see it; scipy's Dijkstra spreads its
distance over the nodes. The other vertices interpolate it inside a triangle of nodes, or step straight
from a node they see, and those near a bone take their distance straight from it where interpolation would
blur the kink.
"""

import time
from dataclasses import dataclass

import numpy as np
from scipy import ndimage
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import connected_components, dijkstra
from scipy.spatial import Delaunay, cKDTree

from .contour import points_in_edges
from .errors import VideError

MAX_NODES = 6000  # graph size: bounds the time per bone whatever the mesh density
ALL_NODES_WORK = 400_000  # vertices times bones up to which every vertex is a node,
ALL_NODES_MAX = 40_000  # when there are at most this many (the links of many more take longer than thinning)
# Triangles a link may cross: of the coarse mesh of thinned nodes, or of the mesh when every vertex is a node. On the
# test shapes (tests/core/test_geodesic_and_weights.py) 3 gives distances 0.6% longer than exact geodesics on average
# and 2 gives 1.0%, with 2/3 of the links; with every vertex a node, 2 binds the 17k-vertex hand of bench/weights.py
# in 28% less time than 3 and the sample character in 17% less, with the same deformation (bench/deform_quality.py).
WINDOW_DEPTH, ALL_NODES_DEPTH = 3, 2
CELLS_PER_VERTEX = 4  # clearance grid
VERTEX_LINKS = 8  # nodes each vertex looks at
BONE_REACH = 6.0  # in node spacings: nodes this close to a bone take their distance straight from it
VERTEX_REACH = 3.0  # in node spacings: and so do vertices this close
OUTSIDE_REGIONS = 256  # regions of the clearance grid tested for lying outside the mesh
LOCATE_CHUNK = 512  # triangles `locate` tests at a time
COVERS_CHUNK = 8192  # segments `Clearance.covers` tests at a time
SMALL_SORT = 32768  # triangle sides up to which `_sides` sorts by radix


class Stages(dict):
    """Seconds spent in each stage, added up by name: what the benchmark prints, so the slowest shows."""

    def __init__(self):
        super().__init__()
        self.last = time.perf_counter()

    def lap(self, name):
        """Charges the time since the last lap to `name`."""
        now = time.perf_counter()
        self[name] = self.get(name, 0.0) + now - self.last
        self.last = now


@dataclass
class Domain:
    """A flat mesh (vertices in 2D, triangles) as a graph whose links never leave it."""

    points: np.ndarray  # (n, 2) mesh vertices
    edges: np.ndarray  # (e, 2) mesh edges
    boundary: np.ndarray  # (b, 2) boundary edges, directed with the mesh on their left
    clear: "Clearance"
    clearance: np.ndarray  # (n,) a lower bound of each vertex's distance to the boundary
    on_boundary: np.ndarray = None  # (n,) bool
    to_next: np.ndarray = None  # (n, 2) along the outgoing boundary edge
    following: np.ndarray = None  # (n,) the vertex at the end of the outgoing boundary edge (-1: none)
    opening: np.ndarray = None  # (n,) angle of the mesh between them (NaN: not a simple boundary point)
    nodes: np.ndarray = None  # vertex indices of the graph's nodes
    spacing: float = 1.0  # typical distance between neighbouring nodes
    tolerance: float = 0.0  # lengths below this are rounding (float32 vertices)
    graph: csr_matrix = None  # (nodes, nodes) link lengths
    stages: Stages = None
    tris: np.ndarray = None  # (t, 3) counter-clockwise; side k runs from corner k to corner k + 1
    star: csr_matrix = None  # (n, 3t): the corners (3 * triangle + corner) at each vertex (on the first walk)
    star_count: np.ndarray = None  # (n,) corners at each vertex
    coarse: tuple = None  # the Delaunay triangulation of thinned nodes, and which of its triangles are inside
    # (n, nodes) with thinned nodes: each vertex as a blend of nodes (rows sum to 1; empty: it sees no node)
    interpolation: csr_matrix = None
    wedges: tuple = None  # per corner, for leaving a vertex in a direction (`_wedges`; made as walks need them)
    steps: tuple = None  # per side 3 t + k, the next side of its triangle and the side across it (`_sides`, `_steps`)
    crossings: tuple = None  # per side, the vertex across it and the next sides (`_crossings`; on the first walk)
    outside: np.ndarray = None  # clearance grid cells wholly outside the mesh (`_outside_cells`; on the first test)
    outline: object = None  # with thinned nodes, the outline's edges in a grid (meshfree.Outline), for `visible`
    one_piece: bool = None  # whether the outline bounds the mesh (`_one_piece`; on the first test that needs it)
    folded: bool = None  # whether triangles fold over or more than two share an edge (`_folded`; on first use)
    columns: np.ndarray = None  # (2, n) the points' coordinates as columns, for walks (on the first walk)

    @classmethod
    def from_mesh(cls, points, tris, max_nodes=MAX_NODES, links=True, bones=None):
        """The mesh's outline, clearance and corners; with `links`, also the graph: every vertex a node when
        there are at most `max_nodes`, or when the distances from `bones` bones over all of them take little
        work (ALL_NODES_WORK vertices times bones, ALL_NODES_MAX vertices), else thinned nodes."""
        stages = Stages()
        points = np.asarray(points, float)
        tris = np.asarray(tris, np.int64).reshape(-1, 3)
        (x, y), (i, j, k) = points.T, tris.T  # on columns: row operations on (n, 2) arrays are slow
        area = (x[j] - x[i]) * (y[k] - y[i]) - (y[j] - y[i]) * (x[k] - x[i])
        flip = area < 0
        tris = np.column_stack([i, np.where(flip, k, j), np.where(flip, j, k)])  # all counter-clockwise
        edges, boundary, steps = _sides(tris, len(points), links)
        if len(boundary) == 0:
            raise VideError("it has no outline (every edge joins two faces): VIDE weights flat cutout meshes.")
        clear = Clearance(points, points[boundary[:, 0]], points[boundary[:, 1]])
        domain = cls(points, edges, boundary, clear, clear.at(points), stages=stages, tris=tris,
                     steps=steps)
        domain.tolerance = 1e-6 * float(max(np.ptp(x), np.ptp(y)))
        domain._corners()
        domain.star_count = np.bincount(tris.ravel(), minlength=len(points))
        if links:
            used = int(np.count_nonzero(domain.star_count))
            cheap = bones is not None and used * bones <= ALL_NODES_WORK and used <= ALL_NODES_MAX
            budget = max(max_nodes, used if cheap else 0)
            domain.nodes, domain.spacing = _thin(domain, 0.5 * float(np.abs(area).sum()), budget)
            domain.graph = domain._links()
        stages.lap("graph")
        return domain

    def _steps(self):
        """`steps`, made on first use without links (Meshfree never walks: 0.15 ms of the sample character's bind)."""
        if self.steps is None:
            self.steps = _sides(self.tris, len(self.points))[2]
        return self.steps

    def _corners(self):
        """At each boundary vertex, the direction along its outgoing boundary edge and the angle the mesh
        opens from there (counter-clockwise) to its incoming edge; NaN where the boundary is not a simple
        loop through the vertex."""
        n = len(self.points)
        out_count = np.bincount(self.boundary[:, 0], minlength=n)
        nxt = np.full(n, -1)
        prv = np.full(n, -1)
        nxt[self.boundary[:, 0]] = self.boundary[:, 1]
        prv[self.boundary[:, 1]] = self.boundary[:, 0]
        self.on_boundary = out_count > 0
        simple = out_count == 1
        self.following = np.where(simple, nxt, -1)
        self.to_next = self.points[nxt] - self.points
        self.opening = np.full(n, np.nan)
        at = np.flatnonzero(simple)
        (x, y), after, before = self.points.T, nxt[at], prv[at]
        self.opening[at] = _ccw_angle(x[after] - x[at], y[after] - y[at], x[before] - x[at], y[before] - y[at])

    def _links(self):
        """Symmetric graph of straight, inside links between the nodes: the edges, and links across up to
        ALL_NODES_DEPTH triangles of the mesh when every vertex is a node, else WINDOW_DEPTH of the coarse mesh
        of nodes."""
        m = len(self.nodes)
        node_of = np.full(len(self.points), -1)
        node_of[self.nodes] = np.arange(m)
        if m == np.count_nonzero(self.star_count):
            self.stages.lap("graph")
            wedges = node_of[_wedge_links(self.points, self.tris, self.steps, ALL_NODES_DEPTH, self.tolerance)]
            pairs = np.vstack([node_of[self.edges], wedges])
        else:
            from .meshfree import Outline  # here: meshfree imports this module

            self.outline = Outline(self, self.spacing)
            sides, tris = self._coarse_mesh()
            wedges = _wedge_links(self.points[self.nodes], tris, _sides(tris, m)[2], WINDOW_DEPTH, self.tolerance)
            pairs = np.vstack([sides, wedges])
        self.stages.lap("visibility")
        i, j = np.divmod(np.unique(np.minimum(pairs[:, 0], pairs[:, 1]) * m + np.maximum(pairs[:, 0], pairs[:, 1])), m)
        x, y = self.points[self.nodes].T
        length = np.hypot(x[j] - x[i], y[j] - y[i])
        # Each row's links to smaller nodes, then to larger ones, each in order (the pairs are sorted): the
        # matrix comes out canonical, with nothing to sort.
        rows, cols = np.concatenate([j, i]), np.concatenate([i, j])
        return coo_matrix((np.concatenate([length, length]), (rows, cols)), shape=(m, m)).tocsr()

    def _coarse_mesh(self):
        """The Delaunay triangles of the nodes that lie inside the mesh (counter-clockwise): their sides are
        inside and no outline vertex lies inside them. Returns the sides found inside (pairs of node numbers)
        and those triangles, and keeps the triangulation and which of its triangles are inside."""
        pts = self.points[self.nodes]
        m = len(pts)
        tri = Delaunay(pts)
        s = tri.simplices
        key = np.sort(np.stack([s[:, [0, 1]], s[:, [1, 2]], s[:, [2, 0]]], axis=1), axis=2) @ [m, 1]  # (t, 3)
        sides = np.unique(key)
        self.stages.lap("graph")
        seen = self.visible(self.nodes[sides // m], self.nodes[sides % m])
        ok = seen[np.searchsorted(sides, key)].all(axis=1)
        is_node = np.zeros(len(self.points), bool)
        is_node[self.nodes] = True
        outline = self.points[self.on_boundary & ~is_node]
        candidates = np.flatnonzero(ok)  # only these can be ruled out
        holder, _bary = locate(pts, s[candidates], outline)
        outline, holder = outline[holder >= 0], candidates[holder[holder >= 0]]
        corner = pts[s[holder]]  # (k, 3, 2)
        # Further than the rounding tolerance inside all three sides (one within it counts as on the side,
        # as it does for the walk).
        strictly = np.ones(len(holder), bool)
        for i in range(3):
            a, b = corner[:, i], corner[:, (i + 1) % 3]
            strictly &= np.abs(_cross(b - a, outline - a)) > self.tolerance * np.hypot(*(b - a).T)
        ok[holder[strictly]] = False
        self.coarse = (tri, ok)
        tris = s[ok]
        a, b, c = (pts[tris[:, i]] for i in range(3))
        tris = np.where((np.cross(b - a, c - a) < 0)[:, None], tris[:, [0, 2, 1]], tris)
        return np.stack([sides[seen] // m, sides[seen] % m], axis=1), tris

    def visible(self, i, j=None, q=None):
        """Whether the segment from vertex i to vertex j (or to the point q) stays inside the mesh."""
        p = self.points[i]
        if q is None:
            q, cq = self.points[j], self.clearance[j]
        else:
            j, cq = np.full(len(i), -1), self.clear.at(q)
        # The disks of clearance around both ends hold no boundary; if they cover the segment, it is inside.
        ok = np.hypot(*(q - p).T) <= self.clearance[i] + cq
        rest = np.flatnonzero(~ok)
        if len(rest):
            if self.outside is None:
                self.outside = self._outside_cells()
            ok[rest], out = self.clear.covers(p[rest], q[rest], self.outside)
            rest = rest[~ok[rest] & ~out]
        if len(rest) and self.outline is not None:
            # Leaving p inwards and touching no outline edge, the segment is inside: a test of the few edges near it,
            # where a thinned graph's segments cross many small triangles (the comb of bench/weights.py: 71k walks in
            # 230 ms; these tests took 82 ms and left 20k). Only segments that touch the outline are walked, and
            # those that end at an outline vertex (they touch its edges there) without this test.
            test = rest[(j[rest] < 0) | ~self.on_boundary[np.maximum(j[rest], 0)]]
            ok[test] = self.outline.straight(p[test], q[test], i[test], self.clearance[i[test]], cq[test])
            # Of those that touch it, the ones that cross an outline edge cleanly leave the mesh, where the walk would
            # stop: not walked (the 63k hand of bench/weights.py: 7.9k bone links walked in 25 ms, most across gaps).
            touch = test[~ok[test]]
            if self.one_piece is None:
                self.one_piece = self._one_piece()
            crossing = np.zeros(len(i), bool)
            if self.one_piece:
                crossing[touch[self._crosses_outline(p[touch], q[touch], i[touch])]] = True
            rest = rest[~ok[rest] & ~crossing[rest]]
        if len(rest):
            along = self._along_outline(i[rest], j[rest])
            ok[rest[along]] = True
            rest = rest[~along]
        if len(rest):
            # Within the disk at q the segment is inside: only the part from p to the disk is walked.
            d = p[rest] - q[rest]
            length = np.hypot(*d.T)
            short = 0.999 * np.minimum(cq[rest], length)
            cut = short > self.tolerance
            end = q[rest] + d * (short / np.maximum(length, 1e-300))[:, None]
            ok[rest] = self.walk(i[rest], end, np.where(cut, -1, j[rest]))
        return ok

    def _along_outline(self, i, j, max_steps=32):
        """Whether the outline runs from vertex i to vertex j (or back) within the rounding tolerance of the segment
        between them, so that the segment is inside (as the walk finds, passing through every vertex on the way): on a
        straight stretch of outline, the segments from its vertices to the graph's nodes on it (the comb of
        bench/weights.py: 13k of the 13.3k walks, 15 ms)."""
        along = np.zeros(len(i), bool)
        for start, end in ((i, j), (j, i)):
            at = np.flatnonzero((start >= 0) & (end >= 0))
            a, b = start[at], end[at]
            (ax, ay), (dx, dy) = self.points[a].T, (self.points[b] - self.points[a]).T
            length = np.hypot(dx, dy)
            v = a
            for _ in range(max_steps):
                v = self.following[v]
                arrived = v == b
                along[at[arrived]] = True
                rx, ry = self.points[v, 0] - ax, self.points[v, 1] - ay
                on = (v >= 0) & (np.abs(dx * ry - dy * rx) <= self.tolerance * length) & (dx * rx + dy * ry > 0) & (
                    dx * rx + dy * ry < length * length) & ~arrived
                if not on.any():
                    break
                at, v, b, ax, ay, dx, dy, length = (c[on] for c in (at, v, b, ax, ay, dx, dy, length))
        return along

    def _one_piece(self):
        """Whether the mesh is one piece, with a simple outline that touches itself nowhere and no folds: its Euler
        characteristic and outline loops say so (vertices - edges + triangles = pieces - holes; loops = pieces +
        holes). Then no point is covered twice, and a segment that crosses an outline edge cleanly leaves the mesh;
        where pieces overlap, or one piece overlaps itself (a strip wound more than once, whose outline crosses
        itself), one inside may cross an outline."""
        b = np.flatnonzero(self.on_boundary)
        following = self.following[b]
        if self._folded() or (following < 0).any() or self._outline_touches_itself():
            return False
        local = np.zeros(len(self.points), np.int64)
        local[b] = np.arange(len(b))
        loops = connected_components(csr_matrix((np.ones(len(b), bool), (np.arange(len(b)), local[following])),
                                                shape=(len(b), len(b))), directed=True, connection="weak")[0]
        return np.count_nonzero(self.star_count) - len(self.edges) + len(self.tris) + loops == 2

    def _outline_touches_itself(self):
        """Whether two outline edges that share no vertex come within the rounding tolerance of each other."""
        a, b, ends = self.outline.a, self.outline.b, self.boundary
        seg, edge = self.outline._near(a, b)
        apart = ((ends[seg, 0] != ends[edge, 0]) & (ends[seg, 0] != ends[edge, 1]) & (ends[seg, 1] != ends[edge, 0])
                 & (ends[seg, 1] != ends[edge, 1]))
        seg, edge = seg[apart], edge[apart]
        return bool(_touch(a[seg], b[seg], a[edge], b[edge], self.tolerance).any())

    def _folded(self):
        """Whether triangles fold over (two on one side of an edge) or more than two share an edge."""
        if self.folded is None:
            twin, flat = self._steps()[1], self.tris.ravel()
            inner = twin >= 0
            self.folded = bool(np.count_nonzero(inner) + len(self.boundary) != len(flat)
                               or np.any(inner & (flat[np.maximum(twin, 0)] == flat)))
        return self.folded

    def _crosses_outline(self, p, q, i):
        """Whether each segment p-q from vertex i crosses an outline edge (not at i) cleanly: the ends of each further
        than a few rounding tolerances from the other's line, on either side of it (a walk along p-q would stop there,
        whatever the rounding)."""
        seg, edge = self.outline._near(p, q, i)
        a, b = self.outline.a[edge], self.outline.b[edge]
        p, q, margin = p[seg], q[seg], 4.0 * self.tolerance

        def apart(o, u, v, w):
            """Whether v and w lie on either side of the line o-u, each further than the margin from it."""
            dx, dy = u[:, 0] - o[:, 0], u[:, 1] - o[:, 1]
            sv = dx * (v[:, 1] - o[:, 1]) - dy * (v[:, 0] - o[:, 0])
            sw = dx * (w[:, 1] - o[:, 1]) - dy * (w[:, 0] - o[:, 0])
            return (sv * sw < 0) & (np.minimum(np.abs(sv), np.abs(sw)) > margin * np.hypot(dx, dy))

        cross = np.zeros(len(i), bool)
        cross[seg[apart(a, b, p, q) & apart(p, q, a, b)]] = True
        return cross

    def _outside_cells(self):
        """The cells of the clearance grid wholly outside the mesh, so that a segment through one is known to leave
        it without a walk (on the comb of bench/weights.py most segments between teeth). Cells whose clearance
        exceeds the rounding tolerance hold no boundary, and the number of triangles over a point changes only
        across the boundary, unless triangles fold over or more than two share an edge (then no cell is taken): so
        each connected region of such cells is covered as often as the winding number of the boundary around
        any one of its points says, and outside where that is 0. Only the largest regions are tested."""
        clear = self.clear
        label, count = ndimage.label(clear.grid > clear.slack + 2.0 * self.tolerance)
        flat_label = label.ravel()
        size = np.bincount(flat_label, minlength=count + 1)[1:]
        regions = 1 + np.argsort(-size, kind="stable")[:OUTSIDE_REGIONS]
        cell_of = np.zeros(count + 1, np.int64)
        cell_of[flat_label] = np.arange(label.size)  # a cell of each region
        ij = np.column_stack(np.unravel_index(cell_of[regions], clear.shape))
        a, b = self.points[self.boundary[:, 0]], self.points[self.boundary[:, 1]]
        out = np.zeros(count + 1, bool)
        out[regions] = winding_numbers(clear.lo + (ij + 0.5) * clear.cell, a, b) == 0
        if not out.any() or self._folded():
            return np.zeros(clear.shape, bool)
        return out[label]

    def walk(self, i, q, j, max_steps=100000):
        """Whether the segment from vertex i to the point q (vertex j, or -1) stays inside the mesh: walked
        from triangle to triangle across the sides it crosses, and on from any vertex it runs through (within
        the rounding tolerance); blocked where it would cross the outline or leave the mesh at a vertex. Exact,
        and its cost grows only with the triangles the segment crosses."""
        pts, flat, tol = self.points, self.tris.ravel(), self.tolerance
        twin = self._steps()[1]
        if self.crossings is None:
            self.crossings = _crossings(flat, self.steps)
        ahead, next_right, next_left = self.crossings
        p = pts[i]
        d = q - p
        length = np.hypot(*d.T)
        unit = d / np.maximum(length, 1e-300)[:, None]
        ok = length <= tol
        # The loop below reads columns: gathers from 1-D arrays are cheaper than from rows.
        if self.columns is None:
            self.columns = pts.T.copy()
        (x, y), (px, py), (ux, uy), (qx, qy) = self.columns, p.T.copy(), unit.T.copy(), q.T.copy()
        # Queries at a vertex (start, or passed through exactly), and queries in a triangle about to cross
        # its side k (3 t + k in `side`).
        at_q, at_v = np.flatnonzero(~ok), i[~ok]
        in_q = side = np.empty(0, np.int64)
        # A walk that stays inside enters each triangle and vertex at most once: no more steps than there are of them.
        # Across a flat triangle (collinear corners) one can come back to where it was and go round for ever (a
        # 286-vertex star with one on its outline, at 1e8 scale: 100,000 steps, 23 s; now 0.12 s), not visible.
        for _ in range(min(max_steps, len(self.tris) + len(pts) + 1)):
            if len(at_q):
                seen, go_q, go_side, at_q, at_v = self._leave_vertex(at_q, at_v, (x, y, ux, uy, qx, qy), j)
                ok[seen] = True
                in_q, side = np.concatenate([in_q, go_q]), np.concatenate([side, go_side])
            if len(in_q) == 0:
                if len(at_q) == 0:
                    break
                continue
            w = ahead[side]
            inner = w >= 0  # crossing the outline blocks
            in_q, side, w = in_q[inner], side[inner], w[inner]
            k1, k2 = next_right[side], next_left[side]
            wx, wy = x[w], y[w]
            lw = ux[in_q] * (wy - py[in_q]) - uy[in_q] * (wx - px[in_q])  # _cross, on columns
            target = j[in_q]
            arrive = w == target
            point = np.flatnonzero(target < 0)
            if len(point):  # a point target inside the new triangle (v, u, w): left of sides u-w and w-v
                at, wx, wy = in_q[point], wx[point], wy[point]
                u, v, tx, ty = flat[k1[point]], flat[twin[side[point]]], qx[at], qy[at]
                inside = _left_of_xy(x[u], y[u], wx, wy, tx, ty, tol)
                left = np.flatnonzero(inside)  # and of the other side, only there
                v = v[left]
                inside[left] = _left_of_xy(wx[left], wy[left], x[v], y[v], tx[left], ty[left], tol)
                arrive[point] = inside
            ok[in_q[arrive]] = True
            through = ~arrive & (np.abs(lw) <= tol)
            if through.any():
                at_q, at_v = np.concatenate([at_q, in_q[through]]), np.concatenate([at_v, w[through]])
            step = ~(arrive | through)
            in_q = in_q[step]
            side = np.where(lw > 0, k1, k2)[step]
        return ok

    def _leave_vertex(self, qs, a, columns, j):
        """From vertex a[k] towards q[qs[k]]: the queries that arrive within a triangle at a (visible), those
        that go into a triangle (query, side to cross as 3 triangle + side), and those that run exactly
        through a neighbouring vertex (query, vertex). Any other runs out of the mesh here. `columns`: the
        vertices' coordinates, the queries' unit directions and targets, as columns (x, y, ux, uy, qx, qy)."""
        (x, y, ux, uy, qx, qy), tol = columns, self.tolerance
        # The corner at a whose wedge holds the direction (or, if none does, the nearest one).
        if self.star is None:
            corners = self.tris.ravel()
            self.star = csr_matrix((np.ones(len(corners), bool), (corners, np.arange(len(corners)))),
                                   shape=(len(self.points), len(corners)))
        lo, count = self.star.indptr[a], self.star_count[a]
        end = np.cumsum(count)
        row = np.repeat(np.arange(len(a)), count)
        corner = self.star.indices[np.repeat(lo - end + count, count) + np.arange(len(row))]
        if len(row) == 0:
            none = np.empty(0, np.int64)
            return none, none, none, none, none
        start, opening = self._wedges(corner, x, y)
        turn = np.mod(_pseudo_angle_xy(ux[qs], uy[qs])[row] - start, 4.0)
        miss = np.maximum(turn - opening, 0.0)
        miss = np.minimum(miss, 4.0 - turn)
        has = np.flatnonzero(count > 0)
        best = np.minimum.reduceat(miss, end[has] - count[has])
        pick = np.flatnonzero(miss == np.repeat(best, count[has]))
        pick = pick[np.r_[True, row[pick][1:] != row[pick][:-1]]]
        c, query = corner[pick], qs[row[pick]]
        follow, flat = self._steps()[0], self.tris.ravel()
        u, v = flat[follow[c]], flat[follow[follow[c]]]  # the vertices after and before it
        at, dx, dy, target = a[row[pick]], ux[query], uy[query], j[query]
        ux_, uy_, vx, vy = x[u] - x[at], y[u] - y[at], x[v] - x[at], y[v] - y[at]  # from the vertex to u and v
        lu, lv = dx * uy_ - dy * ux_, dx * vy - dy * vx  # _cross, on columns
        arrive = (target == u) | (target == v)
        point = np.flatnonzero(target < 0)
        if len(point):
            pu, pv, pq = u[point], v[point], query[point]
            arrive[point] = (lu[point] <= tol) & (lv[point] >= -tol) & _left_of_xy(x[pu], y[pu], x[pv], y[pv], qx[pq],
                                                                                 qy[pq], tol)
        into = ~arrive & (lu < -tol) & (lv > tol)
        ahead_u = (np.abs(lu) <= tol) & (dx * ux_ + dy * uy_ > 0)
        ahead_v = (np.abs(lv) <= tol) & (dx * vx + dy * vy > 0)
        via = ~arrive & ~into & (ahead_u | ahead_v)
        k = c % 3
        return (query[arrive], query[into], (c - k + (k + 1) % 3)[into], query[via],
                np.where(ahead_u, u, v)[via])

    def _wedges(self, corner, x, y):
        """Per corner (3 triangle + corner) of `corner`: the direction from its vertex along the next side and how
        far the triangle opens from there counter-clockwise (as pseudo-angles), from the vertices' coordinate
        columns x, y. Each corner's are made the first time it is asked for: walks leave few of the vertices."""
        if self.wedges is None:
            self.wedges = (np.empty(self.tris.size), np.empty(self.tris.size), np.zeros(self.tris.size, bool))
        start, opening, done = self.wedges
        new = corner[~done[corner]]
        if len(new):
            follow, flat = self._steps()[0], self.tris.ravel()
            after = follow[new]
            at, after, before = flat[new], flat[after], flat[follow[after]]
            ax, ay = x[at], y[at]
            start[new] = _pseudo_angle_xy(x[after] - ax, y[after] - ay)
            opening[new] = np.mod(_pseudo_angle_xy(x[before] - ax, y[before] - ay) - start[new], 4.0)
            done[new] = True
        return start[corner], opening[corner]

    def _leaves_inward(self, i, d):
        """Whether direction d from vertex i (or from no vertex, i = -1) points into the mesh."""
        ok = np.ones(len(i), bool)
        edge = np.flatnonzero((i >= 0) & self.on_boundary[np.maximum(i, 0)])
        if len(edge) == 0:
            return ok
        v = i[edge]
        opening = self.opening[v]
        dx, dy = d[edge, 0], d[edge, 1]  # on columns, gathered once (sample character, 2k steps: 0.2 -> 0.13 ms)
        turn = _ccw_angle(self.to_next[v, 0], self.to_next[v, 1], dx, dy)
        # Along a boundary edge counts as inside, to within the rounding tolerance.
        eps = self.tolerance / np.maximum(np.hypot(dx, dy), 1e-300)
        ok[edge] = (turn <= opening + eps) | (turn >= 2.0 * np.pi - eps)
        loose = np.flatnonzero(np.isnan(opening))  # the boundary touches itself here: test a point
        if len(loose):
            step = 1e-6 * np.hypot(*d[edge[loose]].T)[:, None]
            unit = d[edge[loose]] / np.maximum(np.hypot(*d[edge[loose]].T), 1e-300)[:, None]
            ok[edge[loose]] = self.inside(self.points[v[loose]] + step * unit)
        return ok

    def inside(self, pts):
        """Even-odd test of points against the mesh boundary."""
        a, b = self.points[self.boundary[:, 0]], self.points[self.boundary[:, 1]]
        return points_in_edges(np.asarray(pts, float), a, b)


def _sides(tris, n, steps=True):
    """The edges of triangles (t, 3) over n vertices, the boundary edges (directed with their triangle on the
    left), and per side 3 t + k (side k runs from corner k to corner k + 1): the next side of the same triangle,
    and the same side in the triangle across it (-1: none), so that a walk steps with two lookups (None unless
    `steps`)."""
    t = len(tris)
    # Side k of triangle t as row k t + t, on columns (gathers from rows of an (n, 2) array are slow): from corner
    # k to corner k + 1.
    first = np.ascontiguousarray(tris.T).ravel()
    second = np.concatenate([first[t:], first[:t]])
    # The sides of each edge together, the first one first: a stable sort. Of few sides over few vertices, by two
    # 16-bit radix passes (sample character, 13k sides: 0.42 -> 0.22 ms); past ~30k sides those passes miss the cache,
    # and timsort, which also gains from runs in the mesh's order, is quicker (17k hand, 97k sides: 1.4 against 3.5).
    # (The ends kept only for the few: two more arrays of many sides cost the 17k hand 1.2 ms in page faults.)
    if len(first) <= SMALL_SORT and n <= 65536:
        low, high = np.minimum(first, second), np.maximum(first, second)
        key = low * n + high
        order = np.lexsort((high.astype(np.uint16), low.astype(np.uint16)))
    else:
        key = np.minimum(first, second) * n + np.maximum(first, second)
        order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    start = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
    count = np.diff(np.r_[start, len(key)])
    edge, outline = order[start], np.sort(order[start[count == 1]])
    edges, boundary = np.column_stack([first[edge], second[edge]]), np.column_stack([first[outline], second[outline]])
    if not steps:
        return edges, boundary, None
    # The two sides on one edge, each the other's twin, numbered 3 t + k, only for those.
    side = (3 * np.arange(t) + np.arange(3)[:, None]).ravel()
    pair = start[count == 2]
    one, two = side[order[pair]], side[order[pair + 1]]
    twin = np.full(3 * t, -1)
    twin[one], twin[two] = two, one
    follow = np.tile(np.array([1, 1, -2]), t) + np.arange(3 * t)
    return edges, boundary, (follow, twin)


def _crossings(flat, steps):
    """Per side 3 t + k: the vertex across it (-1: the side is on the outline) and the sides of the triangle across
    that follow it, from its right end to that vertex and from there to its left end, for a walk."""
    follow, twin = steps
    back = np.maximum(twin, 0)
    right = follow[back]
    left = follow[right]
    outline = twin < 0
    return np.where(outline, -1, flat[left]), np.where(outline, -1, right), np.where(outline, -1, left)


def _wedge_links(points, tris, steps, depth, tol):
    """The pairs of vertices that see each other across at most `depth` triangles (besides the edges),
    found without a visibility test: from each corner, the wedge of directions through the opposite side is
    carried from triangle to triangle across the sides it meets, split at each vertex inside it (which it
    sees) and stopped at the outline."""
    x, y, flat = points[:, 0], points[:, 1], tris.ravel()
    follow, twin = steps
    apex = flat
    side = follow  # from its right end to its left end, seen from the apex

    def unit(to):
        dx, dy = x[flat[to]] - x[apex], y[flat[to]] - y[apex]
        r = np.maximum(np.hypot(dx, dy), 1e-300)
        return dx / r, dy / r

    (rx, ry), (lx, ly) = unit(side), unit(follow[side])
    found = []
    for level in range(depth):
        back = twin[side]  # the same side in the next triangle, from left end to right end
        go = np.flatnonzero(back >= 0)
        back = back[go]
        apex, rx, ry, lx, ly = apex[go], rx[go], ry[go], lx[go], ly[go]
        k1 = follow[back]
        k2 = follow[k1]
        w = flat[k2]
        wx, wy = x[w] - x[apex], y[w] - y[apex]
        in_right = rx * wy - ry * wx > tol
        in_left = lx * wy - ly * wx < -tol
        seen = in_right & in_left
        found.append(np.stack([apex[seen], w[seen]], axis=1))
        if level == depth - 1:
            break
        r = np.maximum(np.hypot(wx, wy), 1e-300)
        wx, wy = wx / r, wy / r
        # Through side (right end, w): the wedge right of w (all of it when w is left of the wedge);
        # through side (w, left end): the rest.
        first, second = seen | ~in_left, seen | ~in_right
        side = np.concatenate([k1[first], k2[second]])
        apex = np.concatenate([apex[first], apex[second]])
        lx = np.concatenate([np.where(seen, wx, lx)[first], lx[second]])
        ly = np.concatenate([np.where(seen, wy, ly)[first], ly[second]])
        rx = np.concatenate([rx[first], np.where(seen, wx, rx)[second]])
        ry = np.concatenate([ry[first], np.where(seen, wy, ry)[second]])
    return np.vstack(found) if found else np.empty((0, 2), np.int64)  # each pair from both ends, mostly


def winding_numbers(points, a, b):
    """How many times the directed edges a[i]-b[i] wind counter-clockwise round each point (few points), counting
    the edges that cross the ray from the point in +x, up or down: each edge paired only with the points at a height
    it spans (the points sorted by height)."""
    order = np.argsort(points[:, 1], kind="stable")
    height = points[order, 1]
    # Up (a.y <= y < b.y) or down (b.y <= y < a.y): the points from the lower end's height to below the upper end's.
    start = np.searchsorted(height, np.minimum(a[:, 1], b[:, 1]), "left")
    count = np.searchsorted(height, np.maximum(a[:, 1], b[:, 1]), "left") - start
    e = np.repeat(np.arange(len(a)), count)
    k = order[np.repeat(start - np.cumsum(count) + count, count) + np.arange(int(count.sum()))]
    # > 0: the point lies left of a-b
    left = (b[e, 0] - a[e, 0]) * (points[k, 1] - a[e, 1]) - (points[k, 0] - a[e, 0]) * (b[e, 1] - a[e, 1])
    turns = np.where(a[e, 1] <= points[k, 1], left > 0, -(left < 0).astype(np.int64))
    return np.bincount(k, weights=turns, minlength=len(points)).astype(np.int64)


def _cross(u, v):
    """z of the cross product of rows of u and v: positive where v turns left of u."""
    return u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]


def _left_of_xy(ax, ay, bx, by, x, y, tol):
    """Whether each point (x, y) lies left of the line a-b, or within tol of it (all as coordinate columns)."""
    dx, dy = bx - ax, by - ay
    cross = dx * (y - ay) - dy * (x - ax)
    left = cross >= 0.0
    # The tolerance matters only within tol (|dx| + |dy|) >= tol |b - a| of the line: the length only there.
    near = np.flatnonzero(~left & (cross >= -tol * (np.abs(dx) + np.abs(dy))))
    left[near] = cross[near] >= -tol * np.hypot(dx[near], dy[near])
    return left


def _pseudo_angle_xy(x, y):
    """A cheap stand-in for the angle of each direction (x, y), in [0, 4), increasing with the angle."""
    r = x / np.maximum(np.abs(x) + np.abs(y), 1e-300)
    return np.where(y >= 0, 1.0 - r, 3.0 + r)


def _ccw_angle(ux, uy, vx, vy):
    """Counter-clockwise angle from u to v, in [0, 2 pi), on coordinate columns (gathers from rows of (n, 2) are slow).
    The dot product + 0.0, as np.einsum's sum (which it was): -0.0 + -0.0 is -0.0, and arctan2(0, -0.0) is pi, not 0
    (at a doubled outline vertex, whose outgoing edge has no length)."""
    return np.mod(np.arctan2(ux * vy - uy * vx, ux * vx + uy * vy + 0.0), 2.0 * np.pi)


def pairs_within(tree, centres, radius, k=32):
    """(query, item) pairs with item within radius[query] of centres[query]: a fixed-size k-nearest
    query for most, a ball query only where k were not enough."""
    if len(centres) == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    k = min(k, tree.n)
    dist, idx = tree.query(centres, k=k, distance_upper_bound=float(radius.max()))
    dist, idx = dist.reshape(len(centres), k), idx.reshape(len(centres), k)
    hit = dist <= radius[:, None]
    full = np.flatnonzero(hit[:, -1]) if k < tree.n else np.empty(0, np.int64)
    hit[full] = False
    query, slot = np.nonzero(hit)
    pairs = [query, idx[query, slot]]
    if len(full):
        more = tree.query_ball_point(centres[full], radius[full])
        counts = np.fromiter(map(len, more), np.int64, len(full))
        pairs = [np.concatenate([query, np.repeat(full, counts)]),
                 np.concatenate([idx[query, slot]] + [np.asarray(m, np.int64) for m in more])]
    return pairs[0], pairs[1]


class Clearance:
    """A lower bound of the distance to the boundary anywhere, from a distance transform of the boundary
    edges drawn into a grid (less the grid's rounding)."""

    def __init__(self, points, a, b, max_cells=2048):
        length = np.hypot(*(b - a).T)
        (x, y) = points.T
        self.lo = np.array([x.min(), y.min()])
        extent = np.array([x.max(), y.max()]) - self.lo
        # Cells about half a boundary edge, but no more than a few per vertex nor 2048 along a side.
        per_vertex = np.sqrt(float(np.prod(extent)) / (CELLS_PER_VERTEX * len(points)))
        self.cell = max(median(length) / 2.0, float(extent.max()) / max_cells, per_vertex, 1e-12)
        count = np.maximum(np.ceil(length / self.cell).astype(np.int64), 1)
        edge = np.repeat(np.arange(len(a)), count)
        t = (np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)) / count[edge]
        (ax, ay), (dx, dy) = a.T, (b - a).T  # on columns: gathers from rows are slow
        self.shape = np.floor(extent / self.cell).astype(np.int64) + 1
        free = np.ones(self.shape, bool)
        free.ravel()[self._cells(ax[edge] + t * dx[edge], ay[edge] + t * dy[edge])[0]] = False
        # The distances from the feature transform (each cell's nearest edge cell) by squared offsets in its int32
        # (at most 2 * 2,049^2), the same bits as distance_transform_edt's, whose float64 arithmetic on the offsets
        # took nearly as long as the transform itself on large grids (63k hand 12.0 -> 7.9 ms, 17k hand 2.8 -> 2.0).
        row, col = ndimage.distance_transform_edt(free, return_distances=False, return_indices=True)
        row -= np.arange(len(free), dtype=row.dtype)[:, None]
        col -= np.arange(free.shape[1], dtype=col.dtype)
        self.grid = np.sqrt(row * row + col * col, dtype=float) * self.cell
        # A point and a sample each lie within half a cell diagonal of their cell centres; samples are at
        # most half a piece from their edge.
        self.slack = np.sqrt(2.0) * self.cell + 0.5 * float((length / count).max())

    def _cells(self, x, y):
        """Each point's cell (as an index into the raveled grid) from its coordinate columns, and whether it lies
        off the grid (it is then given the nearest cell). On columns: twice as fast as on rows."""
        i = np.floor((x - self.lo[0]) / self.cell).astype(np.int64)
        j = np.floor((y - self.lo[1]) / self.cell).astype(np.int64)
        off = (i < 0) | (i >= self.shape[0]) | (j < 0) | (j >= self.shape[1])
        if off.any():
            np.clip(i, 0, self.shape[0] - 1, out=i)
            np.clip(j, 0, self.shape[1] - 1, out=j)
        return i * self.shape[1] + j, off

    def at(self, pts):
        """Lower bounds (n,) of the distance from each point (n, 2) to the mesh's boundary (off the grid: at
        the nearest cell, less the way there)."""
        return self._clearance(pts[:, 0], pts[:, 1], *self._cells(pts[:, 0], pts[:, 1]))

    def _clearance(self, x, y, cell, off):
        """`at`, given the points' coordinate columns and cells."""
        c = self.grid.ravel()[cell] - self.slack
        if off.any():
            far = np.column_stack([x[off], y[off]])
            c[off] -= np.hypot(*np.maximum(np.maximum(self.lo - far, far - (self.lo + self.shape * self.cell)), 0.0).T)
        return np.maximum(c, 0.0, out=c)

    def covers(self, p, q, outside, samples=6):
        """Whether the disks of clearance at points along each segment p-q cover it (so it is inside,
        given that p is), and whether one of the points lies in a cell of `outside` (so it leaves the mesh).

        COVERS_CHUNK segments at a time: the comb of bench/weights.py's 54k vertex-to-node segments took 13 ms at
        once, 5.4 ms in chunks (fresh megabyte-sized temporaries cost page faults; small ones are reused)."""
        if len(p) > COVERS_CHUNK:
            parts = [self.covers(p[k:k + COVERS_CHUNK], q[k:k + COVERS_CHUNK], outside, samples)
                     for k in range(0, len(p), COVERS_CHUNK)]
            return np.concatenate([inside for inside, _out in parts]), np.concatenate([out for _in, out in parts])
        t = np.linspace(0.0, 1.0, samples)[:, None]
        x, y = (p[:, 0] + t * (q[:, 0] - p[:, 0])).ravel(), (p[:, 1] + t * (q[:, 1] - p[:, 1])).ravel()
        cell, off = self._cells(x, y)
        c = self._clearance(x, y, cell, off).reshape(samples, len(p))
        out = (outside.ravel()[cell] & ~off).reshape(samples, len(p)).any(axis=0)
        step = np.hypot(*(q - p).T) / (samples - 1)
        return (c[:-1] + c[1:] >= step).all(axis=0), out


def _thin(domain, area, max_nodes):
    """Graph nodes and their spacing: every vertex if there are few, else the reflex corners (where
    shortest paths bend) and the boundary and the interior about one spacing apart, with the spacing wide
    enough that there are at most `max_nodes` in all (the reflex corners too, when they alone would fill half)."""
    used = np.flatnonzero(domain.star_count)  # the vertices of some triangle
    if len(used) <= max_nodes:
        return used, max(np.sqrt(area / max(len(used), 1)), 1e-12)
    on_boundary = domain.on_boundary
    reflex = np.flatnonzero(on_boundary & ~(domain.opening <= np.radians(181.0)))
    edge_verts = np.setdiff1d(np.flatnonzero(on_boundary), reflex)
    inner = used[~on_boundary[used]]
    a, b = domain.points[domain.boundary[:, 0]], domain.points[domain.boundary[:, 1]]
    outline = float(np.hypot(*(b - a).T).sum())
    # Reflex corners that would fill half the nodes alone (a ragged outline) are thinned like the rest: kept all, they
    # could leave no room at all, and the spacing would grow without end.
    many = 2 * len(reflex) > max_nodes
    # About area / s² inside and outline / s along the outline: the spacing s that makes them fit.
    room = max(max_nodes - (0 if many else len(reflex)), 1)
    spacing = (0.5 * outline + np.sqrt(0.25 * outline**2 + room * area)) / room
    while True:
        corners = one_per_cell(domain.points, reflex, spacing) if many else reflex
        along, within = one_per_cell(domain.points, edge_verts, spacing), one_per_cell(domain.points, inner, spacing)
        if len(corners) + len(along) + len(within) <= max_nodes:  # apart: corners and edge vertices are on the outline
            return np.unique(np.concatenate([corners, along, within])), spacing
        spacing *= 1.1


def fast_hypot(dx, dy):
    """Lengths of vectors (dx, dy), for comparisons with bounds looser than rounding: np.hypot (correctly rounded, by a
    libm call per element) takes three to six times as long on arrays of thousands."""
    return np.sqrt(dx * dx + dy * dy)


def median(v):
    """np.median of a non-empty 1-D array without NaN, to the bit, by np.partition alone: np.median's own checks take
    twice as long as the partition on a thousand values (18 -> 7 µs)."""
    k = len(v) // 2
    if len(v) % 2:
        return float(np.partition(v, k)[k])
    part = np.partition(v, [k - 1, k])
    return float((part[k - 1] + part[k]) / 2.0)


def one_per_cell(points, idx, cell):
    """The first of `idx` in each square cell of size `cell`."""
    if len(idx) == 0:
        return idx
    ij = np.floor(points[idx] / cell).astype(np.int64)
    key = (ij[:, 0] - ij[:, 0].min()) * (int(ij[:, 1].max() - ij[:, 1].min()) + 1) + (ij[:, 1] - ij[:, 1].min())
    return idx[np.unique(key, return_index=True)[1]]


def _touch(p, q, a, b, tol):
    """Whether segments p-q and a-b intersect or come within `tol` of touching (collinear overlaps
    count). Points within `tol` of a line count as on it: vertices are float32, and a link that runs
    exactly along the outline past a corner must be caught whichever way rounding puts the corner."""
    return _touch_xy(p[:, 0], p[:, 1], q[:, 0], q[:, 1], a[:, 0], a[:, 1], b[:, 0], b[:, 1], tol)


def _touch_xy(px, py, qx, qy, ax, ay, bx, by, tol, ab_length=None):
    """`_touch` on coordinate columns (`ab_length`: the lengths of a-b, if known), with each side's sign as two
    masks (beyond `tol` either way) and each line's length once: half the time of signs in {-1, 0, 1} on (n, 2) rows
    (2,500 pairs: 0.29 -> 0.15 ms), the same answers. Lengths by square roots: np.hypot is 3 times as slow."""
    ux, uy, vx, vy = bx - ax, by - ay, qx - px, qy - py
    to_ab = np.maximum(fast_hypot(ux, uy), 1e-300) if ab_length is None else ab_length
    to_pq = np.maximum(fast_hypot(vx, vy), 1e-300)
    off = []  # per side test, (left of the line, right of it) beyond `tol`
    for (dx, dy, ox, oy, length), (x, y) in (((ux, uy, ax, ay, to_ab), (px, py)), ((ux, uy, ax, ay, to_ab), (qx, qy)),
                                             ((vx, vy, px, py, to_pq), (ax, ay)), ((vx, vy, px, py, to_pq), (bx, by))):
        dist = (dx * (y - oy) - dy * (x - ox)) / length
        off.append((dist > tol, dist < -tol))
    (l1, r1), (l2, r2), (l3, r3), (l4, r4) = off
    # Signs s: the product s1 s2 <= 0 unless both lie beyond the line on one side.
    cross = ~((l1 & l2) | (r1 & r2) | (l3 & l4) | (r3 & r4))
    collinear = ~(l1 | r1 | l2 | r2)
    overlap = ((np.minimum(px, qx) <= np.maximum(ax, bx) + tol) & (np.minimum(ax, bx) <= np.maximum(px, qx) + tol)
               & (np.minimum(py, qy) <= np.maximum(ay, by) + tol) & (np.minimum(ay, by) <= np.maximum(py, qy) + tol))
    return np.where(collinear, overlap, cross)


def bone_distances(domain, heads, tails, reach=np.inf):
    """Distances (n, bones) inside the mesh from each bone segment heads[i]-tails[i] to every vertex.

    Distances are measured up to `reach` (and two node spacings) further than the node furthest from its nearest
    bone, and are infinite beyond: Joint Blending's seeds are 0 there anyway (weights.MEASURED_REACH), and on a
    wide mesh with many bones (the comb of bench/weights.py) most of each bone's Dijkstra is spared.

    A bone reaches the nodes and vertices near it that see their closest point on it. A bone wholly
    outside the mesh starts from the vertices nearest to it, at their straight distance. A vertex that no
    bone reaches (an island no bone touches) belongs to the bone nearest to it. Returns the distances
    and, per bone, whether it lies wholly outside the mesh.
    """
    heads, tails = np.asarray(heads, float), np.asarray(tails, float)
    m, bones = len(domain.nodes), len(heads)
    stages = domain.stages
    stages.last = time.perf_counter()
    bone, verts, gap, outside = _bone_links(domain, heads, tails)
    # Graph: the nodes, then one source per bone, linked to the nodes that see it.
    node_of = np.full(len(domain.points), -1)
    node_of[domain.nodes] = np.arange(m)
    at_node = node_of[verts] >= 0
    # The bones' rows appended to the graph's (CSR) as they are: each (bone, node) link is found once.
    by_bone = np.argsort(bone[at_node], kind="stable")
    g = domain.graph
    graph = csr_matrix((np.r_[g.data, gap[at_node][by_bone]], np.r_[g.indices, node_of[verts[at_node]][by_bone]],
                        np.r_[g.indptr, g.indptr[-1] + np.cumsum(np.bincount(bone[at_node], minlength=bones))]),
                       shape=(m + bones, m + bones))
    stages.lap("bone links")
    sources = m + np.arange(bones)
    # Two spacings past the reach: a vertex interpolated between nodes takes no distance from a node beyond the limit.
    past = reach + 2.0 * domain.spacing
    x, y = domain.points[domain.nodes].T
    # Where the reach spans the nodes' box, the limit is unlikely to cut anything: the distances are measured in full,
    # and those past it dropped after (the same), sparing a first pass to find it.
    first = np.isfinite(reach) and bones > 0 and past < np.hypot(np.ptp(x), np.ptp(y))
    limit = np.inf
    if first:
        nearest = dijkstra(graph, directed=True, indices=sources, min_only=True)[:m]
        limit = float(nearest[np.isfinite(nearest)].max(initial=0.0)) + past
    node_dist = dijkstra(graph, directed=True, indices=sources, limit=limit)[:, :m]
    if np.isfinite(reach) and bones > 0 and not first:
        nearest = node_dist.min(axis=0)
        node_dist[node_dist > float(nearest[np.isfinite(nearest)].max(initial=0.0)) + past] = np.inf
    node_dist = np.ascontiguousarray(node_dist.T, np.float32)  # (m, bones)
    stages.lap("dijkstra")
    dist, taken_from = _from_nodes(domain, node_dist)
    dist[verts, bone] = np.minimum(dist[verts, bone], gap)
    stages.lap("interpolation")
    if taken_from.nnz:  # some vertices are not nodes
        seen_by = csr_matrix((np.ones(int(at_node.sum()), bool), (node_of[verts[at_node]], bone[at_node])),
                             shape=(m, bones))
        bone, verts, gap = _vertex_links(domain, heads, tails, dist, taken_from @ seen_by)
        dist[verts, bone] = np.minimum(dist[verts, bone], gap)
    stages.lap("bone links")
    _reach_islands(domain, dist, heads, tails, _relax_along_edges(domain, dist))
    stages.lap("interpolation")
    return dist, outside


def _near_bones(domain, pool, heads, tails, reach):
    """(bone, vertex, distance, closest point on the bone) for the vertices of `pool` (sorted) within `reach` of a
    bone, by bone and vertex: found in the boxes around pieces of each bone, `reach` or less long, so the search
    covers little more than the band around it."""
    length = np.hypot(*(tails - heads).T)
    pieces = np.maximum(np.ceil(length / reach), 1).astype(np.int64)
    bone = np.repeat(np.arange(len(heads)), pieces)
    t = np.arange(pieces.sum()) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    step = (tails - heads)[bone] / pieces[bone, None]
    start, end = heads[bone] + t[:, None] * step, heads[bone] + (t[:, None] + 1) * step
    lo, hi = np.minimum(start, end) - reach, np.maximum(start, end) + reach
    grid = PointGrid(domain.points[pool], reach, lo, hi)
    piece, at = grid.in_boxes(lo, hi, np.arange(len(lo)))
    # Each pair once (the boxes of a bone's pieces overlap), marked in a (bones, pool) table: no sort.
    pairs = np.zeros(len(heads) * len(pool), bool)
    pairs[bone[piece] * len(pool) + grid.order[at]] = True
    bone, verts = np.divmod(np.flatnonzero(pairs), len(pool))
    verts = pool[verts]
    gap, fx, fy = _bone_gaps(domain.points, verts, heads, tails, bone)
    keep = np.flatnonzero(gap <= reach)
    return bone[keep], verts[keep], gap[keep], np.column_stack([fx[keep], fy[keep]])


def _bone_gaps(points, verts, heads, tails, bone):
    """segment_distance from points[verts[k]] to bone bone[k], and the closest points' coordinates as columns: on
    columns gathered per pair (gathering rows of (n, 2) arrays is slow: the comb's 144k vertex links, 10 -> 3.4 ms)."""
    (x, y), (ax, ay), (bx, by) = points.T, heads.T, tails.T
    x, y, ax, ay, abx, aby = x[verts], y[verts], ax[bone], ay[bone], (bx - ax)[bone], (by - ay)[bone]
    t = np.clip(((x - ax) * abx + (y - ay) * aby) / np.maximum(abx * abx + aby * aby, 1e-300), 0.0, 1.0)
    fx, fy = ax + t * abx, ay + t * aby
    return np.hypot(x - fx, y - fy), fx, fy


def _bone_links(domain, heads, tails):
    """The nodes within BONE_REACH spacings of a bone that see their closest point on it, as (bone, vertex,
    distance) rows, and per bone whether it lies wholly outside (sees no node): it then starts from the
    nodes nearest to it (nodes, not any vertex: a loose vertex nearest would reach nothing)."""
    bone, verts, gap, foot = _near_bones(domain, domain.nodes, heads, tails, BONE_REACH * domain.spacing)
    seen = domain.visible(verts, q=foot)
    bone, verts, gap = [bone[seen]], [verts[seen]], [gap[seen]]
    outside = np.bincount(bone[0], minlength=len(heads)) == 0
    for b in np.flatnonzero(outside):
        far, _foot = segment_distance(domain.points[domain.nodes], heads[b], tails[b])
        near = far <= far.min() + domain.spacing
        v, far = domain.nodes[near], far[near]
        bone.append(np.full(len(v), b))
        verts.append(v)
        gap.append(far)
    return np.concatenate(bone), np.concatenate(verts), np.concatenate(gap), outside


def _vertex_links(domain, heads, tails, dist, candidates):
    """The other vertices within VERTEX_REACH spacings of a bone that see their closest point on it, as
    (bone, vertex, distance) rows: close to a bone the distance field has a kink that interpolation blurs,
    by less than about a spacing. Only vertices that took their distance from a node that sees the bone
    (`candidates`, sparse (vertices, bones)) are tried, and of those neither the ones whose interpolated
    distance is more than two spacings further than the straight one (a path round the outline) nor the
    ones within 1% of it (where the nodes around see the bone the field is linear and interpolates exactly)."""
    candidates = candidates.tocoo()
    verts, bone = candidates.row.astype(np.int64), candidates.col.astype(np.int64)
    gap, fx, fy = _bone_gaps(domain.points, verts, heads, tails, bone)
    excess = dist[verts, bone] - gap
    close = np.flatnonzero((gap <= VERTEX_REACH * domain.spacing)
                           & ~((excess > 2.0 * domain.spacing) | (excess <= 1e-2 * gap)))
    bone, verts, gap = bone[close], verts[close], gap[close]
    seen = domain.visible(verts, q=np.column_stack([fx[close], fy[close]]))
    return bone[seen], verts[seen], gap[seen]


def _from_nodes(domain, node_dist):
    """Each vertex's distance from the nodes' distances, and which nodes each took it from (sparse
    (vertices, nodes)).

    Nodes are vertices. Other vertices interpolate linearly inside the triangle of nodes around them
    (a Delaunay triangle of nodes that lies inside the mesh): the distance field is smooth, so this is far
    more accurate than one straight step. Vertices in no such triangle
    (next to the boundary) take the shortest straight step from one of their nearest nodes that they see.
    With thinned nodes, the same as weights is kept in `domain.interpolation` (Joint Blending solved on the nodes).
    """
    pts, m = domain.points, len(domain.nodes)
    is_node = np.zeros(len(pts), bool)
    is_node[domain.nodes] = True
    rest = np.flatnonzero(~is_node)
    if len(rest) == 0:
        dist = np.full((len(pts), node_dist.shape[1]), np.inf, np.float32)
        dist[domain.nodes] = node_dist
        return dist, csr_matrix((len(pts), m), dtype=bool)
    corners, bary, found = _node_triangles(domain, pts[rest])
    inside = np.flatnonzero(found)
    stepped = rest[~found]
    k = min(VERTEX_LINKS, m)
    step, near = cKDTree(pts[domain.nodes]).query(pts[stepped], k=k)
    step, near = step.reshape(len(stepped), k), near.reshape(len(stepped), k)
    seen = domain.visible(np.repeat(stepped, k), domain.nodes[near.ravel()]).reshape(len(stepped), k)
    # Every vertex's row of nodes at once: itself for a node, the corners of its triangle, or the nodes near it. One
    # conversion to CSR (which orders each row by node) carries the order of the entries, for the three matrices below.
    bary = bary[inside].ravel()
    rows = np.r_[domain.nodes, np.repeat(rest[inside], 3), np.repeat(stepped, k)]
    order = csr_matrix((np.arange(1.0, len(rows) + 1.0), (rows, np.r_[np.arange(m), corners[inside].ravel(),
                                                                      near.ravel()])), shape=(len(pts), m))
    at = order.data.astype(np.int64) - 1

    def nodes_of(node, in_triangle, stepping):
        """The rows with the nodes' entries `node` (one value for all), the triangles' and the steps', without zeros."""
        values = np.r_[np.full(m, node, in_triangle.dtype), in_triangle, stepping.ravel()][at]
        # Copies: eliminate_zeros edits the index arrays in place.
        matrix = csr_matrix((values, order.indices.copy(), order.indptr.copy()), shape=order.shape)
        matrix.eliminate_zeros()
        return matrix

    # Nodes as they are, the others interpolated; those beyond the reach are infinitely far (no 0 x inf: NaN).
    dist = nodes_of(1.0, bary, np.zeros(near.shape, np.float32)) @ node_dist
    dist[stepped] = np.inf
    for col in range(k):
        v = stepped[seen[:, col]]
        dist[v] = np.minimum(dist[v], node_dist[near[seen[:, col], col]] + step[seen[:, col], col, None])
    # Not a corner of weight 0 (the vertex lies on the side across): of two triangles with the vertex on their shared
    # side, either gives the same.
    taken_from = nodes_of(False, bary > 0, np.ones(near.shape, bool))
    if domain.coarse is not None:
        # The same nodes, weighted: barycentric inside a triangle of nodes, else 1 / step² over the nodes seen.
        near_weight = seen / np.maximum(step, domain.tolerance) ** 2
        near_weight /= np.maximum(near_weight.sum(axis=1, keepdims=True), 1e-300)
        domain.interpolation = nodes_of(1.0, bary.astype(float), near_weight)
    return dist, taken_from


def _node_triangles(domain, queries):
    """For each query point: the three nodes of the Delaunay triangle of nodes inside the mesh that holds it,
    its barycentric coordinates there, and whether there is one. A point on the side of such a triangle (an
    outline vertex between two outline nodes) counts as in it, within a rounding, with the third corner's weight 0."""
    if domain.coarse is None:  # every vertex of a triangle is a node: the queries lie in none
        none = np.zeros(len(queries), np.int64)
        return np.zeros((len(queries), 3), np.int64), np.zeros((len(queries), 3), np.float32), none.astype(bool)
    tri, inside = domain.coarse
    inner = np.flatnonzero(inside)
    held, bary = locate(domain.points[domain.nodes], tri.simplices[inner], queries, slack=1e-6)
    found = held >= 0
    corners = tri.simplices[inner[np.maximum(held, 0)]]
    bary = np.where(bary > 1e-6, bary, 0.0)  # on a side (within the slack): from its two ends alone
    total = bary[:, 0] + bary[:, 1] + bary[:, 2]  # on columns: a boolean row selection is slow
    bary /= np.where(found, total, 1.0)[:, None]
    return corners, bary.astype(np.float32), found


class PointGrid:
    """Points sorted into the cells of a square grid, to find those in the cells that boxes cover with gathers alone:
    x, y and order are the points' coordinates and indices in cell order."""

    def __init__(self, points, cell, lo, hi):
        """The grid spans the points and the boxes (lo, hi); cells `cell` wide, or wider so that there are no more
        than 4 per point or box."""
        (x, y), (lx, ly), (hx, hy) = points.T, lo.T, hi.T  # on columns: reductions along rows are slow
        self.origin = np.array([min(x.min(), lx.min()), min(y.min(), ly.min())])
        extent = np.array([max(x.max(), hx.max()), max(y.max(), hy.max())]) - self.origin
        self.cell = max(cell, float(np.sqrt(np.prod(extent + 1e-300) / (4 * (len(points) + len(lo))))), 1e-300)
        self.shape = np.floor(extent / self.cell).astype(np.int64) + 1
        key = self._key(x, y)
        self.order = np.argsort(key, kind="stable")
        self.x, self.y = points[self.order, 0], points[self.order, 1]
        self.count = np.bincount(key, minlength=int(self.shape.prod()))
        self.start = np.cumsum(self.count) - self.count

    def _cell(self, v, axis):
        """The column (axis 0) or row (axis 1) of the coordinates v."""
        return np.minimum(np.floor((v - self.origin[axis]) / self.cell).astype(np.int64), self.shape[axis] - 1)

    def _key(self, x, y):
        """The cells (raveled) of points given as coordinate columns."""
        return self._cell(x, 0) * self.shape[1] + self._cell(y, 1)

    def in_boxes(self, lo, hi, boxes):
        """(box, point) for the points in the cells that each of `boxes` (indices into lo, hi) covers; points as
        positions in `order`."""
        first = np.column_stack([self._cell(lo[boxes, 0], 0), self._cell(lo[boxes, 1], 1)])
        last = np.column_stack([self._cell(hi[boxes, 0], 0), self._cell(hi[boxes, 1], 1)])
        wide, tall = last[:, 0] - first[:, 0] + 1, last[:, 1] - first[:, 1] + 1
        count = wide * tall
        k = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
        box = np.repeat(np.arange(len(boxes)), count)
        key = (first[box, 0] + k // tall[box]) * self.shape[1] + first[box, 1] + k % tall[box]
        many = self.count[key]
        at = np.repeat(self.start[key] - np.cumsum(many) + many, many) + np.arange(int(many.sum()))
        return np.repeat(boxes[box], many), at


def locate(pts, tris, queries, slack=1e-9):
    """For each query, the triangle of `tris` (over `pts`) that holds it, within `slack` in barycentric coordinates
    (by default a rounding; the one it lies deepest in where several do; -1: none), and its barycentric coordinates
    there (n, 3).

    Each query is tested against the triangles whose bounding boxes cover its cell of a grid, LOCATE_CHUNK triangles
    at a time (small arrays stay in cache; a first touch of a large one is slow on a busy machine). In numpy rather
    than scipy's Delaunay.find_simplex: that computes every triangle's barycentric transform with a LAPACK call each,
    which made the distances on 5,000 nodes take 1 to 61 s instead of under a second with OpenBLAS's threads
    unpinned (as in a user's Blender) on a busy machine."""
    n = len(queries)
    held, bary = np.full(n, -1), np.zeros((n, 3))
    if n == 0 or len(tris) == 0:
        return held, bary
    # Per triangle, on columns: corner a and the inverse of (b - a, c - a), so that the coordinates of b and c are
    # (q - a) times it.
    (ax, bx, cx), (ay, by, cy) = pts[tris, 0].T, pts[tris, 1].T
    abx, aby, acx, acy = bx - ax, by - ay, cx - ax, cy - ay
    with np.errstate(divide="ignore", invalid="ignore"):
        det = abx * acy - aby * acx
        inverse = acy / det, -acx / det, -aby / det, abx / det
    lo = np.column_stack([np.minimum(np.minimum(ax, bx), cx), np.minimum(np.minimum(ay, by), cy)])
    hi = np.column_stack([np.maximum(np.maximum(ax, bx), cx), np.maximum(np.maximum(ay, by), cy)])
    size = np.maximum(hi[:, 0] - lo[:, 0], hi[:, 1] - lo[:, 1])
    margin = (slack * size + 1e-12 * float(np.abs(pts).max()))[:, None]
    lo, hi = lo - margin, hi + margin
    # Cells a third of a typical triangle wide: each query meets a few boxes.
    grid = PointGrid(queries, float(np.median(size)) / 3.0, lo, hi)
    best = np.full(n, -np.inf)
    found = []
    for chunk in range(0, len(tris), LOCATE_CHUNK):
        t, q = grid.in_boxes(lo, hi, np.arange(chunk, min(chunk + LOCATE_CHUNK, len(tris))))
        # Barycentric coordinates of each query in each of its triangles.
        dx, dy = grid.x[q] - ax[t], grid.y[q] - ay[t]
        lb = dx * inverse[0][t] + dy * inverse[1][t]
        lc = dx * inverse[2][t] + dy * inverse[3][t]
        la = 1.0 - lb - lc
        depth = np.minimum(np.minimum(la, lb), lc)
        keep = np.flatnonzero(depth >= -slack)  # NaN (a flat triangle) fails
        np.maximum.at(best, q[keep], depth[keep])
        found.append((q[keep], t[keep], depth[keep], la[keep], lb[keep], lc[keep]))
    q, t, depth, la, lb, lc = (np.concatenate(c) for c in zip(*found))
    # Where several triangles hold a query (on a side or a corner), the deepest.
    keep = depth == best[q]
    at = grid.order[q[keep]]
    held[at] = t[keep]
    bary[at, 0], bary[at, 1], bary[at, 2] = la[keep], lb[keep], lc[keep]
    return held, bary


def _relax_along_edges(domain, dist, rounds=64):
    """Vertices that see no node (slivers thinner than the node spacing) take their distance along mesh
    edges from their neighbours (in `dist`). Returns which vertices are still infinitely far from every bone."""
    a, b = domain.edges[:, 0], domain.edges[:, 1]
    todo = np.isinf(dist).all(axis=1)
    left = int(todo.sum())
    for _ in range(rounds):
        if left == 0:
            break
        sel = todo[a] | todo[b]
        ea, eb = a[sel], b[sel]
        el = np.hypot(*(domain.points[eb] - domain.points[ea]).T)[:, None]
        np.minimum.at(dist, ea, dist[eb] + el)
        np.minimum.at(dist, eb, dist[ea] + el)
        rows = np.flatnonzero(todo)
        todo[rows] = np.isinf(dist[rows]).all(axis=1)
        if int(todo.sum()) == left:  # nothing more reached
            break
        left = int(todo.sum())
    return todo


def _reach_islands(domain, dist, heads, tails, lost):
    """An island of the mesh that no bone reaches (`lost`: the vertices infinitely far from every bone) belongs
    wholly to the bone nearest to it (in a straight line): that bone's straight distance, infinity for the others."""
    if not lost.any() or len(heads) == 0:
        return
    n = len(domain.points)
    a, b = domain.edges[:, 0], domain.edges[:, 1]
    _count, label = connected_components(coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n)), directed=False)
    for island in np.unique(label[lost]):
        verts = np.flatnonzero(label == island)
        gaps = np.stack([segment_distance(domain.points[verts], h, t)[0] for h, t in zip(heads, tails)], axis=1)
        bone = int(np.argmin(gaps.min(axis=0)))
        dist[verts] = np.inf
        dist[verts, bone] = gaps[:, bone]


def segment_distance(points, a, b):
    """Euclidean distance from points (n, 2) to the segment a-b (one, or one per point), and the closest
    points on it."""
    (x, y), (ax, ay), (bx, by) = points.T, a.T, b.T  # on columns: operations on (n, 2) rows are slow
    abx, aby = bx - ax, by - ay
    t = np.clip(((x - ax) * abx + (y - ay) * aby) / np.maximum(abx * abx + aby * aby, 1e-300), 0.0, 1.0)
    fx, fy = ax + t * abx, ay + t * aby
    return np.hypot(x - fx, y - fy), np.column_stack([fx, fy])
