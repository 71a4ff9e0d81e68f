"""Sprite export, end to end on a small saved .blend with two actions: the command's outputs per action, a farm's
split export plus merge against one run (byte for byte), `--jobs`, and bad input (exit status 2, nothing
written)."""

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest
from gif_reader import read_gif
from mathutils import Matrix
from scipy import ndimage

ROOT = Path(__file__).resolve().parents[2]
ACTIONS = {"swing": ((1, 6), 0.8), "nod": ((3, 6), -0.6)}  # frame range (keys), largest bend in radians
SIZE = 64


def build_character(path, armature=True):
    """A red card (the art, opaque) on a one-bone armature, two actions bending it; Workbench, 10 fps;
    no camera (the export makes one). Saved to `path`."""
    bpy.ops.wm.read_homefile(use_empty=True)
    sc = bpy.context.scene
    sc.render.engine = 'BLENDER_WORKBENCH'
    sc.display.shading.light = 'FLAT'
    sc.display.shading.color_type = 'MATERIAL'
    sc.view_settings.view_transform = 'Standard'
    sc.render.fps = 10
    mesh = bpy.data.meshes.new("card")
    mesh.from_pydata([(-0.2, 0, 0), (0.2, 0, 0), (0.2, 0, 1), (-0.2, 0, 1)], [], [(0, 1, 2, 3)])
    mat = bpy.data.materials.new("red")
    mat.diffuse_color = (0.8, 0.1, 0.1, 1)
    mesh.materials.append(mat)
    card = bpy.data.objects.new("card", mesh)
    sc.collection.objects.link(card)
    if armature:
        arm = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
        sc.collection.objects.link(arm)
        bpy.context.view_layer.objects.active = arm
        bpy.ops.object.mode_set(mode='EDIT')
        bone = arm.data.edit_bones.new("arm")
        bone.head, bone.tail = (0, 0, 0), (0, 0, 1)
        bpy.ops.object.mode_set(mode='OBJECT')
        card.parent, card.parent_type, card.parent_bone = arm, 'BONE', "arm"
        card.matrix_parent_inverse = (arm.data.bones["arm"].matrix_local @ Matrix.Translation((0, 1, 0))).inverted()
        pose = arm.pose.bones["arm"]
        pose.rotation_mode = 'XYZ'
        for name, ((start, end), bend) in ACTIONS.items():
            action = bpy.data.actions.new(name)
            action.use_fake_user = True
            arm.animation_data_create().action = action
            for i, f in enumerate(range(start, end + 1)):
                pose.rotation_euler.z = bend * math.sin(i)
                pose.keyframe_insert("rotation_euler", index=2, frame=f)
        arm.animation_data.action = None
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


