"""Sprite export, the Blender part: which armature and actions, the camera, rendering each action's frames, and
merging frames into sheets, GIFs and an MP4, plus one glTF. The command line (`cli.py`) and the Export Sprites
operator both call `export` and `merge`; packing and encoding are in `core/sprites.py` and `core/gif.py`.

Folder layout (DIR is --out):
  DIR/<action>/0001.png   the frames (numbered as the scene's frames), straight alpha
  DIR/<action>/range.json the action's whole frame range and speed, for merging frames rendered apart
  DIR/<action>.png, .json the sprite sheet and its TexturePacker JSON hash
  DIR/<action>.gif        the animated GIF;  DIR/<action>.mp4  the preview on white (if Blender has FFmpeg)
  DIR/<file>.glb          every action in one glTF binary
"""

import json
import math
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np

from .core.errors import VideError
from .core.gif import gif_bytes
from .core.sprites import frame_duration_ms, frame_name, png_bytes, sheet, sheet_json

FORMATS = ("frames", "sheet", "gif", "mp4", "glb")
MERGED = ("sheet", "gif", "mp4")  # the formats made from the frames (what `merge` builds)
CAMERA_NAME = "VIDE Export Camera"
FRAME_FILE = re.compile(r"^(-?\d+)\.png$")


@dataclass
class Options:
    out: Path
    actions: list = None  # names; None: every action that animates the armature's bones
    frames: tuple = None  # (first, last) to render only those; then only frames are written
    size: int = 256  # pixels along the frames' longer side
    formats: set = field(default_factory=lambda: set(FORMATS))
    camera: str = None  # a camera object's name; None: the scene's, or one made to frame every action


@dataclass
class Plan:
    armature: object
    actions: dict  # name: (action, (start, end)) for every action to export, whole ranges
    every: dict  # the same for every action of the armature (a made camera frames them all)
    render: dict  # name: (first, last) frames to render now
    camera: object  # None: make one


def file_stem(name):
    """An action's name as a file name (path separators and other awkward characters become _)."""
    return re.sub(r"[^\w.\- ]", "_", name).strip() or "action"


def find_armature(scene):
    arms = [ob for ob in scene.objects if ob.type == 'ARMATURE']
    if not arms:
        raise VideError("the scene has no armature: rig the character first (VIDE > Rig)")
    active = bpy.context.view_layer.objects.active if bpy.context.view_layer else None
    if len(arms) > 1:
        if active in arms:
            return active
        raise VideError(f"the scene has {len(arms)} armatures ({', '.join(a.name for a in arms)}): "
                        f"make the one to export active")
    return arms[0]


def action_curves(action):
    """An action's F-curves in Blender 4.2 to 5.0 (5.0 keeps them only in the layered action's channel bags)."""
    layers = getattr(action, "layers", None)
    if layers:
        for layer in layers:
            for strip in layer.strips:
                for bag in strip.channelbags:
                    yield from bag.fcurves
    elif hasattr(action, "fcurves"):
        yield from action.fcurves


def bone_actions(arm):
    """The actions whose curves animate the armature's bones, by name."""
    bones = {b.name for b in arm.pose.bones}
    found = {}
    for action in bpy.data.actions:
        for fc in action_curves(action):
            m = re.match(r'pose\.bones\["(.+?)"\]', fc.data_path)
            if m and bpy.utils.unescape_identifier(m.group(1)) in bones:
                found[action.name] = action
                break
    return found


def action_range(action):
    """Its manual frame range if set, else its keys' range, as whole frames."""
    start, end = action.frame_range
    return int(round(start)), int(round(end))


