"""Deformation quality: the sample character bound with VIDE's Meshfree C² and Geodesic weights and with
Blender's Automatic Weights, then posed twice: the front shin bent 90° at the knee, and the torso turned 30°
with the thighs turned back (a bend at the waist with the legs still). For each method and pose: vertices left
without weights, triangles flipped, triangles deformed (not just moved), the spread of their area change (5th to
95th percentile of posed / rest area), and the time to bind, side by side in one run.

    ./run bench            or    .venv/bpy-4.5/bin/python bench/deform_quality.py
"""

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "sample_scenes")]

import dev_addon  # noqa: E402

dev_addon.isolate_user_folder()

import bpy  # noqa: E402
import numpy as np  # noqa: E402
from rig import bend, rigged_character  # noqa: E402
from stage import copy_of, select  # noqa: E402

POSES = {"knee 90°": {"shin.front": 90}, "waist 30°": {"torso": 30, "thigh.front": -30, "thigh.back": -30}}
METHODS = ("Meshfree C²", "Geodesic", "Automatic Weights")


def flat_triangles(ob, depsgraph=None):
    """Signed areas of the mesh's triangles in the picture's plane (x-z), rest or evaluated."""
    source = ob.evaluated_get(depsgraph) if depsgraph else ob
    me = source.to_mesh() if depsgraph else ob.data
    co = np.empty(len(me.vertices) * 3)
    me.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3) @ np.array(source.matrix_world)[:3, :3].T
    me.calc_loop_triangles()
    tris = np.empty(len(me.loop_triangles) * 3, np.int64)
    me.loop_triangles.foreach_get("vertices", tris)
    if depsgraph:
        source.to_mesh_clear()
    p = co[:, [0, 2]][tris.reshape(-1, 3)]
    return 0.5 * np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])


def bind(ob, arm, method):
    select((ob, arm), arm)
    start = time.perf_counter()
    if method == "Automatic Weights":
        bpy.ops.object.parent_set(type='ARMATURE_AUTO')
    else:
        bpy.ops.vide.bind_armature(method='MESHFREE' if method == "Meshfree C²" else 'GEODESIC')
    return time.perf_counter() - start


def main():
    dev_addon.enable()
    bpy.ops.wm.read_homefile(use_empty=True)
    with tempfile.TemporaryDirectory() as folder:
        plane, arm = rigged_character(folder)
        meshes, seconds = {}, {}
        for method in METHODS:
            ob = copy_of(plane)
            seconds[method] = bind(ob, arm, method)
            meshes[method] = ob
        plane.hide_set(True)
        rest = {m: flat_triangles(ob) for m, ob in meshes.items()}
        print(f"Blender {bpy.app.version_string}; sample character, {len(plane.data.vertices):,} vertices, "
              f"{len(plane.data.polygons):,} triangles, {len(arm.data.bones)} bones")
        header = (f"{'pose':<10} {'method':<18} {'unweighted':>10} {'flipped':>8} {'deformed':>9} {'area p5':>8} "
                  f"{'area p95':>9} {'bind s':>7}")
        print(header)
        print("-" * len(header))
        for pose, angles in POSES.items():
            for bone in arm.pose.bones:
                bone.rotation_quaternion = (1, 0, 0, 0)
            for bone, degrees in angles.items():
                bend(arm, bone, degrees)
            depsgraph = bpy.context.evaluated_depsgraph_get()
            depsgraph.update()
            for method, ob in meshes.items():
                posed = flat_triangles(ob, depsgraph)
                ratio = posed / rest[method]
                flipped = int((ratio <= 0).sum())
                deformed = np.abs(ratio - 1) > 1e-4  # triangles that did not just move rigidly
                p5, p95 = np.percentile(ratio[deformed], [5, 95]) if deformed.any() else (1.0, 1.0)
                unweighted = sum(1 for v in ob.data.vertices if not any(g.weight > 0 for g in v.groups))
                print(f"{pose:<10} {method:<18} {unweighted:>10} {flipped:>8} {int(deformed.sum()):>9} {p5:>8.3f} "
                      f"{p95:>9.3f} {seconds[method]:>7.2f}")


if __name__ == "__main__":
    main()
