"""Bind to Armature on real sprites the project did not draw (tests/data/kenney, CC0), resized bilinearly to
odd scales, with rigs made automatically the way artists draw them: joints 0 to 3 px apart, bones cutting
across the outside where the shape bends, some past the silhouette. Checked against an independent
reference: shortest paths on the pixel grid inside the alpha mask (sample_scenes/sprite_corpus.py)."""

import bpy
import numpy as np
import pytest
import sprite_corpus as corpus
from helpers import add_armature, bone_weights, influences, mesh_in_pixels, pixel_to_world, select_only
from stage import import_plane, load_png, save_png

# (sprite, scale, rig seed): people, an animal, a plant and an item, at 1x to 8x.
CASES = [("animated_characters__malePerson_walk3", 1.0, 0), ("animated_characters__femaleAdventurer_idle", 2.0, 1),
         ("enemies__mouse", 2.5, 0), ("enemies__frog", 3.0, 1), ("tiles__cactus", 1.0, 1),
         ("items__keyBlue", 8.0, 0)]


def sprite_plane(tmp_path, name, scale):
    """The sprite resized by `scale`, imported as a plane and vectorized: (plane, rgba)."""
    rgba = corpus.resized(load_png(corpus.CORPUS / f"{name}.png"), scale)
    folder = tmp_path / f"{name}-{scale}"
    folder.mkdir()
    ob = import_plane(save_png(folder / "sprite.png", rgba))
    assert bpy.ops.vide.vectorize_image() == {'FINISHED'}
    return ob, rgba


def rig_on(ob, rgba, rig):
    shape = rgba.shape[:2]
    return add_armature({n: tuple(pixel_to_world(ob, shape, [h, t])) for n, (h, t) in rig.items()})


@pytest.mark.parametrize("name, scale, seed", CASES, ids=[f"{c[0].split('__')[1]}-{c[1]}x" for c in CASES])
@pytest.mark.parametrize("method", ['GEODESIC', 'MESHFREE'])
def test_an_automatic_rig_on_real_art_binds_with_valid_weights_that_do_not_cross_gaps(scene, tmp_path, name, scale,
                                                                                     seed, method):
    ob, rgba = sprite_plane(tmp_path, name, scale)
    rig = corpus.auto_rig(rgba[..., 3], bones=8, jitter=3.0, past=0.3, seed=seed)
    arm = rig_on(ob, rgba, rig)
    select_only(arm)
    ob.select_set(True)
    assert bpy.ops.vide.bind_armature(method=method) == {'FINISHED'}
    counts, sums, mins = influences(ob)
    assert counts.min() >= 1, "every vertex is weighted"
    assert counts.max() <= 4 and np.abs(sums - 1).max() < 1e-6 and mins.min() >= 0
    pts, _tris = mesh_in_pixels(ob, rgba.shape[:2])
    grid = corpus.PixelGrid(corpus.main_piece(rgba[..., 3]))
    v, b, _inside = corpus.leak_pairs(grid, rig, pts, max(rgba.shape[:2]))
    w = bone_weights(ob, list(rig))
    assert w[v, b].max(initial=0.0) < 0.01, "a bone near in a straight line but far inside puts nothing there"


@pytest.mark.parametrize("apart", [0.3, 2.0])
def test_meshfree_binds_a_person_whose_joints_are_a_little_apart(scene, tmp_path, apart):
    """The person sprite at 3x with spine, head and shin heads `apart` px off their parents' tails: this
    failed with "The handles are too close together" before near joints counted as joints."""
    ob, rgba = sprite_plane(tmp_path, "animated_characters__malePerson_idle", 3.0)
    up = np.array([0.0, apart])
    rig = {"hips": ((144, 150), (144, 190)), "spine": ((144, 190) + up, (144, 240)),
           "head": ((144, 240) + up, (144, 360)),
           "thigh.L": ((125, 150), (125, 95)), "shin.L": ((125, 95) + up, (125, 45)),
           "thigh.R": ((163, 150), (163, 95)), "shin.R": ((163, 95) + up, (163, 45))}
    arm = rig_on(ob, rgba, rig)
    select_only(arm)
    ob.select_set(True)
    assert bpy.ops.vide.bind_armature(method='MESHFREE') == {'FINISHED'}
    counts, sums, _mins = influences(ob)
    assert counts.min() >= 1 and np.abs(sums - 1).max() < 1e-6