def command(*args):
    """Runs `python -m vide_addon ...` (the bpy wheel's form of `blender -b file -c vide ...`)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "vide_addon", *map(str, args)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def character(vide, tmp_path_factory):
    return build_character(tmp_path_factory.mktemp("blend") / "character.blend")


@pytest.fixture(scope="module")
def one_run(character, tmp_path_factory):
    out = tmp_path_factory.mktemp("one_run")
    done = command("export", character, "--out", out, "--size", SIZE)
    assert done.returncode == 0, done.stderr
    return out


def load(vide, path):
    return vide.vide_addon.export.load_rgba8(path)


def frame_files(folder):
    return sorted(f for f in folder.iterdir() if f.suffix == ".png")


def test_each_action_gets_one_frame_per_frame_of_its_range_with_opaque_art_at_alpha_255(vide, one_run):
    for name, ((start, end), _bend) in ACTIONS.items():
        files = frame_files(one_run / name)
        assert [f.name for f in files] == [f"{f:04d}.png" for f in range(start, end + 1)]
        for f in files:
            rgba = load(vide, f)
            assert max(rgba.shape[:2]) == SIZE
            inside = ndimage.binary_erosion(rgba[..., 3] > 0, iterations=2)
            assert inside.sum() > 100 and (rgba[inside, 3] == 255).all(), f"{f}: opaque art below 255"


def test_the_made_camera_frames_every_frame_of_every_action_with_a_margin(vide, one_run):
    union = None
    for name in ACTIONS:
        for f in frame_files(one_run / name):
            drawn = load(vide, f)[..., 3] > 0
            assert not (drawn[0].any() or drawn[-1].any() or drawn[:, 0].any() or drawn[:, -1].any()), f
            union = drawn if union is None else union | drawn
    rows, cols = np.flatnonzero(union.any(1)), np.flatnonzero(union.any(0))
    assert max(rows[-1] - rows[0], cols[-1] - cols[0]) + 1 >= 0.85 * SIZE, "the art fills the frame"


def test_each_sheet_cell_equals_its_frame_and_the_json_hash_says_where(vide, one_run):
    for name in ACTIONS:
        data = json.loads((one_run / f"{name}.json").read_text())
        sheet = load(vide, one_run / f"{name}.png")
        assert data["meta"]["image"] == f"{name}.png"
        assert data["meta"]["size"] == {"w": sheet.shape[1], "h": sheet.shape[0]}
        files = frame_files(one_run / name)
        assert list(data["frames"]) == [f"{name}/{f.name}" for f in files]
        for f in files:
            entry = data["frames"][f"{name}/{f.name}"]
            r = entry["frame"]
            assert np.array_equal(sheet[r["y"]:r["y"] + r["h"], r["x"]:r["x"] + r["w"]], load(vide, f))
            assert entry["duration"] == 100  # 10 fps


def test_the_gif_has_every_frame_and_its_transparency(vide, one_run):
    for name in ACTIONS:
        files = frame_files(one_run / name)
        decoded = read_gif((one_run / f"{name}.gif").read_bytes())
        assert len(decoded) == len(files)
        for (rgba, delay), f in zip(decoded, files):
            assert delay == 10
            assert np.array_equal(rgba[..., 3] == 255, load(vide, f)[..., 3] >= 128)


def test_the_mp4_previews_every_frame_and_the_glb_holds_both_actions(vide, one_run):
    if not bpy.app.build_options.codec_ffmpeg:
        pytest.skip("this Blender has no FFmpeg")
    for name, ((start, end), _bend) in ACTIONS.items():
        clip = bpy.data.movieclips.load(str(one_run / f"{name}.mp4"))
        assert clip.frame_duration == end - start + 1
        assert tuple(clip.size) == load(vide, one_run / name / f"{start:04d}.png").shape[1::-1]
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=str(one_run / "character.glb"))
    assert {a.name.split("_")[0] for a in bpy.data.actions} >= set(ACTIONS)


def outputs(folder):
    return {f.relative_to(folder).as_posix(): f.read_bytes() for f in sorted(folder.rglob("*"))
            if f.is_file() and f.suffix in (".png", ".json", ".gif")}


def test_a_farm_split_in_two_ranges_plus_merge_equals_one_run_byte_for_byte(vide, character, one_run, tmp_path):
    """Chunks rendered in this process (the one run was another process), merged by the command line."""
    main = vide.vide_addon.cli.main
    for args in (["--actions", "swing", "--frames", "1-3"], ["--actions", "swing", "--frames", "4-6"],
                 ["--actions", "nod", "--frames", "3-6"]):
        assert main(["export", str(character), "--out", str(tmp_path), "--size", str(SIZE), *args]) == 0
    assert not list(tmp_path.glob("*.png")), "chunks write frames only"
    assert main(["merge", str(tmp_path), "--formats", "sheet,gif"]) == 0
    split, whole = outputs(tmp_path), outputs(one_run)
    assert split.keys() == whole.keys()
    assert [k for k in whole if split[k] != whole[k]] == []


def test_merge_refuses_missing_frames_and_writes_nothing(vide, character, tmp_path):
    main = vide.vide_addon.cli.main
    assert main(["export", str(character), "--out", str(tmp_path), "--size", "16", "--actions", "swing",
                 "--frames", "1-3"]) == 0
    assert main(["merge", str(tmp_path)]) == 2
    assert not list(tmp_path.glob("*.*"))


def test_jobs_render_in_several_processes_to_the_same_bytes(vide, character, one_run, tmp_path):
    done = command("export", character, "--out", tmp_path, "--size", SIZE, "--jobs", 2, "--formats", "frames,sheet,gif")
    assert done.returncode == 0, done.stderr
    split, whole = outputs(tmp_path), outputs(one_run)
    assert split.keys() == whole.keys() and [k for k in whole if split[k] != whole[k]] == []


@pytest.mark.parametrize("args, message", [
    (["--actions", "swing,jump"], "unknown action 'jump'"),
    (["--camera", "Nope"], "unknown camera 'Nope'"),
    (["--frames", "6-2"], "is empty"),
    (["--frames", "40-50"], "holds no frame"),
    (["--formats", "sheet,webp"], "unknown format webp"),
])
def test_bad_input_is_refused_with_a_message_and_nothing_written(vide, character, tmp_path, capsys, args, message):
    out = tmp_path / "out"
    assert vide.vide_addon.cli.main(["export", str(character), "--out", str(out), *args]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_an_unwritable_folder_and_a_blend_without_armature_exit_with_status_2(vide, character, tmp_path):
    """Through the process: its exit status, as a farm or CI sees it. The folder cannot be made because a file
    stands where its parent should be (refused even to root, who may write anywhere else)."""
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("")
    done = command("export", character, "--out", blocker / "out")
    assert done.returncode == 2 and "cannot write into" in done.stderr, done.stderr
    bare = build_character(tmp_path / "bare.blend", armature=False)
    done = command("export", bare, "--out", tmp_path / "out")
    assert done.returncode == 2 and "no armature" in done.stderr and not (tmp_path / "out").exists()


def test_the_export_sprites_operator_writes_what_it_reports_and_leaves_the_scene_as_it_was(vide, character, tmp_path):
    bpy.ops.wm.open_mainfile(filepath=str(character))
    sc = bpy.context.scene
    before = (sc.camera, sc.render.resolution_x, sc.render.film_transparent, sc.display.render_aa, sc.frame_current,
              len(bpy.data.objects), len(bpy.data.cameras), bpy.data.objects["Rig"].animation_data.action)
    out = tmp_path / "ui"
    assert bpy.ops.vide.export_sprites(directory=str(out), size=32, formats={'frames', 'sheet'}) == {'FINISHED'}
    assert sorted(f.name for f in out.iterdir()) == ["nod", "nod.json", "nod.png", "swing", "swing.json", "swing.png"]
    after = (sc.camera, sc.render.resolution_x, sc.render.film_transparent, sc.display.render_aa, sc.frame_current,
             len(bpy.data.objects), len(bpy.data.cameras), bpy.data.objects["Rig"].animation_data.action)
    assert after == before
    with pytest.raises(RuntimeError, match="Unknown action 'jump'"):
        bpy.ops.vide.export_sprites(directory=str(tmp_path / "bad"), actions="jump")
    assert not (tmp_path / "bad").exists()


FLAMENCO_HARNESS = """
const fs = require("fs"), path = require("path");
const tasks = [];
const author = {
  Task: (name, type) => ({ name, type, commands: [], deps: [],
    addCommand(c) { this.commands.push(c); }, addDependency(t) { this.deps.push(t.name); } }),
  Command: (type, params) => ({ type, params }),
};
const job = { settings: JSON.parse(process.argv[2]), addTask: (t) => tasks.push(t) };
new Function("author", "path", "print", "job", fs.readFileSync(process.argv[1], "utf8") + "\\ncompileJob(job);")(
  author, path, () => {}, job);
