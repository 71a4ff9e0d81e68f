"""The sample cutout character, drawn with numpy: one RGBA layer per body part on a common canvas.

Shapes are anti-aliased capsules and ellipses, so the art has the soft edges real paintings have. The
legs stand a few pixels apart and the cape hangs close beside the back leg: the hard cases for meshing
and weighting. Canvas rows start at the bottom, as Blender stores images.
"""

import numpy as np

CANVAS = 1024

# name: (shape, parameters, RGB); capsules are (x0, y0, x1, y1, radius) in canvas pixels (y up).
PARTS = {
    "cape": ("polygon", [(430, 700), (560, 700), (585, 300), (520, 250), (440, 300)], (0.55, 0.12, 0.18)),
    "leg_back_upper": ("capsule", (540, 470, 560, 300, 34), (0.20, 0.25, 0.45)),
    "leg_back_lower": ("capsule", (560, 300, 565, 110, 28), (0.18, 0.22, 0.40)),
    "torso": ("capsule", (512, 700, 512, 480, 80), (0.25, 0.55, 0.35)),
    "leg_front_upper": ("capsule", (470, 470, 460, 300, 34), (0.22, 0.28, 0.50)),
    "leg_front_lower": ("capsule", (460, 300, 455, 110, 28), (0.20, 0.25, 0.46)),
    "arm_upper": ("capsule", (600, 740, 660, 600, 24), (0.85, 0.65, 0.50)),
    "arm_lower": ("capsule", (660, 600, 690, 470, 20), (0.85, 0.62, 0.48)),
    "head": ("ellipse", (512, 850, 95, 110), (0.92, 0.74, 0.58)),
}
# Bottom to top: the order a painter stacks the layers in.
DRAW_ORDER = list(PARTS)


def _coverage(signed_distance):
    """Anti-aliased alpha from a signed distance in pixels (negative inside)."""
    return np.clip(0.5 - signed_distance, 0.0, 1.0).astype(np.float32)


def _capsule(x, y, x0, y0, x1, y1, r):
    d = np.array([x1 - x0, y1 - y0], float)
    t = np.clip(((x - x0) * d[0] + (y - y0) * d[1]) / (d @ d), 0, 1)
    return np.hypot(x - x0 - t * d[0], y - y0 - t * d[1]) - r


def _ellipse(x, y, cx, cy, rx, ry):
    return (np.hypot((x - cx) / rx, (y - cy) / ry) - 1.0) * min(rx, ry)


def _polygon(x, y, pts):
    """Signed distance to a simple polygon (negative inside), by edges."""
    pts = np.asarray(pts, float)
    dist = np.full(x.shape, np.inf)
    inside = np.zeros(x.shape, bool)
    for (ax, ay), (bx, by) in zip(pts, np.roll(pts, -1, axis=0)):
        dist = np.minimum(dist, _capsule(x, y, ax, ay, bx, by, 0.0))
        if ay != by:
            cross = (ay > y) != (by > y)
            inside ^= cross & (x < ax + (y - ay) * (bx - ax) / (by - ay))
    return np.where(inside, -dist, dist)


def layer(name, size=CANVAS):
    """RGBA (size, size, 4) of one body part, scaled from the 1024 px design."""
    kind, params, rgb = PARTS[name]
    s = size / CANVAS
    y, x = (np.mgrid[0:size, 0:size] + 0.5) / s
    if kind == "capsule":
        sd = _capsule(x, y, *params)
    elif kind == "ellipse":
        sd = _ellipse(x, y, *params)
    else:
        sd = _polygon(x, y, params)
    alpha = _coverage(sd * s)
    if name == "head":  # an eye hole, so the head shows a hole kept by the mesh
        alpha = np.minimum(alpha, 1.0 - _coverage(_ellipse(x, y, 545, 870, 16, 20) * s))
    shade = 0.85 + 0.15 * (y - y.min()) / max(np.ptp(y), 1)
    out = np.empty((size, size, 4), np.float32)
    out[..., :3] = np.asarray(rgb, np.float32) * shade[..., None]
    out[..., 3] = alpha
    return out


def composite(size=CANVAS):
    """All layers flattened in draw order (straight alpha 'over')."""
    out = np.zeros((size, size, 4), np.float32)
    for name in DRAW_ORDER:
        src = layer(name, size)
        a = src[..., 3:]
        out_a = a + out[..., 3:] * (1 - a)
        out[..., :3] = np.where(out_a > 0, (src[..., :3] * a + out[..., :3] * out[..., 3:] * (1 - a))
                                / np.maximum(out_a, 1e-12), 0)
        out[..., 3:] = out_a
    return out
