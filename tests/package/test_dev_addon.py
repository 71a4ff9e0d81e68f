"""The checkout enabled as an extension (tools/dev_addon.py, used by the tests, the demo and the benchmarks) leaves no
user folder behind: enabling copies the bundled wheels (scipy and others, about 140 MB) into it, and every run
makes a new one."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = f"""
import sys
sys.path.insert(0, {str(ROOT / "tools")!r})
import dev_addon
folder = dev_addon.isolate_user_folder()
import bpy
module = dev_addon.enable()
print(folder, module.__file__, sep="\\n", flush=True)
if bpy.app.version[:2] == (4, 2):  # it segfaults at exit once a class is registered: leave as conftest.py does
    dev_addon.remove_user_folder()
    import os
    os._exit(0)
"""


def test_the_private_user_folder_holds_the_enabled_extension_and_is_gone_after_the_process():
    env = {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    folder, module_file = out.stdout.strip().splitlines()[-2:]
    assert Path(module_file).is_relative_to(folder), "the extension was enabled from the private folder"
    assert not Path(folder).exists(), f"{folder} was left behind"
