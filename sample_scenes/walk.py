"""The sample character as a layered cutout, rigged and walking, built with VIDE's own operators; and its
outputs through VIDE's sprite export: PNG frames, a sprite sheet (PNG + JSON), a GIF, an MP4 preview and a glTF
binary.

Build: the layers of `character.py` are saved as a layered Photoshop file (and as OpenRaster), the way a painting
program saves them, and the .psd is brought in with Import Cutout (vectorized, stacked in the file's order); the
skeleton of `rig.py` is locked to the picture's plane, each layer is bound rigidly to its bone (a classic cutout:
the capsule ends overlap at the joints), both legs get 2D IK, and a walk cycle is keyed on the IK targets and the
arm.
"""

from pathlib import Path

import bpy
import dev_addon
import numpy as np
from character import DRAW_ORDER, layer
from layered import write_ora, write_psd
from mathutils import Matrix
from rig import build_armature, canvas_to_world
from stage import front_camera, load_png, select

LAYER_BONES = {"cape": "torso", "leg_back_upper": "thigh.back", "leg_back_lower": "shin.back", "torso": "torso",
               "leg_front_upper": "thigh.front", "leg_front_lower": "shin.front", "arm_upper": "arm.upper",
               "arm_lower": "arm.lower", "head": "head"}
FRAMES = 24  # one walk cycle, looping
STRIDE, LIFT = 150.0, 45.0  # canvas pixels
FEET = {"shin.front": ((455, 110), 0.0), "shin.back": ((565, 110), 0.5)}  # ankle at rest, phase in the cycle
ARM_SWING = 25.0  # degrees


def build_walk(folder, size=512):
    """Writes the layered files into `folder`, builds the rigged, animated character from the .psd; returns
    (armature, layers)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stack = [{"name": name, "pixels": layer(name, size)} for name in reversed(DRAW_ORDER)]  # top first
    write_ora(folder / "character.ora", (size, size), stack)
    bpy.ops.vide.import_cutout(filepath=str(write_psd(folder / "character.psd", (size, size), stack)))
    layers = {ob.name: ob for ob in bpy.data.objects if ob.vide.is_layer}
    arm = build_armature(layers["torso"], name="Walker")
    select([arm], arm)
    bpy.ops.vide.lock_2d()
    for name, bone in LAYER_BONES.items():
        select([layers[name], arm], arm)
        arm.data.bones.active = arm.data.bones[bone]
        bpy.ops.vide.bind_rigid()
    bpy.ops.object.mode_set(mode='POSE')
    for shin in FEET:
        # Bend the knee forward first: Add 2D IK puts the pole on the side the joint bends to now.
        arm.pose.bones[shin].rotation_euler.z = -0.3
        arm.data.bones.active = arm.data.bones[shin]
        bpy.ops.vide.add_ik_2d()
        arm.pose.bones[shin].rotation_euler.z = 0.0
    bpy.ops.object.mode_set(mode='OBJECT')
    key_walk(arm, layers["torso"])
    return arm, layers


def foot_at(rest, phase, t):
    """Canvas position of a foot at cycle time t (0..1): back along the ground, then forward in the air."""
    angle = 2.0 * np.pi * (t + phase)
    x = rest[0] + 0.5 * STRIDE * np.cos(angle)
    lift = LIFT * max(0.0, -np.sin(angle))  # moving forward (+x) is the swing
    return x, rest[1] + lift


def key_walk(arm, plane):
    """Keys FRAMES + 1 poses (the last equals the first, so it loops) on the IK targets and the arm."""
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 1, FRAMES
    sc.render.fps = 12
    to_arm = arm.matrix_world.inverted()
    for f in range(FRAMES + 1):
        t = f / FRAMES
        for shin, (rest, phase) in FEET.items():
            target = arm.pose.bones[f"IK-{shin}"]
            goal = to_arm @ canvas_to_world(plane, foot_at(rest, phase, t))
            target.matrix = Matrix.Translation(goal) @ target.bone.matrix_local.to_3x3().to_4x4()
            target.keyframe_insert("location", frame=f + 1)
        swing = np.radians(ARM_SWING) * np.sin(2.0 * np.pi * t)
        arm.pose.bones["arm.upper"].rotation_euler.z = swing
        arm.pose.bones["arm.upper"].keyframe_insert("rotation_euler", index=2, frame=f + 1)
        bpy.context.view_layer.update()
    action = arm.animation_data.action
    action.name = "walk"
    action.use_frame_range, action.frame_start, action.frame_end = True, 1, FRAMES  # the last key closes the loop


def render_walk(out, size=256):
    """Saves the scene as out/walk.blend and exports the walk with VIDE's `vide export` command into out/sprites/:
    walk/0001.png... (frames), walk.png + walk.json (sprite sheet), walk.gif, walk.mp4 and walk.glb. Returns the
    frames (RGBA, row 0 at the bottom)."""
    out = Path(out)
    front_camera(size=size, ortho_scale=1.15, centre=(0.0, 0.0))
    bpy.ops.wm.save_as_mainfile(filepath=str(out / "walk.blend"))
    cli = dev_addon.enable().vide_addon.cli
    status = cli.main(["export", "--out", str(out / "sprites"), "--size", str(size)])
    if status != 0:
        raise RuntimeError(f"vide export failed with status {status}")
    return [load_png(p) for p in sorted((out / "sprites" / "walk").glob("*.png"))]
