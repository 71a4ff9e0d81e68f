"""Marching squares on an alpha image: closed rings that follow the alpha threshold with sub-pixel accuracy.

Coordinates are image pixels with y up: pixel (row i, column j) has its centre at (j + 0.5, i + 0.5) and
the image covers [0, W] x [0, H]. Every ring keeps the inside of the shape on its left, so outer outlines
run counter-clockwise (positive area) and holes clockwise (negative area). The image is treated as if
surrounded by transparent pixels, so a shape touching the border is closed along the border itself.
"""

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, depth_first_order

# Corners of a cell in counter-clockwise order (bottom-left, bottom-right, top-right, top-left) as
# (row, column) offsets; cell edge i runs from corner i to corner i + 1.
_CORNERS = np.array([(0, 0), (0, 1), (1, 1), (1, 0)])
# Each cell edge as a grid edge: (row offset, column offset, 0 for horizontal or 1 for vertical).
_EDGES = np.array([(0, 0, 0), (0, 1, 1), (1, 0, 0), (0, 0, 1)])
# Keeps crossing points off the pixel centres, so two rings never share a point.
_T_CLAMP = 0.01


def _segment_table():
    """SEG[case, connected, slot] = (start edge, end edge), -1 when unused.

    A crossing is a start where the corner before it (counter-clockwise) is inside. In the two saddle
    cases `connected` says whether the cell centre is inside, which decides how the crossings pair up.
    """
    table = -np.ones((16, 2, 2, 2), np.int8)
    for case in range(16):
        inside = [(case >> i) & 1 for i in range(4)]
        starts = [i for i in range(4) if inside[i] and not inside[(i + 1) % 4]]
        for connected in (0, 1):
            for slot, s in enumerate(starts):
                if len(starts) == 1:
                    e = next(i for i in range(4) if not inside[i] and inside[(i + 1) % 4])
                else:
                    e = (s + 1) % 4 if connected else (s - 1) % 4
                table[case, connected, slot] = (s, e)
    return table


_SEG = _segment_table()


def marching_squares(field, level):
    """Rings where `field` crosses `level`; `field` is (H, W), pixels at or above `level` are inside.

    Only the cells on the boundary are visited with float values, so a large image costs one pass of
    boolean work plus work proportional to the outline's length.
    """
    h, w = field.shape
    rows, cols = _boundary_cells(field, level)
    if rows.size == 0:
        return []

    # Padded grid values at the cells' corners; outside the image a value that puts the crossing on the border.
    row_at = [np.clip(rows + dr - 1, 0, h - 1) for dr in (0, 1)]
    col_at = [np.clip(cols + dc - 1, 0, w - 1) for dc in (0, 1)]
    row_out = [(rows + dr < 1) | (rows + dr > h) for dr in (0, 1)]
    col_out = [(cols + dc < 1) | (cols + dc > w) for dc in (0, 1)]
    corner_vals = np.empty((len(rows), 4))
    for k, (dr, dc) in enumerate(_CORNERS):
        v = field[row_at[dr], col_at[dc]].astype(np.float64)
        outside = row_out[dr] | col_out[dc]
        v[outside] = np.minimum(2.0 * level - v[outside], np.minimum(v[outside], level) - 1e-6)
        corner_vals[:, k] = v
    corner_in = corner_vals >= level
    case = corner_in[:, 0] + 2 * corner_in[:, 1] + 4 * corner_in[:, 2] + 8 * corner_in[:, 3]
    connected = (corner_vals.mean(axis=1) >= level).astype(np.int64)

    width = w + 2
    starts, ends, points = [], [], []
    for slot in (0, 1):
        seg = _SEG[case, connected, slot]
        ok = np.flatnonzero(seg[:, 0] >= 0)
        r, c, s, e = rows[ok], cols[ok], seg[ok, 0].astype(np.int64), seg[ok, 1].astype(np.int64)
        starts.append(_edge_id(r, c, s, width))
        ends.append(_edge_id(r, c, e, width))
        # The crossing on the start edge, interpolated between its two corners.
        s1 = (s + 1) % 4
        v0 = corner_vals[ok, s]
        v1 = corner_vals[ok, s1]
        t = np.clip((level - v0) / (v1 - v0), _T_CLAMP, 1.0 - _T_CLAMP)
        x0, y0 = c + _CORNERS[s, 1], r + _CORNERS[s, 0]
        x1, y1 = c + _CORNERS[s1, 1], r + _CORNERS[s1, 0]
        points.append(np.stack([x0 + t * (x1 - x0) - 0.5, y0 + t * (y1 - y0) - 0.5], axis=1))
    starts, ends, points = np.concatenate(starts), np.concatenate(ends), np.concatenate(points)

    order = np.argsort(starts)
    starts, ends, points = starts[order], ends[order], points[order]
    nxt = np.searchsorted(starts, ends)
    return [points[idx] for idx in _cycles(nxt)]


