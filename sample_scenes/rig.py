"""The sample character's skeleton, and helpers to pose it in the picture's plane and to show weights.

Bones are given in canvas pixels (y up), along the body parts of `character.py`; `build_armature` places
them on a vectorized plane through the placement VIDE remembers on it.
"""

from pathlib import Path

import bpy
import numpy as np
from character import composite
from mathutils import Matrix, Vector
from stage import import_plane, save_png, select

# name: (head, tail, parent, connected) in canvas pixels of the 1024 px design.
BONES = {
    "torso": ((512, 480), (512, 700), None, False),
    "head": ((512, 760), (512, 940), "torso", False),
    "thigh.front": ((470, 470), (460, 300), "torso", False),
    "shin.front": ((460, 300), (455, 110), "thigh.front", True),
    "thigh.back": ((540, 470), (560, 300), "torso", False),
    "shin.back": ((560, 300), (565, 110), "thigh.back", True),
    "arm.upper": ((600, 740), (660, 600), "torso", False),
    "arm.lower": ((660, 600), (690, 470), "arm.upper", True),
}
CANVAS = 1024


def canvas_to_world(plane, px, canvas=(CANVAS, CANVAS)):
    """World position of a canvas pixel on a vectorized image plane whose image is `canvas` (width, height)."""
    m = np.array(plane.vide.uv_to_local).reshape(3, 3)
    local = np.array([px[0] / canvas[0], px[1] / canvas[1], 1.0]) @ m
    return plane.matrix_world @ Vector(local)


def build_armature(plane, name="Rig", bones=BONES, canvas=(CANVAS, CANVAS)):
    """An armature with `bones` (given like BONES, in pixels of a `canvas` (width, height) image) on `plane`, in
    its rest pose."""
    arm = bpy.data.objects.new(name, bpy.data.armatures.new(name))
    bpy.context.scene.collection.objects.link(arm)
    arm.show_in_front = True
    select((arm,), arm)
    bpy.ops.object.mode_set(mode='EDIT')
    for bone, (head, tail, parent, connected) in bones.items():
        eb = arm.data.edit_bones.new(bone)
        eb.head, eb.tail = canvas_to_world(plane, head, canvas), canvas_to_world(plane, tail, canvas)
        if parent:
            eb.parent = arm.data.edit_bones[parent]
            eb.use_connect = connected
    bpy.ops.object.mode_set(mode='OBJECT')
    return arm


def rigged_character(folder):
    """The sample character as one image plane (its PNG written into `folder`), vectorized with the default
    settings, and its armature: (plane, armature)."""
    plane = import_plane(save_png(Path(folder) / "character.png", composite()))
    bpy.ops.vide.vectorize_image()
    return plane, build_armature(plane)


def bend(arm, bone, degrees, normal=Vector((0.0, 1.0, 0.0))):
    """Rotates a pose bone about the picture's normal (world axis `normal`), counter-clockwise as seen
    from the front camera."""
    pose = arm.pose.bones[bone]
    axis = (arm.matrix_world.to_3x3() @ pose.bone.matrix_local.to_3x3()).inverted() @ normal
    pose.rotation_mode = 'QUATERNION'
    pose.rotation_quaternion = Matrix.Rotation(np.radians(-degrees), 4, axis.normalized()).to_quaternion()


def weight_colours(ob, bone):
    """A colour attribute on `ob` showing the weight of `bone` as a heat map (blue 0, red 1), for Workbench
    renders with Attribute colours."""
    me = ob.data
    group = ob.vertex_groups[bone].index
    w = np.array([next((g.weight for g in v.groups if g.group == group), 0.0) for v in me.vertices])
    ramp = np.array([[0.05, 0.1, 0.6], [0.1, 0.7, 0.9], [0.2, 0.85, 0.2], [1.0, 0.85, 0.1], [0.9, 0.1, 0.05]])
    x = w * (len(ramp) - 1)
    lo = np.minimum(x.astype(int), len(ramp) - 2)
    rgb = ramp[lo] + (x - lo)[:, None] * (ramp[lo + 1] - ramp[lo])
    attr = me.color_attributes.new(f"weight {bone}", 'FLOAT_COLOR', 'POINT')
    attr.data.foreach_set("color", np.column_stack([rgb, np.ones(len(w))]).astype(np.float32).ravel())
    me.color_attributes.active_color = attr
    return attr
