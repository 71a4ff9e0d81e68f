"""Bad input to Bind to Armature: a clear message, and the scene as it was (or, for input VIDE can still
handle, a warning and a complete result)."""

import bpy
import bmesh  # after bpy, which makes it importable
import numpy as np
import pytest
from helpers import (add_armature, bone_weights, image_plane, influences, legs, mesh_in_pixels, pixel_to_world,
                     ring, select_only)
from test_bind import LEG_BONES, LEGS, bind, rig_for, vectorized


def snapshot():
    """What a failed bind must leave alone: parents, modifiers and vertex groups of every object."""
    return {ob.name: (ob.parent.name if ob.parent else None, [m.type for m in ob.modifiers],
                      [g.name for g in ob.vertex_groups]) for ob in bpy.data.objects}


def fails_cleanly(match, **props):
    before = snapshot()
    with pytest.raises(RuntimeError, match=match):
        bpy.ops.vide.bind_armature(**props)
    assert snapshot() == before


def test_nothing_to_bind_to_says_what_to_select(scene, tmp_path):
    ob = vectorized(tmp_path, ring())
    fails_cleanly("Select the meshes and the armature")
    arm = add_armature({"b": ((0, 0, 0), (0, 0, 0.2))})
    select_only(arm)
    fails_cleanly("Select the meshes to bind")
    other = add_armature({"c": ((0, 0, 0), (0, 0, 0.2))}, name="Other")
    select_only(ob)
    arm.select_set(True)
    other.select_set(True)
    fails_cleanly("Several armatures")


def test_an_armature_in_edit_mode_asks_for_object_mode(scene, tmp_path):
    ob = vectorized(tmp_path, ring())
    arm = add_armature({"b": ((0, 0, 0), (0, 0, 0.2))})
    select_only(arm)
    ob.select_set(True)
    bpy.ops.object.mode_set(mode='EDIT')
    fails_cleanly("Object Mode")
    bpy.ops.object.mode_set(mode='OBJECT')


def test_an_armature_without_deform_bones(scene, tmp_path):
    ob = vectorized(tmp_path, ring())
    arm = add_armature({"b": ((0, 0, 0), (0, 0, 0.2))})
    arm.data.bones["b"].use_deform = False
    select_only(arm)
    ob.select_set(True)
    fails_cleanly("no deform bones")


def test_a_mesh_without_faces(scene):
    me = bpy.data.meshes.new("wire")
    me.from_pydata([(0, 0, 0), (1, 0, 0), (1, 0, 1)], [(0, 1), (1, 2)], [])
    ob = bpy.data.objects.new("wire", me)
    scene.collection.objects.link(ob)
    arm = add_armature({"b": ((0, 0, 0), (0, 0, 0.2))})
    select_only(arm)
    ob.select_set(True)
    fails_cleanly("no faces")


def test_a_closed_mesh(scene):
    bpy.ops.mesh.primitive_cube_add()
    cube = bpy.context.object
    arm = add_armature({"b": ((0, 0, 0), (0, 0, 0.2))})
    select_only(arm)
    cube.select_set(True)
    fails_cleanly("no outline")


def test_a_mesh_on_a_line_has_no_area(scene, tmp_path):
    """Faces whose vertices all lie on a line: nothing to weight, told apart both where the picture's own axes give
    the plane (a vectorized mesh flattened onto its x axis) and where the best fit through the vertices does."""
    flattened = vectorized(tmp_path, ring())
    co = np.empty(len(flattened.data.vertices) * 3, np.float32)
    flattened.data.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3) * np.float32([1, 0, 0])
    flattened.data.vertices.foreach_set("co", co.ravel())
    me = bpy.data.meshes.new("line")
    me.from_pydata([(0, 0, 0), (1, 0, 1), (2, 0, 2), (3, 0, 3)], [], [(0, 1, 2), (1, 2, 3)])
    plain = bpy.data.objects.new("line", me)
    scene.collection.objects.link(plain)
    arm = add_armature({"b": ((0, 0, 0), (0, 0, 0.2))})
    assert flattened.vide.image is not None and plain.vide.image is None
    for ob in (flattened, plain):
        assert ob.data.polygons  # faces, none of any area
        select_only(arm)
        ob.select_set(True)
        fails_cleanly("no area")


