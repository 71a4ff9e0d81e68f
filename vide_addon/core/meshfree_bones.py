"""Meshfree C² weights for an armature's bones: each bone is a segment handle, and bones added later go into
the kept weights (one Dijkstra, plus any virtual handles they call for) instead of a recompute.

Bones that share a joint (the usual chain) make handles touch, which compact supports cannot separate. Two
ways out (`chains`): "PULL_IN" pulls every bone's handle in from both ends by `joint_pull` of its length (Joint
Pull-In) and keeps the compact C² basis; "GAUSSIAN" uses the paper's global Gaussian.
"""

import numpy as np
from scipy.spatial import cKDTree

from .geodesic import pairs_within, segment_distance
from .meshfree import LINK_RADIUS, SPREAD, TOUCH, HandleSet, Samples, meshfree_weights

JOINT_PULL = 0.35  # default pull-in: 90° knee flips 11 triangles (14 at 0.25) within the insertion target
JOINT_NEAR = 0.2  # bone ends closer than this fraction of the shorter bone (or TOUCH spacings) are a joint


def bone_handles(head, tail, spacing, joint_pull=0.0):
    """Sample points along each bone segment (about half a lattice spacing apart), and for each bone the
    slice of them that is its handle. With `joint_pull` > 0, each end is pulled in by that fraction of the
    bone's length, so bones that share a joint do not touch."""
    head, tail = np.asarray(head, float).reshape(-1, 2), np.asarray(tail, float).reshape(-1, 2)
    a, b = head + joint_pull * (tail - head), tail - joint_pull * (tail - head)
    count = np.maximum(np.ceil(np.hypot(*(b - a).T) / (0.5 * spacing)).astype(np.int64), 1) + 1
    start = np.cumsum(count) - count
    bone = np.repeat(np.arange(len(a)), count)
    # As np.linspace(0, 1, count) per bone, to the bit: k times the step, the last exactly 1.
    t = (np.arange(count.sum()) - start[bone]) * (1.0 / (count - 1))[bone]
    t[start + count - 1] = 1.0
    points = a[bone] + t[:, None] * (b - a)[bone]
    return points, [slice(s, s + c) for s, c in zip(start.tolist(), count.tolist())]


