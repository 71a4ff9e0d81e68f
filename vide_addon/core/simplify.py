"""Outline simplification that never cuts the art.

A Douglas-Peucker variant: a chord may replace a run of contour points only if every point of the run
lies on its inside (left) side and within `tolerance` of it. The simplified ring then encloses the
marching-squares ring, which encloses every pixel centre at or above the threshold. Chords of different
rings (or far-apart parts of one ring) could still cross where the shape has narrow gaps, so crossings
are found and the offending chords are split until none is left.
"""

import numpy as np
from scipy.spatial import cKDTree

# How far (pixels) a chord may pass inside the contour: rounding only, far below a pixel. Blender's CDT
# works in float32, so an outline vertex a hair off the line through its neighbours is not kept at all
# (at 4096 px, float32 resolves 2.4e-4 px): the CDT would see three collinear points one way or the other.
_CUT_EPS = 1e-3
# Chords of different rings (or far-apart parts of one) closer than this are split like crossing ones. The
# contour itself keeps 0.014 px between rings where pixels touch diagonally (crossings stay 0.01 px off
# pixel centres), so splitting always ends; the mesh then never has two vertices closer than 0.01 px.
MIN_GAP = 0.0125
_TIED = 1e-9  # px: points this close to each other in what decides which to keep are kept together


def _lowest(ring):
    """Index of the ring's lowest point (the leftmost of those): where its simplification starts."""
    low = np.flatnonzero(ring[:, 1] <= ring[:, 1].min() + _TIED)
    return int(low[np.argmin(ring[low, 0])])


def simplify_rings(rings, tolerance):
    """Simplified copies of `rings` (each an (n, 2) array, inside on the left); no two chords cross.

    Each ring starts from its extreme points (lowest, highest, leftmost, rightmost: every one tied for them),
    not from wherever the contour started it, and every point tied for the one to keep goes in: a mirror-
    symmetric (or half-turn symmetric) shape gets a symmetric outline.

    All rings are simplified together, as one chain of closed rings (each ring followed by its first point
    again): every pass of the Douglas-Peucker refinement checks every open span of every ring at once."""
    if not rings:
        return []
    rings = [np.roll(r, -_lowest(r), axis=0) for r in rings]
    sizes = np.array([len(r) + 1 for r in rings])
    first = np.cumsum(sizes) - sizes
    last = first + sizes - 1
    chain = np.vstack([np.vstack([r, r[:1]]) for r in rings])
    keep = np.zeros(len(chain), bool)
    keep[first] = keep[last] = True
    for ring, at in zip(rings, first):
        for coord in (ring[:, 0], ring[:, 1]):
            keep[at + _run_ends(np.flatnonzero((coord <= coord.min() + _TIED) | (coord >= coord.max() - _TIED)))] = True
    # settled[a]: the chord from kept point a to the next kept point may replace its run. The step from one
    # ring's closing point to the next ring's first is no chord.
    settled = np.zeros(len(chain), bool)
    settled[last] = True
    _refine(chain, keep, settled, tolerance)
    _drop_straight(chain, keep, tolerance, first, last)
    ring_of = np.repeat(np.arange(len(rings)), sizes)
    # Each pass keeps more points; with every point kept the rings are the contour, which never crosses.
    while True:
        a, b = _crossing_chords(chain, keep, ring_of)
        wide = b - a > 1
        if not wide.any():
            break
        _split(chain, keep, settled, a[wide], b[wide], tolerance)
    return [chain[start:end][keep[start:end]] for start, end in zip(first, last)]


def _run_ends(idx):
    """The first and last of each run of consecutive indices in the sorted `idx`: of points tied for the one
    to keep, a run of neighbours lies on one line (or one edge of the ring), so its ends stand for it."""
    if len(idx) < 3:
        return idx
    gap = np.diff(idx) > 1
    return idx[np.concatenate([[True], gap]) | np.concatenate([gap, [True]])]


