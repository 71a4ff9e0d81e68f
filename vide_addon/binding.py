"""Binding meshes to an armature with VIDE's weights, and re-weighting them live.

The distances from the bones are the expensive part; the weights are cheap. So a bind keeps what it
measured in memory, per mesh, with a fingerprint of what it depends on: geodesic distances, from which a
bone's new smoothness re-weights; meshfree weights, into which bones added later are inserted. After a
reload, or once the mesh or the bones it was bound to have changed, everything is measured again.
"""

import hashlib
from dataclasses import dataclass

import bpy
import numpy as np
from bpy.app.handlers import persistent

from .bridge.rig import attach, deform_bones, mesh_in_plane, write_groups
from .core.errors import VideError
from .core.meshfree_bones import BoneRig
from .core.geodesic import Domain, bone_distances
from .core.smooth_weights import GEODESIC_REACH, MESHFREE_SCALE, JointBlend, exponential_seeds
from .core.weights import falloff_weights, strongest

AUTO_SAMPLES = 100.0  # meshfree samples across the mesh's longest side when Sample Spacing is 0


@dataclass
class Measured:
    names: list
    dist: np.ndarray  # (vertices, bones)
    fingerprint: bytes
    weights: np.ndarray  # as last written
    blend: JointBlend = None  # Joint Blending, factored for this mesh and bones


_measured = {}  # Object.session_uid -> Measured


@dataclass
class KeptRig:
    rig: BoneRig
    names: list  # in the rig's order: as bound, then as inserted
    heads: np.ndarray  # (bones, 2) in the mesh's plane
    tails: np.ndarray
    placement: bytes
    settings: tuple  # the bind's meshfree settings the rig was made with
    blend: JointBlend = None


_rigs = {}  # Object.session_uid -> KeptRig


@dataclass
class BindReport:
    mesh: str  # the bound object's name
    vertices: int
    bones: int
    point_bones: list  # bones that point out of the mesh's plane
    outside_bones: list  # bones wholly outside the mesh


def bind(ob, arm, settings):
    """Weights `ob` to the deform bones of `arm`, adds the Armature modifier and parents it. Everything
    that can fail (bad mesh, no deform bones) fails before `ob` is changed."""
    plane, points, tris = mesh_in_plane(ob)
    names, heads, tails, point_bones = deform_bones(arm, plane)
    blend = _joint_blend(points, tris, heads, tails, settings)
    if settings.method == 'MESHFREE':
        spacing = settings.sample_spacing or float(np.ptp(points, axis=0).max()) / AUTO_SAMPLES
        rig = BoneRig(points, tris, heads, tails, spacing, settings.spread, settings.chains, settings.joint_pull)
        outside = rig.outside
        weights = _finish(rig.vertex_weights(), blend, settings)
    else:
        dist, outside = bone_distances(Domain.from_mesh(points, tris), heads, tails)
        weights = _weights(arm, names, dist, settings, blend)
    _drop_gone_bones(ob, arm, names)
    write_groups(ob, names, weights)
    attach(ob, arm, settings.preserve_volume)
    ob.vide.bind.armature = arm
    ob.vide.bind.copy_from(settings)
    ob.vide.bind.bones = "\n".join(names)
    _forget(ob.session_uid)
    if settings.method == 'GEODESIC':
        _measured[ob.session_uid] = Measured(names, dist, _fingerprint(ob, arm), weights, blend)
    else:
        _rigs[ob.session_uid] = KeptRig(rig, names, heads, tails, _placement(ob, arm), _meshfree_settings(settings),
                                        blend)
    return BindReport(ob.name, len(points), len(names), point_bones, [n for n, o in zip(names, outside) if o])


def _drop_gone_bones(ob, arm, names):
    """Removes the groups of bones `ob` was last weighted for on `arm` that are no longer its deform bones
    (deleted, renamed or no longer deforming), so no vertex keeps following them."""
    if ob.vide.bind.armature != arm:
        return
    for gone in set(ob.vide.bind.bones.split("\n")) - set(names) - {""}:
        group = ob.vertex_groups.get(gone)
        if group is not None:
            ob.vertex_groups.remove(group)


def reweight(ob):
    """Weights `ob` again with the current smoothness of its bones: from the kept distances when they
    still fit the mesh and the rest pose, else by binding again."""
    arm = ob.vide.bind.armature
    kept = _measured.get(ob.session_uid)
    if kept is None or kept.fingerprint != _fingerprint(ob, arm):
        bind(ob, arm, ob.vide.bind)
        return
    weights = _weights(arm, kept.names, kept.dist, ob.vide.bind, kept.blend)
    write_groups(ob, kept.names, weights, previous=kept.weights)
    kept.weights = weights


def reweight_armature(armature_data):
    """Re-weights every mesh VIDE bound to an armature object using `armature_data`. Runs from a property
    update, where nothing can be reported: a mesh that cannot be re-weighted keeps its weights."""
    for ob in bound_meshes(armature_data):
        try:
            reweight(ob)
        except VideError as err:
            print(f"VIDE: '{ob.name}' keeps its weights: {err}")


