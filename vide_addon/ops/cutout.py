"""Import Cutout: a character drawn as layers (a Photoshop .psd or OpenRaster .ora file, or PNGs of one canvas
size as painting programs export them) becomes one image plane per layer, each at its place on the canvas,
stacked in draw order, with groups as child collections and `[swap]` groups as sprite swaps; and the operator
that moves a layer up or down that order."""

import os
import re
import tempfile

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, StringProperty
from mathutils import Vector

from ..bridge.added import remove_added, snapshot
from ..bridge.image_plane import find_image
from ..bridge.layered_file import (LAYERED_EXTENSIONS, MAX_LAYER_SIZE, Canvas, Group, Layer, read_layered,
                                   swap_name)
from ..bridge.layers import CUTOUT_KEY, drive_depth, key_if_animated, units
from ..bridge.swaps import make_swap
from ..core.errors import VideError
from .add_image import ALIGN_ITEMS, ImportImages
from .batch import for_each
from .poll import SaysWhyNot
from .vectorize import vectorize_object


class VIDE_OT_import_cutout(ImportImages, bpy.types.Operator):
    """Import a character's layers (a .psd or .ora file, or PNG files of one canvas size, or every PNG in a
    folder) as image planes stacked in draw order, and vectorize them"""

    bl_idname = "vide.import_cutout"
    bl_label = "Import Cutout"
    bl_options = {'REGISTER', 'UNDO'}

    filter_glob: StringProperty(default="*.psd;*.psb;*.ora;*.png", options={'HIDDEN'})
    align_axis: EnumProperty(name="Align", default='-Y', items=ALIGN_ITEMS,
                             description="Which way the layers face")
    height: FloatProperty(name="Height", default=1.0, min=1e-4, soft_max=100.0, subtype='DISTANCE', unit='LENGTH',
                          description="Height of the canvas in the scene")
    layer_gap: FloatProperty(name="Layer Gap", default=0.001, min=1e-6, soft_max=0.1, subtype='DISTANCE',
                             unit='LENGTH', description="Distance between neighbouring layers, towards the viewer")
    first_on_top: BoolProperty(name="First File on Top", default=False,
                               description="PNG files are stacked in name order, the first at the back; tick "
                                           "this when the first file is the top layer")
    vectorize: BoolProperty(name="Vectorize", default=True,
                            description="Vectorize the layers right away (with the scene's Vectorize Settings)")

    def execute(self, context):
        directory = self.directory or os.path.dirname(self.filepath)
        chosen = [f.name for f in self.files if f.name]
        if not chosen and os.path.isfile(self.filepath):
            chosen = [os.path.basename(self.filepath)]
        before = snapshot()
        try:
            with tempfile.TemporaryDirectory(prefix="vide-cutout-") as folder:
                canvas, packed = self._read(directory, chosen, folder)
                layers, collection, warnings = self._import(context, canvas, packed)
        except (VideError, ValueError, RuntimeError) as err:
            remove_added(before)
            self.report({'ERROR'}, str(err).removeprefix("Error: ").strip())
            return {'CANCELLED'}
        for warning in warnings + (["Imported differently from the file: " + "; ".join(canvas.notes)]
                                   if canvas.notes else []):
            self.report({'WARNING'}, warning)
        self.report({'INFO'}, f"Imported {len(layers)} layers of a {canvas.width} x {canvas.height} px canvas "
                              f"into '{collection.name}'")
        return {'FINISHED'}

    def _read(self, directory, chosen, folder):
        """The canvas to import and whether its images are to be packed (files read from a layered file)."""
        layered = [n for n in chosen if n.lower().endswith(LAYERED_EXTENSIONS)]
        if layered:
            if len(chosen) > 1:
                raise VideError("Choose one .psd, .psb or .ora file, or PNG layers, not both or several files")
            return read_layered(os.path.join(directory, layered[0]), folder), True
        names = layer_files(directory, chosen)
        if self.first_on_top:
            names = names[::-1]
        width, height = canvas_size(directory, names)
        root = Group(os.path.basename(os.path.normpath(directory)) or "Cutout",
                     [Layer(os.path.splitext(n)[0], (0, 0, width, height), os.path.join(directory, n))
                      for n in reversed(names)])
        return Canvas(width, height, root), False

    def _import(self, context, canvas, packed):
        """Image planes for the canvas's layers in a new collection (groups as child collections), placed,
        stacked, swaps made, optionally vectorized. Returns (layers top first, the collection, warnings)."""
        root = bpy.data.collections.new(canvas.root.name)
        root[CUTOUT_KEY] = True
        context.scene.collection.children.link(root)
        entries = []  # (layer, collection, hidden, swap group) top first
        swaps = []  # (group, collection)

        def walk(group, collection, hidden, swap):
            for child in group.children:
                if isinstance(child, Group):
                    sub = bpy.data.collections.new(swap_name(child.name))
                    collection.children.link(sub)
                    is_swap = swap is None and child.is_swap
                    if is_swap:
                        swaps.append((child, sub))
                    walk(child, sub, hidden or not child.visible, child if is_swap else swap)
                else:
                    entries.append((child, collection, hidden or not child.visible, swap))

        walk(canvas.root, root, False, None)
        planes = self._planes(context, root, [e[0] for e in entries])
        k = self.height / canvas.height
        for (layer, collection, hidden, _swap), ob in zip(entries, planes):
            place(ob, layer.box, canvas, k)
            if packed:  # read from a layered file: kept in the .blend, large layers (ORA) reduced first
                image = find_image(ob)
                f = MAX_LAYER_SIZE / max(image.size)
                if f < 1:
                    image.scale(max(round(image.size[0] * f), 1), max(round(image.size[1] * f), 1))
                image.pack()
            rename(ob, layer.name)
            if collection != root:
                collection.objects.link(ob)
                root.objects.unlink(ob)
            if layer.opacity < 1:
                set_opacity(ob.active_material, layer.opacity)
            if hidden:
                ob.hide_render = True
        context.view_layer.update()
        steps = {}
        for ob, (_layer, _c, _h, swap) in zip(planes, entries):
            steps.setdefault(id(swap) if swap else id(ob), []).append(ob)
        for order, step in enumerate(reversed(list(steps.values()))):
            for ob in step:
                ob.vide.is_layer = True
                ob.vide.draw_order = order
                drive_depth(ob, self.layer_gap)
        for group, collection in swaps:
            drawings = [ob for ob, entry in zip(planes, entries) if entry[3] is group]
            shown = next((i for i, ob in enumerate(drawings) if not ob.hide_render), 0)
            make_swap(drawings, swap_name(group.name), collection, shown)
        for ob, entry in zip(planes, entries):
            if entry[2] and ob.vide.swap is None:
                ob.hide_set(True)
        warnings = []
        if self.vectorize:
            settings = context.scene.vide_vectorize
            _done, problems = for_each(context, planes, lambda ob, progress: vectorize_object(ob, settings, progress))
            warnings += [f"Not vectorized: {p}" for p in problems]
        for ob in context.view_layer.objects:
            ob.select_set(ob in planes and ob.visible_get())
        context.view_layer.objects.active = planes[0]
        return planes, root, warnings

    def _planes(self, context, collection, layers):
        """One image plane per layer (Blender's Images as Planes), in `collection`, in the layers' order."""
        layer_collection = find_layer_collection(context.view_layer.layer_collection, collection)
        previous = context.view_layer.active_layer_collection
        context.view_layer.active_layer_collection = layer_collection
        try:
            before = set(bpy.data.objects)
            # Full paths as names: Images as Planes would first look for a bare name in the working folder.
            # Back layer first: objects made in stacking order draw anti-aliased edges as they always did.
            bpy.ops.image.import_as_mesh_planes(files=[{"name": layer.png} for layer in reversed(layers)],
                                                directory="/",
                                                align_axis=self.align_axis, offset=False, size_mode='ABSOLUTE',
                                                height=1.0)
        finally:
            context.view_layer.active_layer_collection = previous
        by_file = {os.path.normpath(bpy.path.abspath(find_image(ob).filepath)): ob
                   for ob in bpy.data.objects if ob not in before}
        missing = [layer.name for layer in layers if os.path.normpath(layer.png) not in by_file]
        if missing:
            raise VideError(f"Images as Planes could not read {', '.join(missing)}")
        return [by_file[os.path.normpath(layer.png)] for layer in layers]

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        for name in ("align_axis", "height", "layer_gap", "first_on_top", "vectorize"):
            layout.prop(self, name)


