"""Sprite swaps: drawings that share one place in the stack, exactly one shown, chosen by one keyframeable
property that the viewport and renders follow; made from a `[swap]` group on import or with Make Swap."""

import bpy
import numpy as np
import pytest
from helpers import select_only
from layered import write_ora
from stage import front_camera, render, save_png
from test_layered_files import canvas_to_world, fill

W, H = 64, 48
FACE = [
    {"name": "mouth [swap]", "children": [
        {"name": "open", "pixels": fill(20, 20, (1, 1, 0)), "x": 20, "y": 14},
        {"name": "closed", "pixels": fill(20, 20, (1, 0, 1)), "x": 20, "y": 14, "hidden": True}]},
    {"name": "face", "pixels": fill(40, 30, (1, 0, 0)), "x": 12, "y": 9},
]
MOUTH = (30, 24)  # canvas pixel (y down) inside both mouth drawings


def shown(*drawings):
    return [ob.name for ob in drawings if ob.visible_get() and not ob.hide_render]


@pytest.mark.parametrize("engine", ["BLENDER_WORKBENCH", "CYCLES"])
def test_a_swap_keyed_to_change_at_frame_5_renders_the_other_drawing_from_frame_5(scene, tmp_path, engine):
    assert bpy.ops.vide.import_cutout(filepath=str(write_ora(tmp_path / "face.ora", (W, H), FACE))) == {'FINISHED'}
    swap, opened, closed = (bpy.data.objects[n] for n in ("mouth", "open", "closed"))
    assert swap.vide.is_swap and opened.vide.swap == swap == closed.vide.swap
    assert opened.vide.draw_order == closed.vide.draw_order > bpy.data.objects["face"].vide.draw_order
    assert shown(opened, closed) == ["open"], "one drawing shown: the one visible in the file"
    assert opened.users_collection[0].name == "mouth"
    sc = bpy.context.scene
    swap.vide.swap_choice = "0"
    swap.keyframe_insert("vide.swap_choice", frame=1)
    swap.vide.swap_choice = "1"
    swap.keyframe_insert("vide.swap_choice", frame=5)
    front_camera(size=32, ortho_scale=1.5)
    sc.render.engine = engine
    if engine == "CYCLES":
        sc.cycles.samples = 1
        sc.cycles.device = 'CPU'
        sc.world = bpy.data.worlds.new("white")
        sc.world.color = (1, 1, 1)
    x, z = canvas_to_world(*MOUTH)
    colours = {}
    for frame in (1, 4, 5, 8):
        sc.frame_set(frame)
        colours[frame] = render(tmp_path / f"f{frame}.png")[int((z / 1.5 + 0.5) * 32), int((x / 1.5 + 0.5) * 32)]
        assert shown(opened, closed) == (["open"] if frame < 5 else ["closed"]), f"viewport at frame {frame}"
    for frame in (1, 4):
        assert colours[frame][1] > 3 * colours[frame][2] + 0.05, f"yellow (open) at frame {frame}: {colours[frame]}"
    for frame in (5, 8):
        assert colours[frame][2] > 3 * colours[frame][1] + 0.05, f"magenta (closed) at frame {frame}: {colours[frame]}"


def png_layers(folder, names):
    folder.mkdir()
    for i, name in enumerate(names):
        px = np.zeros((H, W, 4), np.float32)
        px[10 + i:30 + i, 10 + 4 * i:40 + 4 * i] = (i / 4, 0.5, 1 - i / 4, 1)
        save_png(folder / f"{name}.png", px)
    assert bpy.ops.vide.import_cutout(directory=str(folder) + "/", files=[], vectorize=False) == {'FINISHED'}
    return [bpy.data.objects[n] for n in names]


def test_make_swap_joins_the_selected_layers_in_one_place_that_moves_as_one_step(scene, tmp_path):
    a, b, c, d = png_layers(tmp_path / "hero", ["a", "b", "c", "d"])
    assert [ob.vide.draw_order for ob in (a, b, c, d)] == [0, 1, 2, 3]
    select_only(c, b)
    assert bpy.ops.vide.make_swap() == {'FINISHED'}
    swap = c.vide.swap
    assert swap is not None and b.vide.swap == swap and swap.vide.is_swap
    assert b.vide.draw_order == c.vide.draw_order == 2
    assert shown(b, c) == ["c"], "the active layer is shown"
    swap.vide.swap_choice = "1"
    bpy.context.view_layer.update()
    assert shown(b, c) == ["b"]
    select_only(a)
    assert bpy.ops.vide.draw_order(direction='UP') == {'FINISHED'}
    assert [ob.vide.draw_order for ob in (a, b, c, d)] == [2, 0, 0, 3], "the swap moved back as one step"
    select_only(c)
    assert bpy.ops.vide.draw_order(direction='UP') == {'FINISHED'}
    assert [ob.vide.draw_order for ob in (a, b, c, d)] == [0, 2, 2, 3]
    b.vide.draw_order = 5  # the Draw Order field of one drawing places the whole swap
    assert [ob.vide.draw_order for ob in (a, b, c, d)] == [0, 5, 5, 3]


def test_make_swap_needs_two_layers_not_yet_in_a_swap(scene, tmp_path):
    a, b, c, _d = png_layers(tmp_path / "hero", ["a", "b", "c", "d"])
    select_only(a)
    with pytest.raises(RuntimeError, match="Select two or more layers"):
        bpy.ops.vide.make_swap()
    select_only(b, a)
    assert bpy.ops.vide.make_swap() == {'FINISHED'}
    select_only(c, b)
    with pytest.raises(RuntimeError, match="Already in a swap: b"):
        bpy.ops.vide.make_swap()


def test_the_layers_panel_lists_each_swap_with_its_drawings_and_ticks_the_shown_one(scene, tmp_path, vide):
    """The panel's draw code run on a recording layout: the swap is one row, its drawings under it, the shown
    one ticked, and the choice offered as a field (that can be keyed)."""
    from unittest import mock

    assert bpy.ops.vide.import_cutout(filepath=str(write_ora(tmp_path / "face.ora", (W, H), FACE)),
                                      vectorize=False) == {'FINISHED'}
    select_only(bpy.data.objects["closed"])
    panel = mock.MagicMock()
    bpy.types.VIDE_PT_layers.draw(panel, bpy.context)
    column = panel.layout.row.return_value.column.return_value
    labels = [(c.kwargs["text"].strip(), c.kwargs["icon"]) for c in column.label.call_args_list]
    assert labels == [("1  mouth", 'UV_SYNC_SELECT'), ("open", 'CHECKMARK'), ("closed  (active)", 'BLANK1'),
                      ("0  face", 'BLANK1')]
    fields = [c.args for c in panel.layout.prop.call_args_list]
    assert (bpy.data.objects["mouth"].vide, "swap_choice") in fields
