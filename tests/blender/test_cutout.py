"""Import Cutout and draw order in real Blender: layers keep their place on the canvas, stack in name order,
and the (keyed) draw order decides what Workbench and Cycles render in front."""

import bpy
import numpy as np
import pytest
from helpers import mesh_in_pixels, pixel_to_world, rgba, select_only
from stage import front_camera, render, save_png

CANVAS = (48, 64)  # h, w


def rect(x0, x1, y0, y1):
    a = np.zeros(CANVAS, np.float32)
    a[y0:y1, x0:x1] = 1
    return a


def write_layers(folder, layers):
    """PNG files {name: (alpha, rgb)} on one canvas, as a painting program exports them."""
    folder.mkdir(exist_ok=True)
    for name, (alpha, color) in layers.items():
        px = rgba(alpha, color)
        px[..., :3] = color
        save_png(folder / name, px)
    return folder


RED_BLUE = {"01_red.png": (rect(10, 40, 10, 30), (1.0, 0.0, 0.0)),
            "02_blue.png": (rect(25, 55, 15, 40), (0.0, 0.0, 1.0))}
OVERLAP = (32, 22)  # a canvas pixel (x, y) both layers cover


def import_cutout(folder, names=None, **props):
    files = [{"name": n} for n in (names or [])]
    assert bpy.ops.vide.import_cutout(directory=str(folder) + "/", files=files, **props) == {'FINISHED'}
    return sorted((ob for ob in bpy.data.objects if ob.vide.is_layer), key=lambda o: o.vide.draw_order)


def front_colour(image, world_point):
    """The rendered colour at a world point, for the front camera set up by `front_camera`."""
    sc = bpy.context.scene
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    u, v, _ = world_to_camera_view(sc, sc.camera, Vector(world_point))
    h, w = image.shape[:2]
    return image[int(v * h), int(u * w)]


def test_layers_are_stacked_in_name_order_each_at_its_place_on_the_canvas(scene, tmp_path):
    folder = write_layers(tmp_path / "hero", RED_BLUE)
    red, blue = import_cutout(folder)  # no file chosen: every PNG in the folder
    assert (red.name, blue.name) == ("01_red", "02_blue")
    assert [red.vide.draw_order, blue.vide.draw_order] == [0, 1]
    assert red.users_collection[0].name == "hero" == blue.users_collection[0].name
    bpy.context.view_layer.update()
    corner_r = pixel_to_world(red, CANVAS, [[0, 0], [64, 48]])
    corner_b = pixel_to_world(blue, CANVAS, [[0, 0], [64, 48]])
    step = corner_b - corner_r
    # The same canvas pixel lies at the same place, but for the gap towards the viewer (-Y) between layers.
    assert np.allclose(step[:, [0, 2]], 0, atol=1e-6)
    assert np.allclose(step[:, 1], -0.001, atol=1e-6)
    pts, _tris = mesh_in_pixels(red, CANVAS)  # vectorized: the art's outline, not the whole canvas
    assert np.allclose(pts.min(axis=0), [10, 10], atol=1.01) and np.allclose(pts.max(axis=0), [40, 30], atol=1.01)


@pytest.mark.parametrize("engine", ["BLENDER_WORKBENCH", "CYCLES", "EEVEE"])
def test_draw_order_decides_what_renders_in_front_and_can_be_moved(scene, tmp_path, engine):
    """EEVEE compiles its shaders on the CPU here: about 25 s, the slowest test but one."""
    folder = write_layers(tmp_path / "hero", RED_BLUE)
    red, blue = import_cutout(folder, ["02_blue.png", "01_red.png"])
    front_camera(size=64 if engine != "EEVEE" else 32, ortho_scale=1.5)
    sc = bpy.context.scene
    engines = {i.identifier for i in sc.render.bl_rna.properties["engine"].enum_items}
    sc.render.engine = engine if engine != "EEVEE" else ({"BLENDER_EEVEE_NEXT", "BLENDER_EEVEE"} & engines).pop()
    if engine == "EEVEE":
        sc.eevee.taa_render_samples = 1
    if engine == "CYCLES":
        sc.cycles.samples = 1
        sc.cycles.device = 'CPU'
    if engine != "BLENDER_WORKBENCH":
        sc.world = bpy.data.worlds.new("white")  # some light, or the layers render black
        sc.world.color = (1, 1, 1)
    point = pixel_to_world(red, CANVAS, [OVERLAP])[0]
    first = front_colour(render(tmp_path / "blue_on_top.png"), point)
    assert first[2] > 3 * first[0] + 0.05, f"blue is drawn over red: {first}"
    select_only(blue)
    assert bpy.ops.vide.draw_order(direction='DOWN') == {'FINISHED'}
    assert [red.vide.draw_order, blue.vide.draw_order] == [1, 0]
    second = front_colour(render(tmp_path / "red_on_top.png"), point)
    assert second[0] > 3 * second[2] + 0.05, f"now red is over blue: {second}"