def find_layer_collection(layer_collection, collection):
    if layer_collection.collection == collection:
        return layer_collection
    for child in layer_collection.children:
        found = find_layer_collection(child, collection)
        if found:
            return found
    return None


def place(ob, box, canvas, k):
    """Sizes the plane to the layer's box on the canvas (k scene units per canvas pixel) and moves it there,
    in the plane's own axes (x right, y up on the canvas)."""
    left, top, right, bottom = box
    me = ob.data
    xs = [v.co.x for v in me.vertices]
    ys = [v.co.y for v in me.vertices]
    sx = (right - left) * k / (max(xs) - min(xs))
    sy = (bottom - top) * k / (max(ys) - min(ys))
    for v in me.vertices:
        v.co.x *= sx
        v.co.y *= sy
    offset = ((left + right - canvas.width) / 2 * k, (canvas.height - top - bottom) / 2 * k, 0.0)
    ob.location = ob.location + ob.matrix_world.to_3x3() @ Vector(offset)


def rename(ob, name):
    """Names the object, its mesh, material and image after the layer."""
    ob.name = name
    ob.data.name = name
    if ob.active_material:
        ob.active_material.name = name
    image = find_image(ob)
    if image:
        image.name = name


def set_opacity(material, opacity):
    """Multiplies the material's alpha (the image's, as Images as Planes links it) by the layer's opacity."""
    nodes, links = material.node_tree.nodes, material.node_tree.links
    bsdf = next(n for n in nodes if n.type == 'BSDF_PRINCIPLED')
    socket = bsdf.inputs["Alpha"]
    multiply = nodes.new("ShaderNodeMath")
    multiply.name = multiply.label = "Layer Opacity"
    multiply.operation = 'MULTIPLY'
    multiply.inputs[1].default_value = opacity
    if socket.links:
        links.new(socket.links[0].from_socket, multiply.inputs[0])
    else:
        multiply.inputs[0].default_value = socket.default_value
    links.new(multiply.outputs[0], socket)


