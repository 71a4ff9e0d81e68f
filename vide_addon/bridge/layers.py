"""Cutout layers: draw order as depth, so every renderer and the viewport stack the layers the same way.

Each layer object gets a driver that moves it towards the viewer by `draw_order` times a small gap along
its own facing direction (the plane's normal). Draw order is an ordinary integer property, so it can be
keyframed like anything else, and the driver (a simple expression, no Python needed) follows the keys.
A cutout is the collection Import Cutout made (marked with CUTOUT_KEY), with its groups as child collections.
"""

import bpy
import numpy as np

CUTOUT_KEY = "vide_cutout"  # custom property on a cutout's top collection


def facing(ob):
    """The unit normal (world) of an image plane made by Images as Planes: its local +Z, towards the viewer."""
    n = np.array(ob.matrix_world.to_3x3().col[2])
    return n / max(float(np.linalg.norm(n)), 1e-12)


def drive_depth(ob, gap):
    """Makes the object's delta location follow its draw order: draw_order * gap along its normal."""
    normal = facing(ob)
    for axis in range(3):
        ob.driver_remove("delta_location", axis)
        if abs(normal[axis]) < 1e-9:
            continue
        drive(ob, "delta_location", "order", ob, "vide.draw_order", f"order * {gap * normal[axis]:.9g}", axis)


def drive(ob, data_path, name, source, source_path, expression, index=-1):
    """A simple-expression driver on ob's `data_path` (element `index`) reading the property `source_path` of the
    object `source` as the variable `name` (simple expressions run without Python scripts enabled)."""
    driver = ob.driver_add(data_path, index).driver
    driver.type = 'SCRIPTED'
    var = driver.variables.new()
    var.name = name
    var.type = 'SINGLE_PROP'
    var.targets[0].id_type = 'OBJECT'
    var.targets[0].id = source
    var.targets[0].data_path = source_path
    driver.expression = expression


def cutout_collection(ob):
    """The cutout the layer belongs to: the marked collection holding it (groups are child collections), or
    its own collection for cutouts made before groups were kept."""
    if not ob.users_collection:
        return None
    parents = {child: parent for parent in bpy.data.collections for child in parent.children}
    collection = ob.users_collection[0]
    while collection is not None and not collection.get(CUTOUT_KEY):
        collection = parents.get(collection)
    return collection or ob.users_collection[0]


def siblings(ob):
    """The layers of the object's cutout, in draw order (back to front)."""
    collection = cutout_collection(ob)
    if collection is None:
        return [ob]
    layers = [o for o in collection.all_objects if o.vide.is_layer]
    return sorted(layers, key=_stack_key)


def _stack_key(ob):
    """Draw order, then the drawings of one swap next to each other."""
    swap = ob.vide.swap
    return (ob.vide.draw_order, swap.name if swap else ob.name, ob.vide.swap_index if swap else 0)


def units(ob):
    """The object's cutout as the steps of its stack, back to front: one list per step, a single layer or
    every drawing of one sprite swap (they share one place)."""
    out = []
    for layer in siblings(ob):
        if layer.vide.swap is not None and out and out[-1][0].vide.swap == layer.vide.swap:
            out[-1].append(layer)
        else:
            out.append([layer])
    return out


def key_if_animated(ob, frame):
    """Keys draw order at `frame` if it is already keyed, so a change in the panel lands in the animation."""
    anim = ob.animation_data
    if anim and anim.action and any(fc.data_path == "vide.draw_order" for fc in _fcurves(anim.action)):
        ob.keyframe_insert("vide.draw_order", frame=frame)


def _fcurves(action):
    """F-curves of an action in Blender 4.2 to 5.0 (5.0 keeps them in layered channel bags)."""
    if hasattr(action, "fcurves"):
        return list(action.fcurves)
    out = []
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                out += list(bag.fcurves)
    return out
