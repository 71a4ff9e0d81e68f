"""Meshfree C² weights: the time to insert one bone into a bound set, against the number of samples, next to
computing everything again (what inserting would cost without keeping the distances).

The shape is the sample character (vectorized at 1024 px), with its skeleton from sample_scenes/rig.py as
handles (bones drawn onto the sample lattice, pulled in from their joints by 25%); the inserted bone crosses the left of the head. Insertion = one Dijkstra
from the new bone, any virtual handles it calls for, and the weights recomputed over all samples.

Target (issue #4): at most 50 ms per inserted bone at 50k samples. Times are the minimum of several runs.

    ./run bench            or    .venv/bpy-4.5/bin/python bench/meshfree.py [--repeats N]
"""

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "sample_scenes"), str(ROOT)]

import dev_addon  # noqa: E402

dev_addon.isolate_user_folder()

import bpy  # noqa: E402
import numpy as np  # noqa: E402
from character import CANVAS, composite  # noqa: E402
from rig import BONES  # noqa: E402

TARGET_SAMPLES = (5_000, 12_000, 25_000, 50_000)
NEW_BONE = ((430, 850), (465, 850))  # across the left of the head, canvas pixels


def shrunk(head, tail, pull=0.25):
    """A bone's handle pulled in from both joints (the compact C² way with chains)."""
    h, t = np.array(head, float), np.array(tail, float)
    return h + pull * (t - h), t - pull * (t - h)


def character_mesh(vide):
    """The sample character's vectorized mesh, in canvas pixels."""
    core, bridge = vide.vide_addon.core, vide.vide_addon.bridge
    alpha = composite()[..., 3]
    result = core.vectorize.vectorize(alpha, core.vectorize.Settings(), bridge.cdt.triangulate)
    return result.points, result.triangles


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args, _ = parser.parse_known_args()
    vide = dev_addon.enable()
    meshfree = vide.vide_addon.core.meshfree
    points, tris = character_mesh(vide)
    area = float(np.abs(np.cross(points[tris[:, 1]] - points[tris[:, 0]], points[tris[:, 2]] - points[tris[:, 0]])).sum()) / 2
    print(f"Blender {bpy.app.version_string}; sample character ({CANVAS} px canvas, {len(points):,} vertices); "
          f"seconds, min of {args.repeats} runs")
    header = f"{'samples':>8} {'handles':>8} {'virtual':>8} {'insert one bone':>16} {'recompute all':>14} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    at_largest = None
    for target in TARGET_SAMPLES:
        spacing = np.sqrt(area / target)
        samples = meshfree.Samples.from_mesh(points, tris, spacing)
        bones = [samples.along(*shrunk(h, t)) for h, t, *_ in BONES.values()]
        new = samples.along(np.array(NEW_BONE[0], float), np.array(NEW_BONE[1], float))
        insert, recompute = [], []
        for _ in range(args.repeats):
            rig = meshfree.HandleSet(samples, bones)
            start = time.perf_counter()
            rig.add(new)
            weights = rig.weights()
            insert.append(time.perf_counter() - start)
            start = time.perf_counter()
            meshfree.meshfree_weights(samples, bones + [new])
            recompute.append(time.perf_counter() - start)
        n = samples.lattice
        print(f"{n:>8,} {len(bones) + 1:>8} {len(weights.virtual):>8} {min(insert):>16.3f} {min(recompute):>14.3f} "
              f"{min(recompute) / min(insert):>6.1f}")
        at_largest = (n, min(insert))
    n, seconds = at_largest
    print(f"Target: one inserted bone in at most 50 ms at 50k samples: {'met' if seconds <= 0.05 else 'NOT met'} "
          f"({seconds * 1000:.0f} ms at {n:,} samples)")


if __name__ == "__main__":
    main()
