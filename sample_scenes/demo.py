"""The main job: draw the sample character, vectorize it with VIDE, rig it with VIDE's geodesic weights (the default
settings, Joint Blending included) and render it.

Writes into out/ (or the folder given with --out):
  character.png   the drawn character (the input image)
  before.png      a Workbench render of the image plane made by Images as Planes
  after.png       the same render after Vectorize Image
  mesh.png        the render after vectorizing with the mesh's edges drawn over it
  vectorize.png   before, after and mesh side by side on white (the README's picture)
  posed.png       the character bound to its armature (Bind to Armature) and posed
  weights.png     the weights of the back thigh as a heat map (blue 0, red 1)
  rig.png         rest, posed and weights side by side on white (the README's picture)
  character.blend the scene, rigged and posed
Then the character as a layered cutout, rigged with 2D IK and walking (walk.py):
  layers/         the character as a layered file, character.psd and character.ora, as painting programs save it
  walk.blend      the scene
  sprites/        its sprite export, by the `vide export` command (`python -m vide_addon export walk.blend ...`):
    walk/0001.png ...  the walk cycle, one PNG per frame (straight alpha)
    walk/range.json    the walk's frame range and speed (what `vide merge` reads)
    walk.png, walk.json  the frames as a sprite sheet and its TexturePacker JSON hash
    walk.gif, walk.mp4   an animated GIF and an MP4 preview of the cycle
    walk.glb        the rigged, animated character for game engines (glTF binary)
  walk.png        every third frame side by side on white, cropped (the README's picture)
"""

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tools")]

import dev_addon  # noqa: E402

dev_addon.isolate_user_folder()

import bpy  # noqa: E402
import numpy as np  # noqa: E402
from bpy_extras.object_utils import world_to_camera_view  # noqa: E402
from character import composite  # noqa: E402
from rig import bend, build_armature, weight_colours  # noqa: E402
from stage import front_camera, import_plane, render, save_png, select  # noqa: E402
from walk import build_walk, render_walk  # noqa: E402

# A stride, facing right: degrees, counter-clockwise as seen from the front.
POSE = {"thigh.front": -22, "shin.front": -12, "thigh.back": 28, "shin.back": -35, "arm.upper": 35,
        "arm.lower": 40, "head": -8}

RENDER_SIZE = 512


def draw_edges(pixels, ob, cam, color=(0.05, 0.05, 0.05, 1.0)):
    """The mesh's edges drawn as 1 px lines over a render of the camera's view."""
    sc = bpy.context.scene
    h, w = pixels.shape[:2]
    world = ob.matrix_world
    screen = np.array([tuple(world_to_camera_view(sc, cam, world @ v.co))[:2] for v in ob.data.vertices])
    screen *= [w, h]
    edges = np.array([e.vertices[:] for e in ob.data.edges])
    a, b = screen[edges[:, 0]], screen[edges[:, 1]]
    steps = np.maximum(np.ceil(np.hypot(*(b - a).T) * 2).astype(int), 1)
    seg = np.repeat(np.arange(len(edges)), steps + 1)
    t = (np.arange(seg.size) - np.repeat(np.cumsum(steps + 1) - steps - 1, steps + 1)) / steps[seg]
    pts = a[seg] + t[:, None] * (b - a)[seg]
    ij = np.clip(pts.astype(int), 0, [w - 1, h - 1])
    out = pixels.copy()
    out[ij[:, 1], ij[:, 0]] = color
    return out


def on_white(pixels):
    """Straight-alpha RGBA flattened onto white, opaque."""
    out = pixels.copy()
    out[..., :3] = pixels[..., :3] * pixels[..., 3:] + (1 - pixels[..., 3:])
    out[..., 3] = 1
    return out


def main():
    parser = argparse.ArgumentParser(description="Vectorize the sample character and render it.")
    parser.add_argument("--out", type=Path, default=HERE.parent / "out")
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    dev_addon.enable()
    bpy.ops.wm.read_homefile(use_empty=True)
    image_path = save_png(out / "character.png", composite())
    plane = import_plane(image_path)
    cam = front_camera(size=RENDER_SIZE, ortho_scale=1.05)
    # Workbench's multi-sample anti-aliasing adds its samples up in half floats: opaque alpha ends at 0.998 (254 in
    # a PNG). FXAA (one sample, filtered afterwards) keeps it at 255, as VIDE's sprite export does.
    bpy.context.scene.display.render_aa = 'FXAA'
    before = render(out / "before.png")

    start = time.perf_counter()
    bpy.ops.vide.vectorize_image()
    seconds = time.perf_counter() - start
    after = render(out / "after.png")
    mesh = draw_edges(after, plane, cam)
    save_png(out / "mesh.png", mesh)
    save_png(out / "vectorize.png", np.concatenate([on_white(p) for p in (before, after, mesh)], axis=1))

    arm = build_armature(plane)
    select((plane, arm), arm)
    start = time.perf_counter()
    bpy.ops.vide.bind_armature()
    bind_seconds = time.perf_counter() - start
    weight_colours(plane, "thigh.back")
    bpy.context.scene.display.shading.color_type = 'VERTEX'
    weights = render(out / "weights.png")
    bpy.context.scene.display.shading.color_type = 'TEXTURE'
    for bone, degrees in POSE.items():
        bend(arm, bone, degrees)
    posed = render(out / "posed.png")
    save_png(out / "rig.png", np.concatenate([on_white(p) for p in (after, posed, weights)], axis=1))
    bpy.ops.wm.save_as_mainfile(filepath=str(out / "character.blend"))

    both = (before[..., 3] > 0.99) & (after[..., 3] > 0.99)
    print(f"\nVectorized '{plane.name}': {len(plane.data.vertices):,} vertices, {len(plane.data.polygons):,} "
          f"triangles in {seconds:.2f} s")
    print(f"Render before/after: largest colour difference inside the art "
          f"{np.abs(before[both, :3] - after[both, :3]).max() * 255:.1f}/255 over {both.sum():,} pixels")
    blend = bpy.context.scene.vide_bind.joint_blend  # the default, as Bind to Armature used it
    print(f"Bound to {len(arm.data.bones)} bones with geodesic weights (Joint Blending {blend:g}) in "
          f"{bind_seconds:.2f} s")

    bpy.ops.wm.read_homefile(use_empty=True)
    start = time.perf_counter()
    walker, layers = build_walk(out / "layers")
    built = time.perf_counter() - start
    start = time.perf_counter()
    frames = render_walk(out)
    exported = time.perf_counter() - start
    w = frames[0].shape[1]
    save_png(out / "walk.png", np.concatenate([on_white(f[:, w // 4:3 * w // 4]) for f in frames[::3]], axis=1))
    print(f"Walk: {len(layers)} layers imported, rigged with 2D IK and keyed in {built:.2f} s; "
          f"{len(frames)} frames, sprite sheet, GIF, MP4 and glTF exported by `vide export` in {exported:.2f} s")
    print(f"Pictures, movies and .blend files are in {out}")


if __name__ == "__main__":
    main()
