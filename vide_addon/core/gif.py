"""Animated GIF with transparency, for previews on the web and in chat. Blender's Python has no GIF writer
(no Pillow, imageio or GIF output format; its FFmpeg writes no GIF), so this is the small encoder the format
needs: one palette for all frames by median cut, index 0 transparent, LZW, each frame cropped to its art."""

import struct

import numpy as np
from scipy.spatial import cKDTree

OPAQUE = 128  # alpha at or above this is drawn, below it is transparent (GIF has no partial alpha)


def palette(frames, colours=255):
    """Up to `colours` RGB colours for the drawn pixels of all frames: median cut over the distinct colours,
    weighted by how often they occur."""
    drawn = np.concatenate([f[f[..., 3] >= OPAQUE][:, :3] for f in frames])
    if len(drawn) == 0:
        return np.zeros((1, 3), np.uint8)
    keys, counts = np.unique(drawn.astype(np.int32) @ [65536, 256, 1], return_counts=True)
    rgb = np.stack([keys >> 16, (keys >> 8) & 255, keys & 255], axis=1)

    def span(box):  # the box's widest channel range, and that channel
        ranges = np.ptp(rgb[box], axis=0)
        return int(ranges.max()), int(np.argmax(ranges))

    boxes = [np.arange(len(keys))]
    spans = [span(boxes[0])]
    while len(boxes) < colours:
        i = max(range(len(boxes)), key=lambda j: spans[j][0])
        if spans[i][0] == 0:
            break
        box, (_width, axis) = boxes.pop(i), spans.pop(i)
        box = box[np.argsort(rgb[box, axis], kind="stable")]
        cum = np.cumsum(counts[box])
        cut = int(np.clip(np.searchsorted(cum, cum[-1] / 2), 0, len(box) - 2)) + 1
        boxes[i:i] = [box[:cut], box[cut:]]
        spans[i:i] = [span(box[:cut]), span(box[cut:])]
    return np.array([np.round((rgb[b] * counts[b, None]).sum(0) / counts[b].sum()) for b in boxes], np.uint8)


def lzw(indices, min_size=8):
    """GIF's variable-length LZW of a sequence of palette indices, as data sub-blocks."""
    clear, end = 1 << min_size, (1 << min_size) + 1
    out, acc, bits = bytearray(), 0, 0
    size, next_code, table = min_size + 1, end + 1, {}

    def emit(code):
        nonlocal acc, bits
        acc |= code << bits
        bits += size
        while bits >= 8:
            out.append(acc & 255)
            acc >>= 8
            bits -= 8

    emit(clear)
    prefix = indices[0]
    for k in indices[1:]:
        key = (prefix << 8) | k
        code = table.get(key)
        if code is not None:
            prefix = code
            continue
        emit(prefix)
        if next_code < 4096:
            table[key] = next_code
            next_code += 1
            if next_code > (1 << size) and size < 12:
                size += 1
        else:  # table full: start again
            emit(clear)
            table, size, next_code = {}, min_size + 1, end + 1
        prefix = k
    emit(prefix)
    emit(end)
    if bits:
        out.append(acc & 255)
    blocks = b"".join(bytes([len(out[i:i + 255])]) + out[i:i + 255] for i in range(0, len(out), 255))
    return bytes([min_size]) + blocks + b"\x00"


def gif_bytes(frames, delay_cs):
    """An endlessly looping GIF of RGBA frames ((h, w, 4) uint8, row 0 at the top), each shown `delay_cs`
    hundredths of a second and cleared before the next (so transparent parts stay transparent)."""
    h, w = frames[0].shape[:2]
    colours = palette(frames)
    tree = cKDTree(colours.astype(float))
    table = np.zeros((256, 3), np.uint8)
    table[1:1 + len(colours)] = colours
    out = bytearray(b"GIF89a" + struct.pack("<HHBBB", w, h, 0xF7, 0, 0) + table.tobytes())
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
    for frame in frames:
        drawn = frame[..., 3] >= OPAQUE
        rows, cols = np.flatnonzero(drawn.any(1)), np.flatnonzero(drawn.any(0))
        if len(rows) == 0:
            top, left, bottom, right = 0, 0, 1, 1
        else:
            top, bottom, left, right = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
        crop, mask = frame[top:bottom, left:right, :3], drawn[top:bottom, left:right]
        index = np.zeros(mask.shape, np.int64)
        if mask.any():
            index[mask] = tree.query(crop[mask].astype(float))[1] + 1
        out += b"\x21\xf9\x04\x09" + struct.pack("<H", delay_cs) + b"\x00\x00"
        out += b"\x2c" + struct.pack("<HHHHB", left, top, right - left, bottom - top, 0)
        out += lzw(index.ravel().tolist())
    out += b"\x3b"
    return bytes(out)
