"""Rigging helpers for cutouts: two-bone IK in the picture's plane, a rig locked to that plane, a layer bound
rigidly to one bone, and a prop attached to a bone. Blender's own constraints and parenting do the work."""

import math

import bpy
from bpy.props import BoolProperty, EnumProperty
from mathutils import Vector

from ..bridge.rig import attach
from .batch import is_linked
from .poll import SaysWhyNot

PLANES = [('XZ', "Front (XZ)", "The picture faces the front view: bones turn about the Y axis"),
          ('XY', "Top (XY)", "The picture lies flat: bones turn about the Z axis"),
          ('YZ', "Side (YZ)", "The picture faces the side view: bones turn about the X axis")]
NORMALS = {'XZ': Vector((0.0, -1.0, 0.0)), 'XY': Vector((0.0, 0.0, 1.0)), 'YZ': Vector((1.0, 0.0, 0.0))}
HELPER_OF = "vide_ik_of"  # custom property of the target and pole bones Add 2D IK makes: the bone they serve


def _armature_problem(context, need_bone):
    arm = context.active_object
    if arm is None or arm.type != 'ARMATURE':
        return "Make an armature active"
    if is_linked(arm):
        return f"'{arm.name}' is linked from a library: make it local first"
    if need_bone and context.active_pose_bone is None and arm.data.bones.active is None:
        return "Select the bone (in Pose Mode)"
    return None


def _normal_in_armature(arm, plane):
    """The picture's normal in the armature's space."""
    return (arm.matrix_world.to_3x3().inverted() @ NORMALS[plane]).normalized()


def _align_rolls(arm, names, normal):
    """Rolls the bones so that their local Z axis is the picture's normal: turning about Z is turning in the
    picture. Heads and tails stay, so weights and the rest shape do not change."""
    mode = arm.mode
    bpy.ops.object.mode_set(mode='EDIT')
    for name in names:
        eb = arm.data.edit_bones[name]
        if abs(eb.vector.normalized().dot(normal)) < 0.999:  # a bone along the normal keeps its roll
            eb.align_roll(normal)
    bpy.ops.object.mode_set(mode=mode)


def _lock_to_plane(pose_bone):
    pose_bone.rotation_mode = 'XYZ'
    pose_bone.lock_rotation = (True, True, False)
    pose_bone.lock_ik_x = pose_bone.lock_ik_y = True
    pose_bone.lock_location[2] = True