def _drop_straight(chain, keep, tolerance, first, last):
    """Drops kept points that their neighbours' chord may replace (the splits above keep a run's farthest
    point, which can still sit within rounding of the line through its final neighbours). In chain order;
    a ring's first and closing points stay."""
    idx = np.flatnonzero(keep)
    prev, nxt = idx[:-2], idx[2:]
    d, rel = chain[nxt] - chain[prev], chain[idx[1:-1]] - chain[prev]
    off = np.abs(d[:, 0] * rel[:, 1] - d[:, 1] * rel[:, 0]) / np.maximum(np.hypot(*d.T), 1e-300)
    ends = np.zeros(len(chain), bool)
    ends[first] = ends[last] = True
    before, after = list(range(-1, len(idx) - 1)), list(range(1, len(idx) + 1))  # kept neighbours, by rank
    for k in (np.flatnonzero((off < _CUT_EPS) & ~ends[idx[1:-1]]) + 1).tolist():
        p, q = before[k], after[k]
        if _worst(chain, np.array([idx[p]]), np.array([idx[q]]), tolerance)[1][0]:
            keep[idx[k]] = False
            after[p], before[q] = q, p


def _refine(chain, keep, settled, tolerance):
    """Keeps points until every chord between kept points may replace its run: Douglas-Peucker, every span
    not yet settled checked in the same pass."""
    while True:
        idx = np.flatnonzero(keep)
        a, b = idx[:-1], idx[1:]
        todo = ~settled[a]
        settled[a[todo & (b - a < 2)]] = True
        todo &= b - a >= 2
        if not todo.any():
            return
        a = a[todo]
        more, ok = _worst(chain, a, b[todo], tolerance)
        settled[a[ok]] = True
        keep[more] = True


def _worst(chain, a, b, tolerance):
    """For the spans a[i]..b[i] (kept points, b[i] - a[i] >= 2): the points that must be kept (for each span
    every point tied for it, as the ends of runs of neighbours), and whether each span's chord may replace
    its run."""
    span, starts, pos, (dx, dy), (rx, ry), length = _runs(chain, a, b)
    degenerate = length < 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        side = (dx * ry - dy * rx) / length  # > 0: inside (left of the chord)
    # Which test each span fails first, and the score whose maximum picks the point to keep for it.
    cut = (np.minimum.reduceat(side, starts) < -_CUT_EPS)[span]
    # Pixel contours put points at exactly the tolerance: within _TIED it counts as within, whichever way
    # rounding went, so mirror images take the same branch.
    wide = (np.maximum.reduceat(side, starts) > tolerance + _TIED)[span]  # farther from the line, so the chord
    # The distance to the chord itself (beyond its ends) only matters in spans that pass both tests above.
    dist = np.zeros(len(span))
    rest = np.flatnonzero(~(cut | wide))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip((rx[rest] * dx[rest] + ry[rest] * dy[rest]) / length[rest] ** 2, 0.0, 1.0)
    dist[rest] = np.hypot(rx[rest] - t * dx[rest], ry[rest] - t * dy[rest])
    far = (np.maximum.reduceat(dist, starts) > tolerance + _TIED)[span]
    score = np.where(degenerate, np.hypot(rx, ry),
                     np.where(cut, -side, np.where(wide, side, np.where(far, dist, -np.inf))))
    fails = (degenerate | cut | wide | far)
    best = np.maximum.reduceat(score, starts)[span]
    more = pos[fails & (score >= best - _TIED)]  # the best itself, and every point tied for it
    ok = ~np.logical_or.reduceat(fails, starts)
    return _run_ends(more), ok


def _runs(chain, a, b):
    """The points strictly between a[i] and b[i], all runs in one array: for each point its run, where each run
    starts in it, the point's index in the chain, its run's chord (b - a, as x and y), the point relative to a
    (x and y), and the chord's length."""
    counts = b - a - 1
    span = np.repeat(np.arange(len(a)), counts)
    starts = np.cumsum(counts) - counts
    pos = a[span] + 1 + np.arange(len(span)) - starts[span]
    chord = chain[b] - chain[a]
    x, y = chain[:, 0], chain[:, 1]
    return (span, starts, pos, (chord[span, 0], chord[span, 1]), (x[pos] - x[a][span], y[pos] - y[a][span]),
            np.hypot(*chord.T)[span])


