"""Test set-up: a private Blender user folder, VIDE enabled as a real extension from this checkout, and an
empty scene before every Blender test.

Blender is imported only when a Blender test runs, so `tests/core` also works without the bpy wheel.
"""

import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # `vide_addon.core` for the pure tests; the add-on itself loads as bl_ext
sys.path.insert(0, str(ROOT / "tests"))

_USER = tempfile.mkdtemp(prefix="vide-user-")
os.environ.setdefault("BLENDER_USER_RESOURCES", _USER)


@pytest.fixture(scope="session")
def vide():
    """The enabled add-on module (bl_ext.vide_dev.vide), loaded through a development extension repository."""
    import addon_utils
    import bpy

    repo_dir = Path(_USER) / "dev_repo"
    repo_dir.mkdir(exist_ok=True)
    link = repo_dir / "vide"
    if not link.exists():
        link.symlink_to(ROOT, target_is_directory=True)
    if "vide_dev" not in [r.module for r in bpy.context.preferences.extensions.repos]:
        bpy.context.preferences.extensions.repos.new(
            name="vide_dev", module="vide_dev", custom_directory=str(repo_dir), source='USER')
    module = addon_utils.enable("bl_ext.vide_dev.vide", default_set=True, handle_error=None)
    assert module is not None, "VIDE did not enable"
    return module


@pytest.fixture
def scene(vide):
    """An empty scene, with VIDE enabled."""
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    return bpy.context.scene
