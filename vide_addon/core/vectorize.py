"""Image alpha to triangle mesh: the whole Vectorize Image pipeline on plain arrays.

Stages, each in its own module: contour (marching squares), simplify (outline that never cuts the art),
triangulate (interior lattice and Delaunay refinement). This module picks the working resolution,
applies the margin and turns the settings into pixel units.
"""

from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage

from .contour import marching_squares, select_rings, signed_area
from .errors import VideError
from .simplify import simplify_rings
from .triangulate import Outline, graded_lattice, quality_triangulation

# Images larger than this on their longest side are analysed at a reduced size (block maximum of
# alpha, so nothing at or above the threshold is lost): bounds memory and time on 8K images.
MAX_ANALYSIS_SIZE = 4096
# With vertex_spacing at 0, the spacing is the image's longest side divided by this.
AUTO_SPACING_DIVISOR = 80.0
# ... and for an image without transparency, which has no outline to follow, by this: a light mesh that
# still bends.
AUTO_SPACING_DIVISOR_OPAQUE = 10.0


@dataclass
class Settings:
    """Vectorize Image parameters; lengths and areas in pixels of the source image."""

    alpha_threshold: float = 0.5
    contour_tolerance: float = 1.0
    margin: float = 0.0
    min_island_area: float = 8.0
    keep_holes: bool = True
    vertex_spacing: float = 0.0  # 0: automatic, from the image size


@dataclass
class Result:
    """Vertices in source-image pixels (y up), counter-clockwise triangles, and warnings for the user."""

    points: np.ndarray
    triangles: np.ndarray
    warnings: list = field(default_factory=list)
    outline_count: int = 0
    hole_count: int = 0


def auto_spacing(width, height, opaque=False):
    """Default interior vertex spacing in pixels: about 80 vertices across the longest side (10 for an
    image without transparency)."""
    return max(max(width, height) / (AUTO_SPACING_DIVISOR_OPAQUE if opaque else AUTO_SPACING_DIVISOR), 2.0)


def vectorize(alpha, settings, cdt, progress=None):
    """Triangle mesh of the region where `alpha` (H, W; row 0 at the bottom) reaches the threshold.

    `cdt(points, segments) -> triangles` is the constrained Delaunay triangulation to use.
    `progress(fraction)` is called between stages.
    """
    report = progress or (lambda _f: None)
    h, w = alpha.shape
    if h < 1 or w < 1:
        raise VideError("The image is empty (0 pixels).")
    factor = int(np.ceil(max(h, w) / MAX_ANALYSIS_SIZE))
    work = block_max(alpha, factor) if factor > 1 else alpha
    level = settings.alpha_threshold
    warnings = []
    if settings.margin > 0:
        work, level = _grown_field(work, level, settings.margin / factor)
    report(0.1)

    rings = marching_squares(work, level)
    if not rings:
        raise VideError(f"No pixel reaches Alpha Threshold {settings.alpha_threshold:.2f}: the image is fully "
                        "transparent there. Lower Alpha Threshold or pick another image.")
    wh, ww = work.shape
    dense = np.vstack(rings)
    opaque = bool(work.min() >= level)
    if opaque:
        warnings.append("The image has no transparent pixels: the mesh covers the whole rectangle.")
        rings = [np.array([[0.0, 0.0], [ww, 0.0], [ww, wh], [0.0, wh]])]
    else:
        rings = select_rings(rings, settings.min_island_area / factor**2, settings.keep_holes)
    if not rings:
        raise VideError(f"Every shape is smaller than Min Island Area ({settings.min_island_area:g} px²). "
                        "Lower it to keep them.")
    report(0.3)

    outline = simplify_rings(rings, max(settings.contour_tolerance, 0.0) / factor)
    report(0.5)
    spacing = (settings.vertex_spacing or auto_spacing(w, h, opaque)) / factor
    mesh_outline = Outline.from_rings(outline, spacing)
    interior = graded_lattice(work, level, dense, mesh_outline, spacing)
    report(0.6)
    points, tris = quality_triangulation(mesh_outline, interior, cdt)
    report(0.9)
    areas = [signed_area(r) for r in outline]
    return Result(points * factor, tris, warnings,
                  outline_count=sum(a > 0 for a in areas), hole_count=sum(a < 0 for a in areas))


def block_max(alpha, factor, band=32):
    """Alpha reduced by `factor` in each direction, each new pixel the maximum of its block.

    Strided views over bands of rows: no full-size temporary, and each band stays in cache while the
    factor² offsets are visited.
    """
    h, w = alpha.shape
    out = np.zeros((-(-h // factor), -(-w // factor)), np.float32)
    for top in range(0, out.shape[0], band):
        rows = alpha[top * factor:(top + band) * factor]
        for dy in range(factor):
            for dx in range(factor):
                part = rows[dy::factor, dx::factor]
                view = out[top:top + part.shape[0], :part.shape[1]]
                np.maximum(view, part, out=view)
    return out


def _grown_field(alpha, level, margin):
    """A field whose level set lies `margin` pixels outside the thresholded shape, and that level.

    Works on the shape's bounding box grown by the margin, so a small sprite in a big image stays cheap.
    """
    inside = alpha >= level
    rows, cols = np.flatnonzero(inside.any(axis=1)), np.flatnonzero(inside.any(axis=0))
    out = np.full(alpha.shape, -1.0, np.float32)
    if rows.size == 0:
        return out, 0.0
    pad = int(np.ceil(margin)) + 2
    r0, r1 = max(rows[0] - pad, 0), min(rows[-1] + pad + 1, alpha.shape[0])
    c0, c1 = max(cols[0] - pad, 0), min(cols[-1] + pad + 1, alpha.shape[1])
    dist = ndimage.distance_transform_edt(~inside[r0:r1, c0:c1])
    # Pixel centres are 0.5 px inside a hard edge, hence the extra half pixel.
    out[r0:r1, c0:c1] = margin + 0.5 - dist
    return out, 0.0
