"""VIDE: turns 2D images into rigged, animatable cutout characters inside Blender.

Layout: `core/` is pure numpy/scipy (contours, outlines, triangulation); `bridge/` moves data between
Blender and numpy in bulk; `ops/` holds one operator per module; `props.py` the property groups;
`ui.py` the sidebar tab.
"""

import bpy

# The factory imports the submodules and registers them in this order (and unregisters in reverse).
register, unregister = bpy.utils.register_submodule_factory(__name__, ["props", "ops", "ui", "binding", "cli"])
