"""Bind to Armature: the selected meshes get VIDE's automatic weights for the armature's deform bones,
an Armature modifier and the armature as parent (like Ctrl+P > With Automatic Weights)."""

import time

import bpy

from .. import binding
from ..props import BindProperties
from .batch import for_each, is_linked
from .poll import SaysWhyNot


def armature_and_meshes(context):
    """The armature (active, or the one selected) and the selected meshes; or a reason why not."""
    selected = context.selected_objects
    active = context.active_object
    arms = [ob for ob in selected if ob.type == 'ARMATURE']
    if active is not None and active.type == 'ARMATURE':
        arm = active
    elif len(arms) == 1:
        arm = arms[0]
    elif arms:
        return None, [], "Several armatures are selected: make the one to bind to active"
    else:
        return None, [], "Select the meshes and the armature to bind them to"
    meshes = [ob for ob in selected if ob.type == 'MESH']
    if not meshes:
        return arm, [], "Select the meshes to bind as well as the armature"
    return arm, meshes, None


def outside_notes(results, shown=3):
    """One line per mesh about the bones that lie wholly outside it: their count and the first few names."""
    for result in results:
        bones = result.outside_bones
        if len(bones) == 1:
            yield f"Bone '{bones[0]}' lies outside '{result.mesh}': it weights the nearest part of it"
        elif bones:
            names = ", ".join(f"'{b}'" for b in bones[:shown])
            names += f" and {len(bones) - shown} more" if len(bones) > shown else ""
            yield f"{len(bones)} bones lie outside '{result.mesh}' ({names}): each weights the nearest part of it"


class VIDE_OT_bind_armature(SaysWhyNot, BindProperties, bpy.types.Operator):
    """Weight the selected meshes to the armature's deform bones by distance inside each shape, then add an
    Armature modifier and parent them to the armature"""

    bl_idname = "vide.bind_armature"
    bl_label = "Bind to Armature"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def problem(cls, context):
        if context.mode != 'OBJECT':
            return "Switch to Object Mode to bind (Edit Mode changes are applied on leaving it)"
        return armature_and_meshes(context)[2]

    def invoke(self, context, event):
        self.copy_from(context.scene.vide_bind)
        return self.execute(context)

    def execute(self, context):
        arm, meshes, problem = armature_and_meshes(context)
        if problem:
            self.report({'ERROR'}, problem)
            return {'CANCELLED'}
        if is_linked(arm):
            self.report({'ERROR'}, f"'{arm.name}' is linked from a library: make it local first")
            return {'CANCELLED'}
        if not any(b.use_deform for b in arm.data.bones):
            self.report({'ERROR'}, f"'{arm.name}' has no deform bones: tick Deform in Bone Properties for the "
                                   "bones that should move the mesh")
            return {'CANCELLED'}
        problems = [f"'{ob.name}' is linked from a library: make it local first" for ob in meshes if is_linked(ob)]
        start, settings = time.perf_counter(), self.to_core()
        done, failed = for_each(context, [ob for ob in meshes if not is_linked(ob)],
                                lambda ob, _progress: binding.bind(ob, arm, settings))
        problems += failed
        notes = {f"Bone '{b}' points out of the picture's plane: it weights like a point"
                 for result in done for b in result.point_bones}
        notes |= set(outside_notes(done))
        if not done:
            self.report({'ERROR'}, "; ".join(problems))
            return {'CANCELLED'}
        for note in sorted(notes):
            self.report({'WARNING'}, note)
        for problem in problems:
            self.report({'WARNING'}, f"Skipped: {problem}")
        context.scene.vide_bind.copy_from(self)
        verts = sum(r.vertices for r in done)
        self.report({'INFO'}, f"Bound {len(done)} mesh{'es' * (len(done) > 1)} ({verts:,} vertices) to "
                              f"{done[0].bones} bones of '{arm.name}' in {time.perf_counter() - start:.2f} s")
        return {'FINISHED'}

    def draw(self, context):
        draw_bind_settings(self.layout, self)


def draw_bind_settings(layout, settings):
    """The settings as they appear in the redo panel and the sidebar."""
    layout.use_property_split = True
    layout.use_property_decorate = False
    layout.prop(settings, "method")
    if settings.method == 'GEODESIC':
        layout.prop(settings, "smoothness")
    else:
        layout.prop(settings, "sample_spacing", text="Sample Spacing (0 = Auto)")
        layout.prop(settings, "spread")
        layout.prop(settings, "chains")
        if settings.chains == 'PULL_IN':
            layout.prop(settings, "joint_pull")
    layout.prop(settings, "joint_blend")
    layout.prop(settings, "max_influences")
    layout.prop(settings, "prune")
    layout.prop(settings, "preserve_volume")


class VIDE_OT_update_weights(SaysWhyNot, bpy.types.Operator):
    """Weight again every mesh bound to the active armature, with the settings it was bound with (after adding,
    removing or moving bones)"""

    bl_idname = "vide.update_weights"
    bl_label = "Update Weights"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def problem(cls, context):
        arm = context.active_object
        if arm is None or arm.type != 'ARMATURE':
            return "Make the armature active"
        if context.mode not in {'OBJECT', 'POSE'}:
            return "Leave Edit Mode first: new bones count once it is left"
        return None

    def execute(self, context):
        arm = context.active_object
        start = time.perf_counter()
        done, inserted, problems = binding.update_armature(arm)
        for problem in problems:
            self.report({'WARNING'}, f"Skipped: {problem}")
        if not done:
            self.report({'ERROR'}, "; ".join(problems) or f"No mesh is bound to '{arm.name}' by VIDE")
            return {'CANCELLED'}
        how = f" ({inserted} new bone{'s' * (inserted > 1)} inserted into the kept weights)" if inserted else ""
        self.report({'INFO'}, f"Updated the weights of {done} mesh{'es' * (done > 1)} bound to '{arm.name}' in "
                              f"{time.perf_counter() - start:.2f} s{how}")
        return {'FINISHED'}


classes = (VIDE_OT_bind_armature, VIDE_OT_update_weights)
