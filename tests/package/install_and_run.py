"""Run in a fresh Python with BLENDER_USER_RESOURCES set: install the zip given as argv[1] the way
"Install from Disk" does, enable it, vectorize an image plane and import a layered .psd through it, and print a
JSON report."""

import importlib.machinery
import json
import sys
import tempfile
from pathlib import Path


BUNDLED = ("scipy", "psd_tools", "PIL", "attrs")


class OnlyBundledWheels:
    """Blender's own Python has none of these: hide the test venv's copies, so only the wheels in the zip can
    serve."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in BUNDLED:
            return None
        bundled = [p for p in sys.path if "extensions" in p and ".local" in p]
        spec = importlib.machinery.PathFinder.find_spec(name, bundled)
        if spec is None:
            raise ImportError(f"{name} is not available from the installed extension's wheels")
        return spec


sys.meta_path.insert(0, OnlyBundledWheels)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sample_scenes"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

zip_path = sys.argv[1]
report = {}
result = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
report["install"] = sorted(result)
report["addons"] = sorted(a.module for a in bpy.context.preferences.addons if "vide" in a.module)

import attrs  # noqa: E402  (the bundled wheels, unpacked by Blender on install)
import PIL  # noqa: E402
import psd_tools  # noqa: E402
import scipy  # noqa: E402

report["modules"] = {m.__name__: m.__file__ for m in (scipy, psd_tools, PIL, attrs)}

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

from layered import write_psd  # noqa: E402  (psd-tools and Pillow from the zip write the file too)

square = np.zeros((24, 32, 4), np.float32)
square[..., :3], square[..., 3] = (0.2, 0.6, 0.9), 1.0
psd = write_psd(tmp / "hero.psd", (64, 48), [{"name": "top", "pixels": square, "x": 30, "y": 20},
                                             {"name": "group", "children": [
                                                 {"name": "under", "pixels": square, "x": 4, "y": 4}]}])
report["psd"] = sorted(bpy.ops.vide.import_cutout(filepath=str(psd)))
report["psd_layers"] = sorted(ob.name for ob in bpy.data.objects if ob.vide.is_layer and len(ob.data.vertices) > 4)

import addon_utils  # noqa: E402

addon_utils.disable(report["addons"][0], default_set=True)
report["after_disable"] = hasattr(bpy.types, "VIDE_PT_main") or hasattr(bpy.types.Object, "vide")
print("REPORT " + json.dumps(report))
