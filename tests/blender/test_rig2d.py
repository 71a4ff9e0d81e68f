"""Rigging helpers in real Blender: 2D IK that reaches its target in the picture's plane, Lock to 2D, a layer
bound rigidly to one bone, a prop attached to a bone."""

import bpy
import numpy as np
import pytest
from helpers import add_armature, bone_weights, image_plane, influences, legs, select_only
from mathutils import Matrix, Vector

LEG = {"hip": ((0, 0, 1.2), (0, 0, 1.0)), "thigh": ((0, 0, 1.0), (0.05, 0, 0.5), "hip"),
       "shin": ((0.05, 0, 0.5), (0, 0, 0.0), "thigh")}


def leg_rig():
    arm = add_armature(LEG)
    select_only(arm)
    bpy.ops.object.mode_set(mode='EDIT')
    arm.data.edit_bones["shin"].use_connect = True
    bpy.ops.object.mode_set(mode='POSE')
    arm.data.bones.active = arm.data.bones["shin"]
    return arm


def posed_tail(arm, bone):
    return np.array(arm.matrix_world @ arm.pose.bones[bone].tail)


def test_2d_ik_keeps_the_rest_pose_and_the_foot_reaches_its_target(scene):
    arm = leg_rig()
    rest = {b: posed_tail(arm, b) for b in ("thigh", "shin")}
    assert bpy.ops.vide.add_ik_2d() == {'FINISHED'}
    bpy.context.view_layer.update()
    for b, tail in rest.items():
        assert np.allclose(posed_tail(arm, b), tail, atol=1e-4), f"{b} moved when IK was added"
    target = arm.pose.bones["IK-shin"]
    leg_length = 1.0
    for move in ((0.3, 0.0, 0.25), (-0.25, 0.0, 0.1), (0.1, 0.0, 0.4)):
        target.location = (0, 0, 0)
        bpy.context.view_layer.update()
        goal = np.array(arm.matrix_world @ target.head) + move
        target.matrix = Matrix.Translation(Vector(goal)) @ target.matrix.to_3x3().to_4x4()
        bpy.context.view_layer.update()
        foot = posed_tail(arm, "shin")
        assert np.linalg.norm(foot - goal) <= 0.01 * leg_length, (move, foot, goal)
        assert abs(posed_tail(arm, "thigh")[1]) < 1e-6, "the knee stays in the picture's plane"
        assert posed_tail(arm, "thigh")[0] > -0.05, "the knee bends to the side it bent to at rest (+X)"


def test_2d_ik_bends_to_the_side_the_joint_bends_to_in_the_current_pose(scene):
    arm = leg_rig()
    shin = arm.pose.bones["shin"]
    shin.rotation_mode = 'QUATERNION'
    axis = shin.bone.matrix_local.to_3x3().inverted() @ Vector((0.0, 1.0, 0.0))
    shin.rotation_quaternion = Matrix.Rotation(-0.6, 4, axis.normalized()).to_quaternion()  # ankle to +X
    bpy.context.view_layer.update()
    hip, knee, ankle = (np.array(arm.matrix_world @ p) for p in (shin.parent.head, shin.head, shin.tail))
    line_x = hip[0] + (ankle[0] - hip[0]) * (knee[2] - hip[2]) / (ankle[2] - hip[2])
    assert knee[0] < line_x, "posed, the knee sits on the -X side of the hip-ankle line"
    assert bpy.ops.vide.add_ik_2d() == {'FINISHED'}
    shin.rotation_quaternion = (1, 0, 0, 0)
    target = arm.pose.bones["IK-shin"]
    target.location = (0, 0, 0)
    bpy.context.view_layer.update()
    goal = np.array(arm.matrix_world @ target.head) + (0.0, 0.0, 0.4)  # foot up: the knee must bend
    target.matrix = Matrix.Translation(Vector(goal)) @ target.matrix.to_3x3().to_4x4()
    bpy.context.view_layer.update()
    assert posed_tail(arm, "thigh")[0] < -0.1, "the knee bends to -X, as posed, not to +X as at rest"


def test_2d_ik_on_a_bone_without_parent_or_away_from_it(scene):
    arm = add_armature({"lonely": ((0, 0, 1), (0, 0, 0.5)), "far": ((1, 0, 0), (1, 0, -0.5), "lonely")})
    select_only(arm)
    bpy.ops.object.mode_set(mode='POSE')
    arm.data.bones.active = arm.data.bones["lonely"]
    with pytest.raises(RuntimeError, match="has no parent"):
        bpy.ops.vide.add_ik_2d()
    arm.data.bones.active = arm.data.bones["far"]
    with pytest.raises(RuntimeError, match="chain is too short"):
        bpy.ops.vide.add_ik_2d()
    assert not any(pb.constraints for pb in arm.pose.bones) and len(arm.data.bones) == 2


