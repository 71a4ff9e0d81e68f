"""Writing layered files as painting programs save them: OpenRaster (.ora, a zip of PNG layers and stack.xml, as
Krita, GIMP and MyPaint write it) and Photoshop (.psd, through psd-tools). Used by the walk and the tests.

A layer is a dict {name, pixels: RGBA (h, w, 4) floats or bytes with row 0 at the bottom as Blender stores images,
x, y: its top-left corner on the canvas (y down, as the formats count), hidden, opacity}; a group is
{name, children: [...], hidden}. Lists are top first, as a painting program's layer list shows them.
"""

import io
import zipfile
from xml.etree import ElementTree as ET

import numpy as np


def _bytes(pixels):
    """8-bit RGBA rows top first (pixels: floats in 0..1, or already 8-bit)."""
    if pixels.dtype == np.uint8:
        return np.ascontiguousarray(pixels[::-1])
    return (np.clip(pixels[::-1], 0, 1) * 255 + 0.5).astype(np.uint8)


def _png(pixels):
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(_bytes(pixels), "RGBA").save(out, format="PNG")
    return out.getvalue()


def write_ora(path, size, layers):
    """An OpenRaster file of canvas `size` (w, h) holding `layers`."""
    image = ET.Element("image", w=str(size[0]), h=str(size[1]), version="0.0.5")
    files = {}

    def fill(parent, entries):
        for entry in entries:
            common = {"name": entry["name"], "visibility": "hidden" if entry.get("hidden") else "visible",
                      "opacity": f"{entry.get('opacity', 1.0):.3f}"}
            if "children" in entry:
                fill(ET.SubElement(parent, "stack", **common), entry["children"])
                continue
            src = f"data/layer{len(files)}.png"
            files[src] = _png(entry["pixels"])
            ET.SubElement(parent, "layer", src=src, x=str(entry.get("x", 0)), y=str(entry.get("y", 0)),
                          **{"composite-op": entry.get("blend", "svg:src-over")}, **common)

    fill(ET.SubElement(image, "stack"), layers)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "image/openraster", compress_type=zipfile.ZIP_STORED)  # first, uncompressed
        z.writestr("stack.xml", ET.tostring(image, xml_declaration=True, encoding="UTF-8"))
        for src, data in files.items():
            z.writestr(src, data)
    return path


def write_psd(path, size, layers, mode="RGBA", depth=8):
    """A Photoshop file of canvas `size` (w, h) holding `layers`. Its merged image is left blank, not rendered:
    readers of layers do not use it, a 10,000 px canvas writes as fast as a small one, and psd-tools' renderer
    makes the bpy 4.5 module hang at exit after a glTF export (a thread of bpy's own left waiting)."""
    from PIL import Image
    from psd_tools import PSDImage
    from psd_tools.api.layers import Group, PixelLayer
    from psd_tools.constants import Compression

    psd = PSDImage.new(mode, size, depth=depth, compression=Compression.RLE)

    def fill(parent, entries):
        for entry in reversed(entries):  # psd-tools lists bottom first
            if "children" in entry:
                group = Group.new(parent, entry["name"])
                fill(group, entry["children"])
                layer = group
            else:
                layer = PixelLayer.frompil(Image.fromarray(_bytes(entry["pixels"]), "RGBA"), parent,
                                           entry["name"], top=entry.get("y", 0), left=entry.get("x", 0))
            layer.visible = not entry.get("hidden")
            layer.opacity = round(255 * entry.get("opacity", 1.0))

    fill(psd, layers)
    with open(path, "wb") as f:
        psd._record.write(f)  # the document as built: PSDImage.save would render the merged image first
    return path
