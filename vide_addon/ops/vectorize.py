"""Vectorize Image: selected image planes become triangle meshes that follow the image's alpha contour."""

import time

import bpy
import numpy as np

from ..bridge import cdt
from .. import binding
from ..bridge.image_plane import find_image, new_mesh, read_alpha, read_placement, release
from ..core.errors import VideError
from ..core.placement import uv_to_local
from ..core.vectorize import vectorize
from ..props import VectorizeSettings
from .batch import for_each, is_linked
from .poll import SaysWhyNot


def image_plane_problem(ob):
    """Why `ob` cannot be vectorized, or None."""
    if ob.type != 'MESH':
        return f"'{ob.name}' is not a mesh"
    if is_linked(ob):
        return f"'{ob.name}' is linked from a library: make it local first (Object > Relations > Make Local)"
    if ob.mode != 'OBJECT':
        return f"'{ob.name}' is in {ob.mode.title().replace('_', ' ')} Mode: switch to Object Mode"
    if ob.vide.image is None and find_image(ob) is None:
        return (f"'{ob.name}' shows no image: give it a material with an Image Texture "
                "(File > Import > Images as Planes makes one)")
    return None


def vectorize_object(ob, settings, progress=None):
    """Replaces the mesh of `ob` by the vectorized image; returns (mesh, core result). All or nothing: a mesh
    VIDE bound to an armature is weighted again with the settings it was bound with, or keeps its old mesh."""
    image = find_image(ob) or ob.vide.image
    if ob.vide.image is not None:  # vectorized before: the placement it had then, not a fit to this mesh
        m, flip = np.array(ob.vide.uv_to_local, np.float64).reshape(3, 3), ob.vide.flip
    else:
        m, flip = read_placement(ob.data)
    alpha = read_alpha(image)
    h, w = alpha.shape
    result = vectorize(alpha, settings.to_core(), cdt.triangulate, progress)
    if ob.data.shape_keys:
        result.warnings.append(f"its {len(ob.data.shape_keys.key_blocks)} shape keys were dropped: the new mesh "
                               "has other vertices, so they cannot carry over")
    uv = result.points / np.array([w, h], np.float64)
    tris = result.triangles[:, ::-1] if flip else result.triangles
    old, before = ob.data, (ob.vide.image, tuple(ob.vide.uv_to_local), ob.vide.flip)
    me = new_mesh(ob, uv_to_local(m, uv), tris, uv)
    ob.vide.image, ob.vide.uv_to_local, ob.vide.flip = image, m.ravel().tolist(), flip
    arm = ob.vide.bind.armature
    if arm is not None and arm.users_scene:
        try:
            binding.bind(ob, arm, ob.vide.bind.to_core())
        except VideError as err:
            ob.data = old
            ob.vide.image, ob.vide.uv_to_local, ob.vide.flip = before
            bpy.data.meshes.remove(me)
            raise VideError(f"it is bound to '{arm.name}' and could not be weighted again ({err}); "
                            "it keeps its mesh") from err
    release(old, me)
    ob.vide.settings.copy_from(settings)
    return me, result


class VIDE_OT_vectorize_image(SaysWhyNot, VectorizeSettings, bpy.types.Operator):
    """Turn the selected image planes into triangle meshes that follow the image's alpha contour"""

    bl_idname = "vide.vectorize_image"
    bl_label = "Vectorize Image"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def problem(cls, context):
        if context.mode != 'OBJECT':
            return "Switch to Object Mode to vectorize"
        if not any(ob.type == 'MESH' for ob in context.selected_objects):
            return "Select an image plane (File > Import > Images as Planes, or VIDE > Add Image)"
        return None

    def invoke(self, context, event):
        self.copy_from(context.scene.vide_vectorize)
        return self.execute(context)

    def execute(self, context):
        meshes = [ob for ob in context.selected_objects if ob.type == 'MESH']
        checked = {ob: image_plane_problem(ob) for ob in meshes}
        problems = [problem for problem in checked.values() if problem]
        start = time.perf_counter()
        results, failed = for_each(context, [ob for ob, problem in checked.items() if not problem],
                                   lambda ob, progress: (ob, *vectorize_object(ob, self, progress)))
        problems += failed
        done = [(len(me.vertices), len(me.polygons)) for _ob, me, _result in results]
        notes = [f"'{ob.name}': {w}" for ob, _me, result in results for w in result.warnings]
        for note in notes:
            self.report({'WARNING'}, note)
        if not done:
            self.report({'ERROR'}, "; ".join(problems) or "Nothing to vectorize")
            return {'CANCELLED'}
        for problem in problems:
            self.report({'WARNING'}, f"Skipped {problem}")
        context.scene.vide_vectorize.copy_from(self)
        verts, tris = (sum(x) for x in zip(*done))
        self.report({'INFO'}, f"Vectorized {len(done)} image plane{'s' * (len(done) > 1)}: {verts:,} vertices, "
                              f"{tris:,} triangles in {time.perf_counter() - start:.2f} s")
        return {'FINISHED'}

    def draw(self, context):
        draw_settings(self.layout, self)


def draw_settings(layout, settings):
    """The settings as they appear in the redo panel and the sidebar."""
    layout.use_property_split = True
    layout.use_property_decorate = False
    layout.prop(settings, "alpha_threshold")
    layout.prop(settings, "contour_tolerance")
    layout.prop(settings, "margin")
    layout.prop(settings, "min_island_area", text="Min Island Area (px²)")
    layout.prop(settings, "keep_holes")
    layout.prop(settings, "vertex_spacing", text="Vertex Spacing (0 = Auto)")


classes = (VIDE_OT_vectorize_image,)
