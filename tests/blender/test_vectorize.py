"""Vectorize Image in real Blender: shape fidelity, mesh quality, UVs, renders, undo and settings."""

import bpy
import numpy as np
import pytest
from helpers import (border_shape, boundary_edges, boundary_loops, components, covered_pixels,
                     image_plane, islands, legs, mesh_arrays, mesh_in_pixels, min_angles, rgba, ring,
                     save_png, select_only, signed_areas, soft_disk)
from scipy import ndimage
from stage import front_camera, render

SHAPES = {"legs": legs, "ring": ring, "islands": islands, "border": border_shape}


def vectorized(tmp_path, alpha, name="shape", **settings):
    ob = image_plane(tmp_path, alpha, name)
    select_only(ob)
    assert bpy.ops.vide.vectorize_image(**settings) == {'FINISHED'}
    return ob


@pytest.mark.parametrize("name", SHAPES)
def test_every_opaque_pixel_is_inside_the_mesh(scene, tmp_path, name):
    alpha = SHAPES[name]()
    pts, tris = mesh_in_pixels(vectorized(tmp_path, alpha), alpha.shape)
    covered = covered_pixels(pts, tris, alpha.shape)
    missed = (alpha >= 0.5) & ~covered
    assert missed.sum() == 0, f"{missed.sum()} opaque pixels outside the mesh"


@pytest.mark.parametrize("name", SHAPES)
def test_excess_area_is_bounded_by_outline_length_times_tolerance(scene, tmp_path, name):
    alpha = SHAPES[name]()
    tolerance = 1.0
    pts, tris = mesh_in_pixels(vectorized(tmp_path, alpha, contour_tolerance=tolerance), alpha.shape)
    mesh_area = signed_areas(pts, tris).sum()
    opaque = float((alpha >= 0.5).sum())
    e = boundary_edges(tris)
    perimeter = np.hypot(*(pts[e[:, 1]] - pts[e[:, 0]]).T).sum()
    excess = mesh_area - opaque
    assert excess >= -1e-6 * opaque
    # Marching squares cuts pixel corners by up to half a pixel; simplification adds at most the tolerance.
    assert excess <= (tolerance + 0.5) * perimeter, (excess, perimeter)


def test_legs_two_pixels_apart_stay_separate(scene, tmp_path):
    alpha = legs(gap=2)
    pts, tris = mesh_in_pixels(vectorized(tmp_path, alpha), alpha.shape)
    below_hip = tris[pts[tris].mean(axis=1)[:, 1] < 115]
    assert components(below_hip) == 2
    gap_x = alpha.shape[1] // 2
    centroids = pts[below_hip].mean(axis=1)
    xs = pts[below_hip][:, :, 0]
    spans_gap = (xs.min(axis=1) < gap_x - 0.5) & (xs.max(axis=1) > gap_x + 0.5)
    assert not spans_gap.any(), centroids[spans_gap]


def test_ring_keeps_its_hole_and_islands_stay_apart(scene, tmp_path):
    alpha = ring()
    pts, tris = mesh_in_pixels(vectorized(tmp_path, alpha), alpha.shape)
    assert boundary_loops(tris) == 2
    assert not covered_pixels(pts, tris, alpha.shape)[64, 64], "the hole's centre is covered"

    scene_islands = islands()
    _, tris = mesh_in_pixels(vectorized(tmp_path, scene_islands, "islands"), scene_islands.shape)
    assert components(tris) == 3


def test_keep_holes_off_fills_the_hole(scene, tmp_path):
    alpha = ring()
    pts, tris = mesh_in_pixels(vectorized(tmp_path, alpha, keep_holes=False), alpha.shape)
    assert boundary_loops(tris) == 1
    assert covered_pixels(pts, tris, alpha.shape)[64, 64]


def test_specks_below_min_island_area_are_dropped(scene, tmp_path):
    alpha = islands()
    alpha[5:7, 5:7] = 1  # a 4 px² speck
    _, tris = mesh_in_pixels(vectorized(tmp_path, alpha, min_island_area=8), alpha.shape)
    assert components(tris) == 3
    _, tris = mesh_in_pixels(vectorized(tmp_path, alpha, min_island_area=1), alpha.shape)
    assert components(tris) == 4


def test_border_shape_stays_inside_the_image(scene, tmp_path):
    alpha = border_shape()
    pts, _ = mesh_in_pixels(vectorized(tmp_path, alpha), alpha.shape)
    h, w = alpha.shape
    assert pts.min() >= -1e-4 and pts[:, 0].max() <= w + 1e-4 and pts[:, 1].max() <= h + 1e-4
    assert np.isclose(pts[:, 0].min(), 0, atol=1e-4) and np.isclose(pts[:, 0].max(), w, atol=1e-3)


