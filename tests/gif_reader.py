"""A minimal GIF reader for the tests, written from the GIF89a specification apart from VIDE's encoder (it was
checked once against Pillow): the frames of an animated GIF as RGBA arrays, with each frame's delay."""

import numpy as np


def lzw_decode(data, min_size):
    clear, end = 1 << min_size, (1 << min_size) + 1
    size, bitpos, out = min_size + 1, 0, []
    table, prev = None, None
    nbits = len(data) * 8
    value = int.from_bytes(data, "little")
    while bitpos + size <= nbits:
        code = (value >> bitpos) & ((1 << size) - 1)
        bitpos += size
        if code == clear:
            table = [[i] for i in range(clear)] + [None, None]
            size, prev = min_size + 1, None
            continue
        if code == end:
            break
        if prev is None:
            entry = table[code]
        else:
            entry = table[code] if code < len(table) else prev + prev[:1]
            if len(table) < 4096:
                table.append(prev + entry[:1])
        out += entry
        prev = entry
        if len(table) == (1 << size) and size < 12:
            size += 1
    return out


def read_gif(data):
    """[(rgba (h, w, 4) uint8, delay in 1/100 s)] of an animated GIF, composed on the logical screen."""
    assert data[:6] == b"GIF89a"
    w, h = int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    packed, pos = data[10], 13
    table = None
    if packed & 0x80:
        n = 2 << (packed & 7)
        table = np.frombuffer(data[pos:pos + 3 * n], np.uint8).reshape(n, 3)
        pos += 3 * n
    canvas = np.zeros((h, w, 4), np.uint8)
    frames, transparent, delay, disposal = [], None, 0, 0
    while True:
        kind = data[pos]
        if kind == 0x3B:
            return frames
        if kind == 0x21:
            label, pos = data[pos + 1], pos + 2
            body = b""
            while data[pos]:
                body += data[pos + 1:pos + 1 + data[pos]]
                pos += 1 + data[pos]
            pos += 1
            if label == 0xF9:
                disposal = (body[0] >> 2) & 7
                delay = int.from_bytes(body[1:3], "little")
                transparent = body[3] if body[0] & 1 else None
            continue
        assert kind == 0x2C
        x, y, fw, fh = (int.from_bytes(data[pos + 1 + 2 * i:pos + 3 + 2 * i], "little") for i in range(4))
        assert data[pos + 9] & 0x80 == 0, "no local colour tables here"
        pos += 10
        min_size, pos = data[pos], pos + 1
        body = b""
        while data[pos]:
            body += data[pos + 1:pos + 1 + data[pos]]
            pos += 1 + data[pos]
        pos += 1
        index = np.array(lzw_decode(body, min_size)[:fw * fh]).reshape(fh, fw)
        before = canvas.copy()
        region = canvas[y:y + fh, x:x + fw]
        drawn = index != transparent
        region[drawn, :3] = table[index[drawn]]
        region[drawn, 3] = 255
        frames.append((canvas.copy(), delay))
        if disposal == 2:
            canvas[y:y + fh, x:x + fw] = 0
        elif disposal == 3:
            canvas = before
