"""Enable VIDE straight from this checkout as a real extension (bl_ext.vide_dev.vide), for tests, the demo
and the benchmarks: relative imports, registration and properties behave as when installed from the zip."""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


_made = []  # the user folder isolate_user_folder made, if it did


def isolate_user_folder():
    """Points Blender at a private user folder; call before `import bpy`. A folder made here is removed when
    the process exits: enabling the extension copies its bundled wheels (scipy: about 140 MB) into it."""
    if "BLENDER_USER_RESOURCES" not in os.environ:
        _made.append(tempfile.mkdtemp(prefix="vide-user-"))
        atexit.register(remove_user_folder)
        os.environ["BLENDER_USER_RESOURCES"] = _made[0]
    return Path(os.environ["BLENDER_USER_RESOURCES"])


def remove_user_folder():
    """Removes the folder isolate_user_folder made. Runs at exit; call it before os._exit, which skips that."""
    while _made:
        shutil.rmtree(_made.pop(), ignore_errors=True)


def enable():
    """Enables the checkout as extension `bl_ext.vide_dev.vide` and returns the module."""
    import addon_utils
    import bpy

    repo_dir = isolate_user_folder() / "dev_repo"
    repo_dir.mkdir(exist_ok=True)
    link = repo_dir / "vide"
    if not link.exists():
        link.symlink_to(ROOT, target_is_directory=True)
    if "vide_dev" not in [r.module for r in bpy.context.preferences.extensions.repos]:
        bpy.context.preferences.extensions.repos.new(
            name="vide_dev", module="vide_dev", custom_directory=str(repo_dir), source='USER')
    module = addon_utils.enable("bl_ext.vide_dev.vide", default_set=True, handle_error=None)
    if module is None:
        raise RuntimeError("VIDE did not enable")
    return module
