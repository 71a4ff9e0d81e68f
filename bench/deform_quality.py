"""Deformation quality: test characters (the sample character and Kenney sprites, `sample_scenes/sprite_rigs.py`)
each bound on the same mesh with VIDE's Geodesic and Meshfree C² weights and with Blender's Automatic Weights,
then posed in five test poses each. For each character, pose and method: triangles flipped or collapsed (posed
area under 5% of rest, or of the other sign), the 99th percentile and the largest distortion σ1/σ2 (singular
values of each triangle's rest-to-posed map; 1 for a triangle that only moved), and the 1st and 99th percentile of
posed / rest area; then per method the totals and how many poses came out worse than Automatic Weights.

    ./run bench            or    .venv/bpy-4.5/bin/python bench/deform_quality.py [--characters a,b] [--methods x,y]
"""

import argparse
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
from sprite_rigs import CHARACTERS, COLLAPSED, deformation, flat_corners, pose, rigged  # noqa: E402
from stage import copy_of, select  # noqa: E402

AUTOMATIC = "Automatic Weights"
BLEND = 2.5  # the Joint Blending the README suggests for posing
# name: the operator's settings (None: Blender's Automatic Weights)
METHODS = {
    "Geodesic": {"method": 'GEODESIC'},  # the defaults: no Joint Blending
    "Meshfree C²": {"method": 'MESHFREE'},
    "Geodesic blend 2.5": {"method": 'GEODESIC', "joint_blend": BLEND},
    "Meshfree blend 2.5": {"method": 'MESHFREE', "joint_blend": BLEND},
    "Geodesic blend 1": {"method": 'GEODESIC', "joint_blend": 1.0},  # as hard as Blender's bone heat
    "Meshfree blend 1": {"method": 'MESHFREE', "joint_blend": 1.0},
    "Geodesic PV": {"method": 'GEODESIC', "preserve_volume": True},  # Preserve Volume, no blending
    "Meshfree PV": {"method": 'MESHFREE', "preserve_volume": True},
    "Geodesic b2.5 PV": {"method": 'GEODESIC', "joint_blend": BLEND, "preserve_volume": True},
    "Meshfree b2.5 PV": {"method": 'MESHFREE', "joint_blend": BLEND, "preserve_volume": True},
    AUTOMATIC: None,
}


def bind(ob, arm, settings):
    select((ob, arm), arm)
    start = time.perf_counter()
    if settings is None:
        bpy.ops.object.parent_set(type='ARMATURE_AUTO')
    else:
        bpy.ops.vide.bind_armature(**settings)
    return time.perf_counter() - start


def measure(name, methods, folder):
    """Rows (character, pose, method, flipped, p99, max, area p1, area p99) for one character."""
    bpy.ops.wm.read_homefile(use_empty=True)
    plane, arm = rigged(name, folder)
    meshes, seconds = {}, {}
    for method in methods:
        ob = copy_of(plane)
        seconds[method] = bind(ob, arm, METHODS[method])
        meshes[method] = ob
    plane.hide_set(True)
    rest = {m: flat_corners(ob) for m, ob in meshes.items()}
    print(f"{name}: {len(plane.data.vertices):,} vertices, {len(plane.data.polygons):,} triangles, "
          f"{len(arm.data.bones)} bones; bind s: " + ", ".join(f"{m} {s:.2f}" for m, s in seconds.items()))
    rows = []
    for pose_name, angles in CHARACTERS[name].poses.items():
        pose(arm, angles)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        depsgraph.update()
        for method, ob in meshes.items():
            area, stretch = deformation(rest[method], flat_corners(ob, depsgraph))
            rows.append((name, pose_name, method, int((area < COLLAPSED).sum()), np.percentile(stretch, 99),
                         stretch.max(), *np.percentile(area, [1, 99])))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--characters", default=",".join(CHARACTERS))
    parser.add_argument("--methods", default=",".join(METHODS))
    args = parser.parse_args()
    methods = args.methods.split(",")
    if AUTOMATIC not in methods:
        methods.append(AUTOMATIC)
    dev_addon.enable()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.characters.split(","):
            rows += measure(name, methods, folder)
    print(f"\nBlender {bpy.app.version_string}; flipped: posed area < {COLLAPSED:.0%} of rest or of the other sign; "
          "σ1/σ2: each triangle's stretch")
    header = (f"{'character':<17} {'pose':<10} {'method':<20} {'flipped':>7} {'σ p99':>6} {'σ max':>7} "
              f"{'area p1':>8} {'area p99':>8}")
    print(header)
    print("-" * len(header))
    auto = {(r[0], r[1]): r for r in rows if r[2] == AUTOMATIC}
    for r in rows:
        a = auto[r[0], r[1]]
        mark = (" F" if r[3] > a[3] else "  ") + ("D" if r[4] > a[4] * (1 + 1e-3) else " ")
        print(f"{r[0]:<17} {r[1]:<10} {r[2]:<20} {r[3]:>7} {r[4]:>6.2f} {r[5]:>7.1f} {r[6]:>8.3f} {r[7]:>8.3f}{mark}")
    print("F: more flipped than Automatic Weights; D: p99 σ1/σ2 higher")
    print(f"\n{'method':<20} {'flipped':>7} {'mean σ p99':>10} {'poses worse (flipped / p99)':>28}")
    for method in methods:
        mine = [r for r in rows if r[2] == method]
        more = sum(r[3] > auto[r[0], r[1]][3] for r in mine)
        higher = sum(r[4] > auto[r[0], r[1]][4] * (1 + 1e-3) for r in mine)
        print(f"{method:<20} {sum(r[3] for r in mine):>7} {np.mean([r[4] for r in mine]):>10.2f} "
              f"{f'{more} / {higher} of {len(mine)}':>28}")


if __name__ == "__main__":
    main()
