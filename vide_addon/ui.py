"""The VIDE tab in the 3D Viewport sidebar. Drawing only: no data is changed here."""

import bpy

from .ops.vectorize import draw_settings


class VIDE_PT_main(bpy.types.Panel):
    bl_label = "VIDE"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "VIDE"

    def draw(self, context):
        layout = self.layout
        col = layout.column(align=True)
        col.operator("vide.add_image", icon='IMAGE_PLANE')
        col.operator("vide.vectorize_image", icon='MOD_TRIANGULATE')
        ob = context.active_object
        if ob is not None and ob.type == 'MESH' and ob.vide.image is not None:
            box = layout.box()
            box.label(text=f"{ob.vide.image.name}", icon='IMAGE_DATA')
            box.label(text=f"{len(ob.data.vertices):,} vertices, {len(ob.data.polygons):,} triangles")


class VIDE_PT_vectorize_settings(bpy.types.Panel):
    bl_label = "Vectorize Settings"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "VIDE"
    bl_parent_id = "VIDE_PT_main"
    bl_options = {'DEFAULT_CLOSED'}

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        draw_settings(layout, context.scene.vide_vectorize)


classes = (VIDE_PT_main, VIDE_PT_vectorize_settings)

register, unregister = bpy.utils.register_classes_factory(classes)