class BoneRig:
    """Meshfree weights of a flat mesh for bone segments, kept so that bones can be added later.

    At the start, the points along each bone are samples of their own (linked to the lattice like any
    sample). A bone added later starts from the lattice samples it links to, with the straight step to each.
    """

    def __init__(self, points, tris, heads, tails, spacing, spread=SPREAD, chains="PULL_IN",
                 joint_pull=JOINT_PULL):
        self.heads, self.tails = np.asarray(heads, float), np.asarray(tails, float)
        self.size = max(max(float(np.ptp(c)) for c in np.asarray(points, float).T), 1e-12)  # columns: 0.2 -> 0.03 ms
        self.spacing = spacing
        touching = self._touching(self.heads, self.tails)
        self.joint_pull = joint_pull if touching and chains == "PULL_IN" else 0.0
        extra, slices = bone_handles(self.heads, self.tails, spacing, self.joint_pull)
        self.samples = Samples.from_mesh(points, tris, spacing, extra=extra)
        first = len(self.samples.points) - len(extra)
        self.outside, inside = self._outside(self.heads, self.tails, extra)
        handles = []
        for s in slices:
            own = first + np.arange(s.start, s.stop)[inside[s]]
            handles.append(own if len(own) else self._nearest_sample(extra[s]))
        if touching and chains == "GAUSSIAN":
            self.handles, self._gaussian = None, meshfree_weights(self.samples, handles, spread, True).at_vertices
        else:
            self.handles = HandleSet(self.samples, handles, spread)

    def add(self, head, tail):
        """Adds a bone to the weights in place. Returns False, changing nothing, when it cannot be added
        alone: it is the first to share a joint (every bone is then pulled in, or the weights turn
        Gaussian), or the weights are the Gaussian already."""
        head, tail = np.asarray(head, float), np.asarray(tail, float)
        if self.handles is None or (self.joint_pull == 0.0 and self._touching(np.vstack([self.heads, head]),
                                                                             np.vstack([self.tails, tail]))):
            return False
        a, b = head + self.joint_pull * (tail - head), tail - self.joint_pull * (tail - head)
        idx, steps = self._attach(a, b)
        self.handles.add(idx, steps)
        self.heads, self.tails = np.vstack([self.heads, head]), np.vstack([self.tails, tail])
        self.outside += self._outside([head], [tail])[0]
        return True

    def handle_ends(self):
        """(heads, tails) of the bones' handles: each bone pulled in from both ends by the rig's pull."""
        pull = self.joint_pull * (self.tails - self.heads)
        return self.heads + pull, self.tails - pull

    def held(self):
        """(heads, tails) of what Joint Blending holds the weights on: each bone's handle, then the middle of each
        joint (halfway between the two handle ends there) as a point. Held only on the handles, a joint beside a
        wide part (a knee under a cape) is blended towards the wide part's weights, down the narrow limb, and a
        bend folds the inside of the joint."""
        heads, tails = self.handle_ends()
        ends = np.vstack([heads, tails])
        middles = ends[self._joints(self.heads, self.tails)].mean(axis=1)
        return np.vstack([heads, middles]), np.vstack([tails, middles])

    def vertex_weights(self):
        """Weights (mesh vertices, bones), rows summing to 1. A vertex no handle reaches (an island without
        bones) goes wholly to the bone nearest to it."""
        w = (self._gaussian if self.handles is None else self.handles.vertex_values).copy()
        lost = np.flatnonzero(w @ np.ones(w.shape[1]) == 0)  # not w.sum(axis=1): slow along rows of a few bones
        if len(lost):
            verts = self.samples.domain.points[lost]
            gap = np.stack([segment_distance(verts, h, t)[0] for h, t in zip(self.heads, self.tails)], axis=1)
            w[lost] = 0.0
            w[lost, np.argmin(gap, axis=1)] = 1.0
        return w

    def _touching(self, heads, tails):
        """Whether two bones share an end (a joint)."""
        return len(self._joints(heads, tails)) > 0

    def _joints(self, heads, tails):
        """Pairs (k, 2) of bone ends that make a joint, each end numbered as in [heads, tails]. Bones drawn by hand
        rarely meet exactly: ends closer than a fraction of the shorter bone, or than the lattice can tell apart,
        are a joint too."""
        ends = np.vstack([heads, tails])
        gaps = np.hypot(*(ends[:, None] - ends[None]).transpose(2, 0, 1))
        bones = len(heads)
        length = np.tile(np.hypot(*(tails - heads).T), 2)
        near = np.maximum(JOINT_NEAR * np.minimum(length[:, None], length[None]), TOUCH * self.spacing)
        other = np.abs(np.arange(2 * bones)[:, None] - np.arange(2 * bones)[None]) % bones != 0
        return np.argwhere(np.triu(other & (gaps < near)))

    def _attach(self, a, b):
        """The samples a bone segment a-b links to (within link reach of a point on it, in a straight line
        inside the mesh) and the straight step from each; or, for a bone wholly outside the mesh, the sample
        nearest to it. Returns (samples, steps)."""
        samples = self.samples
        points, _ = bone_handles([a], [b], samples.spacing)
        along = points[samples.domain.inside(points)]
        reach = np.full(len(along), LINK_RADIUS * samples.spacing)
        src, dst = pairs_within(samples.tree, along, reach)
        ok = samples.outline.straight(along[src], samples.points[dst])
        if not ok.any():
            return self._nearest_sample(points), None
        src, dst = src[ok], dst[ok]
        steps = np.hypot(*(samples.points[dst] - along[src]).T)
        order = np.lexsort([steps, dst])
        first = np.r_[True, dst[order][1:] != dst[order][:-1]]
        return dst[order][first], steps[order][first]

    def _outside(self, heads, tails, also=np.empty((0, 2))):
        """Whether each whole bone (not only its pulled-in handle) lies outside the mesh; and whether each of the
        points `also` lies inside (one test for both)."""
        points, slices = bone_handles(heads, tails, self.spacing)
        inside = self.samples.domain.inside(np.vstack([points, also]))
        return [not inside[s].any() for s in slices], inside[len(points):]

    def _nearest_sample(self, points):
        """The lattice sample nearest to any of `points` (a bone outside the mesh starts there)."""
        gap, nearest = cKDTree(self.samples.points[:self.samples.lattice]).query(points)
        return np.array([nearest[np.argmin(gap)]])
