"""Sprite swaps: several drawings of one part (mouth shapes, hands) at one place in a cutout's stack, exactly
one shown, chosen by one keyframeable property.

The choice lives on an empty (`vide.swap_choice`, an enum of the drawings: keys on it hold until the next key,
as the choice of a drawing should). Each drawing hides itself in the viewport and in renders through drivers
(`choice != its index`), so the viewport, Workbench, EEVEE and Cycles follow the keys, as draw order does.
"""

import bpy

from .layers import drive

_items = {}  # the enum items handed to Blender must stay alive while it uses them


def members(swap):
    """The drawings of a swap (the empty), in their order."""
    return sorted((o for o in bpy.data.objects if o.vide.swap == swap), key=lambda o: o.vide.swap_index)


def choice_items(swap):
    """Enum items of the swap's choice: one per drawing, named after it."""
    items = [(str(ob.vide.swap_index), ob.name, f"Show '{ob.name}'", ob.vide.swap_index) for ob in members(swap)]
    _items[swap.name] = items or [("0", "(no drawing)", "This swap has no drawing left", 0)]
    return _items[swap.name]


def shown(swap):
    """The drawing shown now (from the evaluated choice), or None."""
    index = int(swap.vide.swap_choice)
    return next((ob for ob in members(swap) if ob.vide.swap_index == index), None)


def make_swap(drawings, name, collection, choice=0):
    """Makes `drawings` (layers of one cutout, first = index 0) one swap held by a new empty named `name` in
    `collection`; they share the front-most one's place in the stack. Returns the empty."""
    swap = bpy.data.objects.new(name, None)
    collection.objects.link(swap)
    swap.empty_display_type = 'PLAIN_AXES'
    swap.empty_display_size = 0.05
    swap.location = drawings[0].matrix_world.translation
    swap.vide.is_swap = True
    order = max(ob.vide.draw_order for ob in drawings)
    for index, ob in enumerate(drawings):
        ob.vide.swap = swap
        ob.vide.swap_index = index
        ob.vide.draw_order = order
        ob.hide_set(False)
        for prop in ("hide_viewport", "hide_render"):
            ob.driver_remove(prop)
            drive(ob, prop, "choice", swap, "vide.swap_choice", f"choice != {index}")
    swap.vide.swap_choice = str(min(max(choice, 0), len(drawings) - 1))
    return swap