class VIDE_OT_add_ik_2d(SaysWhyNot, bpy.types.Operator):
    """Add two-bone IK to the active bone and its parent: a new target bone at its tip and a pole bone on the
    side the joint bends to in the current pose, both in the picture's plane, with rotation locked to it.
    Run again on the same bone, it replaces the bone's IK and the target and pole bones it added before"""

    bl_idname = "vide.add_ik_2d"
    bl_label = "Add 2D IK"
    bl_options = {'REGISTER', 'UNDO'}

    plane: EnumProperty(name="Picture Plane", items=PLANES, default='XZ')
    stretch: BoolProperty(name="Stretch", default=False, description="Let the chain stretch to reach the target")

    @classmethod
    def problem(cls, context):
        return _armature_problem(context, need_bone=True)

    def execute(self, context):
        arm = context.active_object
        name = (context.active_pose_bone.name if context.active_pose_bone else arm.data.bones.active.name)
        bone = arm.data.bones[name]
        if bone.parent is None:
            self.report({'ERROR'}, f"'{name}' has no parent: two-bone IK needs the bone and the one above it "
                                   "(select the lower bone of the limb)")
            return {'CANCELLED'}
        upper = bone.parent.name
        if (bone.parent.tail_local - bone.head_local).length > 0.25 * bone.length:
            self.report({'ERROR'}, f"'{name}' does not continue '{upper}' (its head is away from the parent's "
                                   "tip): the chain is too short for two-bone IK")
            return {'CANCELLED'}
        normal = _normal_in_armature(arm, self.plane)
        side = _bend_side(arm.pose.bones[upper], arm.pose.bones[name], normal)
        mode = arm.mode
        replaced = _remove_ik(arm, name)
        _align_rolls(arm, [upper, name], normal)
        bpy.ops.object.mode_set(mode='EDIT')
        ebs = arm.data.edit_bones
        for helper in [eb for eb in ebs if eb.get(HELPER_OF) == name]:  # the target and pole added before
            ebs.remove(helper)
        lower_eb, upper_eb = ebs[name], ebs[upper]
        joint, tip = lower_eb.head.copy(), lower_eb.tail.copy()
        chain = upper_eb.length + lower_eb.length
        target = ebs.new(f"IK-{name}")
        target.head, target.tail = tip, tip + (tip - joint).normalized() * 0.25 * lower_eb.length
        target.use_deform = False  # free: the foot stays planted when the body moves
        target[HELPER_OF] = name
        pole = ebs.new(f"Pole-{name}")
        pole.head = joint + side * 0.5 * chain
        pole.tail = pole.head + side * 0.1 * chain
        pole.use_deform = False
        pole[HELPER_OF] = name
        pole.parent = upper_eb.parent
        pole_angle = _pole_angle(upper_eb, lower_eb, pole.head)
        rest_side = _bend_side(upper_eb, lower_eb, normal)
        if rest_side.dot(side) < 0:  # posed the other way than at rest: turn the chain's plane over
            pole_angle = pole_angle - math.pi if pole_angle > 0 else pole_angle + math.pi
        target_name, pole_name = target.name, pole.name
        bpy.ops.object.mode_set(mode='POSE')
        pb = arm.pose.bones[name]
        ik = pb.constraints.new('IK')
        ik.target, ik.subtarget = arm, target_name
        ik.pole_target, ik.pole_subtarget = arm, pole_name
        ik.pole_angle = pole_angle
        ik.chain_count = 2
        ik.use_stretch = self.stretch
        for chain_bone in (name, upper):
            _lock_to_plane(arm.pose.bones[chain_bone])
            arm.pose.bones[chain_bone].ik_stretch = 0.1 if self.stretch else 0.0
        for helper in (target_name, pole_name):
            arm.pose.bones[helper].lock_location[2] = False
        bpy.ops.object.mode_set(mode=mode)
        self.report({'INFO'}, f"{'Replaced' if replaced else 'Added'} 2D IK on '{upper}' and '{name}': move "
                              f"'{target_name}', bend with '{pole_name}'")
        return {'FINISHED'}


def _remove_ik(arm, name):
    """Removes the IK constraints of bone `name` (a second one would fight the first); returns whether there
    were any."""
    constraints = arm.pose.bones[name].constraints
    iks = [c for c in constraints if c.type == 'IK']
    for c in iks:
        constraints.remove(c)
    return bool(iks)


def _bend_side(upper, lower, normal):
    """Unit vector (armature space, in the picture's plane) on the side the joint bends to in the current
    pose: where the joint sits off the line from the chain's root to its tip (for a straight limb, a fixed
    side: the line crossed with the normal)."""
    root, joint, tip = upper.head, lower.head, lower.tail
    line = (tip - root).normalized()
    side = (joint - root) - (joint - root).dot(line) * line
    if side.length < 1e-4 * (tip - root).length:
        side = line.cross(normal)
    return (side - side.dot(normal) * normal).normalized()


def _pole_angle(upper, lower, pole):
    """The IK pole angle that leaves the chain in its rest pose (the angle between the upper bone's X axis
    and the pole direction, about the chain's axis)."""
    axis = lower.tail - upper.head
    pole_normal = axis.cross(pole - upper.head)
    projected = pole_normal.cross(upper.tail - upper.head)
    angle = upper.x_axis.angle(projected)
    return -angle if upper.x_axis.cross(projected).dot(upper.tail - upper.head) < 0 else angle