def test_linked_armature_and_linked_mesh(scene, tmp_path):
    ob = vectorized(tmp_path, ring(), "libmesh")
    arm = add_armature({"b": ((0, 0, 0), (0, 0, 0.2))}, name="LibRig")
    lib_path = str(tmp_path / "lib.blend")
    bpy.data.libraries.write(lib_path, {ob, arm}, fake_user=True)
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(lib_path, link=True) as (_src, dst):
        dst.objects = ["libmesh", "LibRig"]
    for linked in dst.objects:
        bpy.context.scene.collection.objects.link(linked)
    local = vectorized(tmp_path, ring(), "local")
    select_only(dst.objects[1])
    local.select_set(True)
    fails_cleanly("linked from a library")
    local_arm = add_armature({"b": ((0, 0, 0), (0, 0, 0.2))})
    select_only(local_arm)
    dst.objects[0].select_set(True)
    fails_cleanly("linked from a library")


def test_a_bad_mesh_among_good_ones_is_skipped_with_a_warning(scene, tmp_path, capfd):
    ob = vectorized(tmp_path, LEGS)
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    me = bpy.data.meshes.new("wire")
    me.from_pydata([(0, 0, 0), (1, 0, 0)], [(0, 1)], [])
    wire = bpy.data.objects.new("wire", me)
    scene.collection.objects.link(wire)
    select_only(arm)
    ob.select_set(True)
    wire.select_set(True)
    assert bpy.ops.vide.bind_armature() == {'FINISHED'}
    assert "Skipped: 'wire': it has no faces" in capfd.readouterr().out
    assert len(ob.vertex_groups) == 3 and len(wire.vertex_groups) == 0 and wire.parent is None


def test_a_bone_far_outside_the_shape_weights_the_nearest_part_with_a_warning(scene, tmp_path, capfd):
    ob = vectorized(tmp_path, LEGS)
    bones = dict(LEG_BONES, far=((-200, 40), (-200, 90)))  # 230 px left of the left leg
    w = bind(ob, rig_for(ob, LEGS.shape, bones), smoothness=0.5, prune=0.0)
    assert "Bone 'far' lies outside 'shape'" in capfd.readouterr().out
    far = w[:, list(bones).index("far")]
    assert far.max() > 0.0, "it still gets weights"
    pts, _ = mesh_in_pixels(ob, LEGS.shape)
    assert pts[np.argmax(far), 0] < 35, "strongest on the left edge, nearest to it"


def test_a_bone_pointing_out_of_the_picture_weights_like_a_point_with_a_warning(scene, tmp_path, capfd):
    ob = vectorized(tmp_path, LEGS)
    knee = pixel_to_world(ob, LEGS.shape, [[35, 60]])[0]  # 10 px beside the leg bone
    bones = dict(LEG_BONES)
    arm = rig_for(ob, LEGS.shape, bones)
    select_only(arm)
    bpy.ops.object.mode_set(mode='EDIT')
    eb = arm.data.edit_bones.new("knee")
    eb.head, eb.tail = knee.tolist(), (knee + [0.0, -0.2, 0.0]).tolist()  # along the view axis
    bpy.ops.object.mode_set(mode='OBJECT')
    w = bind(ob, arm)
    assert "Bone 'knee' points out of the picture's plane" in capfd.readouterr().out
    assert w[:, list(arm.data.bones.keys()).index("knee")].max() > 0.5