def test_vectorizing_a_bound_mesh_again_keeps_it_bound_in_one_undo_step(scene, tmp_path):
    ob, rgba = sprite_plane(tmp_path, "enemies__mouse", 1.0)
    rig = corpus.auto_rig(rgba[..., 3], bones=5, seed=0)
    arm = rig_on(ob, rgba, rig)
    select_only(arm)
    ob.select_set(True)
    assert bpy.ops.vide.bind_armature(method='GEODESIC') == {'FINISHED'}
    before = len(ob.data.vertices)
    select_only(ob)
    assert bpy.ops.vide.vectorize_image(vertex_spacing=3.0) == {'FINISHED'}
    assert len(ob.data.vertices) != before, "a new mesh"
    counts, sums, _mins = influences(ob)
    assert counts.min() >= 1 and np.abs(sums - 1).max() < 1e-6, "weighted again, every vertex"
    assert ob.parent == arm and any(m.type == 'ARMATURE' and m.object == arm for m in ob.modifiers)


def test_vectorizing_a_bound_mesh_whose_armature_lost_its_deform_bones_keeps_the_old_mesh(scene, tmp_path):
    ob, rgba = sprite_plane(tmp_path, "enemies__mouse", 1.0)
    arm = rig_on(ob, rgba, corpus.auto_rig(rgba[..., 3], bones=3, seed=0))
    select_only(arm)
    ob.select_set(True)
    assert bpy.ops.vide.bind_armature() == {'FINISHED'}
    for bone in arm.data.bones:
        bone.use_deform = False
    mesh = ob.data
    select_only(ob)
    with pytest.raises(RuntimeError, match="could not be weighted again"):
        bpy.ops.vide.vectorize_image(vertex_spacing=3.0)
    assert ob.data == mesh and influences(ob)[0].min() >= 1, "the mesh and its weights as they were"


def test_many_bones_outside_give_one_summary_line(scene, tmp_path, capfd):
    ob, rgba = sprite_plane(tmp_path, "enemies__mouse", 1.0)
    rig = corpus.auto_rig(rgba[..., 3], bones=3, seed=0)
    rig.update({f"far{i}": ((-100.0 - 5 * i, 10.0), (-100.0 - 5 * i, 40.0)) for i in range(12)})
    arm = rig_on(ob, rgba, rig)
    select_only(arm)
    ob.select_set(True)
    assert bpy.ops.vide.bind_armature() == {'FINISHED'}
    out = capfd.readouterr().out
    assert "12 bones lie outside" in out and "and 9 more" in out
    assert out.count("lies outside") == 0, "no line per bone"


def test_auto_update_drops_the_group_of_a_deleted_bone(scene, tmp_path):
    ob, rgba = sprite_plane(tmp_path, "enemies__mouse", 1.0)
    arm = rig_on(ob, rgba, corpus.auto_rig(rgba[..., 3], bones=4, seed=0))
    select_only(arm)
    ob.select_set(True)
    assert bpy.ops.vide.bind_armature() == {'FINISHED'}
    arm.vide.auto_update = True
    select_only(arm)
    bpy.ops.object.mode_set(mode='EDIT')
    arm.data.edit_bones.remove(arm.data.edit_bones["b3"])
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.context.view_layer.update()
    arm.vide.auto_update = False
    assert "b3" not in ob.vertex_groups and "b2" in ob.vertex_groups
    assert np.abs(influences(ob)[1] - 1).max() < 1e-6
