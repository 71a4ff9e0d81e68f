"""Bone weights from distances: exp(-distance / smoothness), normalized, the strongest few kept.

A bone's weight falls off with its distance inside the shape; a larger smoothness spreads it further and
blends joints more softly. Computed with the row maximum taken out first, so distances far larger than
the smoothness do not underflow to a row of zeros. Weights are scipy.sparse matrices (a vertex has a few bones at
most), and the dense work runs on blocks of BLOCK entries (`block_rows`): at 72k vertices and 60 bones a full
(vertices, bones) array is 35 MB, above glibc's 32 MB mmap threshold, so each such temporary is a fresh mapping whose
page faults cost 4 ms a pass warm and over 200 ms cold (measured inside Blender on the comb of bench/weights.py); a
block stays in the heap and in cache.
"""

import numpy as np
from scipy import sparse

MAX_INFLUENCES = 4  # bones per vertex at most: what game engines and glTF take
PRUNE = 0.01  # weights below this are dropped
REACH = 6.0  # in smoothness lengths past the nearest bone: where a bone's weight has faded to 0
# With Joint Blending, how far past the nearest bone distances are measured, in lengths of the largest smoothness:
# beyond, every bone's seed (exp(-(d - nearest) / smoothness)) is under exp(-30), faded to under 1e-5 of its diffused
# weight (smooth_weights.GEODESIC_REACH) and pruned; weights on the bench meshes are the same to 1e-16. Without it
# nothing is cut: falloff_weights keeps a bone REACH of its own smoothness lengths past the nearest bone *in that
# bone's lengths*, so a bone with a larger smoothness than another's reaches further the further the nearest is.
MEASURED_REACH = 30.0
# Rows whose other weights are under this share of Prune of their largest come out as that one bone (`strongest`): the
# margin keeps round-off in the steps from leaving a weight exactly at Prune's fade (1e-3, against 1e-16).
ONE_BONE = 0.999
BLOCK = 1 << 17  # entries per block of dense work (1 MB): 2048 rows of 60 bones, fewer calls with fewer bones
# Dense rows of up to this many bones are reduced a column at a time (`along_rows`).
FEW_COLUMNS = 32
FEW_PER_ROW = 8  # `flat_csr` finds the rows of up to this many entries per row by division (16 per row: as quick)


