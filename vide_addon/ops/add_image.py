"""Add Image: import image files as planes (Blender's own Images as Planes) and vectorize them at once."""

import os
import time

import bpy
from bpy.props import CollectionProperty, EnumProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from ..bridge.added import remove_added, snapshot
from .batch import for_each
from .poll import SaysWhyNot
from .vectorize import vectorize_object


ALIGN_ITEMS = [('-Y', "Front", "Face the front view (-Y), as a cutout character usually does"),
               ('+Z', "Top (+Z)", "Lie flat, facing up"),
               ('CAM', "Camera", "Face the active camera")]


class ImportImages(SaysWhyNot, ImportHelper):
    """A file browser that takes several files, for an operator that runs in Object Mode."""

    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={'HIDDEN', 'SKIP_SAVE'})
    directory: StringProperty(subtype='DIR_PATH', options={'HIDDEN', 'SKIP_SAVE'})

    @classmethod
    def problem(cls, context):
        return f"Switch to Object Mode to {cls.bl_label.lower()}" if context.mode != 'OBJECT' else None


class VIDE_OT_add_image(ImportImages, bpy.types.Operator):
    """Import images as planes and vectorize them in one step"""

    bl_idname = "vide.add_image"
    bl_label = "Add Image"
    bl_options = {'REGISTER', 'UNDO'}

    filter_glob: StringProperty(default="*.png;*.tga;*.tif;*.tiff;*.webp;*.exr;*.psd;*.jpg;*.jpeg;*.bmp",
                                options={'HIDDEN'})
    align_axis: EnumProperty(name="Align", default='-Y', items=ALIGN_ITEMS,
                             description="Which way the new planes face")

    def execute(self, context):
        names = [f.name for f in self.files if f.name] or [os.path.basename(self.filepath)]
        directory = self.directory or os.path.dirname(self.filepath)
        if not any(names):
            self.report({'ERROR'}, "No image file chosen")
            return {'CANCELLED'}
        before = snapshot()
        try:
            bpy.ops.image.import_as_mesh_planes(files=[{"name": n} for n in names], directory=directory,
                                                align_axis=self.align_axis)
        except RuntimeError as err:
            remove_added(before)
            self.report({'ERROR'}, str(err).removeprefix("Error: ").strip())
            return {'CANCELLED'}
        planes = [ob for ob in bpy.data.objects if ob not in before]
        start = time.perf_counter()
        settings = context.scene.vide_vectorize
        done, problems = for_each(context, planes,
                                  lambda ob, progress: (ob, *vectorize_object(ob, settings, progress)))
        if not done:
            remove_added(before)
            self.report({'ERROR'}, "; ".join(problems) or f"No image could be read from {', '.join(names)}")
            return {'CANCELLED'}
        for problem in problems:
            self.report({'WARNING'}, f"Kept as a plane, not vectorized: {problem}")
        for ob, _me, result in done:
            for warning in result.warnings:
                self.report({'WARNING'}, f"'{ob.name}': {warning}")
        verts = sum(len(me.vertices) for _ob, me, _result in done)
        self.report({'INFO'}, f"Added and vectorized {len(done)} image{'s' * (len(done) > 1)}: {verts:,} vertices "
                              f"in {time.perf_counter() - start:.2f} s")
        return {'FINISHED'}


classes = (VIDE_OT_add_image,)
