"""Sprite export's pure part: frame ranges, farm chunks, sheet packing and its JSON, PNG and GIF bytes."""

import json
import zlib

import numpy as np
import pytest
from gif_reader import read_gif

from vide_addon.core.errors import VideError
from vide_addon.core.gif import gif_bytes, palette
from vide_addon.core.sprites import chunks, parse_frames, png_bytes, sheet, sheet_json


def test_frame_ranges_parse_and_empty_or_malformed_ones_are_refused():
    assert parse_frames("1-12") == (1, 12) and parse_frames(" 7 ") == (7, 7)
    for bad in ("12-1", "a-b", "1-2-3", ""):
        with pytest.raises(VideError):
            parse_frames(bad)


@pytest.mark.parametrize("parts", [1, 2, 3, 7, 40])
def test_chunks_cover_every_frame_once_within_one_action_each(parts):
    ranges = {"walk": (1, 24), "run": (5, 13), "idle": (0, 0)}
    got = chunks(ranges, parts)
    for name, (start, end) in ranges.items():
        frames = [f for n, a, b in got if n == name for f in range(a, b + 1)]
        assert frames == list(range(start, end + 1))
    sizes = [b - a + 1 for _n, a, b in got]
    assert max(sizes) <= -(-34 // parts), "no chunk is larger than an equal share"


def random_frames(n, h=5, w=7, seed=0):
    return list(np.random.default_rng(seed).integers(0, 256, (n, h, w, 4), dtype=np.uint8))


def test_each_sheet_cell_is_its_frame_and_the_json_rectangles_say_where():
    frames = random_frames(10)
    image, rects = sheet(frames)
    assert image.shape[0] * 2 > image.shape[1] > image.shape[0] / 2, "about square"
    names = [f"walk/{i:04d}.png" for i in range(1, 11)]
    data = json.loads(sheet_json("walk.png", (image.shape[1], image.shape[0]), names, rects, 83, "walk"))
    assert data["meta"]["image"] == "walk.png"
    assert data["meta"]["size"] == {"w": image.shape[1], "h": image.shape[0]}
    assert list(data["frames"]) == names and data["animations"] == {"walk": names}
    for frame, name in zip(frames, names):
        r = data["frames"][name]["frame"]
        assert np.array_equal(image[r["y"]:r["y"] + r["h"], r["x"]:r["x"] + r["w"]], frame)
        assert data["frames"][name]["duration"] == 83
    cells = {(r["frame"]["x"], r["frame"]["y"]) for r in data["frames"].values()}
    assert len(cells) == 10, "no two frames share a cell"


def test_frames_of_different_sizes_are_refused():
    with pytest.raises(VideError):
        sheet(random_frames(2) + random_frames(1, h=6))


def test_png_bytes_hold_the_pixels_exactly():
    pixels = random_frames(1, h=9, w=13)[0]
    data = png_bytes(pixels)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    idat = data[data.index(b"IDAT") + 4:data.index(b"IEND") - 8]
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(9, 1 + 13 * 4)
    assert (rows[:, 0] == 1).all(), "Sub filter"
    undone = np.cumsum(rows[:, 1:].reshape(9, 13, 4), axis=1, dtype=np.uint8)  # Sub undone, wrapping as uint8
    assert np.array_equal(undone, pixels)


def cutout_frames(n=5, size=40):
    """Opaque flat shapes with soft edges moving on a transparent background, as a render gives them."""
    frames = []
    yy, xx = np.mgrid[:size, :size]
    for i in range(n):
        d = np.hypot(yy - 20, xx - 10 - 3 * i) - 8
        alpha = np.clip(0.5 - d, 0, 1)
        rgba = np.zeros((size, size, 4), np.uint8)
        rgba[..., :3] = np.where((yy < 20)[..., None], [200, 40, 30], [30, 60, 220])
        rgba[..., 3] = np.round(alpha * 255)
        frames.append(rgba)
    return frames


def test_the_gif_has_every_frame_its_delay_and_the_shapes_with_their_colours_and_transparency():
    frames = cutout_frames()
    decoded = read_gif(gif_bytes(frames, 8))
    assert len(decoded) == len(frames)
    for (rgba, delay), frame in zip(decoded, frames):
        drawn = frame[..., 3] >= 128
        assert delay == 8
        assert np.array_equal(rgba[..., 3] == 255, drawn) and (rgba[~drawn, 3] == 0).all()
        assert np.array_equal(rgba[drawn, :3], frame[drawn, :3]), "two flat colours are kept exactly"


def test_the_gif_palette_keeps_many_colours_close_and_tables_reset_correctly():
    """Noise has more colours than a GIF palette and fills the LZW table many times over."""
    frames = [f.copy() for f in random_frames(3, h=64, w=80)]
    for f in frames:
        f[..., 3] = 255
    assert len(palette(frames)) == 255
    decoded = read_gif(gif_bytes(frames, 4))
    errors = [np.abs(rgba[..., :3].astype(int) - f[..., :3]).mean() for (rgba, _d), f in zip(decoded, frames)]
    assert len(decoded) == 3 and max(errors) < 16


def test_an_empty_frame_is_a_transparent_frame():
    frames = cutout_frames(2)
    frames.insert(1, np.zeros_like(frames[0]))
    decoded = read_gif(gif_bytes(frames, 10))
    assert len(decoded) == 3 and (decoded[1][0][..., 3] == 0).all()
