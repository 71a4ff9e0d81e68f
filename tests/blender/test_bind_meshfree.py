"""Bind to Armature with Meshfree C² weights in real Blender: normalized sparse weights, no reach across a
gap, mirrored weights on a mirrored rig, and chains of bones that share joints (both ways); and Update Weights
after a bone is added (inserted into the kept weights) or bones changed otherwise (bound again)."""

import bpy
import numpy as np
import pytest
from helpers import (add_armature, bone_weights, influences, interpolate_on_mesh, mesh_in_pixels, pixel_to_world,
                     select_only)
from test_bind import LEG_BONES, LEGS, bind, rig_for, vectorized

# Thigh and shin on each leg, connected at the knee: an armature chain.
CHAIN = {"hip": ((60, 122), (60, 148)),
         "thigh.L": ((45, 118), (45, 65), "hip"), "shin.L": ((45, 65), (45, 15), "thigh.L"),
         "thigh.R": ((75, 118), (75, 65), "hip"), "shin.R": ((75, 65), (75, 15), "thigh.R")}


@pytest.mark.parametrize("rig, chains", [(LEG_BONES, 'PULL_IN'), (CHAIN, 'PULL_IN'), (CHAIN, 'GAUSSIAN')],
                         ids=["separate-bones", "chain-compact", "chain-gaussian"])
def test_meshfree_weights_are_normalized_sparse_and_stay_on_their_leg(scene, tmp_path, rig, chains):
    ob = vectorized(tmp_path, LEGS)
    arm = rig_for(ob, LEGS.shape, rig)
    w = bind(ob, arm, method='MESHFREE', chains=chains)
    counts, sums, mins = influences(ob)
    assert counts.min() >= 1 and counts.max() <= 4
    assert np.abs(sums - 1).max() < 1e-6 and mins.min() >= 0
    pts, _tris = mesh_in_pixels(ob, LEGS.shape)
    names = list(arm.data.bones.keys())
    left = [i for i, n in enumerate(names) if n.endswith(".L")]
    right_leg = (pts[:, 0] > 61) & (pts[:, 1] < 60)
    assert w[np.ix_(right_leg, left)].max() < 0.01


def test_joint_pull_in_reaches_the_weights_and_is_remembered(scene, tmp_path, vide):
    ob = vectorized(tmp_path, LEGS)
    arm = rig_for(ob, LEGS.shape, CHAIN)
    narrow = bind(ob, arm, method='MESHFREE', joint_pull=0.15)
    wide = bind(ob, arm, method='MESHFREE', joint_pull=0.45)
    assert ob.vide.bind.joint_pull == pytest.approx(0.45)
    assert vide.vide_addon.binding.meshfree.kept[ob.session_uid].rig.joint_pull == pytest.approx(0.45)
    assert np.abs(wide - narrow).max() > 0.1


@pytest.mark.parametrize("prune", [0.0, 0.01])
def test_meshfree_weights_of_a_mirrored_rig_are_mirrored(scene, tmp_path, prune):
    ob = vectorized(tmp_path, LEGS)
    arm = rig_for(ob, LEGS.shape, CHAIN)
    w = bind(ob, arm, method='MESHFREE', prune=prune)
    pts, tris = mesh_in_pixels(ob, LEGS.shape)
    at_mirror, found = interpolate_on_mesh(pts, tris, w, np.column_stack([120 - pts[:, 0], pts[:, 1]]))
    names = list(arm.data.bones.keys())
    swap = [names.index(n.replace(".L", ".X").replace(".R", ".L").replace(".X", ".R")) for n in names]
    assert found.mean() > 0.95
    assert np.abs(w[found] - at_mirror[found][:, swap]).max() < 0.02


