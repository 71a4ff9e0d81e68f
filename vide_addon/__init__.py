"""VIDE: turns 2D images into rigged, animatable cutout characters inside Blender.

Layout: `core/` is pure numpy/scipy (contours, outlines, triangulation, weights); `bridge/` moves data between
Blender and numpy in bulk; `binding/` binds meshes (one module per method) and keeps what it measured; `ops/`
holds the operators, one module per task; `props.py` the property groups; `ui.py` the sidebar tab.

bpy is imported only on registering, so that `vide_addon.core` imports with numpy and scipy alone.
"""

SUBMODULES = ["props", "ops", "ui", "binding", "cli"]  # registered in this order, unregistered in reverse
_unregister = []


def register():
    import bpy

    register_submodules, unregister_submodules = bpy.utils.register_submodule_factory(__name__, SUBMODULES)
    register_submodules()
    _unregister.append(unregister_submodules)


def unregister():
    _unregister.pop()()
