"""Vectorize Image on a corpus (issue #12): Kenney's 187 CC0 sprites at scales 1, 2, 2.5, 3 and 8 (bilinear) and
generated hard shapes, at default settings; every mesh checked for the properties of tests/mesh_properties.py.
Prints one row per scale (and per hard shape): cases, failures to vectorize, violations of each property, the
smallest angle away from sharp corners, the lowest coverage and the slowest case.

    .venv/bpy-4.5/bin/python bench/vectorize_corpus.py [--scales 1 2.5] [--limit N] [--verbose]
"""

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tools"), str(ROOT / "sample_scenes")]

import dev_addon  # noqa: E402

dev_addon.isolate_user_folder()

import bpy  # noqa: E402, F401
import numpy as np  # noqa: E402
from corpus import HARD_SHAPES, SCALES, kenney_files, load_alpha, resize_bilinear  # noqa: E402
from mesh_properties import failures, mesh_problems  # noqa: E402

PROPS = ("degenerate", "near_duplicates", "angle", "non_manifold", "coverage")


def run_case(vide, alpha):
    """(problems or None, error message or None, seconds, vertex count)."""
    core, bridge = vide.vide_addon.core, vide.vide_addon.bridge
    start = time.perf_counter()
    try:
        result = core.vectorize.vectorize(alpha, core.vectorize.Settings(), bridge.cdt.triangulate)
    except core.errors.VideError as error:
        return None, str(error), time.perf_counter() - start, 0
    seconds = time.perf_counter() - start
    return mesh_problems(alpha, result.points, result.triangles), None, seconds, len(result.points)


def row(label, cases, run, verbose):
    """Runs the cases [(name, alpha)] through `run` and prints their summary row."""
    errors, counts, worst_angle, worst_cover, slowest = 0, dict.fromkeys(PROPS, 0), 90.0, 1.0, (0.0, "")
    verts = []
    for name, alpha in cases:
        problems, error, seconds, n = run(alpha)
        slowest = max(slowest, (seconds, name))
        if error:
            errors += 1
            if verbose:
                print(f"    {name}: FAILED: {error}")
            continue
        verts.append(n)
        for prop in failures(problems):
            counts[prop] += 1
        worst_angle = min(worst_angle, problems["angle"][1])
        worst_cover = min(worst_cover, problems["coverage"][1])
        if verbose and failures(problems):
            found = ", ".join(f"{p} {problems[p][0]} ({problems[p][1]:.3g})" for p in failures(problems))
            print(f"    {name}: {found}")
    cells = " ".join(f"{counts[p]:>8}" for p in PROPS)
    print(f"{label:>16} {len(cases):>5} {errors:>6} {cells} {worst_angle:>8.2f} {100 * worst_cover:>8.3f}% "
          f"{int(np.median(verts)) if verts else 0:>6} {slowest[0]:>6.2f} {slowest[1]}", flush=True)
    return errors + sum(counts.values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=float, nargs="*", default=SCALES)
    parser.add_argument("--limit", type=int, default=0, help="only the first N sprites")
    parser.add_argument("--hard-size", type=int, nargs="*", default=(256, 1024))
    parser.add_argument("--verbose", action="store_true", help="one line per failing case")
    args, _others = parser.parse_known_args()  # `./run bench` passes every script the same options
    vide = dev_addon.enable()
    files = kenney_files()[:args.limit or None]
    sprites = [(f.stem, load_alpha(f)) for f in files]
    bpy.ops.wm.read_homefile(use_empty=True)
    print(f"Blender {bpy.app.version_string}; default settings; a column counts the cases that violate the property")
    header = (f"{'case':>16} {'cases':>5} {'failed':>6} " + " ".join(f"{p[:8]:>8}" for p in PROPS)
              + f" {'min angle':>8} {'coverage':>9} {'verts':>6} {'slowest':>6}")
    print(header)
    print("-" * len(header))
    bad = 0
    run = lambda alpha: run_case(vide, alpha)  # noqa: E731
    for scale in args.scales:
        scale = int(scale) if float(scale).is_integer() else scale
        cases = [(name, resize_bilinear(alpha, scale)) for name, alpha in sprites]
        bad += row(f"kenney x{scale}", cases, run, args.verbose)
    for name, make in HARD_SHAPES.items():
        cases = [(f"{name} {size}", make(size)) for size in args.hard_size]
        bad += row(name, cases, run, args.verbose)
    print(f"\n{bad} case-property violations in all" if bad else "\nEvery case has every property.")


if __name__ == "__main__":
    main()