@pytest.mark.parametrize("method", ['MESHFREE', 'GEODESIC'])
def test_update_weights_takes_in_a_new_bone_with_the_settings_of_the_bind(scene, tmp_path, method):
    ob = vectorized(tmp_path, LEGS)
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    bind(ob, arm, method=method, max_influences=3)
    head, tail = pixel_to_world(ob, LEGS.shape, [[45, 140], [35, 140]])
    select_only(arm)
    bpy.ops.object.mode_set(mode='EDIT')
    eb = arm.data.edit_bones.new("belly.L")
    eb.head, eb.tail = head.tolist(), tail.tolist()
    bpy.ops.object.mode_set(mode='OBJECT')
    assert bpy.ops.vide.update_weights() == {'FINISHED'}
    w = bone_weights(ob, list(arm.data.bones.keys()))
    counts, sums, _ = influences(ob)
    assert "belly.L" in ob.vertex_groups and w[:, list(arm.data.bones.keys()).index("belly.L")].max() > 0.5
    assert counts.max() <= 3 and np.abs(sums - 1).max() < 1e-6, "bound again with the bind's own settings"
    assert ob.vide.bind.method == method


def add_bone(arm, ob, name, pixels, parent=None):
    """A bone added in Edit Mode at the given image pixels of `ob`, as an artist would."""
    head, tail = pixel_to_world(ob, LEGS.shape, pixels)
    select_only(arm)
    bpy.ops.object.mode_set(mode='EDIT')
    eb = arm.data.edit_bones.new(name)
    eb.head, eb.tail = head.tolist(), tail.tolist()
    if parent:
        eb.parent, eb.use_connect = arm.data.edit_bones[parent], True
    bpy.ops.object.mode_set(mode='OBJECT')


def test_update_weights_inserts_a_new_bone_into_the_kept_meshfree_weights(scene, tmp_path, vide):
    """Real-time insertion: the new bone goes into the weights the bind kept (same samples, same handles,
    one more), and the result is what a bind gives, up to the virtual handles kept from before."""
    kept = vide.vide_addon.binding.meshfree.kept
    ob = vectorized(tmp_path, LEGS)
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    bind(ob, arm, method='MESHFREE', max_influences=3)
    rig = kept[ob.session_uid].rig
    handles, samples = len(rig.handles.handles), rig.samples
    add_bone(arm, ob, "belly.L", [[45, 140], [35, 140]])
    assert bpy.ops.vide.update_weights() == {'FINISHED'}
    assert kept[ob.session_uid].rig is rig and rig.samples is samples, "inserted, not bound again"
    assert sum(rig.handles.real) == 4 and len(rig.handles.handles) > handles
    names = list(arm.data.bones.keys())
    inserted = bone_weights(ob, names)
    counts, sums, mins = influences(ob)
    assert counts.max() <= 3 and np.abs(sums - 1).max() < 1e-6 and mins.min() >= 0
    pts, _tris = mesh_in_pixels(ob, LEGS.shape)
    belly = names.index("belly.L")
    assert inserted[:, belly].max() > 0.5 and inserted[(pts[:, 0] > 61) & (pts[:, 1] < 100), belly].max() < 0.01
    fresh = bind(ob, arm, method='MESHFREE', max_influences=3)
    assert kept[ob.session_uid].rig is not rig
    # Virtual handles placed for the three-bone rig that the new bone does not crowd stay, so single
    # vertices may differ from a fresh bind; on the whole the two agree.
    assert np.abs(inserted - fresh).mean() < 0.01


def test_update_weights_after_undoing_an_insertion_weights_the_bone_again(scene, tmp_path):
    """Undo takes the groups back but not what VIDE keeps in memory: the next Update Weights must still give
    the bone its weights, and the same ones a fresh bind gives."""
    ob = vectorized(tmp_path, LEGS, "undo_me")
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    arm_name = arm.name
    bind(ob, arm, method='MESHFREE')
    add_bone(arm, ob, "belly.L", [[45, 140], [35, 140]])
    bpy.ops.ed.undo_push(message="bone added")
    select_only(arm)
    assert bpy.ops.vide.update_weights() == {'FINISHED'}
    bpy.ops.ed.undo_push(message="weights updated")
    bpy.ops.ed.undo()
    ob, arm = bpy.data.objects["undo_me"], bpy.data.objects[arm_name]
    assert "belly.L" in arm.data.bones and "belly.L" not in ob.vertex_groups
    select_only(arm)
    assert bpy.ops.vide.update_weights() == {'FINISHED'}
    names = list(arm.data.bones.keys())
    updated = bone_weights(ob, names)
    assert updated[:, names.index("belly.L")].max() > 0.5
    assert np.abs(updated - bind(ob, arm, method='MESHFREE')).max() < 1e-9


