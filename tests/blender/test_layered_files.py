"""Import Cutout from layered files (.psd through psd-tools, .ora through zipfile), written here as painting
programs save them: each layer at its place on the canvas, named, stacked in the file's order, hidden layers
hidden, groups as child collections, opacity on the material; bad files refused with the scene unchanged."""

import importlib
import struct

import bpy
import numpy as np
import pytest
from layered import write_ora, write_psd
from stage import front_camera, render

W, H = 64, 48  # canvas


def fill(w, h, rgb, alpha=1.0):
    p = np.zeros((h, w, 4), np.float32)
    p[..., :3] = rgb
    p[..., 3] = alpha
    return p


# Top first, as a painting program lists them; boxes (left, top, right, bottom) in canvas pixels, y down.
HERO = [
    {"name": "front", "pixels": fill(20, 10, (0, 1, 0)), "x": 30, "y": 5},
    {"name": "arm", "children": [
        {"name": "hand", "pixels": fill(8, 8, (0, 0, 1)), "x": 50, "y": 30, "hidden": True},
        {"name": "sleeve", "pixels": fill(16, 12, (0, 0, 1)), "x": 40, "y": 20, "opacity": 0.5}]},
    {"name": "back", "pixels": fill(40, 30, (1, 0, 0)), "x": 10, "y": 10},
    {"name": "spare", "hidden": True, "children": [{"name": "leg", "pixels": fill(6, 8, (1, 1, 0)), "x": 20, "y": 38}]},
]
BOXES = {"front": (30, 5, 50, 15), "hand": (50, 30, 58, 38), "sleeve": (40, 20, 56, 32), "back": (10, 10, 50, 40),
         "leg": (20, 38, 26, 46)}
OVERLAP = (40, 12)  # a canvas pixel (x, y down) that front and back both cover
WRITERS = {"psd": write_psd, "ora": write_ora}


def write(tmp_path, kind, layers, size=(W, H), **kw):
    return WRITERS[kind](tmp_path / f"hero.{kind}", size, layers, **kw)


def import_file(path, **props):
    assert bpy.ops.vide.import_cutout(filepath=str(path), **props) == {'FINISHED'}
    return {ob.name: ob for ob in bpy.data.objects if ob.vide.is_layer}


def canvas_to_world(x, y, size=(W, H)):
    """World (x, z) of a canvas pixel corner (y down) for a canvas of height 1 centred on the origin."""
    k = 1.0 / size[1]
    return np.array([(x - size[0] / 2) * k, (size[1] / 2 - y) * k])


def world_xz(ob):
    """World (x, z) of the object's vertices."""
    co = np.empty(len(ob.data.vertices) * 3)
    ob.data.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    m = np.array(ob.matrix_world)
    return (co @ m[:3, :3].T + m[:3, 3])[:, [0, 2]]