def plan(scene, options):
    """Checks everything before anything is written; raises VideError with what to fix."""
    arm = find_armature(scene)
    available = bone_actions(arm)
    if not available:
        raise VideError(f"no action animates the bones of '{arm.name}': key a pose first")
    names = options.actions or sorted(available)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise VideError(f"unknown action {', '.join(repr(n) for n in unknown)}; "
                        f"the actions of '{arm.name}' are {', '.join(sorted(available))}")
    stems = [file_stem(n) for n in names]
    if len(set(stems)) < len(stems):
        raise VideError(f"actions {', '.join(names)} would share file names")
    actions = {n: (available[n], action_range(available[n])) for n in names}
    render = {}
    for name, (_action, (start, end)) in actions.items():
        first, last = options.frames or (start, end)
        first, last = max(first, start), min(last, end)
        if first <= last:
            render[name] = (first, last)
    if not render:
        ranges = ", ".join(f"{n} {s}-{e}" for n, (_a, (s, e)) in actions.items())
        raise VideError(f"frame range {options.frames[0]}-{options.frames[1]} holds no frame of {ranges}")
    camera = None
    if options.camera:
        camera = scene.objects.get(options.camera)
        if camera is None or camera.type != 'CAMERA':
            cameras = [ob.name for ob in scene.objects if ob.type == 'CAMERA']
            raise VideError(f"unknown camera '{options.camera}'; the scene's cameras: {', '.join(cameras) or 'none'}")
    elif scene.camera is not None:
        camera = scene.camera
    if options.size < 2:
        raise VideError(f"size {options.size} px is too small")
    every = {n: (a, action_range(a)) for n, a in sorted(available.items())}
    return Plan(arm, actions, every, render, camera)


def check_folder(out):
    """Makes the output folder and proves it takes files, or raises VideError."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".vide-check-"):
            pass
    except OSError as err:
        raise VideError(f"cannot write into '{out}': {err.strerror or err}") from None


def write_atomic(path, data):
    """Writes bytes or text through a temporary file and a rename, so no reader sees half a file."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data if isinstance(data, bytes) else data.encode())
    os.replace(tmp, path)


class Overrides:
    """Sets attributes for the export and puts every one back afterwards, so the user's scene is unchanged."""

    def __init__(self):
        self.saved = []

    def set(self, owner, attr, value):
        self.saved.append((owner, attr, getattr(owner, attr)))
        setattr(owner, attr, value)

    def later(self, undo):
        """Calls `undo()` on restoring, in turn with the attributes."""
        self.saved.append((undo, None, None))

    def restore(self):
        for owner, attr, value in reversed(self.saved):
            if attr is None:
                owner()
            else:
                setattr(owner, attr, value)
        self.saved.clear()


def use_action(arm, action, overrides):
    """Plays `action` on the armature alone (its NLA tracks muted)."""
    ad = arm.animation_data or arm.animation_data_create()
    for track in ad.nla_tracks:
        overrides.set(track, "mute", True)
    if hasattr(ad, "action_slot") and ad.action_slot is not None:  # Blender 4.4+: put back after the action
        overrides.later(lambda slot=ad.action_slot: setattr(ad, "action_slot", slot))
    overrides.set(ad, "action", action)
    if hasattr(ad, "action_slot") and ad.action_slot is None and len(ad.action_suitable_slots):
        ad.action_slot = ad.action_suitable_slots[0]