def natural_key(name):
    """Sorts layer2 before layer10: digit runs compare as numbers."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part.lower()) for part in re.split(r"(\d+)", name)]


def layer_files(directory, chosen):
    """The PNG files to import, back to front: the chosen ones, or every PNG in `directory` when none is
    chosen, in natural name order (layer2 before layer10)."""
    chosen = [n for n in chosen if n]
    if not chosen:
        if not os.path.isdir(directory):
            raise ValueError(f"'{directory}' is not a folder")
        chosen = [n for n in os.listdir(directory) if n.lower().endswith(".png")]
        if not chosen:
            raise ValueError(f"There is no PNG file in '{directory}'")
    not_png = [n for n in chosen if not n.lower().endswith(".png")]
    if not_png:
        raise ValueError(f"Not a PNG layer: {', '.join(not_png)}. Export the layers as PNG files, or choose a "
                         ".psd or .ora file")
    return sorted(chosen, key=natural_key)


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
        stack = units(ob)  # the drawings of a sprite swap move as one step
        i = next(n for n, step in enumerate(stack) if ob in step)
        j = i + 1 if self.direction == 'UP' else i - 1
        if not 0 <= j < len(stack):
            self.report({'INFO'}, f"'{ob.name}' is already at the {'front' if j >= len(stack) else 'back'}")
            return {'CANCELLED'}
        mine, other = stack[i][0].vide.draw_order, stack[j][0].vide.draw_order
        if mine == other:  # they shared a place: make room
            other += 1 if self.direction == 'UP' else -1
        frame = context.scene.frame_current
        for step, order in ((stack[i], other), (stack[j], mine)):
            for layer in step:
                layer.vide.draw_order = order
                key_if_animated(layer, frame)
        return {'FINISHED'}


classes = (VIDE_OT_import_cutout, VIDE_OT_draw_order)