def _boundary_cells(field, level, band=128):
    """(row, column) of the padded-grid cells whose four corners are not all on one side of `level`.

    Works in bands of rows so that the temporary arrays stay small: on a 4096² image one full-size
    temporary costs more in fresh memory pages than the whole band loop. The cells are scanned 8 at a time:
    each row is padded to whole 8-byte words and only the nonzero words are looked into (the outline is a
    thin line across the image).
    """
    h, w = field.shape
    words = -(-(w + 1) // 8)
    rows, cols = [], []
    for top in range(0, h + 1, band):
        # Local row k is padded row top + k, i.e. image row top + k - 1 (zero outside the image).
        n = min(band, h + 1 - top)
        inside = np.zeros((n + 1, w + 2), np.uint8)
        k_lo, k_hi = max(0, 1 - top), min(n + 1, h + 1 - top)
        inside[k_lo:k_hi, 1:-1] = field[top + k_lo - 1:top + k_hi - 1] >= level
        total = inside[:-1, :-1] + inside[:-1, 1:] + inside[1:, 1:] + inside[1:, :-1]
        mixed = np.zeros((n, words * 8), bool)
        mixed[:, :w + 1] = total - 1 < 3  # 1 to 3 corners inside (0 wraps round to 255)
        r, word = np.divmod(np.flatnonzero(mixed.view(np.uint64)), words)
        hit, bit = np.nonzero(mixed.reshape(n, words, 8)[r, word])
        rows.append(r[hit] + top)
        cols.append(word[hit] * 8 + bit)
    return np.concatenate(rows), np.concatenate(cols)


def _edge_id(r, c, local_edge, width):
    """A unique id for the grid edge behind cell edge `local_edge` of cell (r, c)."""
    dr, dc, vertical = _EDGES[local_edge].T
    return 2 * ((r + dr) * width + c + dc) + vertical


def _cycles(nxt):
    """Index arrays of the cycles of the permutation `nxt`, each in walking order from its smallest index,
    ordered by that index. Each cycle is cut before its smallest index and its end joined to the next cycle's
    start: one path, which scipy's depth-first order walks in C (a walk in Python cost 0.1 s on a 4096² comb)."""
    n = len(nxt)
    _count, label = connected_components(csr_matrix((np.ones(n), nxt, np.arange(n + 1)), shape=(n, n)),
                                         directed=True, connection="weak")
    start = np.full(label.max() + 1, n)
    np.minimum.at(start, label, np.arange(n))
    start.sort()
    before = np.empty(n, np.int64)
    before[nxt] = np.arange(n)
    path = np.array(nxt)
    path[before[start[:-1]]] = start[1:]
    step = np.ones(n, bool)
    step[before[start[-1]]] = False  # the path ends where the last cycle closes
    order = depth_first_order(csr_matrix((np.ones(n - 1), path[step], np.concatenate([[0], np.cumsum(step)])),
                                         shape=(n, n)), start[0], return_predecessors=False)
    is_start = np.zeros(n, bool)
    is_start[start] = True
    return np.split(order, np.flatnonzero(is_start[order])[1:])


def signed_area(ring):
    """Shoelace area: positive for counter-clockwise rings."""
    x, y = ring[:, 0], ring[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


def points_in_rings(points, rings):
    """Even-odd inside test of many points against a set of rings."""
    return points_in_edges(points, np.vstack(rings), np.vstack([np.roll(r, -1, axis=0) for r in rings]))


def points_in_edges(points, a, b, band=512):
    """Even-odd inside test against the closed edge set a[i]-b[i] (crossing number). Points go in bands of
    `band` by height; each edge whose height range meets a band's is paired with only the band's points at a
    height it spans (found by binary search), so the work goes with the crossings, not points times edges: a
    lattice of 100k points against 2k edges takes 0.1 s instead of 18 s, and 1.9k points against the 14k
    edges of a comb 4.5 ms instead of 54."""
    points = np.asarray(points, float)
    inside = np.zeros(len(points), bool)
    low, high = np.minimum(a[:, 1], b[:, 1]), np.maximum(a[:, 1], b[:, 1])
    order = np.argsort(points[:, 1], kind="stable")
    for start in range(0, len(order), band):
        rows = order[start:start + band]
        px, py = points[rows, 0], points[rows, 1]
        near = np.flatnonzero((high >= py[0]) & (low <= py[-1]))
        # Edge a-b straddles height y, (ay > y) != (by > y), when low <= y < high.
        first, last = np.searchsorted(py, low[near], "left"), np.searchsorted(py, high[near], "left")
        count = last - first
        edge = np.repeat(near, count)
        at = np.arange(len(edge)) - np.repeat(np.cumsum(count) - count, count) + np.repeat(first, count)
        ax, ay, bx, by, y = a[edge, 0], a[edge, 1], b[edge, 0], b[edge, 1], py[at]
        x_cross = ax + (y - ay) * (bx - ax) / (by - ay)
        inside[rows] = np.bincount(at[px[at] < x_cross], minlength=len(rows)) % 2 == 1
    return inside


def select_rings(rings, min_area, keep_holes):
    """Drops specks smaller than `min_area` (pixels²) and, without `keep_holes`, every hole.

    Once a hole is filled, an island inside it would be covered twice, so it goes with the hole.
    (Islands inside a speck hole are smaller than the hole and go by area already.)
    """
    areas = np.array([signed_area(r) for r in rings])
    keep = np.abs(areas) >= min_area
    if not keep_holes:
        holes = areas < 0
        firsts = np.array([r[0] for r in rings])
        for i in np.flatnonzero(holes & keep):
            keep &= ~points_in_rings(firsts, [rings[i]])
        keep &= ~holes
    return [r for r, k in zip(rings, keep) if k]