def drawn_points(scene):
    """World positions of the vertices of every mesh the render shows, as the frame evaluates them."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    points = []
    for ob in scene.objects:
        if ob.type != 'MESH' or ob.hide_render or not ob.visible_get():
            continue
        ob_eval = ob.evaluated_get(depsgraph)
        mesh = ob_eval.to_mesh()
        co = np.empty(len(mesh.vertices) * 3)
        mesh.vertices.foreach_get("co", co)
        ob_eval.to_mesh_clear()
        m = np.array(ob_eval.matrix_world)
        points.append(co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3])
    return np.concatenate(points) if points else np.zeros((0, 3))


def framing(scene, arm, actions, overrides, size, margin=0.05):
    """A front orthographic camera (looking along +Y, as VIDE's planes face) that frames every frame of every
    action, and the resolution: `size` along the longer side, even sides (H.264 needs them)."""
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for action, (start, end) in actions.values():
        use_action(arm, action, overrides)
        for f in range(start, end + 1):
            scene.frame_set(f)
            pts = drawn_points(scene)
            if len(pts):
                lo, hi = np.minimum(lo, pts.min(0)), np.maximum(hi, pts.max(0))
    if not np.isfinite(lo).all():
        raise VideError("nothing to render: the scene shows no mesh")
    width, height = hi[0] - lo[0], hi[2] - lo[2]
    span = max(width, height) * (1 + 2 * margin)
    if span <= 0:
        raise VideError("nothing to render: the meshes have no extent in the front view")
    short = max(2, 2 * round(size * min(width, height) / max(width, height) / 2))
    long_side = 2 * math.ceil(size / 2)
    resolution = (long_side, short) if width >= height else (short, long_side)
    cam = bpy.data.objects.new(CAMERA_NAME, bpy.data.cameras.new(CAMERA_NAME))
    cam.data.type = 'ORTHO'
    cam.data.ortho_scale = span * long_side / size
    cam.location = ((lo[0] + hi[0]) / 2, lo[1] - 10.0, (lo[2] + hi[2]) / 2)
    cam.rotation_euler = (math.pi / 2, 0.0, 0.0)
    cam.data.clip_start, cam.data.clip_end = 0.01, hi[1] - lo[1] + 20.0
    scene.collection.objects.link(cam)
    return cam, resolution


def render_settings(scene, camera, resolution, overrides):
    """8-bit RGBA PNG frames with a transparent film and no metadata (so the same frame is the same bytes on any
    machine). Workbench anti-aliases with FXAA: its multi-sample anti-aliasing adds the samples up in a
    half-float buffer, which leaves opaque alpha at 0.998 (stored as 254); FXAA keeps it exactly 1."""
    r = scene.render
    overrides.set(scene, "camera", camera)
    overrides.set(r, "resolution_x", resolution[0])
    overrides.set(r, "resolution_y", resolution[1])
    overrides.set(r, "resolution_percentage", 100)
    overrides.set(r, "film_transparent", True)
    overrides.set(r, "use_file_extension", False)
    overrides.set(r, "use_stamp", False)
    for prop in r.bl_rna.properties:
        if prop.identifier.startswith("use_stamp_") and prop.type == 'BOOLEAN' and not prop.is_readonly:
            overrides.set(r, prop.identifier, False)
    settings = r.image_settings
    if hasattr(settings, "media_type"):
        overrides.set(settings, "media_type", 'IMAGE')
    overrides.set(settings, "file_format", 'PNG')
    overrides.set(settings, "color_mode", 'RGBA')
    overrides.set(settings, "color_depth", '8')
    if r.engine == 'BLENDER_WORKBENCH':
        overrides.set(scene.display, "render_aa", 'FXAA')


def resolution_for(scene, camera, size):
    """With a camera of the scene's: its aspect, `size` px along the longer side, even sides."""
    r = scene.render
    w, h = r.resolution_x * r.pixel_aspect_x, r.resolution_y * r.pixel_aspect_y
    long_side = 2 * math.ceil(size / 2)
    short = max(2, 2 * round(size * min(w, h) / max(w, h) / 2))
    return (long_side, short) if w >= h else (short, long_side)


def fps_of(scene):
    return scene.render.fps / scene.render.fps_base


def render_frames(scene, p, out, overrides, progress=None, stale=True):
    """Renders the planned frames of each action into out/<action>/, each file written whole. With `stale`
    (a whole export), frames outside the action's range are removed."""
    total = sum(b - a + 1 for a, b in p.render.values())
    done = 0
    written = []
    for name, (first, last) in p.render.items():
        action, (start, end) = p.actions[name]
        folder = out / file_stem(name)
        folder.mkdir(exist_ok=True)
        write_atomic(folder / "range.json", json.dumps(
            {"action": name, "start": start, "end": end, "fps": fps_of(scene)}, indent=1) + "\n")
        if stale:
            for f in folder.iterdir():
                m = FRAME_FILE.match(f.name)
                if m and not start <= int(m.group(1)) <= end:
                    f.unlink()
        use_action(p.armature, action, overrides)
        for frame in range(first, last + 1):
            scene.frame_set(frame)
            path = out / file_stem(name) / Path(frame_name(name, frame)).name
            tmp = path.with_name(f".{path.name}.tmp.png")
            scene.render.filepath = str(tmp)
            bpy.ops.render.render(write_still=True)
            os.replace(tmp, path)
            written.append(path)
            done += 1
            if progress:
                progress(done / total, f"{name} frame {frame}")
    return written


def load_rgba8(path):
    """A PNG's pixels as (h, w, 4) uint8, row 0 at the top, as the file stores them."""
    img = bpy.data.images.load(str(path))
    try:
        w, h = img.size
        px = np.empty(w * h * 4, np.float32)
        img.pixels.foreach_get(px)
    finally:
        bpy.data.images.remove(img)
    return np.round(px.reshape(h, w, 4)[::-1] * 255).astype(np.uint8)


def action_folders(out, names=None):
    """{action: (folder, range info)} for the frame folders in `out` (only `names`, if given)."""
    found = {}
    for info_path in sorted(out.glob("*/range.json")):
        info = json.loads(info_path.read_text())
        if names is None or info["action"] in names:
            found[info["action"]] = (info_path.parent, info)
    return found


def merge(out, formats=MERGED, names=None, progress=None):
    """Builds each action's sheet + JSON, GIF and MP4 from the frames in out/<action>/ (a whole range needed).
    The same frames give the same bytes, whether rendered in one run or by many machines."""
    out = Path(out)
    folders = action_folders(out, names)
    if not folders:
        raise VideError(f"no exported frames in '{out}' (looked for <action>/range.json)")
    plans = {}
    for name, (folder, info) in folders.items():
        frames = {int(m.group(1)): folder / f.name for f in folder.iterdir() if (m := FRAME_FILE.match(f.name))}
        wanted = range(info["start"], info["end"] + 1)
        missing = [f for f in wanted if f not in frames]
        if missing:
            raise VideError(f"'{name}' misses frames {compact(missing)} of {info['start']}-{info['end']}: "
                            f"render them (export --frames) before merging")
        plans[name] = (info, [frames[f] for f in wanted])
    written = []
    for i, (name, (info, paths)) in enumerate(plans.items()):
        pixels = [load_rgba8(p) for p in paths]
        stem = file_stem(name)
        names_in_sheet = [frame_name(stem, f) for f in range(info["start"], info["end"] + 1)]
        if "sheet" in formats:
            image, rects = sheet(pixels)
            write_atomic(out / f"{stem}.png", png_bytes(image))
            write_atomic(out / f"{stem}.json", sheet_json(f"{stem}.png", (image.shape[1], image.shape[0]),
                                                          names_in_sheet, rects, frame_duration_ms(info["fps"]), name))
            written += [out / f"{stem}.png", out / f"{stem}.json"]
        if "gif" in formats:
            write_atomic(out / f"{stem}.gif", gif_bytes(pixels, max(2, round(100 / info["fps"]))))
            written.append(out / f"{stem}.gif")
        if "mp4" in formats and has_ffmpeg():
            written.append(movie(out / f"{stem}.mp4", pixels, info["fps"]))
        if progress:
            progress((i + 1) / len(plans), name)
    return written


def compact(frames):
    """[1, 2, 3, 7] as '1-3, 7'."""
    runs, start = [], frames[0]
    for a, b in zip(frames, frames[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}-{a}" if a != start else f"{a}")
            start = b
    return ", ".join(runs)


def has_ffmpeg():
    return bool(bpy.app.build_options.codec_ffmpeg)


def movie(path, pixels, fps):
    """An H.264 MP4 of the frames on white, through Blender's own FFmpeg and sequencer (no render of the 3D
    scene again)."""
    h, w = pixels[0].shape[:2]
    tmp = Path(tempfile.mkdtemp(prefix=".vide-mp4-", dir=path.parent))
    scene = bpy.data.scenes.new("VIDE movie")
    try:
        for i, px in enumerate(pixels):
            a = px[..., 3:].astype(np.float32) / 255
            flat = np.round(px[..., :3] * a + 255 * (1 - a)).astype(np.uint8)
            (tmp / f"{i + 1:04d}.png").write_bytes(png_bytes(np.dstack([flat, np.full((h, w), 255, np.uint8)])))
        editor = scene.sequence_editor_create()
        strips = editor.strips if hasattr(editor, "strips") else editor.sequences
        strip = strips.new_image("frames", str(tmp / "0001.png"), 1, 1)
        for i in range(1, len(pixels)):
            strip.elements.append(f"{i + 1:04d}.png")
        r = scene.render
        r.resolution_x, r.resolution_y, r.resolution_percentage = w, h, 100
        r.fps, r.fps_base = max(1, round(fps)), max(1, round(fps)) / fps
        scene.frame_start, scene.frame_end = 1, len(pixels)
        scene.view_settings.view_transform = 'Standard'
        if hasattr(r.image_settings, "media_type"):  # Blender 5.0 lists movie formats under their own media type
            r.image_settings.media_type = 'VIDEO'
        r.image_settings.file_format = 'FFMPEG'
        r.ffmpeg.format, r.ffmpeg.codec = 'MPEG4', 'H264'
        r.use_file_extension = False
        r.filepath = str(tmp / "movie.mp4")
        bpy.ops.render.render(animation=True, scene=scene.name)
        os.replace(tmp / "movie.mp4", path)
    finally:
        bpy.data.scenes.remove(scene)
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def glb(path):
    """Every action in one glTF binary (Blender's exporter: at most 4 weights per vertex, Y up)."""
    tmp = path.with_name(f".{path.stem}.tmp.glb")
    bpy.ops.export_scene.gltf(filepath=str(tmp), export_format='GLB', export_animations=True,
                              export_animation_mode='ACTIONS', export_skins=True, export_influence_nb=4,
                              export_all_influences=False, export_yup=True)
    os.replace(tmp, path)
    return path


def export(scene, options, progress=None):
    """The whole export of `options` (see Options); returns the files written. Bad input raises VideError
    before anything is written; the scene is left as it was (settings put back, a made camera removed)."""
    p = plan(scene, options)
    out = Path(options.out)
    check_folder(out)
    wanted = set(options.formats)
    split = options.frames is not None
    needs_frames = bool(wanted & {"frames", *MERGED})
    overrides = Overrides()
    written, made = [], None

    def part(lo, hi):  # rendering fills most of the progress bar, merging the rest
        return (lambda f, what: progress(lo + (hi - lo) * f, what)) if progress else None

    overrides.later(lambda f=scene.frame_current: scene.frame_set(f))
    try:
        if p.camera is None:
            camera, resolution = made = framing(scene, p.armature, p.every, overrides, options.size)
        else:
            camera, resolution = p.camera, resolution_for(scene, p.camera, options.size)
        if needs_frames:
            render_settings(scene, camera, resolution, overrides)
            written += render_frames(scene, p, out, overrides, part(0.0, 0.8), stale=not split)
            if not split and wanted & set(MERGED):
                written += merge(out, wanted, set(p.render), part(0.8, 1.0))
            if "frames" not in wanted and not split:
                for name in p.render:
                    shutil.rmtree(out / file_stem(name))
                written = [w for w in written if w.parent == out]
    finally:
        overrides.restore()
        if made is not None:
            data = made[0].data
            bpy.data.objects.remove(made[0])
            bpy.data.cameras.remove(data)
    if "glb" in wanted and not split:
        stem = Path(bpy.data.filepath).stem or file_stem(scene.name)
        written.append(glb(out / f"{stem}.glb"))
    return written