@pytest.mark.parametrize("tolerance", [0.5, 1.0, 3.0])
def test_outline_within_tolerance_of_the_true_contour_and_never_inside(scene, tmp_path, tolerance):
    radius = 40.0
    alpha = soft_disk(radius=radius)  # its 0.5 contour is the circle r = 40
    pts, tris = mesh_in_pixels(vectorized(tmp_path, alpha, contour_tolerance=tolerance), alpha.shape)
    e = boundary_edges(tris)
    t = np.linspace(0, 1, 11)[:, None, None]
    samples = (pts[e[:, 0]] + t * (pts[e[:, 1]] - pts[e[:, 0]])).reshape(-1, 2)
    r = np.hypot(*(samples - 64).T)
    interpolation_error = 0.02  # linear interpolation of alpha between pixel centres
    assert r.min() >= radius - interpolation_error, "the outline cuts into the disk"
    assert r.max() <= radius + tolerance + interpolation_error


def test_triangles_are_well_shaped_and_none_is_flipped(scene, tmp_path):
    for name, alpha in (("legs", legs()), ("ring", ring()), ("disk", soft_disk())):
        ob = vectorized(tmp_path, alpha, name)
        pts, tris = mesh_in_pixels(ob, alpha.shape)
        _, raw_tris, uv = mesh_arrays(ob)
        areas = signed_areas(uv * alpha.shape[::-1], raw_tris)
        assert (areas > 1e-6).all() or (areas < -1e-6).all(), "all triangles wind the same way, none degenerate"
        sharp = sharp_corner_vertices(pts, tris)
        angles = min_angles(pts, tris)
        away = ~np.isin(tris, sharp).any(axis=1)
        assert angles[away].min() >= 20.0, angles[away].min()


def sharp_corner_vertices(pts, tris, limit=60.0):
    """Boundary vertices whose inside angle is below `limit` degrees."""
    e = boundary_edges(tris)
    nxt = dict(zip(e[:, 0], e[:, 1]))
    prv = dict(zip(e[:, 1], e[:, 0]))
    out = []
    for v in nxt:
        d_in, d_out = pts[v] - pts[prv[v]], pts[nxt[v]] - pts[v]
        turn = np.arctan2(d_in[0] * d_out[1] - d_in[1] * d_out[0], d_in @ d_out)
        if np.degrees(np.pi - turn) < limit:
            out.append(v)
    return np.array(out, int)


def test_default_spacing_gives_a_1024px_character_a_few_thousand_vertices(scene, tmp_path):
    alpha = np.zeros((1024, 1024), np.float32)
    xx, yy = np.meshgrid(np.arange(1024) + 0.5, np.arange(1024) + 0.5)
    alpha[np.hypot((xx - 512) / 300, (yy - 512) / 450) < 1] = 1  # an upright blob covering ~40 %
    ob = vectorized(tmp_path, alpha)
    assert 1500 <= len(ob.data.vertices) <= 6000, len(ob.data.vertices)


def test_uv_maps_every_vertex_to_its_own_image_pixel(scene, tmp_path):
    ob = image_plane(tmp_path, ring())
    corners = {tuple(np.round(uv, 6)): np.array(ob.data.vertices[loop.vertex_index].co)
               for loop, uv in zip(ob.data.loops, (d.uv for d in ob.data.uv_layers.active.data))}
    origin, u_end, v_end = corners[(0.0, 0.0)], corners[(1.0, 0.0)], corners[(0.0, 1.0)]
    select_only(ob)
    bpy.ops.vide.vectorize_image()
    co, _, uv = mesh_arrays(ob)
    expected = origin + uv[:, :1] * (u_end - origin) + uv[:, 1:] * (v_end - origin)
    assert np.abs(co - expected).max() < 1e-5


@pytest.mark.parametrize("transform", ["plain", "rotated_scaled", "negative_scale"])
def test_render_before_and_after_shows_the_same_picture(scene, tmp_path, transform):
    front_camera()
    ob = image_plane(tmp_path, ring())
    if transform == "rotated_scaled":
        ob.rotation_euler.y = 0.6
        ob.scale = (0.7, 1.0, 0.9)
        ob.location.x = 0.1
    elif transform == "negative_scale":
        ob.scale.x = -1.0
    before = render(tmp_path / "before.png")
    select_only(ob)
    bpy.ops.vide.vectorize_image()
    after = render(tmp_path / "after.png")

    solid_a, solid_b = before[..., 3] > 0.99, after[..., 3] > 0.99
    both = solid_a & solid_b
    assert both.sum() > 1000
    assert np.abs(before[both, :3] - after[both, :3]).max() < 2.5 / 255, "the same texture at the same place"
    # The silhouette agrees to within one render pixel (texture filtering against a geometric edge).
    seen_a, seen_b = before[..., 3] > 0.5, after[..., 3] > 0.5
    assert not (seen_a & ~ndimage.binary_dilation(seen_b)).any()
    assert not (seen_b & ~ndimage.binary_dilation(seen_a)).any()


