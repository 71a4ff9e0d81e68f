"""Bind to Armature with geodesic weights in real Blender: no leak across gaps, normalized sparse weights,
symmetry, resolution independence, live smoothness, renders of the posed character, re-binding."""

import bpy
import numpy as np
import pytest
from helpers import (add_armature, bone_weights, grid, image_plane, influences, interpolate_on_mesh, jitter_interior,
                     legs, mesh_in_pixels, pixel_to_world, select_only)
from mathutils import Matrix, Vector
from stage import front_camera, render

LEGS = legs(gap=2)  # 160 x 120 px: legs x 30-59 and 61-90 below y 120, hip above; symmetric about x = 60
LEG_BONES = {"hip": ((60, 122), (60, 148)), "leg.L": ((45, 118), (45, 15)), "leg.R": ((75, 118), (75, 15))}


def vectorized(tmp_path, alpha, name="shape"):
    ob = image_plane(tmp_path, alpha, name)
    select_only(ob)
    assert bpy.ops.vide.vectorize_image() == {'FINISHED'}
    return ob


def rig_for(ob, shape, bones_px, matrix=None):
    """An armature whose bones sit at the given image pixels of the vectorized plane `ob`."""
    bones = {}
    for name, (head, tail, *parent) in bones_px.items():
        h, t = pixel_to_world(ob, shape, [head, tail])
        bones[name] = (h, t, *parent)
    return add_armature(bones, matrix=matrix)


def bind(ob, arm, **props):
    select_only(arm)
    ob.select_set(True)
    assert bpy.ops.vide.bind_armature(**props) == {'FINISHED'}
    return bone_weights(ob, list(arm.data.bones.keys()))


def test_a_leg_bone_does_not_reach_across_a_two_pixel_gap_into_the_other_leg(scene, tmp_path):
    ob = vectorized(tmp_path, LEGS)
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    w = bind(ob, arm, prune=0.0)
    pts, _tris = mesh_in_pixels(ob, LEGS.shape)
    # Right-leg vertices from a leg's width below the crotch (y = 120) down; the gap is 2 px wide.
    right_leg = (pts[:, 0] > 61) & (pts[:, 1] < 96)
    left_leg = (pts[:, 0] < 59) & (pts[:, 1] < 96)
    assert right_leg.sum() > 200
    assert w[right_leg, 1].max() < 0.01, w[right_leg, 1].max()
    assert w[left_leg, 2].max() < 0.01, w[left_leg, 2].max()
    # Euclidean distance would give the inner edge of the right leg about as much of the left bone as of
    # its own: there the straight-line distances are 16 and 14 px. Here it is weighted like the outer edge at the
    # same height: by its own bone, and at the top by the hip's, which Joint Blending brings down the legs (0.10
    # on the inner edge and 0.07 on the outer at y = 95).
    inner, outer = right_leg & (pts[:, 0] < 64), right_leg & (pts[:, 0] > 87)
    assert (w[inner, 0] + w[inner, 2]).min() > 0.99
    by_height = np.argsort(pts[outer, 1])
    outer_own = np.interp(pts[inner, 1], pts[outer, 1][by_height], w[outer, 2][by_height])
    assert (outer_own - w[inner, 2]).max() < 0.05


def cape_shape():
    """A torso with a leg below it and a cape hanging beside the leg, 4 px away, joined at the shoulder."""
    a = np.zeros((170, 120), np.float32)
    a[100:160, 40:80] = 1  # torso
    a[10:100, 45:70] = 1  # leg
    a[20:160, 84:100] = 1  # cape
    a[150:160, 80:84] = 1  # shoulder
    return a


