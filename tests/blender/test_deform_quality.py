"""Posed deformation: test characters (sample_scenes/sprite_rigs.py) bound with each VIDE method with Joint Blending
2.5, and with Blender's Automatic Weights on the same mesh, then bent at a knee and at a hip. And live re-weighting
with Joint Blending."""

import numpy as np
import pytest
from sprite_rigs import CHARACTERS, COLLAPSED, deformation, flat_corners, pose, rigged
from stage import copy_of, select

METHODS = ("GEODESIC", "MESHFREE")
BLEND = 2.5  # the Joint Blending the README suggests for posing
TESTED = ("sample", "malePerson", "frog")


@pytest.fixture(scope="module", params=TESTED)
def posed(request, vide, tmp_path_factory):
    """{(pose, method): (area ratio, σ1/σ2) per triangle} for one character in its knee and hip poses."""
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    name = request.param
    plane, arm = rigged(name, tmp_path_factory.mktemp(name))
    meshes = {}
    for method in METHODS + ("AUTO",):
        ob = copy_of(plane)
        select((ob, arm), arm)
        if method == "AUTO":
            bpy.ops.object.parent_set(type='ARMATURE_AUTO')
        else:
            assert bpy.ops.vide.bind_armature(method=method, joint_blend=BLEND) == {'FINISHED'}
        meshes[method] = ob
    plane.hide_set(True)
    rest = {m: flat_corners(ob) for m, ob in meshes.items()}
    out = {}
    for pose_name in CHARACTERS[name].knee_and_hip:
        pose(arm, CHARACTERS[name].poses[pose_name])
        depsgraph = bpy.context.evaluated_depsgraph_get()
        depsgraph.update()
        for method, ob in meshes.items():
            out[pose_name, method] = deformation(rest[method], flat_corners(ob, depsgraph))
    return name, out


# Meshfree C² still collapses 3 triangles at the sample character's knee bent 90° (Automatic Weights: 15), where the
# cape joins the legs (bench/deform_quality.py): kept visible below.
KNOWN = {("sample", "knee 90°", "MESHFREE")}
# Meshfree C² stretches the Kenney person's knee bent 90° at p99 2.190 against Automatic Weights' 2.169, since a
# virtual handle's blend keeps to the bones near it (the fix for a foot taking 0.07 from the other leg's thigh).
KNOWN_STRETCH = {("malePerson", "knee 90°", "MESHFREE")}


def cases(posed):
    name, out = posed
    for (pose_name, method), measured in out.items():
        if method != "AUTO":
            yield pose_name, method, measured, out[pose_name, "AUTO"], (name, pose_name, method) in KNOWN


def test_knee_and_hip_poses_flip_no_triangle(posed):
    """No triangle of the bound mesh is flipped or collapsed (posed area under 5% of rest) in the knee and hip
    poses, for either method."""
    for pose_name, method, (area, _stretch), _auto, known in cases(posed):
        flipped = int((area < COLLAPSED).sum())
        if known:
            continue
        assert flipped == 0, f"{posed[0]}, {pose_name}, {method}: {flipped} triangles flipped or collapsed"


def test_knee_and_hip_distortion_at_most_automatic_weights(posed):
    """The 99th percentile of the triangles' stretch σ1/σ2 is no higher than with Blender's Automatic Weights on
    the same mesh and pose."""
    for pose_name, method, (_area, stretch), (_a, auto), known in cases(posed):
        if known or (posed[0], pose_name, method) in KNOWN_STRETCH:
            continue
        mine, theirs = np.percentile(stretch, 99), np.percentile(auto, 99)
        assert mine <= theirs, f"{posed[0]}, {pose_name}, {method}: p99 σ1/σ2 {mine:.3f} > {theirs:.3f}"


@pytest.mark.xfail(strict=True, reason="Meshfree C² stretches the person's knee more than Automatic Weights")
def test_known_gaps_stretch_at_most_automatic_weights(posed):
    """The known stretch gaps, kept visible: this passes (and so fails, being strict) once they are closed."""
    known = [(p, m) for n, p, m in KNOWN_STRETCH if n == posed[0]]
    if not known:
        pytest.skip("no known gap on this character")
    out = posed[1]
    assert all(np.percentile(out[p, m][1], 99) <= np.percentile(out[p, "AUTO"][1], 99) for p, m in known)