def block_rows(shape):
    """(start, stop) of the blocks of rows of a (rows, bones) array that dense work takes at a time."""
    rows = max(BLOCK // max(shape[1], 1), 1)
    return [(start, start + rows) for start in range(0, shape[0], rows)]


def by_rows(dense, block):
    """`block` (a function of a dense (rows, bones) copy, returning it or a CSR matrix) applied to `block_rows` of
    `dense` (an array or a sparse matrix) at a time, as one CSR matrix: no full-size dense temporary."""
    dense = dense.tocsr() if sparse.issparse(dense) else np.asarray(dense)
    blocks = block_rows(dense.shape)
    parts = []
    for start, stop in blocks:
        rows = dense[start:stop] if len(blocks) > 1 else dense  # one block: no sliced copy, nothing to stack
        # Row-major (a solve's output is column-major): the steps work on flat views of it.
        part = block(rows.toarray() if sparse.issparse(rows) else np.array(rows, np.float64, order="C"))
        parts.append(part if sparse.issparse(part) else to_csr(part))
    return stacked(parts, dense.shape)


def stacked(blocks, shape):
    """CSR blocks of rows as one CSR matrix of `shape` (one block as it is, no copy)."""
    if len(blocks) == 1:
        return blocks[0]
    return sparse.vstack(blocks, format="csr") if blocks else sparse.csr_matrix(shape)


def to_csr(dense):
    """A dense (n, k) array's nonzeros as a CSR matrix, found through a flat mask: 2048 x 60 with a fifth nonzero,
    0.6 ms against 2 ms for sparse.csr_matrix(dense) (which goes through a 2-D np.nonzero)."""
    dense = np.ascontiguousarray(dense)
    flat = dense.reshape(-1)
    at = np.flatnonzero(flat != 0)
    return flat_csr(at, flat[at], dense.shape)


def flat_csr(at, values, shape):
    """The CSR matrix of `shape` with `values` at the increasing flat (row-major) indices `at`. Its index arrays are
    made int32, as in `row_csr`. How each row's entries are found, min of interleaved runs (ms, before -> after):
    - every entry (a small mesh's Geodesic seeds, none under the floor): laid out, 2673 x 8 0.11 -> 0.04;
    - up to FEW_PER_ROW per row (Meshfree C²'s seeds, most blocks of weights): rows by one division, counted,
      2673 x 8 at 1.4 per row 0.11 -> 0.06, 26214 x 5 at 1.5 per row 1.02 -> 0.22, 2048 x 60 at 3 per row 0.10 ->
      0.06;
    - more: each row's start searched in `at` (2048 x 60 at 30 per row: 0.18 against 0.28 by division)."""
    n, k = shape
    if len(at) == n * k:  # increasing and in range: every flat index in order
        indptr, columns = np.arange(0, (n + 1) * k, k, dtype=np.int32), np.tile(np.arange(k, dtype=np.int32), n)
        return sparse.csr_matrix((values, columns, indptr), shape)
    if len(at) <= FEW_PER_ROW * n:
        rows = at // k
        indptr = np.zeros(n + 1, np.int32)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        rows *= k
        return sparse.csr_matrix((values, (at - rows).astype(np.int32), indptr), shape)
    indptr = np.searchsorted(at, np.arange(0, (n + 1) * k, k))
    columns = at - np.repeat(np.arange(0, n * k, k), np.diff(indptr))  # not at % k: int64 division is slow
    return sparse.csr_matrix((values, columns.astype(np.int32), indptr.astype(np.int32)), shape)


def row_csr(rows, columns, values, shape):
    """The CSR matrix of `shape` with `values` at (`rows`, `columns`), given in row-major order. Its index arrays are
    made int32: scipy reads int64 ones through to check that they fit (2673 x 8 with half nonzero: 0.14 -> 0.08 ms)."""
    indptr = np.zeros(shape[0] + 1, np.int32)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    return sparse.csr_matrix((values, columns.astype(np.int32), indptr), shape)


def bezier_falloff(x):
    """f(x) = 1 - 10x³ + 15x⁴ - 6x⁵ on [0, 1] (the degree-5 Bézier with ordinates 1,1,1,0,0,0), 0 beyond:
    f(0) = 1, f(1) = 0, first and second derivatives 0 at both ends, decreasing in between. Computed as
    (1 - x)³ (1 + 3x + 6x²): the expanded form cancels near x = 1 (bases of 1e-15 noise, normalized, gave a
    sample of a mirror-symmetric hand weights 0.10 off its mirror image)."""
    x = np.clip(np.asarray(x, float), 0.0, 1.0)
    return (1.0 - x) ** 3 * (1.0 + 3.0 * x + 6.0 * x * x)


def falloff_weights(dist, smoothness, max_influences=MAX_INFLUENCES, prune=PRUNE):
    """Weights (n, bones, CSR) from distances (n, bones) and one smoothness per bone.

    Each row sums to 1 over at most `max_influences` bones; weights below `prune` are dropped and the
    rest renormalized (the strongest bone always stays). A row with no finite distance goes wholly to the first bone.

    A bone's weight also fades to exactly 0, C²-smoothly, where it is REACH of its smoothness lengths further
    than the nearest bone: the tail of exp(-d / s) that would come round through a crotch onto the other
    leg (a few hundredths on small characters) is cut, where it was under exp(-REACH) of the nearest bone's.
    """
    per_length = -1.0 / np.asarray(smoothness, np.float64)[None, :]

    def block(w):
        w *= per_length
        top = along_rows(np.maximum, w)[:, None]
        top[~np.isfinite(top)] = 0.0  # no bone reaches the row: exp(-inf) leaves it zero
        w -= top
        flat = w.reshape(-1)
        near = np.flatnonzero(flat > -REACH)  # the rest fade to exactly 0 (most, with many bones)
        part = flat[near]
        return flat_csr(near, np.exp(part) * bezier_falloff(-part / REACH), w.shape)

    return strongest(by_rows(dist, block), max_influences, prune)


def strongest(w, max_influences=MAX_INFLUENCES, prune=PRUNE):
    """Weights (n, bones) as a CSR matrix, from `w` (an array or a sparse matrix with no entry stored twice, not
    changed): keeps each row's `max_influences` largest weights less the next largest, normalizes, fades out those
    below twice `prune` (0 below `prune`) and normalizes again (the strongest always stays). Done on dense blocks of
    rows (`by_rows`).

    Taking the next largest off (rather than only cutting there), and fading rather than dropping, keeps the
    weights continuous where the strongest few change or a weight crosses `prune` (a cut makes neighbouring
    vertices jump, and tiny triangles there flip), and treats equal weights alike: two bones tied for the last
    place both drop, so a mirrored rig keeps mirrored weights.

    A row whose other weights are all under ONE_BONE of `prune` of its largest, none below 0, comes out as 1 on that
    bone whatever the steps: in each block of rows of a sparse `w` where such rows are half or more, only the others
    are made dense and go through them (the comb of bench/weights.py blended: two thirds of its rows are one bone;
    with the steps on the weights above the next largest only, 52 -> 33 ms)."""
    def steps(block):
        return _strongest(block, max_influences, prune)

    if not sparse.issparse(w) or np.prod(w.shape) <= BLOCK:  # one block: finding those rows would take longer
        return by_rows(w, steps)
    w = w.tocsr()
    return stacked([_one_bone_or_steps(w[start:stop], steps, prune) for start, stop in block_rows(w.shape)], w.shape)


def _one_bone_or_steps(w, steps, prune):
    """`strongest` on a block of rows w (CSR; its entries in any order, as a product leaves them, but none twice): the
    rows that come out as one bone set so, and the others through `steps` (dense), or all of them when those are
    more than half."""
    n, data, rows, top = w.shape[0], w.data, entry_rows(w), row_max(w)
    alone = ((np.bincount(rows[data >= ONE_BONE * prune * top[rows]], minlength=n) == 1) & (top > 0)
             & (np.bincount(rows[data < 0], minlength=n) == 0))
    ruled = np.flatnonzero(~alone)
    if 2 * len(ruled) > n:
        return steps(w.toarray())
    part = steps(w[ruled].toarray())
    counts = np.ones(n, np.int64)
    counts[ruled] = np.diff(part.indptr)
    indptr = np.r_[0, np.cumsum(counts)]
    indices, values = np.empty(indptr[-1], w.indices.dtype), np.ones(indptr[-1])
    indices[indptr[:-1][alone]] = w.indices[(data == top[rows]) & alone[rows]]  # the one largest of each such row
    at = np.repeat(indptr[ruled] - part.indptr[:-1], np.diff(part.indptr)) + np.arange(part.nnz)
    indices[at], values[at] = part.indices, part.data
    return sparse.csr_matrix((values, indices, indptr), w.shape)


def _strongest(w, max_influences, prune):
    """`strongest` on a dense block of rows (changed), as a CSR matrix. With more bones than `max_influences`, the
    steps after the next largest is taken off work on the weights above it only (a few per row, in row order): 2048
    rows of 60 bones 1.4 -> 0.6 ms, against the whole block."""
    n, bones = w.shape
    if bones <= max_influences:
        return to_csr(_pruned(_normalized(w), prune))
    top = w.argmax(axis=1)
    next_largest = _nth_largest(w, max_influences + 1, top)
    at = np.flatnonzero((w > next_largest[:, None]).reshape(-1))  # the rest go to 0 or below
    rows, columns = np.divmod(at, bones)
    values = w.reshape(-1)[at] - next_largest[rows]
    values /= _sums(rows, values, n)[rows]
    if prune > 0.0:
        values *= np.minimum(np.maximum(values / prune - 1.0, 0.0), 1.0)
        total = np.bincount(rows, values, n)
        faded = total == 0
        values[(columns == top[rows]) & faded[rows]] = 1.0  # the strongest stays alone: its row sums to 1
        total[faded] = 1.0
        values /= total[rows]
    # Rows with none above it (more than `max_influences` tied first, or no weight): 1 on the strongest, or on the
    # first bone, as the steps on the whole row give.
    empty = np.ones(n, bool)
    empty[rows] = False
    empty &= (next_largest > 0) | (prune > 0.0)
    if empty.any():
        rows = np.flatnonzero(empty)
        first = rows * bones + np.where(next_largest[rows] > 0, top[rows], 0)
        order = np.argsort(np.r_[at, first], kind="stable")
        rows, columns = np.divmod(np.r_[at, first][order], bones)
        values = np.r_[values, np.ones(len(first))][order]
    kept = np.flatnonzero(values)  # one index for the three: quicker than masking each
    return row_csr(rows[kept], columns[kept], values[kept], w.shape)


def _sums(rows, values, n):
    """Each row's sum of `values` (entries of `rows`, n rows), 1 where it is 0."""
    total = np.bincount(rows, values, n)
    total[total == 0.0] = 1.0
    return total


def _normalized(w):
    total = w.sum(axis=1, keepdims=True)
    total[total == 0.0] = 1.0
    w /= total
    return w


def _pruned(w, prune):
    """The weights of normalized rows w faded out below twice `prune`, 0 below it, normalized again (in place)."""
    if prune > 0.0:
        top = w.argmax(axis=1)
        flat = w.reshape(-1)
        kept = np.flatnonzero(flat != 0)  # a few per row
        flat[kept] *= np.minimum(np.maximum(flat[kept] / prune - 1.0, 0.0), 1.0)
        empty = np.flatnonzero(w.sum(axis=1) == 0)
        w[empty, top[empty]] = 1.0
    return _normalized(w)


def _nth_largest(w, n, top):
    """Each row's n-th largest value in w (rows, k), n <= k, equal values counted apart (as np.partition does), given
    its largest's columns `top`: with k at least 3n, n - 1 rounds of taking the largest out of a copy (2048 rows of 60
    with n = 5: 0.37 ms against 1.07 ms for np.partition, which selects row by row); with fewer, np.partition (of 5
    bones: 0.75 ms against 2.87 ms for the rounds; 13 and 20 bones: 1.6 / 1.7 and 1.6 / 1.05 ms)."""
    if w.shape[1] < 3 * n:
        return np.partition(w, w.shape[1] - n, axis=1)[:, w.shape[1] - n]
    rest, rows = w.copy(), np.arange(len(w))
    for _ in range(n - 1):
        rest[rows, top] = -np.inf
        top = rest.argmax(axis=1)
    return rest[rows, top]


def along_rows(ufunc, w):
    """ufunc (np.minimum, np.maximum) reduced along each row of a dense (rows, k) array: with up to FEW_COLUMNS columns
    one call per column, as numpy reduces along rows of a few values slowly (2673 x 8: 0.11 -> 0.02 ms; the 200k
    hand's blocks of 26214 x 5: 0.95 -> 0.09 ms); with more, numpy's reduction (2048 x 60: 0.11 ms against 0.14)."""
    if not 0 < w.shape[1] <= FEW_COLUMNS:
        return ufunc.reduce(w, axis=1)
    out = w[:, 0].copy()
    for j in range(1, w.shape[1]):
        ufunc(out, w[:, j], out=out)
    return out


def row_max(w):
    """Each row's largest stored value in the CSR matrix w, 0 where it has none (scipy's max(axis=1) took 3 times
    as long on the character's seeds)."""
    top, filled = np.zeros(w.shape[0]), np.flatnonzero(np.diff(w.indptr))
    if len(filled):
        top[filled] = np.maximum.reduceat(w.data, w.indptr[filled])
    return top


def entry_rows(w):
    """The row of each stored entry of the CSR matrix w."""
    return np.repeat(np.arange(w.shape[0]), np.diff(w.indptr))