def update(ob, arm):
    """Weights `ob` again after the armature's bones changed, with the settings it was bound with. Bones
    only added to a meshfree bind go into its kept weights (the others keep their handles); anything else
    binds again. Returns how many bones were inserted (0: bound again)."""
    settings = ob.vide.bind
    kept = _rigs.pop(ob.session_uid, None)  # back only once the insertion went through
    if (settings.method == 'MESHFREE' and kept is not None and kept.settings == _meshfree_settings(settings)
            and kept.placement == _placement(ob, arm)):
        plane, points, tris = mesh_in_plane(ob)
        names, heads, tails, _flat = deform_bones(arm, plane)
        where = {name: i for i, name in enumerate(names)}
        new = [i for i, name in enumerate(names) if name not in set(kept.names)]
        if new and all(name in where for name in kept.names):
            at = [where[name] for name in kept.names]
            moved = max(np.abs(heads[at] - kept.heads).max(), np.abs(tails[at] - kept.tails).max())
            if moved <= 1e-7 * kept.rig.size and all(kept.rig.add(heads[i], tails[i]) for i in new):
                kept.names += [names[i] for i in new]
                kept.heads, kept.tails = np.vstack([kept.heads, heads[new]]), np.vstack([kept.tails, tails[new]])
                kept.blend = _joint_blend(points, tris, kept.heads, kept.tails, settings)
                write_groups(ob, kept.names, _finish(kept.rig.vertex_weights(), kept.blend, settings))
                settings.bones = "\n".join(names)
                _rigs[ob.session_uid] = kept
                return len(new)
    bind(ob, arm, settings)
    return 0


def update_armature(arm):
    """Weights again every mesh VIDE bound to `arm` (after bones were added, removed or moved). Returns
    (meshes updated, bones inserted into kept weights, problems)."""
    done, inserted, problems = 0, 0, []
    for ob in _bound_to(arm):
        try:
            inserted += update(ob, arm)
            done += 1
        except VideError as err:
            problems.append(f"'{ob.name}': {err}")
    return done, inserted, problems


def _bound_to(arm):
    """The local meshes VIDE bound to the armature object `arm`."""
    return [ob for ob in bpy.data.objects if ob.type == 'MESH' and ob.vide.bind.armature == arm and not ob.library]


@persistent
def _auto_update(_scene, _depsgraph):
    """After any update: armatures with Auto Update Weights whose deform bones are no longer the ones their
    meshes were weighted for get their meshes weighted again."""
    for arm in [o for o in bpy.data.objects if o.type == 'ARMATURE' and o.vide.auto_update and o.mode != 'EDIT']:
        names = "\n".join(b.name for b in arm.data.bones if b.use_deform)
        for ob in [o for o in _bound_to(arm) if o.vide.bind.bones != names]:
            try:
                update(ob, arm)
            except VideError as err:
                ob.vide.bind.bones = names  # do not try again on every update
                print(f"VIDE: '{ob.name}' keeps its weights: {err}")


def register():
    bpy.app.handlers.depsgraph_update_post.append(_auto_update)


def unregister():
    if _auto_update in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.remove(_auto_update)
    forget_all()


def bound_meshes(armature_data):
    """Meshes bound with geodesic weights (the ones a bone's smoothness changes) to `armature_data`."""
    return [ob for ob in bpy.data.objects
            if ob.type == 'MESH' and ob.vide.bind.armature is not None and ob.vide.bind.method == 'GEODESIC'
            and ob.vide.bind.armature.data == armature_data and not ob.library]


def forget_all():
    _measured.clear()
    _rigs.clear()


def _forget(uid):
    """Drops what was kept for object `uid`, and for objects that no longer exist."""
    present = {o.session_uid for o in bpy.data.objects}
    for kept in (_measured, _rigs):
        for key in [k for k in kept if k == uid or k not in present]:
            del kept[key]


def _meshfree_settings(settings):
    return settings.sample_spacing, settings.spread, settings.chains, settings.joint_pull


def _weights(arm, names, dist, settings, blend=None):
    """Each bone's own smoothness, or the bind's where the bone has none."""
    bones = arm.data.bones
    own = [bones[n].vide.smoothness if n in bones else 0.0 for n in names]
    smoothness = np.array([s or settings.smoothness for s in own])
    if blend is None:
        return falloff_weights(dist, smoothness, settings.max_influences, settings.prune)
    return _finish(exponential_seeds(dist, smoothness), blend, settings)


def _joint_blend(points, tris, heads, tails, settings):
    if not settings.joint_blend:
        return None
    if settings.method == 'MESHFREE':
        return JointBlend(points, tris, heads, tails, 1.0 / (MESHFREE_SCALE * settings.joint_blend))
    return JointBlend(points, tris, heads, tails, 1.0 / settings.joint_blend, GEODESIC_REACH)


def _finish(weights, blend, settings):
    """Blended over the mesh (Joint Blending) or not, with the strongest kept, pruned and normalized."""
    if blend is not None:
        return blend(weights, settings.max_influences, settings.prune)
    return strongest(weights, settings.max_influences, settings.prune)


def _placement(ob, arm):
    """What a bind depends on besides the bones: the mesh's vertices and faces, and where the armature is
    relative to the mesh (rounded, as re-evaluated matrices differ in their last bits)."""
    me = ob.data
    co = np.empty(len(me.vertices) * 3, np.float32)
    me.vertices.foreach_get("co", co)
    h = hashlib.blake2b(co.tobytes(), digest_size=16)
    h.update(np.array([len(me.polygons), len(me.loops)]).tobytes())
    relative = np.linalg.inv(np.array(ob.matrix_world)) @ np.array(arm.matrix_world)
    h.update((np.round(relative, 5) + 0.0).tobytes())  # + 0.0 turns -0.0 into 0.0
    h.update((np.round(np.array(ob.matrix_world)[:3, :3], 5) + 0.0).tobytes())
    return h.digest()


def _fingerprint(ob, arm):
    """What the distances depend on: the placement and the rest pose."""
    h = hashlib.blake2b(_placement(ob, arm), digest_size=16)
    for bone in arm.data.bones:
        h.update(bone.name.encode())
        h.update(np.array([*bone.head_local, *bone.tail_local, bone.use_deform], np.float32).tobytes())
    return h.digest()