def test_object_name_material_transform_parent_and_modifiers_are_kept(scene, tmp_path):
    parent = bpy.data.objects.new("parent", None)
    scene.collection.objects.link(parent)
    ob = image_plane(tmp_path, ring(), name="hero")
    ob.parent = parent
    ob.location = (1, 2, 3)
    ob.modifiers.new("wave", 'WAVE')
    material = ob.active_material
    bpy.context.view_layer.update()
    matrix = ob.matrix_world.copy()
    select_only(ob)
    bpy.ops.vide.vectorize_image()
    ob = bpy.data.objects["hero"]
    bpy.context.view_layer.update()
    assert ob.parent == parent and ob.active_material == material and ob.data.name == "hero"
    assert [m.name for m in ob.modifiers] == ["wave"]
    assert np.allclose(np.array(ob.matrix_world), np.array(matrix))
    assert ob.vide.image.name == "hero.png" and ob.vide.settings.alpha_threshold == 0.5
    assert len(bpy.data.meshes) == 1, "the replaced plane mesh is not left behind"


def test_vectorizing_again_starts_from_the_image(scene, tmp_path):
    alpha = ring()
    ob = vectorized(tmp_path, alpha, vertex_spacing=12)
    coarse = len(ob.data.vertices)
    bpy.ops.vide.vectorize_image(vertex_spacing=4)
    fine_again = mesh_in_pixels(ob, alpha.shape)
    ob2 = vectorized(tmp_path, alpha, vertex_spacing=4)
    fine_fresh = mesh_in_pixels(ob2, alpha.shape)
    assert len(ob.data.vertices) > coarse
    assert len(fine_again[0]) == len(fine_fresh[0])
    assert np.allclose(np.sort(fine_again[0], axis=0), np.sort(fine_fresh[0], axis=0), atol=1e-3)
    assert ob.vide.settings.vertex_spacing == 4


def test_many_planes_at_once(scene, tmp_path):
    obs = [image_plane(tmp_path, shape(), name=name) for name, shape in SHAPES.items()]
    select_only(*obs)
    assert bpy.ops.vide.vectorize_image() == {'FINISHED'}
    assert all(ob.vide.image is not None and len(ob.data.vertices) > 4 for ob in obs)


def test_undo_restores_the_plane(scene, tmp_path):
    ob = image_plane(tmp_path, ring(), name="undo_me")
    select_only(ob)
    bpy.ops.ed.undo_push(message="before")
    bpy.ops.vide.vectorize_image()
    bpy.ops.ed.undo_push(message="after")
    assert len(bpy.data.objects["undo_me"].data.vertices) > 4
    bpy.ops.ed.undo()
    ob = bpy.data.objects["undo_me"]
    assert len(ob.data.vertices) == 4 and ob.vide.image is None


def test_operator_has_redo_panel_and_remembers_settings_in_the_scene(scene, tmp_path):
    op = bpy.types.VIDE_OT_vectorize_image
    assert {'REGISTER', 'UNDO'} <= op.bl_options
    ob = image_plane(tmp_path, ring())
    select_only(ob)
    bpy.ops.vide.vectorize_image(alpha_threshold=0.3, margin=2)
    assert scene.vide_vectorize.alpha_threshold == pytest.approx(0.3)
    assert scene.vide_vectorize.margin == pytest.approx(2)


def test_margin_grows_the_outline(scene, tmp_path):
    radius = 40.0
    alpha = soft_disk(radius=radius)
    pts, tris = mesh_in_pixels(vectorized(tmp_path, alpha, margin=4, contour_tolerance=0.5), alpha.shape)
    r = np.hypot(*(pts[np.unique(boundary_edges(tris))] - 64).T)
    assert r.min() >= radius + 3.0 and r.max() <= radius + 4.0 + 1.5


def test_add_image_imports_and_vectorizes_in_one_step(scene, tmp_path):
    path = save_png(tmp_path / "sprite.png", rgba(ring()))
    assert bpy.ops.vide.add_image(filepath=str(path)) == {'FINISHED'}
    ob = bpy.context.active_object
    assert ob.name == "sprite" and ob.vide.image is not None and len(ob.data.vertices) > 4
    normal_world = ob.matrix_world.to_3x3() @ ob.data.polygons[0].normal
    assert normal_world.y < -0.99, "faces the front view"