def test_a_cape_beside_a_leg_takes_its_weight_from_the_shoulder_not_the_leg(scene, tmp_path):
    alpha = cape_shape()
    ob = vectorized(tmp_path, alpha, "cape")
    arm = rig_for(ob, alpha.shape, {"spine": ((60, 105), (60, 155)), "leg": ((57, 98), (57, 15))})
    w = bind(ob, arm, prune=0.0)
    pts, _tris = mesh_in_pixels(ob, alpha.shape)
    lower_cape = (pts[:, 0] > 83) & (pts[:, 1] < 90)
    assert lower_cape.sum() > 50
    assert w[lower_cape, 1].max() < 0.01, "the cape is 14 px from the leg bone in a straight line"
    assert w[lower_cape, 0].min() > 0.99


def test_weights_sum_to_one_over_at_most_four_bones_and_none_is_negative(scene, tmp_path):
    ob = vectorized(tmp_path, LEGS)
    bones = {"hip": ((60, 122), (60, 148)), "thigh.L": ((45, 118), (45, 70)), "shin.L": ((45, 70), (45, 15)),
             "thigh.R": ((75, 118), (75, 70)), "shin.R": ((75, 70), (75, 15)), "belly": ((40, 135), (80, 135))}
    arm = rig_for(ob, LEGS.shape, bones)
    bind(ob, arm, smoothness=0.2)  # very smooth, so many bones compete for each vertex
    counts, sums, mins = influences(ob)
    assert counts.min() >= 1, "every vertex is weighted"
    assert counts.max() <= 4
    assert np.abs(sums - 1.0).max() < 1e-6
    assert mins.min() >= 0.0
    w = bind(ob, arm, smoothness=0.2, max_influences=2)
    assert np.count_nonzero(w, axis=1).max() <= 2


def test_mirrored_bones_on_a_symmetric_shape_give_mirrored_weights(scene, tmp_path):
    ob = vectorized(tmp_path, LEGS)
    jitter_interior(ob, LEGS.shape)  # Vectorize makes symmetric art a symmetric mesh: move it off symmetry
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    w = bind(ob, arm)
    pts, tris = mesh_in_pixels(ob, LEGS.shape)
    mirror = np.column_stack([120 - pts[:, 0], pts[:, 1]])
    assert not np.allclose(np.sort(pts[:, 0]), np.sort(mirror[:, 0])), "the mesh itself is not symmetric"
    at_mirror, found = interpolate_on_mesh(pts, tris, w, mirror)
    assert found.mean() > 0.95
    swapped = at_mirror[:, [0, 2, 1]]  # hip stays, left and right swap
    assert np.abs(w[found] - swapped[found]).max() < 0.02


def scaled_legs(height):
    """LEGS drawn at another resolution (the same shape, `height` px tall)."""
    s = height / 160
    xx, yy = grid(height, int(120 * s))
    x, y = xx / s, yy / s
    leg = (y > 10) & (y < 120) & (((x > 30) & (x < 59)) | ((x > 61) & (x < 90)))
    hip = (y >= 120) & (y < 150) & (x > 30) & (x < 90)
    return (leg | hip).astype(np.float32)


def test_the_same_character_at_512_and_2048_pixels_gets_the_same_weights(scene, tmp_path):
    results = []
    for height in (512, 2048):
        alpha = scaled_legs(height)
        ob = vectorized(tmp_path, alpha, f"legs{height}")
        s = height / 160
        bones = {n: (np.array(h) * s, np.array(t) * s) for n, (h, t) in LEG_BONES.items()}
        arm = rig_for(ob, alpha.shape, bones)
        w = bind(ob, arm)
        pts, tris = mesh_in_pixels(ob, alpha.shape)
        results.append((pts / s, tris, w, ob.dimensions.copy()))
    (p_lo, _t_lo, w_lo, size_lo), (p_hi, t_hi, w_hi, size_hi) = results
    assert (size_lo - size_hi).length < 0.01, "Images as Planes makes both the same size"
    assert len(p_hi) != len(p_lo) or not np.allclose(p_hi, p_lo), "two different meshes"
    at_lo, found = interpolate_on_mesh(p_hi, t_hi, w_hi, p_lo)
    assert found.mean() > 0.95
    assert np.abs(at_lo[found] - w_lo[found]).max() < 0.02