@pytest.mark.parametrize("kind", ["psd", "ora"])
def test_each_layer_lands_named_at_its_canvas_place_in_the_files_order_with_groups_hidden_and_opacity(
        scene, tmp_path, kind):
    layers = import_file(write(tmp_path, kind, HERO))
    assert sorted(layers) == ["back", "front", "hand", "leg", "sleeve"]
    order = sorted(layers, key=lambda n: -layers[n].vide.draw_order)
    assert order == ["front", "hand", "sleeve", "back", "leg"], "the file's top layer is in front"
    bpy.context.view_layer.update()
    k = 1.0 / H
    for name, (left, top, right, bottom) in BOXES.items():
        xz = world_xz(layers[name])
        want_min, want_max = canvas_to_world(left, bottom), canvas_to_world(right, top)
        # Vectorized with the default 1 px contour tolerance, which only ever strays outwards.
        assert np.all(np.abs(xz.min(axis=0) - want_min) <= 1.01 * k), (name, xz.min(axis=0), want_min)
        assert np.all(np.abs(xz.max(axis=0) - want_max) <= 1.01 * k), (name, xz.max(axis=0), want_max)
    root = layers["front"].users_collection[0]
    assert root.name == "hero" and [c.name for c in root.children] == ["arm", "spare"], "groups in order"
    assert {ob.name for ob in root.children["arm"].objects} == {"hand", "sleeve"}
    assert layers["back"].users_collection[0] == root
    for hidden in ("hand", "leg"):  # leg: its group is hidden
        ob = layers[hidden]
        assert ob.hide_render and not ob.visible_get(), f"{hidden} hidden in the file: hidden in viewport and render"
    assert all(not layers[n].hide_render and layers[n].visible_get() for n in ("front", "sleeve", "back"))
    opacity = layers["sleeve"].active_material.node_tree.nodes["Layer Opacity"]
    assert opacity.inputs[1].default_value == pytest.approx(0.5, abs=1 / 255)
    assert opacity.outputs[0].links[0].to_socket.name == "Alpha"
    assert opacity.inputs[0].links[0].from_node.type == 'TEX_IMAGE'
    assert "Layer Opacity" not in layers["back"].active_material.node_tree.nodes
    assert layers["back"].vide.image.packed_file is not None, "the layers live in the .blend, not in a temp folder"


@pytest.mark.parametrize("kind", ["psd", "ora"])
def test_a_front_render_shows_the_files_top_layer_where_layers_overlap(scene, tmp_path, kind):
    import_file(write(tmp_path, kind, HERO))
    front_camera(size=64, ortho_scale=1.5)
    image = render(tmp_path / "front.png")
    x, z = canvas_to_world(OVERLAP[0] + 0.5, OVERLAP[1] + 0.5)
    px = image[int((z / 1.5 + 0.5) * 64), int((x / 1.5 + 0.5) * 64)]
    assert px[1] > 0.8 and px[0] < 0.2 and px[3] > 0.9, f"green (front) over red (back): {px}"


def test_16_and_32_bit_files_are_converted_to_8_bits(scene, tmp_path, vide):
    for depth in (16, 32):
        layers = import_file(write_psd(tmp_path / f"deep{depth}.psd", (W, H), HERO, depth=depth))
        px = np.empty(np.prod(layers["back"].vide.image.size) * 4, np.float32)
        layers["back"].vide.image.pixels.foreach_get(px)
        assert np.allclose(px.reshape(-1, 4)[0], (1, 0, 0, 1), atol=1 / 255), depth
        bpy.ops.wm.read_homefile(use_empty=True)


def test_the_file_list_names_what_is_not_imported_as_it_is(scene, tmp_path, vide):
    """Blend modes, and layers entirely outside the canvas, are listed in one warning."""
    layers = [dict(HERO[0], blend="svg:multiply"), {"name": "away", "pixels": fill(5, 5, (1, 1, 1)), "x": 70,
                                                    "y": 10}, HERO[2]]
    reader = importlib.import_module(f"{vide.__name__}.vide_addon.bridge.layered_file")
    canvas = reader.read_layered(str(write(tmp_path, "ora", layers)), str(tmp_path))
    assert [layer.name for layer in canvas.root.layers()] == ["front", "back"]
    assert canvas.notes == ["blend mode shown as normal: front (multiply)",
                            "skipped, entirely outside the canvas: away"]
    assert sorted(import_file(tmp_path / "hero.ora")) == ["back", "front"]