@pytest.mark.xfail(strict=True, reason="Meshfree C² collapses 3 triangles at the sample character's knee (KNOWN)")
def test_known_gaps_flip_no_triangle(posed):
    """The known gaps, kept visible: this passes (and so fails, being strict) once they are closed."""
    known = [(p, m) for n, p, m in KNOWN if n == posed[0]]
    if not known:
        pytest.skip("no known gap on this character")
    assert all((posed[1][p, m][0] < COLLAPSED).sum() == 0 for p, m in known)


def test_a_bones_smoothness_reweights_blended_weights_from_the_kept_distances(scene, tmp_path, vide):
    """With Joint Blending, a new bone smoothness re-weights from the kept distances and the kept factorization
    (one column solved again), to the weights a bind with that smoothness gives, normalized, at most Max
    Influences."""
    import bpy
    from helpers import bone_weights

    binding = vide.vide_addon.binding
    plane, arm = rigged("malePerson", tmp_path)
    select((plane, arm), arm)
    assert bpy.ops.vide.bind_armature(joint_blend=BLEND) == {'FINISHED'}
    kept = binding.geodesic.kept[plane.session_uid]
    dist, blend = kept.dist, kept.blend
    names = list(kept.names)
    before = bone_weights(plane, names)
    arm.data.bones["shin.L"].vide.smoothness = 0.08  # the update re-weights the bound mesh
    live = bone_weights(plane, names)
    again = binding.geodesic.kept[plane.session_uid]
    assert again.dist is dist and again.blend is blend
    assert np.abs(live - before).max() > 0.05
    assert np.count_nonzero(live, axis=1).max() <= 4 and np.abs(live.sum(axis=1) - 1).max() < 1e-5
    core = vide.vide_addon.core
    smoothness = np.array([0.08 if n == "shin.L" else plane.vide.bind.smoothness for n in names])
    seeds = core.smooth_weights.exponential_seeds(dist, smoothness)
    fresh = core.smooth_weights.JointBlend(*_mesh_and_bones(vide, plane, arm), 1 / BLEND,
                                           core.smooth_weights.GEODESIC_REACH)
    expected = fresh(seeds, 4, 0.01)  # the blend keeps the strongest and prunes
    assert np.abs(live - expected).max() < 1e-5


def _mesh_and_bones(vide, ob, arm):
    rig = vide.vide_addon.bridge.rig
    plane, points, tris = rig.mesh_in_plane(ob)
    _names, heads, tails, _flat = rig.deform_bones(arm, plane)
    return points, tris, heads, tails


def test_a_bone_inserted_into_blended_meshfree_weights_is_blended_with_it(scene, tmp_path, vide):
    """Update Weights with Joint Blending: the bone goes into the kept meshfree weights, and the blending is made
    again for the bones as they are now (not those of the bind)."""
    import bpy
    from helpers import bone_weights, influences, mesh_in_pixels
    from test_bind import LEG_BONES, LEGS, rig_for, vectorized
    from test_bind_meshfree import add_bone

    binding, core = vide.vide_addon.binding, vide.vide_addon.core
    ob = vectorized(tmp_path, LEGS)
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    select((ob, arm), arm)
    assert bpy.ops.vide.bind_armature(method='MESHFREE', joint_blend=BLEND) == {'FINISHED'}
    bound = binding.meshfree.kept[ob.session_uid]
    rig, blend = bound.rig, bound.blend
    add_bone(arm, ob, "belly.L", [[45, 140], [35, 140]])
    assert bpy.ops.vide.update_weights() == {'FINISHED'}
    kept = binding.meshfree.kept[ob.session_uid]
    assert kept.rig is rig and kept.blend is not blend, "inserted, and blended for the new bones"
    counts, sums, mins = influences(ob)
    assert counts.max() <= 4 and np.abs(sums - 1).max() < 1e-6 and mins.min() >= 0
    names = list(arm.data.bones.keys())
    w = bone_weights(ob, names)
    again = core.smooth_weights.JointBlend(*_mesh_and_bones(vide, ob, arm),
                                           1 / (core.smooth_weights.MESHFREE_SCALE * BLEND))
    expected = again(rig.vertex_weights(), 4, 0.01)
    assert np.abs(w - expected).max() < 1e-5
    pts, _tris = mesh_in_pixels(ob, LEGS.shape)
    belly = names.index("belly.L")
    assert w[:, belly].max() > 0.5 and w[(pts[:, 0] > 61) & (pts[:, 1] < 100), belly].max() < 0.01
