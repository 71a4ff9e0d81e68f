"""The VIDE tab in the 3D Viewport sidebar, and VIDE's part of Bone Properties. Drawing only: no data is
changed here."""

import bpy

from .bridge.layers import units
from .ops.bind import draw_bind_settings
from .ops.vectorize import draw_settings


class SidebarPanel:
    """A panel in the VIDE tab of the 3D Viewport's sidebar."""

    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "VIDE"


class VIDE_PT_main(SidebarPanel, bpy.types.Panel):
    bl_label = "VIDE"

    def draw(self, context):
        layout = self.layout
        col = layout.column(align=True)
        col.operator("vide.add_image", icon='IMAGE_PLANE')
        col.operator("vide.import_cutout", icon='RENDERLAYERS')
        col.operator("vide.vectorize_image", icon='MOD_TRIANGULATE')
        ob = context.active_object
        if ob is not None and ob.type == 'MESH' and ob.vide.image is not None:
            box = layout.box()
            box.label(text=f"{ob.vide.image.name}", icon='IMAGE_DATA')
            box.label(text=f"{len(ob.data.vertices):,} vertices, {len(ob.data.polygons):,} triangles")


class VIDE_PT_vectorize_settings(SidebarPanel, bpy.types.Panel):
    bl_label = "Vectorize Settings"
    bl_parent_id = "VIDE_PT_main"
    bl_options = {'DEFAULT_CLOSED'}

    def draw(self, context):
        draw_settings(self.layout, context.scene.vide_vectorize)


class VIDE_PT_layers(SidebarPanel, bpy.types.Panel):
    bl_label = "Layers"
    bl_parent_id = "VIDE_PT_main"

    @classmethod
    def poll(cls, context):
        return context.active_object is not None and context.active_object.vide.is_layer

    def draw(self, context):
        ob = context.active_object
        row = self.layout.row()
        col = row.column(align=True)
        for step in reversed(units(ob)):  # front first, as in a painting program
            swap = step[0].vide.swap
            if swap is not None:  # a sprite swap: its name and its drawings, the shown one ticked
                col.label(text=f"{step[0].vide.draw_order:>3}  {swap.name}", icon='UV_SYNC_SELECT')
                chosen = swap.vide.swap_choice
                for layer in step:
                    icon = 'CHECKMARK' if str(layer.vide.swap_index) == chosen else 'BLANK1'
                    col.label(text=f"      {layer.name}" + ("  (active)" if layer == ob else ""), icon=icon)
                continue
            layer = step[0]
            col.label(text=f"{layer.vide.draw_order:>3}  {layer.name}",
                      icon='LAYER_ACTIVE' if layer == ob else 'BLANK1')
        buttons = row.column(align=True)
        buttons.operator("vide.draw_order", text="", icon='TRIA_UP').direction = 'UP'
        buttons.operator("vide.draw_order", text="", icon='TRIA_DOWN').direction = 'DOWN'
        self.layout.prop(ob.vide, "draw_order")
        if ob.vide.swap is not None:
            self.layout.prop(ob.vide.swap.vide, "swap_choice", text=f"{ob.vide.swap.name} Shown")
        else:
            self.layout.operator("vide.make_swap", icon='UV_SYNC_SELECT')


class VIDE_PT_rig(SidebarPanel, bpy.types.Panel):
    bl_label = "Rig"
    bl_parent_id = "VIDE_PT_main"

    def draw(self, context):
        layout = self.layout
        ob = context.active_object
        col = layout.column(align=True)
        col.operator("vide.bind_armature", icon='ARMATURE_DATA')
        col.operator("vide.update_weights", icon='FILE_REFRESH')
        if ob is not None and ob.type == 'ARMATURE':
            col.prop(ob.vide, "auto_update")
        col.operator("vide.bind_rigid", icon='BONE_DATA')
        col.operator("vide.attach_to_bone", icon='PINNED')
        col = layout.column(align=True)
        col.operator("vide.add_ik_2d", icon='CON_KINEMATIC')
        col.operator("vide.lock_2d", icon='LOCKED')
        layout.operator("vide.export_sprites", icon='RENDER_ANIMATION')
        bone = context.active_bone
        if isinstance(bone, bpy.types.Bone):
            row = layout.row()
            row.use_property_split = True
            row.prop(bone.vide, "smoothness", text=f"{bone.name} Smoothness")
        if ob is not None and ob.type == 'MESH' and ob.vide.bind.armature is not None:
            layout.label(text=f"Bound to {ob.vide.bind.armature.name}", icon='LINKED')


class VIDE_PT_bind_settings(SidebarPanel, bpy.types.Panel):
    bl_label = "Bind Settings"
    bl_parent_id = "VIDE_PT_rig"
    bl_options = {'DEFAULT_CLOSED'}

    def draw(self, context):
        draw_bind_settings(self.layout, context.scene.vide_bind)


class VIDE_PT_bone(bpy.types.Panel):
    bl_label = "VIDE"
    bl_space_type = 'PROPERTIES'
    bl_region_type = 'WINDOW'
    bl_context = "bone"
    bl_options = {'DEFAULT_CLOSED'}

    @classmethod
    def poll(cls, context):
        return context.bone is not None

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop(context.bone.vide, "smoothness")


classes = (VIDE_PT_main, VIDE_PT_vectorize_settings, VIDE_PT_layers, VIDE_PT_rig, VIDE_PT_bind_settings, VIDE_PT_bone)

register, unregister = bpy.utils.register_classes_factory(classes)
