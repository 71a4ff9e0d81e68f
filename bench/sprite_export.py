"""Sprite export speed: frames per second of `vide export` on the sample walk (9 layers, 24 frames), in one
process and with `--jobs N` (N processes rendering chunks at once, then one merge), each a fresh command as a
pipeline runs it; and the merge's parts (sheet + JSON, GIF) on their own.

    ./run bench            or    .venv/bpy-4.5/bin/python bench/sprite_export.py [--size 256] [--jobs 2] [--repeats 3]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "sample_scenes")]

import dev_addon  # noqa: E402

dev_addon.isolate_user_folder()

import bpy  # noqa: E402
import numpy as np  # noqa: E402
from stage import front_camera  # noqa: E402
from walk import FRAMES, build_walk  # noqa: E402


def command(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "vide_addon", *map(str, args)], env=env, cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    vide = dev_addon.enable()
    work = Path(tempfile.mkdtemp(prefix="vide-bench-"))
    bpy.ops.wm.read_homefile(use_empty=True)
    build_walk(work / "layers")
    front_camera(size=args.size, ortho_scale=1.15)
    blend = work / "walk.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))

    print(f"Blender {bpy.app.version_string}; sample walk, {FRAMES} frames at {args.size} px, "
          f"{os.cpu_count()} cores; seconds as min / median of {args.repeats} runs, each a fresh process")
    print(f"{'command':<52}{'seconds':>16}{'frames/s':>10}")
    rows = {}
    for jobs in sorted({1, args.jobs}):
        label = f"export --formats frames,sheet,gif --jobs {jobs}"
        times = [command("export", blend, "--out", work / f"out{jobs}", "--size", args.size, "--jobs", jobs,
                         "--formats", "frames,sheet,gif") for _ in range(args.repeats)]
        rows[jobs] = min(times)
        print(f"{label:<52}{min(times):>7.2f} /{np.median(times):>7.2f}{FRAMES / min(times):>10.1f}")
    start_up = [command("export", blend, "--out", work / "none", "--formats", "glb") for _ in range(args.repeats)]
    print(f"{'export --formats glb (start-up, load, glTF only)':<52}{min(start_up):>7.2f} /{np.median(start_up):>7.2f}")

    export = vide.vide_addon.export
    core = vide.vide_addon.core
    frames = [export.load_rgba8(p) for p in sorted((work / "out1" / "walk").glob("*.png"))]
    parts = (("sheet + PNG bytes (core)", lambda: core.sprites.png_bytes(core.sprites.sheet(frames)[0])),
             ("GIF (core: palette + LZW)", lambda: core.gif.gif_bytes(frames, 8)))
    for name, work_fn in parts:
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            work_fn()
            times.append(time.perf_counter() - t)
        print(f"{name:<52}{min(times):>7.2f} /{np.median(times):>7.2f}")
    if args.jobs > 1:
        print(f"--jobs {args.jobs} against one process: {rows[1] / rows[args.jobs]:.2f}x")


if __name__ == "__main__":
    main()