def test_what_a_bind_keeps_for_a_deleted_mesh_is_let_go(scene, tmp_path, vide):
    kept = vide.vide_addon.binding.meshfree.kept
    gone, stays = vectorized(tmp_path, LEGS, "gone"), vectorized(tmp_path, LEGS, "stays")
    arm = rig_for(stays, LEGS.shape, LEG_BONES)
    bind(gone, arm, method='MESHFREE')
    uid = gone.session_uid
    assert uid in kept
    bpy.data.objects.remove(gone)
    bpy.context.view_layer.update()
    bind(stays, arm, method='MESHFREE')
    assert uid not in kept and stays.session_uid in kept


@pytest.mark.parametrize("change", ["moved", "first-joint"])
def test_update_weights_binds_again_when_bones_changed_otherwise(scene, tmp_path, vide, change):
    """A moved bone, or a first bone that shares a joint (every handle is then pulled in from its joints),
    cannot be inserted: the mesh is bound again, exactly as a fresh bind."""
    kept = vide.vide_addon.binding.meshfree.kept
    ob = vectorized(tmp_path, LEGS)
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    bind(ob, arm, method='MESHFREE')
    rig = kept[ob.session_uid].rig
    if change == "moved":
        select_only(arm)
        bpy.ops.object.mode_set(mode='EDIT')
        arm.data.edit_bones["leg.L"].tail.z += 0.05
        bpy.ops.object.mode_set(mode='OBJECT')
    else:
        add_bone(arm, ob, "hip.top", [[60, 148], [60, 155]], parent="hip")
    assert bpy.ops.vide.update_weights() == {'FINISHED'}
    assert kept[ob.session_uid].rig is not rig
    assert (kept[ob.session_uid].rig.joint_pull > 0) == (change == "first-joint")
    names = list(arm.data.bones.keys())
    updated = bone_weights(ob, names)
    assert np.abs(updated - bind(ob, arm, method='MESHFREE')).max() < 1e-9


def test_update_weights_with_nothing_bound_says_so(scene, tmp_path):
    arm = add_armature({"b": ((0, 0, 0), (0, 0, 0.2))})
    select_only(arm)
    with pytest.raises(RuntimeError, match="No mesh is bound"):
        bpy.ops.vide.update_weights()


def test_with_auto_update_a_new_bone_is_weighted_on_leaving_edit_mode(scene, tmp_path, vide):
    ob = vectorized(tmp_path, LEGS)
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    bind(ob, arm, method='MESHFREE')
    rig = vide.vide_addon.binding.meshfree.kept[ob.session_uid].rig
    arm.vide.auto_update = True
    head, tail = pixel_to_world(ob, LEGS.shape, [[45, 140], [35, 140]])
    select_only(arm)
    bpy.ops.object.mode_set(mode='EDIT')
    eb = arm.data.edit_bones.new("belly.L")
    eb.head, eb.tail = head.tolist(), tail.tolist()
    assert "belly.L" not in ob.vertex_groups, "nothing happens while in Edit Mode"
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.context.view_layer.update()
    assert "belly.L" in ob.vertex_groups
    assert bone_weights(ob, ["belly.L"]).max() > 0.5
    assert vide.vide_addon.binding.meshfree.kept[ob.session_uid].rig is rig, "inserted into the kept weights"
    arm.vide.auto_update = False
    select_only(arm)
    bpy.ops.object.mode_set(mode='EDIT')
    arm.data.edit_bones.remove(arm.data.edit_bones["belly.L"])
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.context.view_layer.update()
    assert "belly.L" in ob.vertex_groups, "with auto-update off, the weights stay as they were"