def test_a_plain_mesh_is_bound_by_distance_inside_it(scene):
    """A mesh VIDE never vectorized: a grid with a slot cut into it; the slot separates the bones."""
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=40, y_subdivisions=40, size=2.0)
    grid_ob = bpy.context.object
    me = grid_ob.data
    slot = [p.index for p in me.polygons if abs(p.center.x) < 0.05 and p.center.y < 0.6]
    bm = bmesh.new()
    bm.from_mesh(me)
    bm.faces.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=[bm.faces[i] for i in slot], context='FACES_ONLY')
    bm.to_mesh(me)
    bm.free()
    arm = add_armature({"left": ((-0.5, -0.8, 0), (-0.5, 0.0, 0)), "right": ((0.5, -0.8, 0), (0.5, 0.0, 0))})
    select_only(arm)
    grid_ob.select_set(True)
    assert bpy.ops.vide.bind_armature(prune=0.0) == {'FINISHED'}
    counts, sums, _ = influences(grid_ob)
    assert counts.min() >= 1 and np.abs(sums - 1).max() < 1e-6
    w = bone_weights(grid_ob, ["left", "right"])
    co = np.array([v.co[:] for v in me.vertices])
    next_to_slot = (co[:, 0] > 0.05) & (co[:, 0] < 0.2) & (co[:, 1] < -0.5)
    assert next_to_slot.sum() > 5
    assert w[next_to_slot, 0].max() < 0.01, "the left bone does not reach across the slot"


@pytest.mark.parametrize("method", ['GEODESIC', 'MESHFREE'])
def test_stray_faces_of_no_area_bind_with_the_rest(scene, method):
    """An unmerged mesh: a grid with two stray faces of no area beside it, one of three collinear vertices and one of
    three at the same place. The bind goes through (it raised "Factor is exactly singular") and weights them too."""
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=20, y_subdivisions=20, size=2.0)
    grid_ob = bpy.context.object
    bm = bmesh.new()
    bm.from_mesh(grid_ob.data)
    for corners in ([(1.2, 0.0, 0), (1.3, 0.0, 0), (1.4, 0.0, 0)], [(1.2, 0.5, 0)] * 3):
        bm.faces.new([bm.verts.new(c) for c in corners])
    bm.to_mesh(grid_ob.data)
    bm.free()
    arm = add_armature({"left": ((-0.5, -0.8, 0), (-0.5, 0.0, 0)), "right": ((0.5, -0.8, 0), (0.5, 0.0, 0))})
    select_only(arm)
    grid_ob.select_set(True)
    assert bpy.ops.vide.bind_armature(method=method) == {'FINISHED'}
    counts, sums, _ = influences(grid_ob)
    assert counts.min() >= 1 and np.abs(sums - 1).max() < 1e-6


def test_undo_restores_the_unbound_mesh(scene, tmp_path):
    ob = vectorized(tmp_path, LEGS, "undo_me")
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    select_only(arm)
    ob.select_set(True)
    bpy.ops.ed.undo_push(message="before")
    bpy.ops.vide.bind_armature()
    bpy.ops.ed.undo_push(message="after")
    assert len(bpy.data.objects["undo_me"].vertex_groups) == 3
    bpy.ops.ed.undo()
    ob = bpy.data.objects["undo_me"]
    assert len(ob.vertex_groups) == 0 and len(ob.modifiers) == 0 and ob.parent is None


def test_images_never_vectorized_are_still_image_planes_to_bind(scene, tmp_path):
    """An image plane straight from Images as Planes (two triangles) binds without vectorizing."""
    ob = image_plane(tmp_path, legs(), "raw")
    arm = add_armature({"b": ((0, 0, -0.3), (0, 0, 0.3))})
    select_only(arm)
    ob.select_set(True)
    assert bpy.ops.vide.bind_armature() == {'FINISHED'}
    counts, sums, _ = influences(ob)
    assert (counts == 1).all() and np.allclose(sums, 1.0)
