"""Bone weights from distances: exp(-distance / smoothness), normalized, the strongest few kept.

A bone's weight falls off with its distance inside the shape; a larger smoothness spreads it further and
blends joints more softly. Computed with the row maximum taken out first, so distances far larger than
the smoothness do not underflow to a row of zeros. Works in place on one array as far as it can (at 64k
vertices and 60 bones each full-size temporary is 30 MB); exp and the fade run only on the entries within
REACH, a few per vertex, as the others are exactly 0.
"""

import numpy as np

MAX_INFLUENCES = 4  # bones per vertex at most: what game engines and glTF take
PRUNE = 0.01  # weights below this are dropped
REACH = 6.0  # in smoothness lengths past the nearest bone: where a bone's weight has faded to 0
# With Joint Blending, how far past the nearest bone distances are measured, in lengths of the largest smoothness:
# beyond, every bone's seed (exp(-(d - nearest) / smoothness)) is under exp(-30), faded to under 1e-5 of its diffused
# weight (smooth_weights.GEODESIC_REACH) and pruned; weights on the bench meshes are the same to 1e-16. Without it
# nothing is cut: falloff_weights keeps a bone REACH of its own smoothness lengths past the nearest bone *in that
# bone's lengths*, so a bone with a larger smoothness than another's reaches further the further the nearest is.
MEASURED_REACH = 30.0


def bezier_falloff(x):
    """f(x) = 1 - 10x³ + 15x⁴ - 6x⁵ on [0, 1] (the degree-5 Bézier with ordinates 1,1,1,0,0,0), 0 beyond:
    f(0) = 1, f(1) = 0, first and second derivatives 0 at both ends, decreasing in between."""
    x = np.clip(np.asarray(x, float), 0.0, 1.0)
    return 1.0 - x**3 * (10.0 - 15.0 * x + 6.0 * x * x)


def falloff_weights(dist, smoothness, max_influences=MAX_INFLUENCES, prune=PRUNE):
    """Weights (n, bones) from distances (n, bones) and one smoothness per bone.

    Each row sums to 1 over at most `max_influences` bones; weights below `prune` are dropped and the
    rest renormalized (the strongest bone always stays). Rows with no finite distance stay zero.

    A bone's weight also fades to exactly 0, C²-smoothly, where it is REACH of its smoothness lengths further
    than the nearest bone: the tail of exp(-d / s) that would come round through a crotch onto the other
    leg (a few hundredths on small characters) is cut, where it was under exp(-REACH) of the nearest bone's.
    """
    w = np.array(dist, np.float64)
    w /= -np.asarray(smoothness, np.float64)[None, :]
    top = w.max(axis=1, keepdims=True)
    top[~np.isfinite(top)] = 0.0  # no bone reaches the row: exp(-inf) leaves it zero
    w -= top
    flat = w.reshape(-1)
    near = np.flatnonzero(flat > -REACH)  # the rest fade to exactly 0 (most, with many bones)
    part = flat[near]
    flat[:] = 0.0
    flat[near] = np.exp(part) * bezier_falloff(-part / REACH)
    return strongest(w, max_influences, prune)


def strongest(w, max_influences=MAX_INFLUENCES, prune=PRUNE):
    """In place: keeps each row's `max_influences` largest weights less the next largest, normalizes, fades
    out those below twice `prune` (0 below `prune`) and normalizes again (the strongest always stays).
    Returns `w`.

    Taking the next largest off (rather than only cutting there), and fading rather than dropping, keeps the
    weights continuous where the strongest few change or a weight crosses `prune` (a cut makes neighbouring
    vertices jump, and tiny triangles there flip), and treats equal weights alike: two bones tied for the last
    place both drop, so a mirrored rig keeps mirrored weights."""
    bones = w.shape[1]
    if bones > max_influences:
        top = w.argmax(axis=1)
        next_largest = np.partition(w, bones - max_influences - 1, axis=1)[:, bones - max_influences - 1, None]
        w -= next_largest  # those not among the largest few go to 0 or below
        np.maximum(w, 0.0, out=w)
        tied = np.flatnonzero((w.sum(axis=1) == 0) & (next_largest[:, 0] > 0))  # more than that many tied first
        w[tied, top[tied]] = 1.0
    _normalize(w)
    if prune > 0.0:
        top = w.argmax(axis=1)
        kept = np.nonzero(w)  # a few per row
        w[kept] *= np.minimum(np.maximum(w[kept] / prune - 1.0, 0.0), 1.0)
        empty = np.flatnonzero(w.sum(axis=1) == 0)
        w[empty, top[empty]] = 1.0
    _normalize(w)
    return w


def _normalize(w):
    total = w.sum(axis=1, keepdims=True)
    total[total == 0.0] = 1.0
    w /= total
