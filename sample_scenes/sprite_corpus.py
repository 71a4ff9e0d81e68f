"""Real sprites for weight tests and benchmarks: the CC0 corpus in tests/data/kenney, resized as a user would
(bilinear), rigs made automatically the way artists draw them, and an independent reference for what a
bone may reach: shortest paths on the pixel grid inside the alpha mask.

Pure numpy/scipy (no Blender), so the rig and the reference owe nothing to VIDE's own code. Pixel
coordinates are (x, y) with y up and row 0 at the bottom, as Blender stores images.
"""

from pathlib import Path

import numpy as np
from scipy import ndimage
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra, minimum_spanning_tree

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "kenney"
THRESHOLD = 0.5  # alpha that counts as the shape, as Vectorize Image's default


def sprite_names():
    return sorted(p.stem for p in CORPUS.glob("*.png"))


def resized(rgba, scale):
    """An RGBA image (h, w, 4) resized by `scale` with bilinear interpolation of premultiplied colour (what
    an image editor does), pixel centres mapped onto pixel centres."""
    h, w = rgba.shape[:2]
    out_h, out_w = max(int(round(h * scale)), 1), max(int(round(w * scale)), 1)
    yy = (np.arange(out_h) + 0.5) * h / out_h - 0.5
    xx = (np.arange(out_w) + 0.5) * w / out_w - 0.5
    coords = np.meshgrid(yy, xx, indexing="ij")
    pre = rgba.astype(np.float64).copy()
    pre[..., :3] *= pre[..., 3:]
    out = np.stack([ndimage.map_coordinates(pre[..., c], coords, order=1, mode="nearest") for c in range(4)], -1)
    alpha = out[..., 3:]
    out[..., :3] = np.where(alpha > 0, out[..., :3] / np.maximum(alpha, 1e-12), 0.0)
    return np.clip(out, 0.0, 1.0).astype(np.float32)


def main_piece(alpha):
    """The largest 8-connected piece of the shape (where a rig goes), as a boolean mask."""
    mask = alpha >= THRESHOLD
    label, count = ndimage.label(mask, structure=np.ones((3, 3)))
    if count == 0:
        raise ValueError("the image has no opaque pixel")
    sizes = np.bincount(label.ravel())[1:]
    return label == 1 + int(np.argmax(sizes))


class PixelGrid:
    """The 8-connected graph of a mask's pixels (steps of 1 and √2): inside distances by Dijkstra."""

    def __init__(self, mask):
        self.mask = mask
        self.rows, self.cols = np.nonzero(mask)
        index = np.full(mask.shape, -1, np.int64)
        index[self.rows, self.cols] = np.arange(len(self.rows))
        self.index = index
        src, dst, length = [], [], []
        h, w = mask.shape
        for dy, dx in ((0, 1), (1, 0), (1, 1), (1, -1)):
            r, c = self.rows + dy, self.cols + dx
            ok = (r >= 0) & (r < h) & (c >= 0) & (c < w)
            ok[ok] = mask[r[ok], c[ok]]
            src.append(index[self.rows[ok], self.cols[ok]])
            dst.append(index[r[ok], c[ok]])
            length.append(np.full(int(ok.sum()), np.hypot(dy, dx)))
        src, dst, length = map(np.concatenate, (src, dst, length))
        n = len(self.rows)
        self.graph = coo_matrix((length, (src, dst)), shape=(n, n)).tocsr()
        # every pixel of the image -> the nearest pixel of the mask (for points just outside it)
        _d, (near_r, near_c) = ndimage.distance_transform_edt(~mask, return_indices=True)
        self.nearest = index[near_r, near_c]

    def centres(self):
        """(x, y) of each node's pixel centre."""
        return np.column_stack([self.cols + 0.5, self.rows + 0.5])

    def node_at(self, xy):
        """The node of the pixel holding each point (n, 2), or of the mask pixel nearest to it."""
        xy = np.atleast_2d(xy)
        c = np.clip(np.floor(xy[:, 0]).astype(np.int64), 0, self.mask.shape[1] - 1)
        r = np.clip(np.floor(xy[:, 1]).astype(np.int64), 0, self.mask.shape[0] - 1)
        return self.nearest[r, c]

    def from_nodes(self, nodes):
        """Inside distances (nodes, pixels) from each of `nodes`."""
        return dijkstra(self.graph, directed=False, indices=nodes)

    def from_segment(self, head, tail):
        """Inside distances (pixels,) from a bone segment: it starts at the mask pixels it passes over (within
        half a pixel diagonal), or None if it passes over none (a bone wholly outside)."""
        pts = self.centres()
        d = segment_gap(pts, head, tail)
        seeds = np.flatnonzero(d <= 0.75)
        if len(seeds) == 0:
            return None
        return dijkstra(self.graph, directed=False, indices=seeds, min_only=True)


