"""Images for the Vectorize Image corpus (issue #12): Kenney's CC0 sprites (tests/data/kenney) resized, and
generated hard shapes. Alpha arrays (h, w), row 0 at the bottom, values in [0, 1].
"""

from pathlib import Path

import numpy as np
from scipy import ndimage

KENNEY = Path(__file__).resolve().parent / "data" / "kenney"
SCALES = (1, 2, 2.5, 3, 8)


def kenney_files():
    return sorted(KENNEY.glob("*.png"))


def load_alpha(path):
    """Alpha of a PNG through Blender's image loader (the add-on reads images the same way)."""
    from stage import load_png

    return np.ascontiguousarray(load_png(path)[..., 3])


def resize_bilinear(alpha, scale):
    """Bilinear resize by `scale` as image editors do it: output size round(scale * input), samples at the output
    pixel centres mapped into the input's pixel grid (scipy.ndimage.zoom, order 1, grid_mode), edge pixels
    extended (mode 'nearest'). Scale 1 returns the image unchanged."""
    if scale == 1:
        return alpha
    h, w = alpha.shape
    out = ndimage.zoom(alpha.astype(np.float64), (round(h * scale) / h, round(w * scale) / w), order=1,
                       grid_mode=True, mode="nearest")
    return np.clip(out, 0.0, 1.0).astype(np.float32)


def _grid(h, w):
    yy, xx = np.mgrid[0:h, 0:w] + 0.5
    return xx, yy


def comb(size=256, teeth=32):
    """A spine along the top with `teeth` teeth hanging from it, the gaps between them from 4 px down to 1 px."""
    a = np.zeros((size, size), np.float32)
    top = size - max(size // 8, 4)
    a[top:size - 2, 2:size - 2] = 1
    x = 2
    gaps = np.linspace(4, 1, teeth).round().astype(int)
    width = max((size - 4) // len(gaps) - 4, 2)
    for gap in gaps:
        if x + width > size - 2:
            break
        a[2:top, x:x + width] = 1
        x += width + gap
    return a


def spiral(size=256, gap=1.5):
    """A thick arm wound into a spiral, its turns `gap` px apart, anti-aliased."""
    xx, yy = _grid(size, size)
    c = size / 2
    r, t = np.hypot(xx - c, yy - c), np.arctan2(yy - c, xx - c)
    pitch = max(size / 12, 6.0)
    # Distance to the nearest turn of r = pitch * (theta / 2pi), along the radius.
    phase = (r - pitch * (t / (2 * np.pi))) % pitch
    d = np.minimum(phase, pitch - phase)
    alpha = np.clip((pitch - gap) / 2 - d + 0.5, 0, 1)
    alpha[r > size / 2 - 2] = 0
    return alpha.astype(np.float32)


def checkerboard(size=64, cells=16):
    """`cells` x `cells` squares that touch only at their corners."""
    xx, yy = _grid(size, size)
    cell = size / cells
    return (((xx // cell) + (yy // cell)) % 2).astype(np.float32)


def lines(size=96):
    """One-pixel lines: horizontal, vertical, 45° staircase and a shallow anti-aliased slope, 2 px apart."""
    a = np.zeros((size, size), np.float32)
    a[10, 5:size - 5] = 1
    a[13, 5:size - 5] = 1
    a[20:size - 5, 8] = 1
    a[20:size - 5, 11] = 1
    for i in range(20, size - 20):
        a[i, i] = 1  # diagonal pixels touching at their corners
        a[i, i + 3] = 1
    xx, yy = _grid(size, size)
    a = np.maximum(a, np.clip(1.0 - np.abs(yy - (0.3 * xx + 30)), 0, 1))
    return a


def diagonal_pixels(size=48):
    """Single pixels touching only at corners: a staircase, a diamond and an X."""
    a = np.zeros((size, size), np.float32)
    for i in range(4, size - 4):
        a[i, i] = 1
        a[i, size - 1 - i] = 1
    xx, yy = _grid(size, size)
    a[(np.abs(xx - 12) + np.abs(yy - 36)).astype(int) == 6] = 1
    return a


def border_shapes(size=80):
    """Shapes touching every border and the corners: a plus, a corner block, a 1 px band along the top."""
    a = np.zeros((size, size), np.float32)
    a[:, size // 2 - 6:size // 2 + 6] = 1
    a[size // 2 - 6:size // 2 + 6, :] = 1
    a[:10, :10] = 1
    a[size - 1, :] = 1
    a[size - 3, 20:] = 1
    return a


def noise_blobs(size=256, seed=0, scale=200):
    """Smoothed random noise kept where it lies in a band: dozens of islands, many with holes where the noise
    peaks above the band, anti-aliased edges. `scale` sets how many blobs fit (the same count at any size)."""
    rng = np.random.default_rng(seed)
    field = ndimage.gaussian_filter(rng.standard_normal((size, size)), size / (2.5 * np.sqrt(scale)), mode="wrap")
    field /= field.std()
    return np.clip(3 * np.minimum(field - 0.5, 1.5 - field) + 0.5, 0, 1).astype(np.float32)


def opaque(size=256):
    """No transparency at all (a JPEG)."""
    return np.ones((size, size // 2 * 3 // 2), np.float32)


HARD_SHAPES = {
    "comb": comb, "spiral": spiral, "checkerboard": checkerboard, "lines": lines,
    "diagonal_pixels": diagonal_pixels, "border_shapes": border_shapes, "noise_blobs": noise_blobs,
    "opaque": opaque,
}
