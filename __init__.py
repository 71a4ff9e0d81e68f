"""Extension entry point: Blender loads this folder as the add-on and VIDE lives in vide_addon/."""

from . import vide_addon


def register():
    vide_addon.register()


def unregister():
    vide_addon.unregister()