console.log(JSON.stringify(tasks));
"""


def test_the_flamenco_job_type_splits_into_chunks_whose_commands_merge_to_the_one_run_bytes(
        vide, character, one_run, tmp_path):
    """Runs tools/flamenco/vide_export.js in Node with a stand-in for Flamenco's `author` API, then each task's
    Blender arguments (after `-c vide`) through the command, renders before the merge that depends on them."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    bpy.ops.wm.open_mainfile(filepath=str(character))
    actions = bpy.context.scene.vide_sprite_actions
    assert actions == "nod:3-6,swing:1-6"
    settings = {"actions": actions, "chunk_size": 4, "size": SIZE, "formats": "frames,sheet,gif", "camera": "",
                "output_dir": str(tmp_path), "blendfile": str(character)}
    done = subprocess.run([node, "-e", FLAMENCO_HARNESS, str(ROOT / "tools/flamenco/vide_export.js"),
                           json.dumps(settings)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    tasks = json.loads(done.stdout)
    renders = [t["name"] for t in tasks if t["name"].startswith("render-")]
    assert renders == ["render-nod-3-6", "render-swing-1-4", "render-swing-5-6"]
    assert [t["deps"] for t in tasks if t["name"] == "merge"] == [renders]
    for task in tasks:
        (command,) = task["commands"]
        params = command["params"]
        assert command["type"] == "blender-render" and params["blendfile"] == str(character)
        assert params["args"][:2] == ["-c", "vide"]
        args = params["args"][2:]
        if args[0] == "export":
            args = ["export", params["blendfile"], *args[1:]]
        assert vide.vide_addon.cli.main(args) == 0, task["name"]
    farm, whole = outputs(tmp_path), outputs(one_run)
    assert farm.keys() == whole.keys() and [k for k in whole if farm[k] != whole[k]] == []


def test_the_panel_and_the_command_line_start_from_the_exports_own_defaults(vide):
    """Export Sprites' size and formats, and the `export` and `merge` commands' options, default to what
    export.py says (Options, FORMATS, MERGED), so the panel, the command line and a script cannot disagree."""
    export, cli = vide.vide_addon.export, vide.vide_addon.cli
    defaults = export.Options(out=Path("."))
    operator = bpy.ops.vide.export_sprites.get_rna_type().properties
    assert operator["size"].default == defaults.size
    assert set(operator["formats"].default_flag) == defaults.formats == set(export.FORMATS)
    command = cli.parser().parse_args(["export", "--out", "x"])
    assert command.size == defaults.size and set(command.formats.split(",")) == defaults.formats
    assert cli.parser().parse_args(["merge", "x"]).formats.split(",") == list(export.MERGED)
