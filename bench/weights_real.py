"""Weights on real characters the project did not draw: VIDE's Geodesic and Meshfree C² against Blender's own
Automatic Weights on the same mesh, per sprite (tests/data/kenney, CC0) with a rig drawn by hand
(sample_scenes/sprite_rigs.py), at the scale given and at 1x.

Columns, per method:
- *binds*: whether the bind went through (Automatic Weights can fail on a mesh; VIDE must not);
- *leak*: the largest weight the left leg's bones put on the lower half of the right leg and back (the legs are
  a few pixels apart; anything over 0.01 came across the gap or round through the crotch);
- *other foot px*: how far the right foot's vertices move, at most, when the left thigh bends 30° (0 is right;
  *bent foot px* shows how far the left foot moved);
- *mirror*: on the sprite made exactly symmetric (its left half and that half mirrored, the rig is symmetric
  already), the largest and mean difference between a vertex's weights and the mirror bones' weights at its
  mirror point (interpolated in the mesh there);
- *unweighted*: vertices with no weight at all.

Then a sweep over the corpus (`--sweep N`: every N-th sprite, at 1x, 2.5x and 8x) with rigs made automatically
(sample_scenes/sprite_corpus.py: bones along the shape's skeleton, joints 0-3 px apart, some past the silhouette):
how many binds went through, had valid weights (sum 1, at most 4 bones, none negative, none unweighted) and put
under 0.01 where a bone is near in a straight line but far inside the shape (pixel-grid reference).

    ./run bench            or    .venv/bpy-4.5/bin/python bench/weights_real.py [--sweep N]
"""

import argparse

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "sample_scenes"), str(ROOT / "tests")]

import dev_addon  # noqa: E402

dev_addon.isolate_user_folder()

import bpy  # noqa: E402
import numpy as np  # noqa: E402
import sprite_corpus as corpus  # noqa: E402
import sprite_rigs  # noqa: E402
from helpers import add_armature, bone_weights, interpolate_on_mesh, mesh_in_pixels, pixel_to_world  # noqa: E402
from rig import bend, build_armature  # noqa: E402
from stage import copy_of, import_plane, load_png, save_png, select  # noqa: E402

METHODS = ("Geodesic", "Meshfree C²", "Automatic Weights")
# (character in sprite_rigs, scale, left leg bones, right leg bones)
CASES = [("malePerson", 1), ("malePerson", 3), ("femaleAdventurer", 3), ("zombie", 2), ("frog", 1), ("frog", 3)]
LEGS = {"person": (["thigh.L", "shin.L"], ["thigh.R", "shin.R"]),
        "frog": (["thigh.L", "shin.L", "foot.L"], ["thigh.R", "shin.R", "foot.R"])}


def mirror_name(name):
    return {".L": name[:-2] + ".R", ".R": name[:-2] + ".L"}.get(name[-2:], name)


def plane_and_rig(rgba, bones, folder, name):
    plane = import_plane(save_png(Path(folder) / f"{name}.png", rgba))
    bpy.ops.vide.vectorize_image()
    h, w = rgba.shape[:2]
    return plane, build_armature(plane, f"{name} rig", bones, (w, h))


def bind(ob, arm, method):
    select((ob, arm), arm)
    try:
        if method == "Automatic Weights":
            bpy.ops.object.parent_set(type='ARMATURE_AUTO')
        else:
            bpy.ops.vide.bind_armature(method='GEODESIC' if method == "Geodesic" else 'MESHFREE')
    except RuntimeError as err:
        return str(err).strip().splitlines()[-1][:60]
    return None


def evaluated_px(ob, shape):
    """Vertex positions in image pixels (x, y) of the evaluated (posed) mesh."""
    deps = bpy.context.evaluated_depsgraph_get()
    ev = ob.evaluated_get(deps)
    me = ev.to_mesh()
    co = np.empty(len(me.vertices) * 3)
    me.vertices.foreach_get("co", co)
    ev.to_mesh_clear()
    m = np.array(ob.vide.uv_to_local).reshape(3, 3)
    uv = np.linalg.lstsq(m[:2].T, (co.reshape(-1, 3) - m[2]).T, rcond=None)[0].T
    return uv * [shape[1], shape[0]]


def measure(ob, arm, rgba, left, right, lower):
    shape = rgba.shape[:2]
    names = [b.name for b in arm.data.bones]
    w = bone_weights(ob, names)
    pts, _tris = mesh_in_pixels(ob, shape)
    right_low, left_low = lower(pts, "R"), lower(pts, "L")
    li, ri = [names.index(n) for n in left], [names.index(n) for n in right]
    leak = max(w[np.ix_(right_low, li)].max(initial=0), w[np.ix_(left_low, ri)].max(initial=0))
    rest = evaluated_px(ob, shape)
    bend(arm, left[0], 30)
    bpy.context.view_layer.update()
    step = np.hypot(*(evaluated_px(ob, shape) - rest).T)
    moved, own = step[right_low].max(initial=0), step[left_low].max(initial=0)
    arm.pose.bones[left[0]].rotation_quaternion = (1, 0, 0, 0)
    bpy.context.view_layer.update()
    return leak, moved, own, int((w.sum(axis=1) == 0).sum())