def test_a_posed_render_moves_the_bent_leg_and_leaves_the_other_where_it_was(scene, tmp_path):
    front_camera(size=160, ortho_scale=1.1)
    ob = vectorized(tmp_path, LEGS)
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    bind(ob, arm)
    rest = render(tmp_path / "rest.png")
    # Swing the left leg outwards about the picture's normal (world Y), given in the bone's own axes.
    pose = arm.pose.bones["leg.L"]
    axis = pose.bone.matrix_local.to_3x3().inverted() @ Vector((0.0, 1.0, 0.0))
    pose.rotation_quaternion = Matrix.Rotation(0.8, 4, axis.normalized()).to_quaternion()
    bpy.context.view_layer.update()
    posed = render(tmp_path / "posed.png")
    seen_rest, seen_posed = rest[..., 3] > 0.5, posed[..., 3] > 0.5
    h, w = seen_rest.shape
    left, right = np.zeros_like(seen_rest), np.zeros_like(seen_rest)
    left[:, :w // 2 - 2] = True
    right[:, w // 2 + 2:] = True
    # The right leg, below the hip, renders exactly as before; the left one moved.
    low = np.zeros_like(seen_rest)
    low[:h // 2] = True
    assert (seen_rest & right & low).sum() > 500
    assert np.abs(rest[right & low] - posed[right & low]).max() < 2 / 255
    changed = (seen_rest != seen_posed) & left & low
    assert changed.sum() > 0.3 * (seen_rest & left & low).sum()


def test_changing_a_bones_smoothness_reweights_from_the_kept_distances(scene, tmp_path, vide):
    """Without Joint Blending, to exactly the falloff of the kept distances (with it, the default:
    test_deform_quality.py)."""
    binding = vide.vide_addon.binding
    ob = vectorized(tmp_path, LEGS)
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    before = bind(ob, arm, joint_blend=0.0)
    kept = binding.geodesic.kept[ob.session_uid].dist
    arm.data.bones["hip"].vide.smoothness = 0.1  # the update re-weights the bound mesh
    live = bone_weights(ob, list(arm.data.bones.keys()))
    assert binding.geodesic.kept[ob.session_uid].dist is kept, "distances were not measured again"
    assert np.abs(live - before).max() > 0.1
    expected = vide.vide_addon.core.weights.falloff_weights(kept, np.array([0.1, 0.03, 0.03])).toarray()
    assert np.abs(live - expected).max() < 1e-6
    # Binding afresh measures again (the mesh is now parented, its matrix re-evaluated) to nearly the same.
    assert np.abs(live - bind(ob, arm, joint_blend=0.0)).max() < 0.01


def test_distances_cut_short_with_joint_blending_reweight_until_a_bone_would_reach_past_them(scene, tmp_path, vide):
    """With Joint Blending (the default) a bind measures distances MEASURED_REACH lengths of its largest smoothness
    past the nearest bone. A bone's smoothness raised until its seeds' REACH lengths would pass them re-weights from
    them, to within Prune Below of the weights from distances measured in full; raised further, it measures again.
    Without Joint Blending nothing is cut (a bone with a larger smoothness than the others' keeps weight further
    past the nearest bone than any one reach)."""
    core, binding, rig = vide.vide_addon.core, vide.vide_addon.binding, vide.vide_addon.bridge.rig
    ob = vectorized(tmp_path, LEGS)
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    bind(ob, arm, smoothness=0.005)  # 0.15 of the 1 m tall shape: the far leg's foot is beyond
    kept = binding.geodesic.kept[ob.session_uid]
    assert kept.reach == pytest.approx(core.weights.MEASURED_REACH * 0.005)
    assert not np.isfinite(kept.dist).all()
    smoothness = kept.reach / core.weights.REACH  # the most the kept distances hold
    arm.data.bones["hip"].vide.smoothness = smoothness
    assert binding.geodesic.kept[ob.session_uid].dist is kept.dist, "measured again"
    live = bone_weights(ob, list(arm.data.bones.keys()))
    plane, points, tris = rig.mesh_in_plane(ob)
    _names, heads, tails, _flat = rig.deform_bones(arm, plane)
    settings = core.bind_settings.BindSettings(smoothness=0.005)
    domain = core.geodesic.Domain.from_mesh(points, tris, bones=len(heads))
    full, _outside = core.geodesic.bone_distances(domain, heads, tails)
    blend = core.bind_weights.joint_blend(points, tris, heads, tails, settings, domain)
    expected = core.bind_weights.geodesic_weights(full, np.array([smoothness, 0.005, 0.005]), blend,
                                                          settings).toarray()
    assert np.abs(live - expected).max() < settings.prune
    arm.data.bones["hip"].vide.smoothness = 1.01 * smoothness
    again = binding.geodesic.kept[ob.session_uid]
    assert again.dist is not kept.dist, "not measured again"
    assert again.reach >= core.weights.MEASURED_REACH * 1.01 * smoothness
    finite = np.isfinite(kept.dist)
    assert np.isfinite(again.dist).sum() > finite.sum(), "measured no further"
    assert np.abs(again.dist[finite] - kept.dist[finite]).max() < 1e-4, "the same distances where both measured"
    bind(ob, arm, joint_blend=0.0, smoothness=0.005)  # the hip keeps its own, larger smoothness
    kept = binding.geodesic.kept[ob.session_uid]
    assert kept.reach == np.inf and np.isfinite(kept.dist).all()


def test_a_smoothness_change_after_undoing_the_same_change_weights_the_mesh_again(scene, tmp_path):
    """Undo takes the weights back but not what VIDE kept as last written: setting the same smoothness again must
    still give the mesh the weights of that smoothness (a live re-weight writes only what changed)."""
    ob = vectorized(tmp_path, LEGS, "undo_me")
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    arm_name = arm.name
    before = bind(ob, arm)
    bpy.ops.ed.undo_push(message="bound")
    arm.data.bones["hip"].vide.smoothness = 0.1
    smoother = bone_weights(ob, list(arm.data.bones.keys()))
    assert np.abs(smoother - before).max() > 0.1
    bpy.ops.ed.undo_push(message="smoother")
    bpy.ops.ed.undo()
    ob, arm = bpy.data.objects["undo_me"], bpy.data.objects[arm_name]
    assert np.abs(bone_weights(ob, list(arm.data.bones.keys())) - before).max() < 1e-6, "undone"
    arm.data.bones["hip"].vide.smoothness = 0.1
    assert np.abs(bone_weights(ob, list(arm.data.bones.keys())) - smoother).max() < 1e-5


def test_rebinding_reuses_the_modifier_keeps_other_groups_and_does_not_move_the_mesh(scene, tmp_path):
    ob = vectorized(tmp_path, LEGS)
    ob.location = (0.3, 0.1, -0.2)
    paint = ob.vertex_groups.new(name="paint")
    paint.add([0, 1, 2], 0.5, 'REPLACE')
    bpy.context.view_layer.update()
    world = ob.matrix_world.copy()
    arm = rig_for(ob, LEGS.shape, LEG_BONES)
    arm.location.x += 0.01
    bpy.context.view_layer.update()
    first = bind(ob, arm)
    second = bind(ob, arm, smoothness=0.05)
    bpy.context.view_layer.update()
    assert [m.type for m in ob.modifiers] == ['ARMATURE'] and ob.modifiers[0].object == arm
    assert ob.parent == arm
    assert np.allclose(np.array(ob.matrix_world), np.array(world), atol=1e-6)
    assert [g.weight for g in ob.data.vertices[0].groups if g.group == paint.index] == [0.5]
    assert np.abs(first - second).max() > 0.01, "the new smoothness replaced the old weights"


def test_weights_do_not_depend_on_where_the_mesh_and_the_armature_are(scene, tmp_path):
    ob = vectorized(tmp_path, LEGS, "still")
    w0 = bind(ob, rig_for(ob, LEGS.shape, LEG_BONES))
    moved = vectorized(tmp_path, LEGS, "moved")
    moved.rotation_euler = (0.4, -0.3, 1.1)
    moved.location = (2.0, -1.0, 0.5)
    bpy.context.view_layer.update()
    turned = Matrix.Translation((0.5, 0.2, 0.0)) @ Matrix.Rotation(0.7, 4, 'Z')
    w1 = bind(moved, rig_for(moved, LEGS.shape, LEG_BONES, matrix=turned))
    assert np.allclose(mesh_in_pixels(ob, LEGS.shape)[0], mesh_in_pixels(moved, LEGS.shape)[0]), "same mesh"
    # Not bit for bit: float32 vertices, once transformed, settle a few links that run exactly along the
    # outline the other way, which moves distances by a few hundredths of a pixel.
    assert np.abs(w1 - w0).max() < 0.01


def test_a_non_uniformly_scaled_plane_is_weighted_without_leaking(scene, tmp_path):
    ob = vectorized(tmp_path, LEGS)
    ob.scale = (1.6, 1.0, 0.7)
    bpy.context.view_layer.update()
    w = bind(ob, rig_for(ob, LEGS.shape, LEG_BONES), prune=0.0)
    pts, _tris = mesh_in_pixels(ob, LEGS.shape)
    right_leg = (pts[:, 0] > 61) & (pts[:, 1] < 96)
    assert w[right_leg, 1].max() < 0.01


def test_every_bind_setting_takes_its_default_from_the_core_and_reaches_the_core_unchanged(scene, vide):
    """The operator's and the scene's settings start at the core's BindSettings(), and to_core() hands every
    field over, changed values included, so the panel and the core cannot disagree."""
    core = vide.vide_addon.core.bind_settings.BindSettings
    defaults, fields = core(), list(core.__dataclass_fields__)
    operator = bpy.ops.vide.bind_armature.get_rna_type().properties
    scene_settings = bpy.context.scene.vide_bind
    for name in fields:
        assert operator[name].default == pytest.approx(getattr(defaults, name)), name
        assert getattr(scene_settings, name) == pytest.approx(getattr(defaults, name)), name
    scene_settings.joint_pull, scene_settings.method, scene_settings.max_influences = 0.25, 'MESHFREE', 3
    changed = scene_settings.to_core()
    for name in fields:
        expected = {"joint_pull": 0.25, "method": 'MESHFREE', "max_influences": 3}.get(name, getattr(defaults, name))
        assert getattr(changed, name) == pytest.approx(expected), name


def grid_object(name, collection):
    """A 40 x 30 vertex grid mesh object linked into `collection`, with a 'paint' group (locked) on a few
    vertices and a colour attribute made active."""
    xx, yy = np.mgrid[0:40, 0:30]
    verts = np.stack([xx.ravel(), yy.ravel(), np.zeros(xx.size)], axis=1)
    idx = np.arange(40 * 30).reshape(40, 30)
    faces = np.stack([idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]], axis=-1).reshape(-1, 4)
    me = bpy.data.meshes.new(name)
    me.from_pydata(verts.tolist(), [], faces.tolist())
    ob = bpy.data.objects.new(name, me)
    collection.objects.link(ob)
    paint = ob.vertex_groups.new(name="paint")
    paint.add([0, 1, 2], 0.5, 'REPLACE')
    paint.lock_weight = True
    me.attributes.active = me.attributes.new("tint", 'FLOAT_COLOR', 'POINT')
    return ob


def groups_as_written(ob):
    """Everything a write may change: group names in order, the active group, each vertex's (group, weight)
    list in its stored order, the mesh's attributes and its active one."""
    attributes = ob.data.attributes
    return ([g.name for g in ob.vertex_groups], ob.vertex_groups.active_index,
            [[(g.group, g.weight) for g in v.groups] for v in ob.data.vertices],
            sorted(attributes.keys()), attributes.active.name)


def test_bulk_weight_write_matches_vertex_group_add_and_leaves_the_objects_state_alone(scene, vide, monkeypatch):
    """The bulk write (one attribute per bone, converted by Blender) stores exactly what VertexGroup.add per entry
    stores, replaces only the bones' groups, and leaves the object where it was: collections, selection, active
    object, visibility."""
    rig = vide.vide_addon.bridge.rig
    extra = bpy.data.collections.new("extra")
    scene.collection.children.link(extra)
    bulk, single = grid_object("bulk", scene.collection), grid_object("single", scene.collection)
    extra.objects.link(bulk)
    other = bpy.data.objects.new("other", None)
    scene.collection.objects.link(other)
    select_only(bulk)
    single.select_set(True)
    other.hide_set(True)
    n = len(bulk.data.vertices)
    rng = np.random.default_rng(7)
    names = ["position", "UVMap", "leg.L", "paint.001", "vide_weights_0"]  # names Blender itself uses, or ours
    for ob in (bulk, single):  # an earlier bind: stale groups of bone names, one locked, the order mixed
        for name in names[2::-1]:
            old = ob.vertex_groups.new(name=name)
            old.add(list(range(0, n, 3)), 0.25, 'REPLACE')
        ob.vertex_groups[name].lock_weight = True
    w = rng.random((n, len(names))) * (rng.random((n, len(names))) < 0.5)
    w[::7, 1] = 1.0
    w[::11, 3] = 1.0 + 1e-9  # clamped to 1 as VertexGroup.add clamps
    w[:, 4] = 0.0  # a group with no vertex
    calls, real = [], rig._ops

    class Counted:  # the operator call the bulk write makes, counted
        def __getattr__(self, attr):
            calls.append(attr)
            return getattr(real, attr)

    with monkeypatch.context() as patch:
        patch.setattr(rig, "_ops", Counted())
        state = [(ob.users_collection, ob.select_get(), ob.hide_get(), ob.visible_get()) for ob in (bulk, other)]
        rig.write_groups(bulk, names, w)
        assert [(ob.users_collection, ob.select_get(), ob.hide_get(), ob.visible_get())
                for ob in (bulk, other)] == state
        assert bpy.context.view_layer.objects.active == bulk
        assert calls == ["call"] * len(names), "every group went the bulk way"
    with monkeypatch.context() as patch:
        patch.setattr(rig, "_ops", None)  # VertexGroup.add per entry, the fall-back
        rig.write_groups(single, names, w)
    assert groups_as_written(bulk) == groups_as_written(single)
    names_in_order, active, _entries, attributes, active_attribute = groups_as_written(bulk)
    assert names_in_order == ["paint"] + names and active == len(names)
    assert active_attribute == "tint" and "vide_weights_1" not in attributes
    assert bulk.vertex_groups["paint"].lock_weight
    got = bone_weights(bulk, names)
    assert np.array_equal(got, np.minimum(w, 1.0).astype(np.float32)), "weights as given, in single precision"


def test_weights_written_from_a_sparse_matrix_are_the_groups_written_from_the_dense_array(scene, vide, monkeypatch):
    """Binds hand write_groups a scipy.sparse matrix: new groups (in bulk and per entry) and a live re-weight's changed
    entries (with its previous weights sparse too) come out as from the same weights as an array."""
    from scipy import sparse
    rig = vide.vide_addon.bridge.rig
    dense, thin = grid_object("dense", scene.collection), grid_object("thin", scene.collection)
    rng = np.random.default_rng(11)
    n, names = len(dense.data.vertices), ["a", "b", "c", "d"]
    w = rng.random((n, len(names))) * (rng.random((n, len(names))) < 0.3)
    w[::5, 2] = 1.0
    changed = w.copy()
    changed[::4, 1] = 0.0
    changed[1::6, 3] = 0.5
    for ops in (rig._ops, None):  # in bulk, then VertexGroup.add per entry
        monkeypatch.setattr(rig, "_ops", ops)
        select_only(dense)
        rig.write_groups(dense, names, w)
        select_only(thin)
        rig.write_groups(thin, names, sparse.csr_matrix(w))
        assert groups_as_written(thin)[:3] == groups_as_written(dense)[:3]
        assert np.array_equal(bone_weights(thin, names), w.astype(np.float32))
    rig.write_groups(dense, names, changed, previous=w)
    rig.write_groups(thin, names, sparse.csr_matrix(changed), previous=sparse.csr_matrix(w))
    assert groups_as_written(thin)[:3] == groups_as_written(dense)[:3]
    assert np.array_equal(bone_weights(thin, names), changed.astype(np.float32))


def test_a_bulk_write_that_stops_part_way_falls_back_to_vertex_group_add_and_leaves_nothing_temporary(scene, vide,
                                                                                                        monkeypatch):
    """If Convert Attribute works for the first bone, then makes no group, then raises (its behaviour changed in
    some Blender), the write still stores every weight, the rest the per-entry way, and leaves no temporary
    attribute or group behind, on a mesh with no active attribute too."""
    rig = vide.vide_addon.bridge.rig
    ob = grid_object("bulk", scene.collection)
    ob.data.attributes.remove(ob.data.attributes["tint"])
    select_only(ob)
    names = ["a", "b", "c"]
    w = np.random.default_rng(3).random((len(ob.data.vertices), 3))
    real, calls = rig._ops, []

    class Failing:
        def call(self, *args):
            calls.append(args)
            if len(calls) == 1:
                return real.call(*args)
            if len(calls) == 2:
                return {'FINISHED'}  # ran, made nothing
            raise RuntimeError("changed")

    for stops_after in (1, 2):  # the second bone: no group made; then, from the start, an error
        calls[:] = [] if stops_after == 1 else [None, None]
        monkeypatch.setattr(rig, "_ops", Failing())
        rig.write_groups(ob, names, w)
        assert np.array_equal(bone_weights(ob, names), w.astype(np.float32))
        assert not [a for a in ob.data.attributes.keys() if a.startswith("vide_weights")]
        assert [g.name for g in ob.vertex_groups] == ["paint"] + names


@pytest.mark.parametrize("faces", ["triangles", "quads and an n-gon"])
def test_the_mesh_is_read_as_blenders_own_vertex_and_loop_triangle_lists_give_it(scene, vide, faces):
    """mesh_in_plane reads positions and, on a mesh of triangles only, the corners' vertices in bulk (the
    position and corner attributes): the same vertices and the same triangles, in the same order, as
    Mesh.vertices' co and Mesh.loop_triangles give; a mesh with other faces goes through the loop triangles."""
    ob = grid_object("read", scene.collection)
    me = ob.data
    select_only(ob)
    if faces != "triangles":
        for p in me.polygons[:3]:
            p.select = True
    bpy.ops.object.mode_set(mode='EDIT')
    if faces == "triangles":
        bpy.ops.mesh.select_all(action='SELECT')
        bpy.ops.mesh.quads_convert_to_tris()
    else:
        bpy.ops.mesh.dissolve_faces()  # the three faces selected in Object Mode: one of 8 corners among quads
    bpy.ops.object.mode_set(mode='OBJECT')
    ob.matrix_world = Matrix.Rotation(0.3, 4, 'X') @ Matrix.Translation((1.0, 2.0, 3.0))
    plane, points, tris = vide.vide_addon.bridge.rig.mesh_in_plane(ob)
    co = np.empty(len(me.vertices) * 3)
    me.vertices.foreach_get("co", co)
    world = co.reshape(-1, 3) @ np.array(ob.matrix_world)[:3, :3].T + np.array(ob.matrix_world)[:3, 3]
    me.calc_loop_triangles()
    expected = np.empty(len(me.loop_triangles) * 3, np.int64)
    me.loop_triangles.foreach_get("vertices", expected)
    assert (faces == "triangles") == (len(me.loops) == 3 * len(me.polygons))
    assert np.array_equal(tris, expected.reshape(-1, 3))
    assert np.array_equal(points, plane.project(world))
