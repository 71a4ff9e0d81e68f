"""The `vide` command line: `blender -b character.blend -c vide export --out DIR ...` (registered with
`bpy.utils.register_cli_command`) and, with the bpy wheel, `python -m vide_addon export character.blend --out DIR
...`. `merge DIR` builds sheets, JSON, GIFs and MP4s from frames rendered apart (a render farm's chunks).

Exit status: 0 done, 2 bad input (a message says what to fix, nothing was written), 1 anything else."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import bpy

from .core.errors import VideError
from .core.sprites import chunks, parse_frames
from .export import FORMATS, MERGED, Options, check_folder, export, file_stem, merge, plan

BAD_INPUT = 2


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of leaving the process (Blender calls the command in its own process)."""

    def error(self, message):
        raise VideError(message)


def parser():
    top = Parser(prog="vide", description="VIDE sprite export for pipelines and render farms.")
    commands = top.add_subparsers(dest="command", required=True, parser_class=Parser)
    ex = commands.add_parser("export", help="render each action's frames, sprite sheet, JSON, GIF, MP4 and a glTF")
    ex.add_argument("blend", nargs="?", type=Path, help="the .blend to open (already open under `blender -b`)")
    ex.add_argument("--out", type=Path, required=True, help="output folder")
    ex.add_argument("--actions", help="comma-separated action names (default: every action animating the bones)")
    ex.add_argument("--frames", help="A-B: render only these frames, into the same layout; then run `merge`")
    ex.add_argument("--size", type=int, default=Options.size,
                    help=f"pixels along the frames' longer side (default {Options.size})")
    ex.add_argument("--formats", default=",".join(FORMATS), help=f"comma-separated, of {','.join(FORMATS)}")
    ex.add_argument("--camera", help="camera object (default: the scene's, else one made to frame every action)")
    ex.add_argument("--jobs", type=int, default=1, help="render in this many Blender processes at once")
    mg = commands.add_parser("merge", help="build sheets, JSON, GIFs and MP4s from the frames in DIR")
    mg.add_argument("out", type=Path, help="the export folder")
    mg.add_argument("--formats", default=",".join(MERGED), help=f"comma-separated, of {','.join(MERGED)}")
    return top


def split_list(text, allowed=None, what="format"):
    items = [s.strip() for s in text.split(",") if s.strip()]
    if not items:
        raise VideError(f"no {what} given")
    if allowed is not None:
        bad = [s for s in items if s not in allowed]
        if bad:
            raise VideError(f"unknown {what} {', '.join(bad)}; choose from {','.join(allowed)}")
    return items


def open_blend(path):
    if not path.is_file():
        raise VideError(f"no .blend file at '{path}'")
    try:
        bpy.ops.wm.open_mainfile(filepath=str(path.resolve()), load_ui=False)
    except RuntimeError as err:
        raise VideError(f"cannot open '{path}': {str(err).strip()}") from None


def options_from(args):
    return Options(out=args.out.resolve(), size=args.size, camera=args.camera,
                   actions=split_list(args.actions, what="action") if args.actions is not None else None,
                   frames=parse_frames(args.frames) if args.frames is not None else None,
                   formats=set(split_list(args.formats, FORMATS)))


def report(written, out, seconds):
    frames = sum(1 for w in written if w.parent != out)
    rest = sorted(w.name for w in written if w.parent == out)
    print(f"vide: wrote {frames} frames{' and ' if rest else ''}{', '.join(rest)} into {out} in {seconds:.1f} s")


