"""Test set-up: a private Blender user folder, VIDE enabled as a real extension from this checkout, and an
empty scene before every Blender test.

Blender is imported only when a Blender test runs, so `tests/core` also works without the bpy wheel.
"""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # `vide_addon.core` for the pure tests; the add-on itself loads as bl_ext
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "sample_scenes"))

import dev_addon  # noqa: E402

dev_addon.isolate_user_folder()


@pytest.fixture(scope="session")
def vide():
    """The enabled add-on module (bl_ext.vide_dev.vide), loaded through a development extension repository."""
    return dev_addon.enable()


@pytest.fixture
def scene(vide):
    """An empty scene, with VIDE enabled."""
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    return bpy.context.scene


_exit_status = {}


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    _exit_status["code"] = int(exitstatus)


def pytest_unconfigure(config):
    """bpy 4.2.23 segfaults at interpreter exit once any Python class has been registered (a one-line
    operator is enough; 4.5 and 5.0 exit cleanly). Skip that teardown there and keep pytest's exit status."""
    bpy = sys.modules.get("bpy")
    if bpy is not None and bpy.app.version[:2] == (4, 2):
        sys.stdout.flush()
        sys.stderr.flush()
        dev_addon.remove_user_folder()
        os._exit(_exit_status.get("code", 0))
