"""Cutout layers: draw order as depth, so every renderer and the viewport stack the layers the same way.

Each layer object gets a driver that moves it towards the viewer by `draw_order` times a small gap along
its own facing direction (the plane's normal). Draw order is an ordinary integer property, so it can be
keyframed like anything else, and the driver (a simple expression, no Python needed) follows the keys.
"""

import numpy as np


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
        driver = ob.driver_add("delta_location", axis).driver
        driver.type = 'SCRIPTED'
        var = driver.variables.new()
        var.name = "order"
        var.type = 'SINGLE_PROP'
        var.targets[0].id_type = 'OBJECT'
        var.targets[0].id = ob
        var.targets[0].data_path = "vide.draw_order"
        driver.expression = f"order * {gap * normal[axis]:.9g}"


def siblings(ob):
    """The cutout layers that share the object's collection, in draw order (back to front)."""
    collection = ob.users_collection[0] if ob.users_collection else None
    if collection is None:
        return [ob]
    layers = [o for o in collection.objects if o.vide.is_layer]
    return sorted(layers, key=lambda o: (o.vide.draw_order, o.name))


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