def segment_gap(points, a, b):
    """Straight distance from points (n, 2) to the segment a-b."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    ab = b - a
    t = np.clip(((points - a) @ ab) / max(float(ab @ ab), 1e-300), 0.0, 1.0)
    return np.hypot(*(points - a - t[:, None] * ab).T)


def auto_rig(alpha, bones=8, jitter=3.0, past=0.3, seed=0):
    """A rig drawn the way artists draw one: joints on the shape's skeleton (ridge pixels of its distance
    transform, spread apart by farthest-point sampling of inside distance from the thickest point), bones
    along a minimum spanning tree of inside distances between them, pointing away from the thickest point.
    Then each bone's head is moved 0 to `jitter` px off its parent's tail (joints a little apart), and a
    fraction `past` of the bones is lengthened 10-40% past their tail (bones past the silhouette). Bones are
    straight, so where the skeleton bends they cut across the outside.

    Returns {name: (head (x, y), tail (x, y))} in pixels.
    """
    rng = np.random.default_rng(seed)
    mask = main_piece(alpha)
    dt = ndimage.distance_transform_edt(mask)
    ridge = mask & (dt >= ndimage.maximum_filter(dt, size=3)) & (dt >= min(1.5, dt.max()))
    grid = PixelGrid(mask)
    candidates = grid.index[ridge]
    root = grid.index[np.unravel_index(np.argmax(dt), dt.shape)]
    joints = [root]
    nearest = grid.from_nodes([root])[0][candidates]
    while len(joints) < bones + 1:
        pick = int(np.argmax(np.where(np.isfinite(nearest), nearest, -1.0)))
        if nearest[pick] < 3.0:  # the shape is too small for more joints
            break
        joints.append(candidates[pick])
        nearest = np.minimum(nearest, grid.from_nodes([candidates[pick]])[0][candidates])
    joints = np.array(joints)
    between = grid.from_nodes(joints)[:, joints]
    tree = minimum_spanning_tree(np.where(np.isfinite(between), between, 0.0)).toarray()
    tree = (tree + tree.T) > 0
    xy = grid.centres()[joints]
    rig, order, seen = {}, [0], {0}
    while order:
        parent = order.pop(0)
        for child in np.flatnonzero(tree[parent]):
            if child in seen:
                continue
            seen.add(child)
            order.append(child)
            head, tail = xy[parent].copy(), xy[child].copy()
            angle = rng.uniform(0, 2 * np.pi)
            head += rng.uniform(0, jitter) * np.array([np.cos(angle), np.sin(angle)])
            if rng.random() < past:
                tail += rng.uniform(0.1, 0.4) * (tail - head)
            rig[f"b{len(rig)}"] = (head, tail)
    return rig


def mirrored_rgba(rgba):
    """The image made exactly mirror-symmetric: its left half and that half mirrored (an even width)."""
    w = rgba.shape[1] // 2
    return np.concatenate([rgba[:, :w], rgba[:, :w][:, ::-1]], axis=1)


def mirror_rig(rig, width):
    """A rig drawn on the left half, with the heads at its root joint (near the first bone's head) moved
    onto the axis x = width / 2, and its mirror image: {name + '.L': ...} and {name + '.R': ...}. The bones
    leaving the root meet their mirror images there, as hips and shoulders do."""
    root = np.asarray(next(iter(rig.values()))[0], float)
    out = {}
    for name, (head, tail) in rig.items():
        if np.hypot(*(np.asarray(head) - root)) <= 4.0:
            head = np.array([width / 2.0, head[1]])
        out[name + ".L"] = (np.asarray(head, float), np.asarray(tail, float))
        out[name + ".R"] = (np.array([width - head[0], head[1]]), np.array([width - tail[0], tail[1]]))
    return out


def leak_pairs(grid, rig, vertices, size, near=0.1, far=0.25):
    """(vertex, bone) pairs where the bone is near the vertex in a straight line but far from it inside the
    shape, while another bone is much nearer inside: any weight there crossed a gap. `vertices` (n, 2) in
    pixels; `size` the shape's scale in pixels (its larger side); near and far as fractions of it.

    Returns (vertex indices, bone indices, inside distances (vertices, bones))."""
    nodes = grid.node_at(vertices)
    names = list(rig)
    inside = np.full((len(vertices), len(names)), np.inf)
    straight = np.empty((len(vertices), len(names)))
    for j, name in enumerate(names):
        head, tail = rig[name]
        d = grid.from_segment(head, tail)
        if d is not None:
            # the vertex to its pixel centre, then along the grid
            inside[:, j] = d[nodes] + np.hypot(*(vertices - grid.centres()[nodes]).T)
        straight[:, j] = segment_gap(vertices, head, tail)
    nearest = inside.min(axis=1, keepdims=True)
    leak = (straight <= near * size) & (inside >= straight + far * size) & (inside >= nearest + far * size)
    v, b = np.nonzero(leak)
    return v, b, inside