def _split(chain, keep, settled, a, b, tolerance):
    """Keeps the points of each run a..b farthest from its chord (all tied for it; from its start, if the chord
    is degenerate), then whatever the new chords need so that they do not cut the art either (a chord that
    was valid for the whole run is not necessarily valid for part of it)."""
    span, starts, pos, (dx, dy), (rx, ry), length = _runs(chain, a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        dist = np.where(length > 1e-12, np.abs(dx * ry - dy * rx) / length, np.hypot(rx, ry))
    best = np.maximum.reduceat(dist, starts)[span]
    keep[_run_ends(pos[dist >= best - _TIED])] = True
    settled[a] = False
    _refine(chain, keep, settled, tolerance)


def _crossing_chords(chain, keep, ring_of):
    """(a, b): the kept points at the ends of every chord that crosses or touches a chord it does not share an
    end with."""
    idx = np.flatnonzero(keep)
    chord = ring_of[idx[:-1]] == ring_of[idx[1:]]
    a, b = idx[:-1][chord], idx[1:][chord]
    p, q, ring = chain[a], chain[b], ring_of[a]
    # Each chord's rank in its ring and the ring's chord count: a ring's last chord meets its first.
    count = np.bincount(ring)
    rank = np.arange(len(a)) - (np.cumsum(count) - count)[ring]
    owner = np.stack([ring, rank, count[ring]], axis=1)

    pairs = _near_pairs(p, q)
    if len(pairs) == 0:
        return a[:0], b[:0]
    i, j = pairs.T
    same_ring = owner[i, 0] == owner[j, 0]
    gap = np.abs(owner[i, 1] - owner[j, 1])
    adjacent = same_ring & ((gap == 1) | (gap == owner[i, 2] - 1))
    i, j = i[~adjacent], j[~adjacent]
    hit = _segments_meet(p[i], q[i], p[j], q[j]) | (_segment_distance(p[i], q[i], p[j], q[j]) < MIN_GAP)
    bad = np.unique(np.concatenate([i[hit], j[hit]]))
    return a[bad], b[bad]


def _near_pairs(p, q, step=4.0):
    """Pairs of chords whose samples (every `step` at most) come within `step` + 2 MIN_GAP: a superset of the
    pairs that cross or come closer than MIN_GAP."""
    lengths = np.hypot(*(q - p).T)
    counts = np.maximum(np.ceil(lengths / step).astype(np.int64), 1) + 1
    seg = np.repeat(np.arange(len(p)), counts)
    first = np.cumsum(counts) - counts
    t = (np.arange(counts.sum()) - first[seg]) / (counts[seg] - 1)
    samples = p[seg] + t[:, None] * (q - p)[seg]
    pairs = cKDTree(samples).query_pairs(step * 1.01 + 2 * MIN_GAP, output_type="ndarray")
    i, j = seg[pairs].T
    key = np.unique(np.minimum(i, j) * len(p) + np.maximum(i, j))
    key = key[key // len(p) != key % len(p)]
    return np.stack([key // len(p), key % len(p)], axis=1)


def _segment_distance(a, b, c, d):
    """Distance between segments a-b and c-d that do not cross: the least of their ends' distances to the other."""
    def to_segment(p, s, e):
        d = e - s
        t = np.clip(np.einsum("ij,ij->i", p - s, d) / np.maximum(np.einsum("ij,ij->i", d, d), 1e-300), 0.0, 1.0)
        return np.hypot(*(p - s - t[:, None] * d).T)

    return np.min([to_segment(a, c, d), to_segment(b, c, d), to_segment(c, a, b), to_segment(d, a, b)], axis=0)


def _segments_meet(a, b, c, d):
    """Whether segments a-b and c-d share a point (crossing, touching or overlapping)."""
    def orient(p, q, r):
        return np.sign((q[:, 0] - p[:, 0]) * (r[:, 1] - p[:, 1]) - (q[:, 1] - p[:, 1]) * (r[:, 0] - p[:, 0]))

    o1, o2, o3, o4 = orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b)
    return (o1 * o2 <= 0) & (o3 * o4 <= 0) & ~((o1 == 0) & (o2 == 0) & ~_boxes_overlap(a, b, c, d))


def _boxes_overlap(a, b, c, d):
    """Bounding boxes of a-b and c-d overlap (settles the collinear case)."""
    lo1, hi1 = np.minimum(a, b), np.maximum(a, b)
    lo2, hi2 = np.minimum(c, d), np.maximum(c, d)
    return np.all((lo1 <= hi2) & (lo2 <= hi1), axis=1)