class VIDE_OT_lock_2d(SaysWhyNot, bpy.types.Operator):
    """Lock every bone of the active armature to the picture's plane: each turns only about the plane's normal
    and moves only within the plane (bone rolls are aligned to the normal; do this before posing)"""

    bl_idname = "vide.lock_2d"
    bl_label = "Lock to 2D"
    bl_options = {'REGISTER', 'UNDO'}

    plane: EnumProperty(name="Picture Plane", items=PLANES, default='XZ')

    @classmethod
    def problem(cls, context):
        return _armature_problem(context, need_bone=False)

    def execute(self, context):
        arm = context.active_object
        names = [b.name for b in arm.data.bones]
        _align_rolls(arm, names, _normal_in_armature(arm, self.plane))
        for pb in arm.pose.bones:
            _lock_to_plane(pb)
        self.report({'INFO'}, f"Locked {len(names)} bones of '{arm.name}' to the {self.plane} plane")
        return {'FINISHED'}


def _bone_and_objects(context):
    """The active armature's active bone and the other selected objects, or a reason why not."""
    arm = context.active_object
    problem = _armature_problem(context, need_bone=True)
    if problem:
        return None, None, [], problem
    others = [ob for ob in context.selected_objects if ob != arm]
    if not others:
        return arm, None, [], "Select the layers or props as well as the armature"
    bone = context.active_pose_bone.name if context.active_pose_bone else arm.data.bones.active.name
    return arm, bone, others, None


class OnActiveBone(SaysWhyNot):
    """An operator on the other selected objects and the active armature's active bone."""

    @classmethod
    def problem(cls, context):
        return _bone_and_objects(context)[3]


class VIDE_OT_bind_rigid(OnActiveBone, bpy.types.Operator):
    """Bind the selected meshes wholly to the active bone: every vertex weighted 1 to it (an arm drawn on its
    own layer turns as one piece)"""

    bl_idname = "vide.bind_rigid"
    bl_label = "Bind Rigidly to Bone"
    bl_options = {'REGISTER', 'UNDO'}

    def execute(self, context):
        arm, bone, others, _ = _bone_and_objects(context)
        meshes = [ob for ob in others if ob.type == 'MESH' and not is_linked(ob)]
        if not meshes:
            self.report({'ERROR'}, "Select local meshes to bind")
            return {'CANCELLED'}
        for ob in meshes:
            group = ob.vertex_groups.get(bone) or ob.vertex_groups.new(name=bone)
            group.add(list(range(len(ob.data.vertices))), 1.0, 'REPLACE')
            for other in ob.vertex_groups:
                if other != group and other.name in arm.data.bones:
                    ob.vertex_groups.remove(other)
            attach(ob, arm)
        self.report({'INFO'}, f"Bound {len(meshes)} mesh{'es' * (len(meshes) > 1)} rigidly to '{bone}'")
        return {'FINISHED'}


class VIDE_OT_attach_to_bone(OnActiveBone, bpy.types.Operator):
    """Attach the selected objects (props) to the active bone, keeping where they are: they follow it"""

    bl_idname = "vide.attach_to_bone"
    bl_label = "Attach to Bone"
    bl_options = {'REGISTER', 'UNDO'}

    def execute(self, context):
        arm, bone, others, _ = _bone_and_objects(context)
        context.view_layer.update()
        for ob in others:
            world = ob.matrix_world.copy()
            ob.parent = arm
            ob.parent_type = 'BONE'
            ob.parent_bone = bone
            context.view_layer.update()
            ob.matrix_world = world
        self.report({'INFO'}, f"Attached {len(others)} object{'s' * (len(others) > 1)} to '{bone}'")
        return {'FINISHED'}


classes = (VIDE_OT_add_ik_2d, VIDE_OT_lock_2d, VIDE_OT_bind_rigid, VIDE_OT_attach_to_bone)