def test_add_2d_ik_needs_an_active_armature(scene):
    bpy.ops.mesh.primitive_plane_add()
    with pytest.raises(RuntimeError, match="Make an armature active"):
        bpy.ops.vide.add_ik_2d()


def test_lock_to_2d_turns_every_bone_only_about_the_pictures_normal(scene):
    arm = leg_rig()
    bpy.ops.object.mode_set(mode='OBJECT')
    rest = {b: posed_tail(arm, b) for b in LEG}
    assert bpy.ops.vide.lock_2d() == {'FINISHED'}
    for pb in arm.pose.bones:
        assert tuple(pb.lock_rotation) == (True, True, False) and pb.lock_location[2]
        z = np.array(pb.bone.matrix_local.to_3x3().col[2])
        assert abs(abs(z[1]) - 1.0) < 1e-6, f"{pb.name}: local Z is the front view's axis"
        pb.rotation_euler.z = 0.4
    bpy.context.view_layer.update()
    for b in LEG:
        assert abs(posed_tail(arm, b)[1] - rest[b][1]) < 1e-6, "posed bones stay in the picture's plane"


def test_a_layer_bound_rigidly_turns_as_one_piece(scene, tmp_path):
    ob = image_plane(tmp_path, legs(), "arm_layer")
    arm = leg_rig()
    bpy.ops.object.mode_set(mode='OBJECT')
    select_only(arm)
    ob.select_set(True)
    arm.data.bones.active = arm.data.bones["thigh"]
    assert bpy.ops.vide.bind_rigid() == {'FINISHED'}
    counts, sums, _ = influences(ob)
    assert (counts == 1).all() and np.allclose(sums, 1.0)
    assert np.allclose(bone_weights(ob, ["thigh"]), 1.0)
    assert ob.parent == arm and [m.type for m in ob.modifiers] == ['ARMATURE']


def test_a_prop_attached_to_a_bone_keeps_its_place_and_follows_it(scene):
    arm = leg_rig()
    bpy.ops.object.mode_set(mode='OBJECT')
    prop = bpy.data.objects.new("sword", None)
    scene.collection.objects.link(prop)
    prop.location = (0.3, 0.0, 0.4)
    bpy.context.view_layer.update()
    select_only(arm)
    prop.select_set(True)
    arm.data.bones.active = arm.data.bones["shin"]
    assert bpy.ops.vide.attach_to_bone() == {'FINISHED'}
    bpy.context.view_layer.update()
    assert np.allclose(prop.matrix_world.translation, (0.3, 0.0, 0.4), atol=1e-6)
    arm.pose.bones["shin"].rotation_mode = 'XYZ'
    arm.pose.bones["shin"].rotation_euler.x = 0.5
    bpy.context.view_layer.update()
    assert not np.allclose(prop.matrix_world.translation, (0.3, 0.0, 0.4), atol=1e-3)
    assert prop.parent == arm and prop.parent_bone == "shin"


def test_2d_ik_with_stretch_reaches_a_target_beyond_the_legs_length(scene):
    arm = leg_rig()
    assert bpy.ops.vide.add_ik_2d(stretch=True) == {'FINISHED'}
    target = arm.pose.bones["IK-shin"]
    bpy.context.view_layer.update()
    goal = np.array(arm.matrix_world @ target.head) + (0.3, 0.0, -0.3)  # 1.27 from the hip, the leg is 1.0
    target.matrix = Matrix.Translation(Vector(goal)) @ target.matrix.to_3x3().to_4x4()
    bpy.context.view_layer.update()
    assert np.linalg.norm(posed_tail(arm, "shin") - goal) <= 0.01


def test_2d_ik_added_twice_on_one_bone_replaces_its_constraint_and_helper_bones(scene, capfd):
    arm = leg_rig()
    rest = {b: posed_tail(arm, b) for b in ("thigh", "shin")}
    assert bpy.ops.vide.add_ik_2d() == {'FINISHED'}
    assert bpy.ops.vide.add_ik_2d(stretch=True) == {'FINISHED'}
    assert "Replaced 2D IK on 'thigh' and 'shin'" in capfd.readouterr().out
    iks = [c for c in arm.pose.bones["shin"].constraints if c.type == 'IK']
    assert len(iks) == 1 and iks[0].use_stretch, "only the second IK is left"
    assert sorted(b.name for b in arm.data.bones) == ["IK-shin", "Pole-shin", "hip", "shin", "thigh"]
    assert (iks[0].subtarget, iks[0].pole_subtarget) == ("IK-shin", "Pole-shin")
    bpy.context.view_layer.update()
    for b, tail in rest.items():
        assert np.allclose(posed_tail(arm, b), tail, atol=1e-4), f"{b} moved when IK was replaced"
