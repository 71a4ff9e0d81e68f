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
    symmetric (or half-turn symmetric) shape gets a symmetric outline."""
    rings = [np.roll(r, -_lowest(r), axis=0) for r in rings]
    keeps = [_simplify_ring(r, tolerance) for r in rings]
    closed = [np.vstack([r, r[:1]]) for r in rings]
    # Each pass keeps more points; with every point kept the rings are the contour, which never crosses.
    while True:
        crossing = [(i, a, b) for i, a, b in _crossing_chords(closed, keeps) if b - a > 1]
        if not crossing:
            break
        for ring_index, a, b in crossing:
            _split(closed[ring_index], keeps[ring_index], a, b, tolerance)
    return [c[k][:-1] for c, k in zip(closed, keeps)]


def _simplify_ring(ring, tolerance):
    """Mask of kept points on the closed chain ring + ring[0] (first and last are the same point)."""
    n = len(ring)
    chain = np.vstack([ring, ring[:1]])
    keep = np.zeros(n + 1, bool)
    keep[n] = True
    for coord in (ring[:, 0], ring[:, 1]):
        keep[:n] |= (coord <= coord.min() + _TIED) | (coord >= coord.max() - _TIED)
    idx = np.flatnonzero(keep)
    _refine(chain, keep, list(zip(idx[:-1], idx[1:])), tolerance)
    _drop_straight(chain, keep, tolerance)
    return keep


def _drop_straight(chain, keep, tolerance):
    """Drops kept points that their neighbours' chord may replace (the splits above keep a run's farthest
    point, which can still sit within rounding of the line through its final neighbours)."""
    idx = np.flatnonzero(keep)
    prev, nxt = idx[:-2], idx[2:]
    d, rel = chain[nxt] - chain[prev], chain[idx[1:-1]] - chain[prev]
    off = np.abs(d[:, 0] * rel[:, 1] - d[:, 1] * rel[:, 0]) / np.maximum(np.hypot(*d.T), 1e-300)
    for k in np.flatnonzero(off < _CUT_EPS):
        i = idx[k + 1]
        a = i - 1 - np.flatnonzero(keep[i - 1::-1])[0]
        b = i + 1 + np.flatnonzero(keep[i + 1:])[0]
        keep[i] = False
        if _worst(chain, a, b, tolerance) is not None:
            keep[i] = True


def _refine(chain, keep, spans, tolerance):
    """Keeps points inside the spans (a, b) until every chord between kept points may replace its run."""
    stack = list(spans)
    while stack:
        a, b = stack.pop()
        k = _worst(chain, a, b, tolerance)
        if k is not None:
            keep[k] = True
            ends = np.concatenate([[a], k, [b]])
            stack += list(zip(ends[:-1], ends[1:]))


def _tied(values, best):
    """Every index whose value is within _TIED of the best one (so mirror images are kept together)."""
    return np.flatnonzero(np.abs(values - values[best]) <= _TIED)


def _worst(chain, a, b, tolerance):
    """The points that must be kept between a and b (all tied for it), or None if the chord a-b may replace
    them."""
    if b - a < 2:
        return None
    start, run = chain[a], chain[a + 1:b]
    d = chain[b] - start
    length = np.hypot(*d)
    rel = run - start
    if length < 1e-12:
        far = np.hypot(*rel.T)
        return a + 1 + _tied(far, np.argmax(far))
    side = (d[0] * rel[:, 1] - d[1] * rel[:, 0]) / length  # > 0: inside (left of the chord)
    if side.min() < -_CUT_EPS:
        return a + 1 + _tied(side, np.argmin(side))
    # Pixel contours put points at exactly the tolerance: within _TIED it counts as within, whichever way
    # rounding went, so mirror images take the same branch.
    if side.max() > tolerance + _TIED:  # farther than that from the line, so from the chord too
        return a + 1 + _tied(side, np.argmax(side))
    t = np.clip(rel @ d / length**2, 0.0, 1.0)
    dist = np.hypot(*(rel - t[:, None] * d).T)
    if dist.max() <= tolerance + _TIED:
        return None
    return a + 1 + _tied(dist, np.argmax(dist))


def _split(chain, keep, a, b, tolerance):
    """Keeps the points of the run a..b farthest from its chord (all tied for it; from its start, if the chord
    is degenerate), then whatever the new chords need so that they do not cut the art either (a chord that
    was valid for the whole run is not necessarily valid for part of it)."""
    if b - a < 2:
        return
    start, d = chain[a], chain[b] - chain[a]
    rel = chain[a + 1:b] - start
    length = np.hypot(*d)
    dist = np.abs(d[0] * rel[:, 1] - d[1] * rel[:, 0]) / length if length > 1e-12 else np.hypot(*rel.T)
    k = a + 1 + _tied(dist, np.argmax(dist))
    keep[k] = True
    ends = np.concatenate([[a], k, [b]])
    _refine(chain, keep, list(zip(ends[:-1], ends[1:])), tolerance)


def _crossing_chords(closed, keeps):
    """(ring, a, b) of every chord that crosses or touches a chord it does not share an end with."""
    starts, ends, owner = [], [], []
    for i, (chain, keep) in enumerate(zip(closed, keeps)):
        idx = np.flatnonzero(keep)
        starts.append(chain[idx[:-1]])
        ends.append(chain[idx[1:]])
        owner.append(np.stack([np.full(len(idx) - 1, i), idx[:-1], idx[1:], np.arange(len(idx) - 1),
                               np.full(len(idx) - 1, len(idx) - 1)], axis=1))
    p, q, owner = np.concatenate(starts), np.concatenate(ends), np.concatenate(owner)

    pairs = _near_pairs(p, q)
    if len(pairs) == 0:
        return []
    i, j = pairs.T
    same_ring = owner[i, 0] == owner[j, 0]
    gap = np.abs(owner[i, 3] - owner[j, 3])
    adjacent = same_ring & ((gap == 1) | (gap == owner[i, 4] - 1))
    i, j = i[~adjacent], j[~adjacent]
    hit = _segments_meet(p[i], q[i], p[j], q[j]) | (_segment_distance(p[i], q[i], p[j], q[j]) < MIN_GAP)
    bad = np.unique(np.concatenate([i[hit], j[hit]]))
    return [tuple(owner[k, :3]) for k in bad]


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
    pairs = seg[pairs]
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return np.unique(np.sort(pairs, axis=1), axis=0)


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