def test_a_10000_px_canvas_imports_with_bounded_memory(scene, tmp_path):
    """A 4,500 px layer on a 10,000 px canvas: nothing of the canvas's size is made, the layer is read one
    channel at a time and reduced to 4,096 px. Reading it adds less to the process's peak than one 10,000 px
    RGBA canvas at 8 bits would (400 MB); measured 184 MB (a 10,000 px layer: 419 MB, where psd-tools reading
    it whole asks for 1.5 GB)."""
    big = np.zeros((4500, 4500, 4), np.uint8)
    big[100:-100, 100:-100] = (255, 0, 0, 255)
    path = write_psd(tmp_path / "big.psd", (10000, 10000), [
        {"name": "small", "pixels": fill(60, 50, (0, 1, 0)), "x": 9000, "y": 9000},
        {"name": "whole", "pixels": big, "x": 2500, "y": 2500}])
    del big
    with open("/proc/self/clear_refs", "w") as f:  # resets the peak (VmHWM) to what the process holds now
        f.write("5")
    start = peak_rss()
    layers = import_file(path, vectorize=False)
    grown = peak_rss() - start
    assert grown < 300e6, f"peak grew by {grown / 1e6:.0f} MB"
    assert max(layers["whole"].active_material.node_tree.nodes["Image Texture"].image.size) == 4096
    bpy.context.view_layer.update()
    size = (10000, 10000)
    for name, box in (("whole", (2500, 2500, 7000, 7000)), ("small", (9000, 9000, 9060, 9050))):
        xz = world_xz(layers[name])  # the plane itself: exactly the layer's box
        assert np.allclose(xz.min(axis=0), canvas_to_world(box[0], box[3], size), atol=1e-6)
        assert np.allclose(xz.max(axis=0), canvas_to_world(box[2], box[1], size), atol=1e-6)


def peak_rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


# ---------------------------------------------------------------- bad input

def state():
    return tuple(sorted(getattr(bpy.data, kind).keys()) for kind in
                 ("objects", "images", "collections", "materials", "meshes"))


def refused(path, match):
    before = state()
    with pytest.raises(RuntimeError, match=match):
        bpy.ops.vide.import_cutout(filepath=str(path))
    assert state() == before, "the scene is as it was"


def test_damaged_files_are_refused(scene, tmp_path):
    psd = write(tmp_path, "psd", HERO)
    cut = tmp_path / "cut.psd"
    cut.write_bytes(psd.read_bytes()[:len(psd.read_bytes()) // 2])
    refused(cut, "'cut.psd' is not a Photoshop file that can be read \\(damaged or cut short")
    ora = write(tmp_path, "ora", HERO)
    cut = tmp_path / "cut.ora"
    cut.write_bytes(ora.read_bytes()[:len(ora.read_bytes()) // 2])
    refused(cut, "'cut.ora' is not an OpenRaster file that can be read")
    (tmp_path / "text.psd").write_text("not a picture")
    refused(tmp_path / "text.psd", "'text.psd' is not a Photoshop file")


@pytest.mark.parametrize("mode, name", [("CMYK", "CMYK"), ("LAB", "Lab"), ("1", "Bitmap"), ("P", "Indexed")])
def test_colour_modes_other_than_rgb_and_grey_are_refused(scene, tmp_path, mode, name):
    if mode == "P":  # psd-tools writes no indexed file: an RGB one with the header's mode set to Indexed
        path = write_psd(tmp_path / "indexed.psd", (W, H), HERO[:1])
        data = bytearray(path.read_bytes())
        data[24:26] = struct.pack(">H", 2)
        path.write_bytes(bytes(data))
    else:
        path = write_psd(tmp_path / f"{mode}.psd", (W, H), HERO[:1], mode=mode,
                         depth=1 if mode == "1" else 8)
    refused(path, f"is in {name} mode: VIDE reads RGB and Grayscale files. Convert it to RGB")


def test_a_file_without_pixel_layers_is_refused(scene, tmp_path):
    refused(write(tmp_path, "psd", [{"name": "empty group", "children": []}]), "'hero.psd' has no pixel layer")
    outside = [{"name": "away", "pixels": fill(5, 5, (1, 1, 1)), "x": -20, "y": 10}]
    refused(write(tmp_path, "ora", outside), "no pixel layer to import; skipped, entirely outside the canvas: away")
