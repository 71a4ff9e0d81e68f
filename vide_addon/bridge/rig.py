"""Meshes and armatures as flat numpy arrays, and vertex weights back into Blender.

A cutout mesh is flat, but its object and the armature may have any transforms. Both are taken to world
space and projected onto the mesh's own plane (the vectorized image's, else the best fit through the
vertices), so distances are world lengths, in scene units, measured in the picture's plane.
"""

import hashlib
from dataclasses import dataclass

import bpy
import numpy as np
from scipy import sparse

from ..core.errors import VideError

try:
    from _bpy import ops as _ops  # what bpy.ops calls operators with; checked in tests/blender/test_bind.py
except ImportError:
    _ops = None


@dataclass
class Plane:
    origin: np.ndarray  # (3,) world
    axes: np.ndarray  # (2, 3) orthonormal, world

    def project(self, world):
        return (np.asarray(world, float) - self.origin) @ self.axes.T


def mesh_in_plane(ob):
    """(plane, vertices (n, 2) in it, triangles (m, 3)) of a mesh object, from its undeformed data. The plane
    is the vectorized image's, or else the best fit through the vertices."""
    me = ob.data
    co = _positions(me).astype(float)
    tris = _triangles(me)
    if len(tris) == 0:
        raise VideError("it has no faces to weight: vectorize it or fill it first.")
    mw = np.array(ob.matrix_world)
    world = co @ mw[:3, :3].T + mw[:3, 3]
    counts = np.bincount(tris, minlength=len(co))
    used = world if counts.all() else world[counts > 0]  # a vectorized mesh uses every vertex: no copy
    origin = used.mean(axis=0)
    centred = used - origin
    if ob.vide.image is not None:  # vectorized: the image's own axes, so symmetric art stays symmetric
        m = np.array(ob.vide.uv_to_local).reshape(3, 3)
        u, v = mw[:3, :3] @ m[0], mw[:3, :3] @ m[1]
        u = u / np.sqrt(u @ u)  # np.linalg.norm's own sum, without its checks
        v = v - (v @ u) * u
        axes = np.array([u, v / np.sqrt(v @ v)])
        sv = None  # checked below by a 3 x 3 eigen-problem, not an SVD (sample character 0.44 -> 0.36 ms)
    else:
        _u, sv, vt = np.linalg.svd(centred, full_matrices=False)
        axes = vt[:2]
    if _on_a_line(centred, sv):
        raise VideError("it has no area (all its vertices lie on a line).")
    plane = Plane(origin, axes)
    points = centred @ axes.T if used is world else plane.project(world)  # plane.project(world), not made again
    return plane, points, tris.reshape(-1, 3)


def _on_a_line(centred, sv=None):
    """Whether the points (n, 3), centred, lie on a line: their second singular value (of `sv`, when known) is under
    1e-9 of the first. They do not where the second eigenvalue of their 3 x 3 Gram matrix (the singular values
    squared) is over 1e-10 of the first, far above its round-off (about n ε of the first: 3e-13 at 2.7k points);
    else the SVD tells."""
    if sv is None:
        squared = np.linalg.eigvalsh(centred.T @ centred)
        if squared[1] > 1e-10 * squared[2]:
            return False
        sv = np.linalg.svd(centred, compute_uv=False)
    return sv[1] <= 1e-9 * max(sv[0], 1e-30)


def _positions(me):
    """The vertex positions (n, 3), float32 as Blender keeps them: read from the position attribute in one copy
    (Mesh.vertices' "co" goes vertex by vertex: 0.1 to 0.3 ms at 2.7k vertices against 0.003)."""
    co = np.empty(len(me.vertices) * 3, np.float32)
    if len(co):  # a mesh without vertices has no position attribute
        me.attributes["position"].data.foreach_get("vector", co)
    return co.reshape(-1, 3)


def _triangles(me):
    """The vertex indices of the mesh's triangles, flat (3 t,) int64. A mesh of triangles only (three corners
    per face, as Vectorize Image makes them) is its corners' vertices, read in one copy; any other is split
    by Blender (its loop triangles, read one by one)."""
    corners = me.attributes.get(".corner_vert")
    if corners is not None and len(me.loops) == 3 * len(me.polygons):
        tris = np.empty(len(me.loops), np.int32)
        corners.data.foreach_get("value", tris)
        return tris.astype(np.int64)
    me.calc_loop_triangles()
    tris = np.empty(len(me.loop_triangles) * 3, np.int64)
    me.loop_triangles.foreach_get("vertices", tris)
    return tris


