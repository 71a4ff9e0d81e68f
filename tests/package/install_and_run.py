"""Run in a fresh Python with BLENDER_USER_RESOURCES set: install the zip given as argv[1] the way
"Install from Disk" does, enable it, vectorize an image plane through it, and print a JSON report."""

import importlib.machinery
import json
import sys
import tempfile
from pathlib import Path


class OnlyBundledScipy:
    """Blender's own Python has no scipy: hide the test venv's copy, so only the wheel in the zip can serve."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "scipy":
            return None
        bundled = [p for p in sys.path if "extensions" in p and ".local" in p]
        spec = importlib.machinery.PathFinder.find_spec(name, bundled)
        if spec is None:
            raise ImportError("scipy is not available from the installed extension's wheels")
        return spec


sys.meta_path.insert(0, OnlyBundledScipy)

import bpy  # noqa: E402
import numpy as np  # noqa: E402

zip_path = sys.argv[1]
report = {}
result = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
report["install"] = sorted(result)
report["addons"] = sorted(a.module for a in bpy.context.preferences.addons if "vide" in a.module)

import scipy  # noqa: E402  (the bundled wheel, unpacked by Blender on install)

report["scipy"] = scipy.__file__

tmp = Path(tempfile.mkdtemp())
size = 64
yy, xx = np.mgrid[0:size, 0:size] + 0.5
px = np.zeros((size, size, 4), np.float32)
px[np.hypot(xx - 32, yy - 32) < 20] = (1, 0.5, 0.2, 1)
img = bpy.data.images.new("disk", size, size, alpha=True)
img.pixels.foreach_set(px.ravel())
img.filepath_raw = str(tmp / "disk.png")
img.file_format = 'PNG'
img.save()
bpy.ops.wm.read_homefile(use_empty=True)
bpy.ops.image.import_as_mesh_planes(files=[{"name": "disk.png"}], directory=str(tmp))
ob = bpy.context.active_object
report["vectorize"] = sorted(bpy.ops.vide.vectorize_image())
report["vertices"] = len(ob.data.vertices)
report["panel"] = hasattr(bpy.types, "VIDE_PT_main")

import addon_utils  # noqa: E402

addon_utils.disable(report["addons"][0], default_set=True)
report["after_disable"] = hasattr(bpy.types, "VIDE_PT_main") or hasattr(bpy.types.Object, "vide")
print("REPORT " + json.dumps(report))
