"""The pure core in a Python that has numpy and scipy and nothing else: no bpy, bmesh or mathutils on its path
(even when the tests run inside a bpy venv)."""

import subprocess
import sys
from pathlib import Path

import numpy
import scipy

ROOT = Path(__file__).resolve().parents[2]

IMPORT_EVERY_CORE_MODULE = """
import pkgutil, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import numpy as np
import vide_addon.core
from vide_addon.core.weights import falloff_weights
for module in pkgutil.iter_modules(vide_addon.core.__path__):
    __import__("vide_addon.core." + module.name)
blender = [name for name in ("bpy", "bmesh", "mathutils") if name in sys.modules]
rows = falloff_weights(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([0.5, 0.5])).toarray()
print("imported", len(list(pkgutil.iter_modules(vide_addon.core.__path__))), "blender", blender, "sums", rows.sum(1))
"""


def test_every_core_module_imports_and_runs_with_numpy_and_scipy_alone(tmp_path):
    site = tmp_path / "site"  # numpy and scipy (with their bundled libraries), linked from this venv
    site.mkdir()
    for package in (numpy, scipy):
        folder = Path(package.__file__).parent
        for entry in folder.parent.glob(f"{folder.name}[.-]*"):
            (site / entry.name).symlink_to(entry)
        (site / folder.name).symlink_to(folder)
    # -I -S: no site-packages, no user site, no PYTHONPATH; the only additions are `site` and the checkout
    run = subprocess.run([sys.executable, "-I", "-S", "-c", IMPORT_EVERY_CORE_MODULE, str(site), str(ROOT)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "blender [] sums [1. 1.]" in run.stdout, run.stdout
    assert int(run.stdout.split()[1]) >= 10, run.stdout


def test_bpy_is_not_on_the_path_of_that_python(tmp_path):
    """The check above can fail: the same interpreter, flags and path do not see bpy."""
    run = subprocess.run([sys.executable, "-I", "-S", "-c", "import bpy"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert run.returncode != 0 and "No module named 'bpy'" in run.stderr