def test_a_keyed_draw_order_changes_the_render_at_the_key(scene, tmp_path):
    folder = write_layers(tmp_path / "hero", RED_BLUE)
    red, blue = import_cutout(folder)
    front_camera(size=64, ortho_scale=1.5)
    sc = bpy.context.scene
    for ob in (red, blue):
        ob.keyframe_insert("vide.draw_order", frame=1)
    sc.frame_set(10)
    select_only(blue)
    bpy.ops.vide.draw_order(direction='DOWN')  # keys both, since draw order is animated
    point = pixel_to_world(red, CANVAS, [OVERLAP])[0]
    colours = {}
    for frame in (1, 5, 10, 20):
        sc.frame_set(frame)
        colours[frame] = front_colour(render(tmp_path / f"f{frame}.png"), point)
    assert colours[1][2] > colours[1][0] + 0.3 and colours[5][2] > colours[5][0] + 0.3, "blue in front until the key"
    assert colours[10][0] > colours[10][2] + 0.3 and colours[20][0] > colours[20][2] + 0.3, "red in front from it"


def snapshot():
    return (sorted(bpy.data.objects.keys()), sorted(bpy.data.images.keys()), sorted(bpy.data.collections.keys()),
            sorted(bpy.data.materials.keys()), sorted(bpy.data.meshes.keys()))


def fails_cleanly(folder, names, match):
    before = snapshot()
    with pytest.raises(RuntimeError, match=match):
        bpy.ops.vide.import_cutout(directory=str(folder) + "/", files=[{"name": n} for n in names])
    assert snapshot() == before


def test_layers_of_different_canvas_sizes(scene, tmp_path):
    folder = write_layers(tmp_path / "mixed", RED_BLUE)
    save_png(folder / "03_big.png", rgba(np.ones((96, 64), np.float32)))
    fails_cleanly(folder, ["01_red.png", "02_blue.png", "03_big.png"], "one canvas size: .*03_big.png 64x96")


def test_a_file_that_is_no_image_among_the_layers(scene, tmp_path):
    folder = write_layers(tmp_path / "notes", RED_BLUE)
    (folder / "readme.txt").write_text("not a layer")
    fails_cleanly(folder, ["01_red.png", "readme.txt"], "Not a PNG layer: readme.txt")
    (folder / "broken.png").write_bytes(b"not a png at all")
    fails_cleanly(folder, ["01_red.png", "broken.png"], "'broken.png' is not an image")


def test_an_empty_folder(scene, tmp_path):
    (tmp_path / "empty").mkdir()
    fails_cleanly(tmp_path / "empty", [], "no PNG file")


def test_moving_the_front_layer_forward_says_it_is_already_in_front(scene, tmp_path):
    folder = write_layers(tmp_path / "hero", RED_BLUE)
    _red, blue = import_cutout(folder, vectorize=False)
    select_only(blue)
    assert bpy.ops.vide.draw_order(direction='UP') == {'CANCELLED'}
    assert blue.vide.draw_order == 1


def test_png_layers_stack_in_natural_name_order(scene, tmp_path):
    """layer2 comes before layer10 (digits compare as numbers), as painting programs number their exports."""
    names = ["layer10.png", "layer1.png", "layer2.png", "Layer11.png"]
    folder = write_layers(tmp_path / "numbered", {n: (rect(10, 40, 10, 30), (1.0, 0.0, 0.0)) for n in names})
    layers = import_cutout(folder, vectorize=False)
    assert [ob.name for ob in layers] == ["layer1", "layer2", "layer10", "Layer11"]