def main(argv):
    """Runs one command; returns the exit status."""
    start = time.perf_counter()
    try:
        args = parser().parse_args(argv)
        if args.command == "merge":
            out = args.out.resolve()
            report(merge(out, set(split_list(args.formats, MERGED))), out,
                   time.perf_counter() - start)
            return 0
        if args.blend is not None:
            open_blend(args.blend)
        elif not bpy.data.filepath:
            raise VideError("give the .blend to export (`python -m vide_addon export character.blend --out DIR`)")
        options = options_from(args)
        if args.jobs < 1:
            raise VideError(f"--jobs {args.jobs}: give 1 or more")
        if args.jobs > 1:
            written = export_in_processes(options, args.jobs)
        else:
            written = export(bpy.context.scene, options)
        report(written, options.out, time.perf_counter() - start)
        return 0
    except VideError as err:
        print(f"vide: error: {err}", file=sys.stderr)
        return BAD_INPUT
    except Exception:  # noqa: BLE001 - a command reports, Blender must not see the exception
        traceback.print_exc()
        return 1


def child_command(blend, options, action, first, last):
    """The command that renders one chunk: the Blender binary, or the bpy wheel's Python."""
    args = ["export", "--out", str(options.out), "--actions", action, "--frames", f"{first}-{last}",
            "--size", str(options.size), "--formats", "frames"]
    if options.camera:
        args += ["--camera", options.camera]
    if bpy.app.binary_path:
        return [bpy.app.binary_path, "-b", blend, "-c", "vide"] + args
    return [sys.executable, "-m", "vide_addon"] + args[:1] + [blend] + args[1:]


def export_in_processes(options, jobs):
    """Renders the frames in `jobs` processes at once, this one included (chunks of about equal size), then
    merges here."""
    blend = bpy.data.filepath
    p = plan(bpy.context.scene, options)  # bad input stops here, before any process starts
    check_folder(options.out)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(__file__).resolve().parent.parent)] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    queue = chunks(p.render, jobs)
    running = []
    try:
        while queue or running:
            while len(queue) > 1 and len(running) < jobs - 1:
                name, first, last = queue.pop()
                log = tempfile.TemporaryFile("w+")  # a file, not a pipe: a chatty child never blocks on it
                running.append((subprocess.Popen(child_command(blend, options, name, first, last), env=env,
                                                 stdout=subprocess.DEVNULL, stderr=log), log))
            if queue:
                name, first, last = queue.pop(0)
                export(bpy.context.scene, Options(out=options.out, actions=[name], frames=(first, last),
                                                  size=options.size, formats={"frames"}, camera=options.camera))
            for proc, log in [r for r in running if not queue or r[0].poll() is not None]:
                proc.wait()
                running.remove((proc, log))
                log.seek(0)
                err = log.read().strip()[-2000:]
                log.close()
                if proc.returncode != 0:
                    raise RuntimeError(f"a render process failed ({proc.returncode}): {err}")
    finally:
        for proc, log in running:
            proc.kill()
            log.close()
    written = []
    wanted = options.formats
    frames = sorted(f for name in p.render for f in (options.out / file_stem(name)).glob("*.png"))
    if options.frames is None:
        if wanted & set(MERGED):
            written += merge(options.out, wanted, set(p.render))
        if "glb" in wanted:
            written += export(bpy.context.scene, Options(out=options.out, formats={"glb"}, size=options.size,
                                                           camera=options.camera, actions=options.actions))
        if "frames" not in wanted:
            for name in p.render:
                shutil.rmtree(options.out / file_stem(name))
            frames = []
    return written + frames


def actions_text(scene):
    """'walk:1-24,run:1-16': the actions `export` renders and their frame ranges, for farm job types (the
    Flamenco one reads it as `C.scene.vide_sprite_actions`); empty when there is nothing to export."""
    try:
        p = plan(scene, Options(out=Path(".")))
    except VideError:
        return ""
    return ",".join(f"{name}:{start}-{end}" for name, (_action, (start, end)) in p.actions.items())


_handle = None


def register():
    global _handle
    _handle = bpy.utils.register_cli_command("vide", main)
    bpy.types.Scene.vide_sprite_actions = bpy.props.StringProperty(
        name="Sprite Actions", get=actions_text,
        description="The actions VIDE's sprite export renders, with their frame ranges (for render farm jobs)")


def unregister():
    global _handle
    del bpy.types.Scene.vide_sprite_actions
    if _handle is not None:
        bpy.utils.unregister_cli_command(_handle)
        _handle = None