def mirror_difference(ob, arm, rgba):
    shape = rgba.shape[:2]
    names = [b.name for b in arm.data.bones]
    swap = [names.index(mirror_name(n)) for n in names]
    w = bone_weights(ob, names)
    pts, tris = mesh_in_pixels(ob, shape)
    at, found = interpolate_on_mesh(pts, tris, w, np.column_stack([shape[1] - pts[:, 0], pts[:, 1]]))
    diff = np.abs(w - at[:, swap]).max(axis=1)[found]
    return diff.max(), diff.mean()


def sweep(every, folder):
    """Automatic rigs over the corpus: counts of binds, valid weights and no leak, per method and scale."""
    names = corpus.sprite_names()[::every]
    print(f"\nCorpus sweep: {len(names)} sprites (every {every}th), automatic rigs of 8 bones")
    print(f"{'scale':<7}{'method':<14}{'cases':>7}{'binds':>7}{'valid':>7}{'no leak':>9}{'worst leak':>12}")
    for scale in (1.0, 2.5, 8.0):
        counts = {m: [0, 0, 0, 0, 0.0] for m in ("GEODESIC", "MESHFREE")}
        for i, name in enumerate(names):
            bpy.ops.wm.read_homefile(use_empty=True)
            rgba = corpus.resized(load_png(corpus.CORPUS / f"{name}.png"), scale)
            if (rgba[..., 3] >= corpus.THRESHOLD).sum() < 64:
                continue
            plane = import_plane(save_png(Path(folder) / f"s{i}-{scale}.png", rgba))
            bpy.ops.vide.vectorize_image()
            rig = corpus.auto_rig(rgba[..., 3], bones=8, seed=i)
            if len(rig) < 2:  # too small a shape for a skeleton
                continue
            shape = rgba.shape[:2]
            arm = add_armature({n: tuple(pixel_to_world(plane, shape, [h, t])) for n, (h, t) in rig.items()})
            pts, _ = mesh_in_pixels(plane, shape)
            grid = corpus.PixelGrid(corpus.main_piece(rgba[..., 3]))
            v, b, _ = corpus.leak_pairs(grid, rig, pts, max(shape))
            for method, c in counts.items():
                ob = copy_of(plane)
                select((ob, arm), arm)
                c[0] += 1
                try:
                    bpy.ops.vide.bind_armature(method=method)
                except RuntimeError:
                    continue
                c[1] += 1
                w = bone_weights(ob, list(rig))
                c[2] += bool(np.abs(w.sum(axis=1) - 1).max() < 1e-6 and (w > 0).sum(axis=1).max() <= 4
                             and w.min() >= 0)
                leak = w[v, b].max(initial=0.0)
                c[3] += bool(leak < 0.01)
                c[4] = max(c[4], leak)
        for method, (cases, binds, valid, clean, worst) in counts.items():
            print(f"{scale:<7}{method.title():<14}{cases:>7}{binds:>7}{valid:>7}{clean:>9}{worst:>12.3f}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sweep", type=int, default=4, help="every N-th sprite of the corpus (0: no sweep)")
    args, _others = parser.parse_known_args()  # ./run bench passes the same arguments to every bench
    dev_addon.enable()
    folder = tempfile.mkdtemp()
    print(f"Blender {bpy.app.version_string}; rigs from sample_scenes/sprite_rigs.py; leak and mirror are weights, "
          "other foot in px")
    print(f"{'sprite':<22}{'method':<19}{'binds':<8}{'leak':>7}{'other foot px':>15}{'(bent foot px)':>16}"
          f"{'mirror max':>12}{'mean':>8}{'unweighted':>12}")
    for name, scale in CASES:
        ch = sprite_rigs.CHARACTERS[name]
        kind = "frog" if name == "frog" else "person"
        left, right = LEGS[kind]
        bones = {b: (np.multiply(h, scale), np.multiply(t, scale), p, c) for b, (h, t, p, c) in ch.bones.items()}
        axis = 48 * scale if kind == "person" else 62 * scale
        knee = (11 if kind == "person" else 20) * scale

        def lower(pts, side, axis=axis, knee=knee):
            return ((pts[:, 0] > axis) if side == "R" else (pts[:, 0] < axis)) & (pts[:, 1] < knee * 0.7)

        bpy.ops.wm.read_homefile(use_empty=True)
        rgba = corpus.resized(load_png(corpus.CORPUS / ch.file), scale)
        plane, arm = plane_and_rig(rgba, bones, folder, f"{name}{scale}")
        mirrored = corpus.mirrored_rgba(rgba[:, :int(2 * axis)]) if kind == "person" else None
        if mirrored is not None:
            mplane, marm = plane_and_rig(mirrored, bones, folder, f"{name}{scale}m")
        for method in METHODS:
            ob = copy_of(plane)
            failed = bind(ob, arm, method)
            if failed:
                print(f"{name + f' {scale}x':<22}{method:<19}{'no':<8}{failed}")
                continue
            leak, moved, own, unweighted = measure(ob, arm, rgba, left, right, lower)
            mirror = "", ""
            if mirrored is not None:
                mob = copy_of(mplane)
                if not bind(mob, marm, method):
                    mx, mean = mirror_difference(mob, marm, mirrored)
                    mirror = f"{mx:.3f}", f"{mean:.4f}"
            print(f"{name + f' {scale}x':<22}{method:<19}{'yes':<8}{leak:>7.3f}{moved:>15.2f}{own:>16.1f}"
                  f"{mirror[0]:>12}{mirror[1]:>8}{unweighted:>12}", flush=True)
    if args.sweep:
        sweep(args.sweep, folder)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
