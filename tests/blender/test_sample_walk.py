"""The sample cutout character: it builds with VIDE's operators, walks, renders, and its sprite sheet and glTF
export hold what a game engine needs."""

import json

import bpy
import numpy as np
import pytest
from scipy import ndimage
from stage import load_png, render
from walk import FRAMES, LAYER_BONES, build_walk, render_walk

LIMBS = [name for name, bone in LAYER_BONES.items() if bone.startswith(("thigh", "shin", "arm"))]


@pytest.fixture
def walker(scene, tmp_path):
    arm, layers = build_walk(tmp_path / "layers", size=256)
    frames = render_walk(tmp_path, size=96)
    return arm, layers, frames, tmp_path


def test_the_walk_exports_frames_a_sprite_sheet_a_gif_a_movie_and_a_gltf(walker):
    _arm, layers, frames, out = walker
    sprites = out / "sprites"
    assert len(layers) == 9 and len(frames) == FRAMES
    assert len(list((sprites / "walk").glob("*.png"))) == FRAMES
    h, w = frames[0].shape[:2]
    assert max(h, w) == 96
    meta = json.loads((sprites / "walk.json").read_text())
    sheet = load_png(sprites / "walk.png")
    assert meta["meta"]["size"] == {"w": sheet.shape[1], "h": sheet.shape[0]} and len(meta["frames"]) == FRAMES
    rect = meta["frames"]["walk/0010.png"]["frame"]
    top = sheet.shape[0] - rect["y"] - rect["h"]  # the array's row 0 is the bottom of the picture
    assert np.abs(sheet[top:top + h, rect["x"]:rect["x"] + w] - frames[9]).max() < 1 / 255
    assert (sprites / "walk.gif").read_bytes().count(b"\x21\xf9\x04") == FRAMES, "one GIF frame per frame"
    clip = bpy.data.movieclips.load(str(sprites / "walk.mp4"))
    assert clip.frame_duration == FRAMES and tuple(clip.size) == (w, h)
    assert (sprites / "walk.glb").stat().st_size > 10_000
    assert any(np.abs(frames[0] - f).max() > 0.5 for f in frames[1:]), "the character moves"


def test_a_mid_walk_frame_differs_from_the_rest_pose_only_where_the_limbs_are(walker, tmp_path):
    arm, layers, _frames, _out = walker
    sc = bpy.context.scene

    def shot(pose_position, frame, only=None):
        arm.data.pose_position = pose_position
        sc.frame_set(frame)
        for name, ob in layers.items():
            ob.hide_render = only is not None and name not in only
        return render(tmp_path / "shot.png")

    rest, mid = shot('REST', 7), shot('POSE', 7)
    limbs = (shot('REST', 7, LIMBS)[..., 3] > 0) | (shot('POSE', 7, LIMBS)[..., 3] > 0)
    changed = np.abs(rest - mid).max(axis=2) > 2 / 255
    assert changed.sum() > 50, "the limbs moved"
    outside = changed & ~ndimage.binary_dilation(limbs)
    assert outside.sum() == 0, f"{outside.sum()} pixels changed away from the limbs"


def test_the_gltf_round_trips_with_bones_four_weights_and_the_walk(walker):
    arm, _layers, _frames, out = walker
    bones = {b.name for b in arm.data.bones if b.use_deform}
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=str(out / "sprites" / "walk.glb"))
    arms = [ob for ob in bpy.data.objects if ob.type == 'ARMATURE']
    assert len(arms) == 1 and bones <= {b.name for b in arms[0].data.bones}
    # The importer also makes an Icosphere to draw bones with; the layers are the skinned meshes.
    meshes = [ob for ob in bpy.data.objects if ob.type == 'MESH' and ob.find_armature() == arms[0]]
    assert len(meshes) == 9
    for ob in meshes:
        for v in ob.data.vertices:
            w = [g.weight for g in v.groups if g.weight > 0]
            assert 1 <= len(w) <= 4 and abs(sum(w) - 1) < 1e-3
    actions = [a for a in bpy.data.actions if a.frame_range[1] - a.frame_range[0] >= FRAMES - 1]
    assert actions, "the walk came back as an animation"
