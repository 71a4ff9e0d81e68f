"""The built extension: validated and built by Blender's own tool, installed from the zip into a clean
Blender user folder in a fresh process, enabled and run."""

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

pytestmark = pytest.mark.package


@pytest.fixture(scope="module")
def zips(tmp_path_factory):
    import build

    return build.build(tmp_path_factory.mktemp("dist"))


PLATFORMS = ("win", "linux", "macosx_arm64", "macosx_x86_64")


def platform_of(wheel):
    tag = wheel.rsplit("-", 1)[1]
    return next(p for p in PLATFORMS if all(part in tag for part in p.split("_", 1)))


def test_manifest_ships_scipy_psd_tools_and_pillow_for_four_platforms_and_two_pythons_and_no_numpy():
    with open(ROOT / "blender_manifest.toml", "rb") as f:
        manifest = tomllib.load(f)
    wheels = [Path(w).name for w in manifest["wheels"]]
    assert not any(w.startswith("numpy") for w in wheels), "Blender ships numpy"
    compiled = [w for w in wheels if not w.endswith("-none-any.whl")]
    tags = {(w.split("-")[0], re.search(r"-cp(\d+)-", w)[1], platform_of(w)) for w in compiled}
    assert tags == {(name, py, p) for name in ("scipy", "psd_tools", "pillow") for py in ("311", "313")
                    for p in PLATFORMS}
    assert len(compiled) == len(tags)
    assert sorted(set(wheels) - set(compiled)) == ["attrs-26.1.0-py3-none-any.whl"]
    assert manifest["platforms"] == ["windows-x64", "linux-x64", "macos-arm64", "macos-x64"]
    assert manifest["license"] == ["SPDX:GPL-3.0-or-later"] and manifest["blender_version_min"] == "4.2.0"


def test_one_zip_per_platform_holding_only_what_the_extension_needs(zips):
    """An allow-list: the manifest, the entry point, the licence, every Python file of vide_addon/ and the
    wheels the manifest lists for the platform (scipy, psd-tools, Pillow, attrs). Nothing else, so nothing
    `./run demo` (out/), a build or a test run leaves in the checkout is shipped."""
    assert [z.name for z in zips] == [f"vide-0.1.0-{p}.zip" for p in
                                      ("linux_x64", "macos_arm64", "macos_x64", "windows_x64")]
    addon = {str(p.relative_to(ROOT)) for p in (ROOT / "vide_addon").rglob("*.py") if "__pycache__" not in p.parts}
    with open(ROOT / "blender_manifest.toml", "rb") as f:
        tags = {w.removeprefix("./"): w.rsplit("-", 1)[1] for w in tomllib.load(f)["wheels"]}  # or any.whl
    tag_parts = {"linux_x64": ("manylinux", "x86_64"), "macos_arm64": ("macosx", "arm64"),
                 "macos_x64": ("macosx", "x86_64"), "windows_x64": ("win", "amd64")}
    for z in zips:
        parts = tag_parts[z.stem.removeprefix("vide-0.1.0-")]
        wheels = {w for w, tag in tags.items() if tag == "any.whl" or all(p in tag for p in parts)}
        for name in ("scipy", "psd_tools", "pillow"):
            assert len([w for w in wheels if w.startswith(f"wheels/{name}-")]) == 2, f"{name} for Python 3.11, 3.13"
        expected = {"blender_manifest.toml", "__init__.py", "LICENSE"} | addon | wheels
        files = {n for n in zipfile.ZipFile(z).namelist() if not n.endswith("/")}
        assert files == expected, (z.name, "extra:", sorted(files - expected), "missing:", sorted(expected - files))


def test_installed_zip_enables_vectorizes_and_reads_a_psd_with_its_bundled_wheels_in_a_clean_blender(zips, tmp_path):
    linux = next(z for z in zips if "linux_x64" in z.name)
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    run = subprocess.run([sys.executable, str(Path(__file__).with_name("install_and_run.py")), str(linux)],
                         env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    line = next((out for out in run.stdout.splitlines() if out.startswith("REPORT ")), None)
    assert line, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads(line[len("REPORT "):])
    assert report["install"] == ["FINISHED"]
    assert report["addons"] == ["bl_ext.user_default.vide"]
    for name, path in report["modules"].items():
        assert f"extensions/.local/lib/python3.11/site-packages/{name}" in path, f"{name} from the bundled wheel"
    assert report["vectorize"] == ["FINISHED"] and report["vertices"] > 4 and report["panel"]
    assert report["psd"] == ["FINISHED"] and report["psd_layers"] == ["top", "under"], "a .psd imports"
    assert report["after_disable"] is False, "disabling unregisters everything"
