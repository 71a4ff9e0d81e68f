"""Binding meshes to an armature with VIDE's weights, and weighting them again when the bones change.

The distances from the bones are the expensive part; the weights are cheap. So a bind keeps what it
measured in memory, per mesh, with a fingerprint of what it depends on: geodesic distances, from which a
bone's new smoothness re-weights (geodesic.py); meshfree weights, into which bones added later are inserted
(meshfree.py). After a reload, or once the mesh or the bones it was bound to have changed, everything is
measured again. This module binds with either method and answers bone and smoothness changes.
"""

from dataclasses import dataclass

import bpy
from bpy.app.handlers import persistent

from ..bridge.rig import attach, deform_bones, mesh_in_plane, write_groups
from ..core.errors import VideError
from . import geodesic, meshfree

METHODS = {'GEODESIC': geodesic, 'MESHFREE': meshfree}


@dataclass
class BindReport:
    mesh: str  # the bound object's name
    vertices: int
    bones: int
    point_bones: list  # bones that point out of the mesh's plane
    outside_bones: list  # bones wholly outside the mesh


def bind(ob, arm, settings):
    """Weights `ob` to the deform bones of `arm` with `settings` (core.bind_settings.BindSettings), adds the
    Armature modifier and parents it. Everything that can fail (bad mesh, no deform bones) fails before `ob`
    is changed."""
    plane, points, tris = mesh_in_plane(ob)
    names, heads, tails, point_bones = deform_bones(arm, plane)
    method = METHODS[settings.method]
    weights, outside, measured = method.measure(ob, arm, points, tris, names, heads, tails, settings)
    _drop_gone_bones(ob, arm, names)
    write_groups(ob, names, weights)
    attach(ob, arm, settings.preserve_volume)
    ob.vide.bind.armature = arm
    ob.vide.bind.copy_from(settings)
    ob.vide.bind.bones = "\n".join(names)
    _forget(ob.session_uid)
    method.kept[ob.session_uid] = measured
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
    arm, settings = ob.vide.bind.armature, ob.vide.bind.to_core()
    if not geodesic.reweight(ob, arm, settings):
        bind(ob, arm, settings)


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
    settings = ob.vide.bind.to_core()
    inserted = meshfree.insert(ob, arm, settings) if settings.method == 'MESHFREE' else 0
    if not inserted:
        bind(ob, arm, settings)
    return inserted


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


@persistent
def _forget_on_undo(*_args):
    """Undo and redo give meshes other weights than the ones kept as last written (a live re-weight writes only
    what changed since): what is kept is measured again when next needed."""
    forget_all()


HANDLERS = ((bpy.app.handlers.depsgraph_update_post, _auto_update), (bpy.app.handlers.undo_post, _forget_on_undo),
            (bpy.app.handlers.redo_post, _forget_on_undo))


def register():
    for handlers, handler in HANDLERS:
        handlers.append(handler)


def unregister():
    for handlers, handler in HANDLERS:
        if handler in handlers:
            handlers.remove(handler)
    forget_all()


def bound_meshes(armature_data):
    """Meshes bound with geodesic weights (the ones a bone's smoothness changes) to `armature_data`."""
    return [ob for ob in bpy.data.objects
            if ob.type == 'MESH' and ob.vide.bind.armature is not None and ob.vide.bind.method == 'GEODESIC'
            and ob.vide.bind.armature.data == armature_data and not ob.library]


def forget_all():
    for method in METHODS.values():
        method.kept.clear()


def _forget(uid):
    """Drops what was kept for object `uid`, and for objects that no longer exist."""
    present = {o.session_uid for o in bpy.data.objects}
    for method in METHODS.values():
        for key in [k for k in method.kept if k == uid or k not in present]:
            del method.kept[key]