def deform_bones(arm, plane):
    """Names, heads (b, 2) and tails (b, 2) of the armature's deform bones in its rest pose, in the plane,
    and the names of bones that point out of the plane (so project to a point)."""
    bones = [b for b in arm.data.bones if b.use_deform]
    if not bones:
        raise VideError(f"'{arm.name}' has no deform bones: tick Deform in Bone Properties for the bones "
                        "that should move the mesh.")
    mw = np.array(arm.matrix_world)
    ends = np.array([[*b.head_local, 1.0] for b in bones] + [[*b.tail_local, 1.0] for b in bones]) @ mw.T
    flat = plane.project(ends[:, :3])
    heads, tails = flat[:len(bones)], flat[len(bones):]
    length3d = np.linalg.norm(ends[len(bones):, :3] - ends[:len(bones), :3], axis=1)
    point_like = np.hypot(*(tails - heads).T) < 1e-3 * np.maximum(length3d, 1e-12)
    return [b.name for b in bones], heads, tails, [b.name for b, p in zip(bones, point_like) if p]


def write_groups(ob, names, weights, previous=None):
    """Vertex groups named `names` get the columns of `weights` (n, bones; a scipy.sparse matrix or an array).

    Without `previous`, each group is made anew: an old one of that name is removed and the new one appended,
    in `names` order, the last one active. With the `previous` weights VIDE wrote, only the entries that
    changed are touched (a live re-weight). Other groups are left alone. The weights are taken one column at a
    time (a vertex has a few bones: at 72k vertices and 60 bones the whole dense array would be 35 MB).
    """
    # tocsc, not csc_matrix(), which checks the result once more; the columns left to VertexGroup.add are read in
    # place, not sliced off (a sliced copy even when none is left): 8 columns of the sample character 0.08 ms less.
    weights = weights.tocsc() if sparse.issparse(weights) else sparse.csc_matrix(weights)
    done = 0
    if previous is None:
        done = _new_groups_by_attribute(ob, names, weights)
    else:
        previous = sparse.csc_matrix(previous)
    for col, name in enumerate(names[done:], done):
        group = ob.vertex_groups.get(name)
        new = _column(weights, col)
        if previous is None or group is None:
            if group is not None:  # clearing by removal is far quicker than removing every vertex
                ob.vertex_groups.remove(group)
            group = ob.vertex_groups.new(name=name)
            rows = np.flatnonzero(new > 0.0)
        else:
            rows = np.flatnonzero(new != _column(previous, col))
            gone = rows[new[rows] == 0.0]
            if len(gone):
                group.remove(gone.tolist())
            rows = rows[new[rows] > 0.0]
        whole = rows[new[rows] == 1.0]  # vertices wholly on this bone: one call for all of them
        if len(whole):
            group.add(whole.tolist(), 1.0, 'REPLACE')
        add = group.add
        rows = rows[new[rows] != 1.0]
        for i, w in zip(rows.tolist(), new[rows].tolist()):
            add((i,), w, 'REPLACE')


def _column(weights, col, data=None):
    """Column `col` of the CSC matrix `weights` (with `data` instead of its own values if given), dense (n,), from its
    arrays: 0.02 ms at 17k vertices against 0.2 ms for scipy's slicing, which a live re-weight pays twice per bone."""
    data = weights.data if data is None else data
    column = np.zeros(weights.shape[0], data.dtype)
    stored = slice(weights.indptr[col], weights.indptr[col + 1])
    column[weights.indices[stored]] = data[stored]
    return column


