"""Import Cutout: a character drawn as layers (PNGs of one canvas size, as Krita, GIMP and Photoshop export
them) becomes one image plane per layer, each at its place on the canvas, stacked in draw order; and the
operator that moves a layer up or down that order."""

import os

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, StringProperty

from ..bridge.added import remove_added, snapshot
from ..bridge.image_plane import find_image
from ..bridge.layers import drive_depth, key_if_animated, siblings
from .add_image import ALIGN_ITEMS, ImportImages
from .poll import SaysWhyNot


class VIDE_OT_import_cutout(ImportImages, bpy.types.Operator):
    """Import a character's layers (PNG files of one canvas size, or every PNG in a folder) as image planes
    stacked in draw order, and vectorize them"""

    bl_idname = "vide.import_cutout"
    bl_label = "Import Cutout"
    bl_options = {'REGISTER', 'UNDO'}

    filter_glob: StringProperty(default="*.png", options={'HIDDEN'})
    align_axis: EnumProperty(name="Align", default='-Y', items=ALIGN_ITEMS,
                             description="Which way the layers face")
    height: FloatProperty(name="Height", default=1.0, min=1e-4, soft_max=100.0, subtype='DISTANCE', unit='LENGTH',
                          description="Height of the canvas in the scene")
    layer_gap: FloatProperty(name="Layer Gap", default=0.001, min=1e-6, soft_max=0.1, subtype='DISTANCE',
                             unit='LENGTH', description="Distance between neighbouring layers, towards the viewer")
    first_on_top: BoolProperty(name="First File on Top", default=False,
                               description="Files are stacked in name order, the first at the back; tick this "
                                           "when the first file is the top layer")
    vectorize: BoolProperty(name="Vectorize", default=True,
                            description="Vectorize the layers right away (with the scene's Vectorize Settings)")

    def execute(self, context):
        directory = self.directory or os.path.dirname(self.filepath)
        try:
            names = layer_files(directory, [f.name for f in self.files])
        except ValueError as err:
            self.report({'ERROR'}, str(err))
            return {'CANCELLED'}
        before = snapshot()
        try:
            size = canvas_size(directory, names)
            layers = self._import(context, directory, names)
        except (ValueError, RuntimeError) as err:
            remove_added(before)
            self.report({'ERROR'}, str(err).removeprefix("Error: ").strip())
            return {'CANCELLED'}
        self.report({'INFO'}, f"Imported {len(layers)} layers of a {size[0]} x {size[1]} px canvas into "
                              f"'{layers[0].users_collection[0].name}'")
        return {'FINISHED'}

    def _import(self, context, directory, names):
        """Image planes for `names` (back to front), in a new collection, stacked and optionally vectorized."""
        collection = bpy.data.collections.new(os.path.basename(os.path.normpath(directory)) or "Cutout")
        context.scene.collection.children.link(collection)
        layer_collection = context.view_layer.layer_collection.children[collection.name]
        previous = context.view_layer.active_layer_collection
        context.view_layer.active_layer_collection = layer_collection
        try:
            before = set(bpy.data.objects)
            bpy.ops.image.import_as_mesh_planes(files=[{"name": n} for n in names], directory=directory,
                                                align_axis=self.align_axis, offset=False, size_mode='ABSOLUTE',
                                                height=self.height)
        finally:
            context.view_layer.active_layer_collection = previous
        by_file = {os.path.basename(find_image(ob).filepath): ob for ob in bpy.data.objects if ob not in before}
        missing = [n for n in names if n not in by_file]
        if missing:
            raise RuntimeError(f"Images as Planes could not read {', '.join(missing)}")
        layers = [by_file[n] for n in names]
        for order, ob in enumerate(layers):
            ob.vide.is_layer = True
            ob.vide.draw_order = order
            drive_depth(ob, self.layer_gap)
        if self.vectorize:
            settings = context.scene.vide_vectorize
            with context.temp_override(selected_objects=layers, active_object=layers[-1]):
                bpy.ops.vide.vectorize_image(**{k: getattr(settings, k) for k in settings.to_core().__dict__})
        for ob in context.view_layer.objects:
            ob.select_set(ob in layers)
        context.view_layer.objects.active = layers[-1]
        return layers

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        for name in ("align_axis", "height", "layer_gap", "first_on_top", "vectorize"):
            layout.prop(self, name)


def layer_files(directory, chosen):
    """The PNG files to import, back to front: the chosen ones, or every PNG in `directory` when none is
    chosen, in name order."""
    chosen = [n for n in chosen if n]
    if not chosen:
        if not os.path.isdir(directory):
            raise ValueError(f"'{directory}' is not a folder")
        chosen = [n for n in os.listdir(directory) if n.lower().endswith(".png")]
        if not chosen:
            raise ValueError(f"There is no PNG file in '{directory}'")
    not_png = [n for n in chosen if not n.lower().endswith(".png")]
    if not_png:
        raise ValueError(f"Not a PNG layer: {', '.join(not_png)}. Export the layers as PNG files")
    return sorted(chosen)


def canvas_size(directory, names):
    """The common pixel size of the layer files; an error naming them when they differ or do not load."""
    sizes = {}
    for name in names:
        try:
            image = bpy.data.images.load(os.path.join(directory, name), check_existing=True)
        except RuntimeError:
            raise ValueError(f"'{name}' is not an image Blender can read") from None
        sizes[name] = tuple(image.size)
        if image.size[0] == 0:
            raise ValueError(f"'{name}' is not an image Blender can read")
    if len(set(sizes.values())) > 1:
        listed = ", ".join(f"{n} {w}x{h}" for n, (w, h) in sizes.items())
        raise ValueError(f"The layers must share one canvas size: {listed}")
    return next(iter(sizes.values()))


class VIDE_OT_draw_order(SaysWhyNot, bpy.types.Operator):
    """Move the active layer one step to the front or to the back of its cutout (keyed when draw order is
    already animated)"""

    bl_idname = "vide.draw_order"
    bl_label = "Move Layer"
    bl_options = {'REGISTER', 'UNDO'}

    direction: EnumProperty(items=[('UP', "Forward", "One step towards the viewer"),
                                   ('DOWN', "Backward", "One step away from the viewer")])

    @classmethod
    def problem(cls, context):
        ob = context.active_object
        if ob is None or not ob.vide.is_layer:
            return "Make a layer of an imported cutout active (VIDE > Import Cutout)"
        return None

    def execute(self, context):
        ob = context.active_object
        stack = siblings(ob)
        i = stack.index(ob)
        j = i + 1 if self.direction == 'UP' else i - 1
        if not 0 <= j < len(stack):
            self.report({'INFO'}, f"'{ob.name}' is already at the {'front' if j >= len(stack) else 'back'}")
            return {'CANCELLED'}
        other = stack[j]
        ob.vide.draw_order, other.vide.draw_order = other.vide.draw_order, ob.vide.draw_order
        if ob.vide.draw_order == other.vide.draw_order:  # they shared a place: make room
            ob.vide.draw_order += 1 if self.direction == 'UP' else -1
        frame = context.scene.frame_current
        for layer in (ob, other):
            key_if_animated(layer, frame)
        return {'FINISHED'}


classes = (VIDE_OT_import_cutout, VIDE_OT_draw_order)
