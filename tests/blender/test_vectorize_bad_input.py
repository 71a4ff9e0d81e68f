"""Bad input to Vectorize Image and Add Image: a clear message, and the scene exactly as it was."""

import os
import resource
import tracemalloc

import bpy
import numpy as np
import pytest
from helpers import image_plane, mesh_in_pixels, ring, rgba, save_png, select_only


def snapshot():
    """Everything a failed operator must leave alone."""
    return ({ob.name: (ob.data.name if ob.data else None, len(ob.data.vertices) if ob.type == 'MESH' else 0)
             for ob in bpy.data.objects},
            sorted(bpy.data.meshes.keys()), sorted(bpy.data.images.keys()), sorted(bpy.data.materials.keys()))


def fails_cleanly(match, **props):
    before = snapshot()
    with pytest.raises(RuntimeError, match=match):
        bpy.ops.vide.vectorize_image(**props)
    assert snapshot() == before


def test_object_without_an_image_material(scene):
    bpy.ops.mesh.primitive_plane_add()
    fails_cleanly("shows no image")


def test_missing_image_file(scene, tmp_path):
    ob = image_plane(tmp_path, ring(), name="gone")
    image = ob.active_material.node_tree.nodes["Image Texture"].image
    os.remove(bpy.path.abspath(image.filepath))
    image.reload()
    select_only(ob)
    fails_cleanly("could not be loaded from .*gone.png")


def test_fully_transparent_image(scene, tmp_path):
    select_only(image_plane(tmp_path, np.zeros((32, 32), np.float32)))
    fails_cleanly("fully transparent")


def test_image_without_alpha_channel_gives_the_whole_rectangle_with_a_warning(scene, tmp_path, capfd):
    img = bpy.data.images.new("opaque", 40, 30, alpha=False)
    img.pixels.foreach_set(rgba(np.ones((30, 40), np.float32)).ravel())
    img.filepath_raw = str(tmp_path / "opaque.jpg")
    img.file_format = 'JPEG'
    img.save()
    bpy.data.images.remove(img)
    bpy.ops.image.import_as_mesh_planes(files=[{"name": "opaque.jpg"}], directory=str(tmp_path))
    ob = bpy.context.active_object
    select_only(ob)
    assert bpy.ops.vide.vectorize_image() == {'FINISHED'}
    assert "no transparent pixels" in capfd.readouterr().out
    pts, _ = mesh_in_pixels(ob, (30, 40))
    for corner in ([0, 0], [40, 0], [40, 30], [0, 30]):
        assert np.hypot(*(pts - corner).T).min() < 1e-3
    assert len(ob.data.vertices) <= 150, "a light mesh: the rectangle has no outline to follow"


def test_shape_keys_on_the_plane_are_reported_as_dropped(scene, tmp_path, capfd):
    ob = image_plane(tmp_path, np.ones((20, 20), np.float32) * (np.arange(20) < 15)[:, None])
    ob.shape_key_add(name="Basis")
    ob.shape_key_add(name="Smile")
    select_only(ob)
    assert bpy.ops.vide.vectorize_image() == {'FINISHED'}
    assert "2 shape keys were dropped" in capfd.readouterr().out
    assert ob.data.shape_keys is None


def test_one_pixel_images(scene, tmp_path):
    ob = image_plane(tmp_path, np.ones((1, 1), np.float32), name="dot")
    select_only(ob)
    assert bpy.ops.vide.vectorize_image() == {'FINISHED'}
    assert len(ob.data.polygons) >= 2
    select_only(image_plane(tmp_path, np.zeros((1, 1), np.float32), name="nothing"))
    fails_cleanly("fully transparent")


def test_object_in_edit_mode_is_refused_with_a_reason(scene, tmp_path):
    ob = image_plane(tmp_path, ring())
    select_only(ob)
    bpy.ops.object.mode_set(mode='EDIT')
    with pytest.raises(RuntimeError, match="Object Mode"):
        bpy.ops.vide.vectorize_image()
    bpy.ops.object.mode_set(mode='OBJECT')
    assert len(ob.data.vertices) == 4


def test_nothing_selected_is_refused_with_a_reason(scene):
    with pytest.raises(RuntimeError, match="Select an image plane"):
        bpy.ops.vide.vectorize_image()


def test_linked_library_data(scene, tmp_path):
    ob = image_plane(tmp_path, ring(), name="libplane")
    lib_path = str(tmp_path / "lib.blend")
    bpy.data.libraries.write(lib_path, {ob}, fake_user=True)
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(lib_path, link=True) as (src, dst):
        dst.objects = ["libplane"]
    linked = dst.objects[0]
    bpy.context.scene.collection.objects.link(linked)
    select_only(linked)
    fails_cleanly("linked from a library")


def test_one_bad_plane_among_good_ones_is_skipped_with_a_warning(scene, tmp_path, capfd):
    good = image_plane(tmp_path, ring(), name="good")
    bad = image_plane(tmp_path, np.zeros((16, 16), np.float32), name="bad")
    select_only(good, bad)
    assert bpy.ops.vide.vectorize_image() == {'FINISHED'}
    assert "Skipped 'bad'" in capfd.readouterr().out
    assert len(good.data.vertices) > 4 and len(bad.data.vertices) == 4


def test_add_image_with_a_transparent_file_leaves_nothing_behind(scene, tmp_path):
    path = save_png(tmp_path / "empty.png", rgba(np.zeros((20, 20), np.float32)))
    before = snapshot()
    with pytest.raises(RuntimeError, match="fully transparent"):
        bpy.ops.vide.add_image(filepath=str(path))
    assert snapshot() == before


def test_add_image_with_a_file_that_is_no_image(scene, tmp_path):
    path = tmp_path / "notes.png"
    path.write_text("not an image")
    before = snapshot()
    with pytest.raises(RuntimeError):
        bpy.ops.vide.add_image(filepath=str(path))
    assert snapshot() == before


def test_8k_image_is_analysed_in_bounded_memory(scene, tmp_path):
    size = 8192
    img = bpy.data.images.new("huge", size, size, alpha=True)
    px = np.zeros((size, size, 4), np.float32)
    yy, xx = np.ogrid[0:size, 0:size]
    px[(xx - 4096) ** 2 + (yy - 4096) ** 2 < 3000 ** 2] = (0.5, 0.5, 0.5, 1.0)
    img.pixels.foreach_set(px.ravel())
    del px, xx, yy
    bpy.ops.mesh.primitive_plane_add()
    ob = bpy.context.active_object
    mat = bpy.data.materials.new("huge")
    if bpy.app.version < (5, 0):  # from 5.0 a new material has its node tree (use_nodes is deprecated)
        mat.use_nodes = True
    mat.node_tree.nodes.new("ShaderNodeTexImage").image = img
    ob.data.materials.append(mat)

    tracemalloc.start()
    assert bpy.ops.vide.vectorize_image() == {'FINISHED'}
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rgba_read = size * size * 4 * 4
    # One float RGBA read of the image, plus work on at most 4096² pixels.
    assert peak < rgba_read + 600 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    assert 1000 < len(ob.data.vertices) < 20000
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 8 * 2**20  # KiB: under 8 GiB in all