def _new_groups_by_attribute(ob, names, weights):
    """Writes the leading columns of `weights` as new groups the way VertexGroup.add would (weights clamped to
    0-1, zeros not stored), but each in bulk: a float point attribute (under a temporary name, as a bone may be
    called 'position') that Blender's Convert Attribute turns into a vertex group (63k vertices, 60 bones, 137k
    entries: 0.09 s against 0.56 s). The operator is called as bpy.ops calls it but without bpy.ops' view-layer
    update before and after, which re-evaluated the object and ran every depsgraph handler (VIDE's Auto Update
    among them) twice per group. Returns how many columns were written; the rest are for VertexGroup.add."""
    if _ops is None or not names or ob.mode != 'OBJECT':
        return 0
    attributes, groups = ob.data.attributes, ob.vertex_groups
    active = attributes.active.name if attributes.active is not None else None
    taken = set(attributes.keys()) | set(groups.keys()) | set(names)
    temporary = next(t for i in range(len(taken) + 1) if (t := f"vide_weights_{i}") not in taken)
    done = 0
    # One float attribute per bone, from the weights clamped once (a clip per column took 0.05 ms of 8 columns).
    clamped = np.clip(weights.data, 0.0, 1.0).astype(np.float32)
    try:
        with bpy.context.temp_override(object=ob):
            for col, name in enumerate(names):
                if not _convert(ob, temporary, _column(weights, col, clamped), name, poll=col == 0):
                    break
                done += 1
    finally:  # whatever stopped the loop, nothing temporary stays and the active attribute is as it was
        if attributes.get(temporary) is not None:
            attributes.remove(attributes[temporary])
        if groups.get(temporary) is not None:
            groups.remove(groups[temporary])
        if active is not None and attributes.get(active) is not None:
            attributes.active = attributes[active]
    if done:
        groups.active_index = groups[names[done - 1]].index
    return done


def _convert(ob, temporary, column, name, poll):
    """One column into the vertex group `name` (replacing it) by Convert Attribute; False when this Blender
    cannot (the old group may be gone: VertexGroup.add writes it anew, as it would have). With `poll`, whether the
    operator can run is checked first: only for the first column, as the others' attributes are alike (a poll
    through bpy.ops took 0.035 ms, the operator 0.09 ms)."""
    attributes, groups = ob.data.attributes, ob.vertex_groups
    attribute = attributes.new(temporary, 'FLOAT', 'POINT')
    attribute.data.foreach_set("value", column)
    attributes.active = attribute
    if poll and not bpy.ops.geometry.attribute_convert.poll():
        return False
    old = groups.get(name)
    if old is not None:  # first, so the new group takes the place VertexGroup.add would give it
        groups.remove(old)
    try:
        _ops.call("geometry.attribute_convert", {"mode": 'VERTEX_GROUP'})
    except (RuntimeError, TypeError):
        return False
    made = groups.get(temporary)
    if made is None:
        return False
    made.name = name
    return True


def attach(ob, arm, preserve_volume=False):
    """Armature modifier (reused if one already uses `arm`) and `arm` as parent, without moving `ob`."""
    mod = next((m for m in ob.modifiers if m.type == 'ARMATURE' and m.object == arm), None)
    if mod is None:
        mod = ob.modifiers.new("Armature", 'ARMATURE')
        mod.object = arm
    mod.use_vertex_groups = True
    mod.use_deform_preserve_volume = preserve_volume
    if ob.parent != arm:
        world = ob.matrix_world.copy()
        ob.parent = arm
        ob.parent_type = 'OBJECT'
        ob.matrix_parent_inverse = arm.matrix_world.inverted()
        ob.matrix_world = world
    return mod


def bone_smoothness(arm, names, default):
    """Each named bone's own Smoothness, or `default` where it has none (0) or is gone."""
    bones = arm.data.bones
    return np.array([(bones[n].vide.smoothness if n in bones else 0.0) or default for n in names])


def placement(ob, arm):
    """What a bind depends on besides the bones: the mesh's vertices and faces, and where the armature is
    relative to the mesh (rounded, as re-evaluated matrices differ in their last bits)."""
    me = ob.data
    h = hashlib.blake2b(_positions(me).tobytes(), digest_size=16)
    h.update(np.array([len(me.polygons), len(me.loops)]).tobytes())
    relative = np.linalg.inv(np.array(ob.matrix_world)) @ np.array(arm.matrix_world)
    h.update((np.round(relative, 5) + 0.0).tobytes())  # + 0.0 turns -0.0 into 0.0
    h.update((np.round(np.array(ob.matrix_world)[:3, :3], 5) + 0.0).tobytes())
    return h.digest()


def rest_fingerprint(ob, arm):
    """What measured distances depend on: the placement and the armature's rest pose."""
    h = hashlib.blake2b(placement(ob, arm), digest_size=16)
    for bone in arm.data.bones:
        h.update(bone.name.encode())
        h.update(np.array([*bone.head_local, *bone.tail_local, bone.use_deform], np.float32).tobytes())
    return h.digest()
