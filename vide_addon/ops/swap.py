"""Make Swap: several layers of a cutout (mouth shapes, hands) become one sprite swap, one drawing shown at a
time, chosen by a keyframeable property."""

import bpy

from ..bridge.layers import CUTOUT_KEY, cutout_collection
from ..bridge.swaps import make_swap
from .poll import SaysWhyNot


class VIDE_OT_make_swap(SaysWhyNot, bpy.types.Operator):
    """Make the selected layers (or every layer of the active layer's group) one sprite swap: they share one
    place in the stack and one of them is shown, chosen by the swap's Shown property, which can be keyframed"""

    bl_idname = "vide.make_swap"
    bl_label = "Make Swap"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def problem(cls, context):
        ob = context.active_object
        if context.mode != 'OBJECT':
            return "Switch to Object Mode to make a swap"
        if ob is None or not ob.vide.is_layer:
            return "Make a layer of an imported cutout active (VIDE > Import Cutout)"
        return None

    def execute(self, context):
        ob = context.active_object
        selected = [o for o in context.selected_objects if o.vide.is_layer]
        if ob not in selected:
            selected.append(ob)
        if len(selected) > 1:
            drawings, name = selected, f"{ob.name} swap"
        elif not ob.users_collection[0].get(CUTOUT_KEY):  # the active layer's group
            group = ob.users_collection[0]
            drawings, name = [o for o in group.objects if o.vide.is_layer], group.name
        else:
            drawings = [ob]
        if len(drawings) < 2:
            self.report({'ERROR'}, "Select two or more layers, or make a layer of a group of layers active")
            return {'CANCELLED'}
        taken = [o.name for o in drawings if o.vide.swap is not None]
        if taken:
            self.report({'ERROR'}, f"Already in a swap: {', '.join(taken)}")
            return {'CANCELLED'}
        cutout = cutout_collection(ob)
        strangers = [o.name for o in drawings if cutout_collection(o) != cutout]
        if strangers:
            self.report({'ERROR'}, f"Not in the cutout '{cutout.name}': {', '.join(strangers)}")
            return {'CANCELLED'}
        drawings.sort(key=lambda o: (-o.vide.draw_order, o.name))  # front first, as the Layers panel lists
        swap = make_swap(drawings, name, ob.users_collection[0], drawings.index(ob))
        self.report({'INFO'}, f"'{swap.name}' swaps {len(drawings)} drawings; '{ob.name}' is shown")
        return {'FINISHED'}


classes = (VIDE_OT_make_swap,)
