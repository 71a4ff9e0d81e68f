"""Fetch the bundled wheels (scipy; psd-tools, Pillow and attrs for .psd files), then validate and build one
extension zip per platform.

Uses Blender's own extension tool (blender_ext.py, shipped in the bpy wheel). Wheels go to the git-ignored
`wheels/` folder, zips to `dist/`. Run with the Python of a venv that has bpy:

    python tools/build.py [--output-dir DIR]
"""

import argparse
import re
import subprocess
import sys
import tomllib
from importlib.util import find_spec
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WHEEL_NAME = re.compile(r"(?P<name>[^-]+)-(?P<version>[^-]+)-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<platform>[^-]+)\.whl$")


def manifest_wheels():
    """The wheel files the manifest lists, as paths."""
    with open(ROOT / "blender_manifest.toml", "rb") as f:
        return [ROOT / w for w in tomllib.load(f)["wheels"]]


def fetch_wheels():
    """Downloads every wheel the manifest lists that is not in wheels/ yet (unmodified, from PyPI)."""
    for path in manifest_wheels():
        if path.exists():
            continue
        m = WHEEL_NAME.match(path.name)
        target = []
        if m["py"].startswith("cp"):  # cp311 -> 3.11; a pure wheel (py3-none-any) fits every Python
            target += ["--python-version", f"{m['py'][2]}.{m['py'][3:]}"]
        if m["platform"] != "any":  # the newest of the wheel's platform tags: pip accepts the older ones too
            target += ["--platform", m["platform"].split(".")[-1]]
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                        f"{m['name']}=={m['version']}", *target, "--dest", str(path.parent)], check=True)
        if not path.exists():
            sys.exit(f"pip did not produce {path.name}")


def blender_ext():
    """Path of blender_ext.py inside the installed bpy wheel, found without importing bpy."""
    bpy_dir = Path(find_spec("bpy").submodule_search_locations[0])
    found = sorted(bpy_dir.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    if not found:
        sys.exit(f"blender_ext.py not found under {bpy_dir}")
    return found[-1]


def build(output_dir):
    """Validates the source tree and writes one zip per platform into output_dir; returns the zips."""
    fetch_wheels()
    output_dir.mkdir(parents=True, exist_ok=True)
    tool = [sys.executable, str(blender_ext())]
    subprocess.run(tool + ["validate", str(ROOT)], check=True)
    subprocess.run(tool + ["build", "--source-dir", str(ROOT), "--output-dir", str(output_dir),
                           "--split-platforms"], check=True)
    zips = sorted(output_dir.glob("vide-*.zip"))
    for z in zips:
        subprocess.run(tool + ["validate", str(z)], check=True)
    return zips


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=ROOT / "dist")
    args = parser.parse_args()
    for z in build(args.output_dir):
        print(f"{z}  {z.stat().st_size / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
