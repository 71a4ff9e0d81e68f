"""A stage for headless pictures: an orthographic front camera, Workbench with flat texture colours and a
transparent film, and renders returned as numpy arrays. Used by the demo, the tests and the benchmarks."""

from pathlib import Path

import bpy
import numpy as np


def select(objects, active):
    """Selects exactly `objects` and makes `active` the active object, as a user would before an operator."""
    for ob in bpy.context.view_layer.objects:
        ob.select_set(ob in objects)
    bpy.context.view_layer.objects.active = active


def front_camera(size=128, ortho_scale=1.2, centre=(0.0, 0.0)):
    """Sets up the scene to render the image plane x-z (front view) at `size` x `size` pixels."""
    sc = bpy.context.scene
    cam = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    sc.collection.objects.link(cam)
    sc.camera = cam
    cam.data.type = 'ORTHO'
    cam.data.ortho_scale = ortho_scale
    cam.location = (centre[0], -5, centre[1])
    cam.rotation_euler = (np.pi / 2, 0, 0)
    sc.render.engine = 'BLENDER_WORKBENCH'
    sc.display.shading.light = 'FLAT'
    sc.display.shading.color_type = 'TEXTURE'
    sc.render.resolution_x = sc.render.resolution_y = size
    sc.render.resolution_percentage = 100
    sc.render.film_transparent = True
    sc.view_settings.view_transform = 'Standard'
    sc.render.image_settings.file_format = 'PNG'
    sc.render.image_settings.color_mode = 'RGBA'
    return cam


def render(path):
    """Renders the scene to the PNG `path` and returns its RGBA pixels (h, w, 4), row 0 at the bottom."""
    sc = bpy.context.scene
    sc.render.filepath = str(path)
    bpy.ops.render.render(write_still=True)
    return load_png(path)


def load_png(path):
    img = bpy.data.images.load(str(path))
    w, h = img.size
    px = np.empty(w * h * 4, np.float32)
    img.pixels.foreach_get(px)
    bpy.data.images.remove(img)
    return px.reshape(h, w, 4)


def save_png(path, pixels):
    """Writes an RGBA float array (row 0 = bottom) as an 8-bit PNG through Blender."""
    h, w = pixels.shape[:2]
    img = bpy.data.images.new("tmp_save", w, h, alpha=True)
    img.pixels.foreach_set(np.ascontiguousarray(pixels, np.float32).ravel())
    img.filepath_raw = str(path)
    img.file_format = 'PNG'
    img.save()
    bpy.data.images.remove(img)
    return Path(path)


def copy_of(ob):
    """A copy of a mesh object with a mesh of its own, unbound (no vertex groups, modifiers or parent), in the
    scene: the same mesh for each method a benchmark compares."""
    dup = ob.copy()
    dup.data = ob.data.copy()
    dup.vertex_groups.clear()
    dup.modifiers.clear()
    dup.parent = None
    bpy.context.scene.collection.objects.link(dup)
    return dup


def import_plane(path, align='-Y'):
    """An image plane made by Blender's own Images as Planes."""
    path = Path(path)
    bpy.ops.image.import_as_mesh_planes(files=[{"name": path.name}], directory=str(path.parent), align_axis=align)
    return bpy.context.active_object
