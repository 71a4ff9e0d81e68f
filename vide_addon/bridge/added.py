"""What an import added: so that a failed import can take it all back and leave the file as it was."""

import bpy

_KINDS = ("objects", "meshes", "materials", "images", "collections")


def snapshot():
    """Every object, mesh, material, image and collection there is now."""
    return {block for kind in _KINDS for block in getattr(bpy.data, kind)}


def remove_added(before):
    """Removes every object, mesh, material, image and collection added since `snapshot()` gave `before`."""
    for kind in _KINDS:
        collection = getattr(bpy.data, kind)
        for block in [b for b in collection if b not in before]:
            collection.remove(block)
