"""The sample character as a layered cutout, rigged and walking, built with VIDE's own operators; and its
outputs: PNG frames, a sprite sheet (PNG + JSON of frame rectangles), an MP4 preview and a glTF binary.

Build: the layers of `character.py` are saved as a layered Photoshop file (and as OpenRaster), the way a painting
program saves them, and the .psd is brought in with Import Cutout (vectorized, stacked in the file's order); the skeleton of `rig.py` is locked to the picture's plane, each layer is bound rigidly
to its bone (a classic cutout: the capsule ends overlap at the joints), both legs get 2D IK, and a walk cycle
is keyed on the IK targets and the arm.
"""

import json
from pathlib import Path

import bpy
import numpy as np
from character import DRAW_ORDER, layer
from layered import write_ora, write_psd
from mathutils import Matrix
from rig import build_armature, canvas_to_world
from stage import front_camera, load_png, save_png, select

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


def render_walk(out, size=256):
    """Renders the cycle: frames/, walk_sheet.png + walk_sheet.json, walk.mp4, and exports walk.glb."""
    out = Path(out)
    sc = bpy.context.scene
    front_camera(size=size, ortho_scale=1.15, centre=(0.0, 0.0))
    frames = []
    for f in range(sc.frame_start, sc.frame_end + 1):
        sc.frame_set(f)
        sc.render.filepath = str(out / "frames" / f"walk_{f:04d}.png")
        bpy.ops.render.render(write_still=True)
        frames.append(load_png(sc.render.filepath))
    sheet, rects = sprite_sheet(frames)
    save_png(out / "walk_sheet.png", sheet)
    (out / "walk_sheet.json").write_text(json.dumps(
        {"image": "walk_sheet.png", "size": [sheet.shape[1], sheet.shape[0]], "fps": sc.render.fps,
         "frames": rects}, indent=1))
    movie(out / "walk.mp4")
    bpy.ops.export_scene.gltf(filepath=str(out / "walk.glb"), export_format='GLB', export_animations=True,
                              export_skins=True, export_influence_nb=4, export_all_influences=False,
                              export_yup=True)
    return frames


def sprite_sheet(frames, columns=8):
    """Frames (each (h, w, 4), row 0 at the bottom) in a grid, read left to right from the top; and each
    frame's rectangle {x, y, w, h} in image coordinates (y down), as game engines read sprite sheets."""
    h, w = frames[0].shape[:2]
    rows = -(-len(frames) // columns)
    sheet = np.zeros((rows * h, columns * w, 4), np.float32)
    rects = []
    for i, frame in enumerate(frames):
        r, c = divmod(i, columns)
        top = (rows - 1 - r) * h  # row 0 of the array is the bottom of the picture
        sheet[top:top + h, c * w:(c + 1) * w] = frame
        rects.append({"frame": i + 1, "x": c * w, "y": r * h, "w": w, "h": h})
    return sheet, rects


def movie(path):
    """The cycle as an H.264 MP4 through Blender's own FFmpeg output (white background)."""
    sc = bpy.context.scene
    settings = sc.render.image_settings
    keep = settings.file_format, settings.color_mode, sc.render.film_transparent, sc.render.filepath, sc.world
    sc.render.film_transparent = False
    if hasattr(settings, "media_type"):  # Blender 5.0 lists movie formats under their own media type
        settings.media_type = 'VIDEO'
    settings.file_format = 'FFMPEG'
    settings.color_mode = 'RGB'
    sc.render.ffmpeg.format = 'MPEG4'
    sc.render.ffmpeg.codec = 'H264'
    sc.render.filepath = str(path)
    white = sc.world = bpy.data.worlds.new("white")
    white.color = (1.0, 1.0, 1.0)
    bpy.ops.render.render(animation=True)
    if hasattr(settings, "media_type"):
        settings.media_type = 'IMAGE'
    settings.file_format, settings.color_mode, sc.render.film_transparent, sc.render.filepath, sc.world = keep
    bpy.data.worlds.remove(white)
