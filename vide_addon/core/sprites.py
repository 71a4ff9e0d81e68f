"""Sprite export without Blender: frame ranges and farm chunks, the sprite sheet and its TexturePacker "JSON
hash", and PNG bytes. Everything here is deterministic, so sheets merged from frames rendered on many machines
are the same bytes as one run's."""

import json
import math
import struct
import zlib

import numpy as np

from .errors import VideError


def parse_frames(text):
    """'A-B' (or 'A') as the inclusive range (A, B); an empty range is an error."""
    parts = text.strip().split("-")
    try:
        if len(parts) == 1:
            start = end = int(parts[0])
        elif len(parts) == 2:
            start, end = int(parts[0]), int(parts[1])
        else:
            raise ValueError
    except ValueError:
        raise VideError(f"frame range '{text}' is not A-B (for example 1-12)") from None
    if end < start:
        raise VideError(f"frame range '{text}' is empty: {end} comes before {start}")
    return start, end


def chunks(ranges, parts):
    """Splits {name: (start, end)} into about `parts` pieces of equal frame counts, never across two names:
    [(name, start, end), ...] in order."""
    total = sum(end - start + 1 for start, end in ranges.values())
    size = max(1, math.ceil(total / max(1, parts)))
    out = []
    for name, (start, end) in ranges.items():
        pieces = math.ceil((end - start + 1) / size)
        bounds = np.linspace(start, end + 1, pieces + 1).round().astype(int)
        out += [(name, int(a), int(b) - 1) for a, b in zip(bounds[:-1], bounds[1:])]
    return out


def frame_name(action, frame):
    """A frame's file, relative to the export folder (also its key in the sheet's JSON)."""
    return f"{action}/{frame:04d}.png"


def sheet(frames):
    """Frames (each (h, w, 4) uint8, row 0 at the top) packed left to right, top to bottom, in the fewest
    columns that keep the sheet about square. Returns the sheet and each frame's (x, y, w, h)."""
    h, w = frames[0].shape[:2]
    if any(f.shape != frames[0].shape for f in frames):
        raise VideError("the frames of one action differ in size: render them again with one --size")
    columns = max(1, math.ceil(math.sqrt(len(frames) * h / w)))
    rows = math.ceil(len(frames) / columns)
    out = np.zeros((rows * h, columns * w, 4), np.uint8)
    rects = []
    for i, frame in enumerate(frames):
        r, c = divmod(i, columns)
        out[r * h:(r + 1) * h, c * w:(c + 1) * w] = frame
        rects.append((c * w, r * h, w, h))
    return out, rects


def sheet_json(image, size, names, rects, duration_ms, action):
    """TexturePacker's "JSON hash" (as Phaser, PixiJS, Godot and Unity importers read it) with each frame's
    duration in milliseconds, and PixiJS's `animations` list."""
    frames = {}
    for name, (x, y, w, h) in zip(names, rects):
        frames[name] = {"frame": {"x": x, "y": y, "w": w, "h": h}, "rotated": False, "trimmed": False,
                        "spriteSourceSize": {"x": 0, "y": 0, "w": w, "h": h}, "sourceSize": {"w": w, "h": h},
                        "duration": duration_ms}
    data = {"frames": frames, "animations": {action: list(names)},
            "meta": {"app": "VIDE", "version": "1.0", "image": image, "format": "RGBA8888",
                     "size": {"w": int(size[0]), "h": int(size[1])}, "scale": "1"}}
    return json.dumps(data, indent=1) + "\n"


def png_bytes(pixels):
    """An 8-bit RGBA PNG of `pixels` ((h, w, 4) uint8, row 0 at the top), each row Sub-filtered."""
    pixels = np.ascontiguousarray(pixels, np.uint8)
    h, w = pixels.shape[:2]
    rows = pixels.reshape(h, w * 4)
    sub = rows.copy()
    sub[:, 4:] -= rows[:, :-4]  # uint8 arithmetic wraps, as the Sub filter wants
    raw = np.concatenate([np.ones((h, 1), np.uint8), sub], axis=1).tobytes()

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def frame_duration_ms(fps):
    return round(1000.0 / fps)
