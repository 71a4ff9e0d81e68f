"""Reading an image plane (image, alpha, UV placement) and writing the vectorized mesh back, in bulk."""

import bpy
import numpy as np

from ..core.errors import VideError
from ..core.placement import faces_flipped, fit_uv_to_local


def find_image(ob):
    """The image shown by the object's material (active slot first), or None."""
    slots = list(ob.material_slots)
    if slots:
        active = ob.active_material_index
        slots = [slots[active]] + slots[:active] + slots[active + 1:]
    for slot in slots:
        mat = slot.material
        if mat and mat.node_tree:
            for node in mat.node_tree.nodes:
                if node.type == 'TEX_IMAGE' and node.image:
                    return node.image
    return None


def read_placement(me):
    """(uv_to_local matrix, flip) of a plane mesh, from its active UV map and its first face's normal."""
    if not me.uv_layers.active or not me.polygons:
        raise VideError("The mesh has no faces with a UV map: it is not an image plane.")
    n = len(me.loops)
    uv = np.empty(n * 2, np.float32)
    me.uv_layers.active.data.foreach_get("uv", uv)
    vi = np.empty(n, np.int32)
    me.loops.foreach_get("vertex_index", vi)
    co = np.empty(len(me.vertices) * 3, np.float32)
    me.vertices.foreach_get("co", co)
    m = fit_uv_to_local(uv.reshape(-1, 2).astype(np.float64), co.reshape(-1, 3)[vi].astype(np.float64))
    return m, faces_flipped(m, np.array(me.polygons[0].normal))


def read_alpha(image):
    """Alpha (H, W) of an image, row 0 at the bottom: a view into one float RGBA read."""
    if image.source not in {'FILE', 'GENERATED'}:
        raise VideError(f"Image '{image.name}' is a {image.source.lower()}; Vectorize Image needs a still image.")
    w, h = image.size
    if w == 0 or h == 0:
        path = bpy.path.abspath(image.filepath) if image.filepath else "(no file)"
        raise VideError(f"Image '{image.name}' could not be loaded from {path}: is the file missing? "
                        "Relink it in the Image Editor (Image > Replace).")
    buf = np.empty(w * h * 4, np.float32)
    image.pixels.foreach_get(buf)
    return buf.reshape(h, w, 4)[:, :, 3]


def replace_mesh(ob, co, tris, uv):
    """Gives `ob` a new mesh (co (n, 3) local, tris (m, 3), uv (n, 2) per vertex) with the old one's
    name, materials and UV map name; the old mesh is removed if nothing else uses it."""
    old = ob.data
    me = new_mesh(ob, co, tris, uv)
    release(old, me)
    return me


def new_mesh(ob, co, tris, uv):
    """Gives `ob` a new mesh as `replace_mesh` does, keeping the old one (to put back, or `release`)."""
    old = ob.data
    uv_name = old.uv_layers.active.name if old.uv_layers.active else "UVMap"
    me = bpy.data.meshes.new(old.name)
    me.vertices.add(len(co))
    me.vertices.foreach_set("co", co.astype(np.float32).ravel())
    me.loops.add(tris.size)
    me.loops.foreach_set("vertex_index", tris.astype(np.int32).ravel())
    me.polygons.add(len(tris))
    me.polygons.foreach_set("loop_start", np.arange(0, tris.size, 3, dtype=np.int32))
    me.uv_layers.new(name=uv_name).data.foreach_set("uv", uv[tris].astype(np.float32).ravel())
    for mat in old.materials:
        me.materials.append(mat)
    me.update(calc_edges=True)
    ob.data = me
    return me


def release(old, new):
    """Removes the replaced mesh `old` if nothing uses it any more; `new` takes its name."""
    if old.users == 0:
        name = old.name
        bpy.data.meshes.remove(old)
        new.name = name
