"""Layered files from painting programs (Photoshop .psd, OpenRaster .ora) read into a tree of layers, each
pixel layer written as a PNG file (its own bounds only, not the canvas) that Blender's image loader reads.

No Blender here: `read_layered(path, folder)` returns a `Canvas`. PSD goes through psd-tools (bundled as a
wheel, with Pillow); ORA is a zip of PNG layers and a `stack.xml`, read with zipfile. Bad input raises
`VideError` with a message for the user; what is imported differently from the file (blend modes, text,
adjustment layers, masks) is listed in `Canvas.notes`.
"""

import itertools
import os
import re
import struct
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field

from ..core.errors import VideError

# Layers larger than this on their longest side are stored at a reduced size (the plane keeps the layer's
# place and size on the canvas): one layer of a 10,000 px canvas then never needs more than a 4096 px image.
MAX_LAYER_SIZE = 4096
# psd-tools refuses to decode a layer that would need more than this (a 10,000 x 10,000 RGBA layer at
# 8 bits needs 400 MB, at 16 bits 800 MB).
PSD_ALLOC_LIMIT = 1 << 30
LAYERED_EXTENSIONS = (".psd", ".psb", ".ora")


@dataclass
class Layer:
    """A pixel layer: `box` is (left, top, right, bottom) in canvas pixels (y down), `png` its pixels."""

    name: str
    box: tuple
    png: str
    visible: bool = True
    opacity: float = 1.0


@dataclass
class Group:
    """A group of layers and groups, top first as in the painting program's layer list."""

    name: str
    children: list = field(default_factory=list)
    visible: bool = True

    @property
    def is_swap(self):
        return self.name.rstrip().endswith("[swap]")

    def layers(self):
        """Every pixel layer inside, top first."""
        for child in self.children:
            yield from child.layers() if isinstance(child, Group) else [child]


@dataclass
class Canvas:
    width: int
    height: int
    root: Group
    notes: list = field(default_factory=list)  # "what: layer names" lines for one warning


def swap_name(name):
    """A swap group's name without its `[swap]` mark."""
    return re.sub(r"\s*\[swap\]\s*$", "", name) or name


def read_layered(path, folder):
    """The canvas of a .psd or .ora file, its layers written as PNG files into `folder`."""
    if not os.path.isfile(path):
        raise VideError(f"'{path}' is not a file")
    ext = os.path.splitext(path)[1].lower()
    reader = {".psd": _read_psd, ".psb": _read_psd, ".ora": _read_ora}.get(ext)  # .psb: Photoshop's large format
    if reader is None:
        raise VideError(f"'{os.path.basename(path)}' is not a .psd, .psb or .ora file")
    canvas, notes = reader(path, folder)
    outside = [layer for layer in canvas.root.layers() if not _overlaps(layer.box, canvas.width, canvas.height)]
    if outside:
        notes.setdefault("skipped, entirely outside the canvas", []).extend(layer.name for layer in outside)
        _drop(canvas.root, set(map(id, outside)))
    if next(canvas.root.layers(), None) is None:
        raise VideError(f"'{os.path.basename(path)}' has no pixel layer to import"
                        + "".join(f"; {what}: {', '.join(names)}" for what, names in notes.items()))
    canvas.notes = [f"{what}: {', '.join(names)}" for what, names in notes.items()]
    return canvas


def _overlaps(box, width, height):
    left, top, right, bottom = box
    return left < width and top < height and right > 0 and bottom > 0


def _drop(group, ids):
    group.children = [c for c in group.children if id(c) not in ids]
    for child in group.children:
        if isinstance(child, Group):
            _drop(child, ids)


# ---------------------------------------------------------------- Photoshop

# psd-tools' layer kinds that the file also stores as pixels.
AS_PIXELS = {"type": "text", "shape": "shape", "smartobject": "smart object"}
PSD_MODES = {0: "Bitmap", 1: "Grayscale", 2: "Indexed", 3: "RGB", 4: "CMYK", 7: "Multichannel", 8: "Duotone",
             9: "Lab"}


def _read_psd(path, folder):
    try:
        from psd_tools import PSDImage
    except ImportError as err:  # the extension bundles it; a development checkout needs requirements.txt
        raise VideError(f"Reading .psd files needs psd-tools, which did not load: {err}") from None
    name = os.path.basename(path)
    with open(path, "rb") as f:
        header = f.read(26)
    if len(header) < 26 or header[:4] != b"8BPS":
        raise VideError(f"'{name}' is not a Photoshop file (or is cut short)")
    mode = struct.unpack(">H", header[24:26])[0]
    if mode not in (1, 3):  # checked before parsing: psd-tools reads other modes, VIDE does not import them
        raise VideError(f"'{name}' is in {PSD_MODES.get(mode, f'colour mode {mode}')} mode: VIDE reads RGB and "
                        "Grayscale files. Convert it to RGB in the painting program (Image > Mode > RGB Color) "
                        "and save again")
    try:
        psd = PSDImage.open(path, max_alloc_bytes=PSD_ALLOC_LIMIT)
    except Exception as err:  # psd-tools raises many kinds on a damaged file
        raise VideError(f"'{name}' is not a Photoshop file that can be read (damaged or cut short?): "
                        f"{_short(err)}") from None
    notes = {}
    root = Group(os.path.splitext(name)[0])
    try:
        _psd_children(psd, root, folder, itertools.count(), notes, mode == 1)
    except VideError:
        raise
    except Exception as err:
        raise VideError(f"'{name}' could not be read (damaged or cut short?): {_short(err)}") from None
    return Canvas(psd.width, psd.height, root), notes


def _psd_children(parent, group, folder, counter, notes, grey):
    """Fills `group` from psd-tools' `parent` (whose list is bottom first), top first."""
    for layer in reversed(list(parent)):
        name = layer.name
        if layer.is_group():
            child = Group(name, visible=layer.visible)
            _psd_children(layer, child, folder, counter, notes, grey)
            if layer.opacity < 255:
                notes.setdefault("group opacity applied to each layer", []).append(name)
                for inner in child.layers():
                    inner.opacity *= layer.opacity / 255
            if child.children:
                group.children.append(child)
            continue
        kind = layer.kind
        if kind in AS_PIXELS:
            notes.setdefault(f"imported as pixels ({AS_PIXELS[kind]})", []).append(name)
        elif kind != "pixel":
            notes.setdefault("skipped (adjustment or fill layers hold no pixels)", []).append(name)
            continue
        blend = str(getattr(layer.blend_mode, "name", layer.blend_mode)).lower()
        if blend not in ("normal", "pass_through"):
            notes.setdefault("blend mode shown as normal", []).append(f"{name} ({blend.replace('_', ' ')})")
        if layer.has_mask():
            notes.setdefault("layer mask not applied", []).append(name)
        if layer.clipping:
            notes.setdefault("clipping not applied", []).append(name)
        if layer.width <= 0 or layer.height <= 0:
            notes.setdefault("skipped (empty)", []).append(name)
            continue
        try:
            image = _psd_pixels(layer, grey)
        except ValueError as err:
            raise VideError(f"Layer '{name}' is too large to read ({layer.width} x {layer.height} px): "
                            f"{_short(err)}") from None
        if image is None:
            notes.setdefault("skipped (empty)", []).append(name)
            continue
        png = os.path.join(folder, f"{next(counter):04d}.png")
        image.save(png, compress_level=1)
        group.children.append(Layer(name, tuple(layer.bbox), png, layer.visible, layer.opacity / 255))


def _psd_pixels(layer, grey):
    """The layer as an 8-bit RGBA PIL image (psd-tools converts 16 and 32 bits), at most MAX_LAYER_SIZE on its
    longest side; None if it has no pixels. A larger layer is read one channel at a time, each reduced at once,
    so that a 10,000 px layer is never held whole (its ICC profile is then not applied)."""
    from PIL import Image

    longest = max(layer.width, layer.height)
    if longest <= MAX_LAYER_SIZE:
        image = layer.topil()
        return None if image is None else image.convert("RGBA")
    size = tuple(max(round(n * MAX_LAYER_SIZE / longest), 1) for n in (layer.width, layer.height))
    planes = []
    for channel in ((0, 0, 0) if grey else (0, 1, 2)) + (-1,):
        plane = layer.topil(channel=channel)
        if plane is None and channel >= 0:
            return None
        planes.append(plane.convert("L").resize(size, Image.Resampling.BOX) if plane is not None else None)
    if planes[3] is None:  # no transparency channel: opaque
        planes[3] = Image.new("L", planes[0].size, 255)
    return Image.merge("RGBA", planes)


def _short(err):
    text = str(err).strip() or type(err).__name__
    return text if len(text) < 200 else text[:197] + "..."


# ---------------------------------------------------------------- OpenRaster

def _read_ora(path, folder):
    name = os.path.basename(path)
    try:
        with zipfile.ZipFile(path) as z:
            stack = ET.fromstring(z.read("stack.xml"))
            if stack.tag != "image":
                raise VideError(f"'{name}' is not an OpenRaster file: its stack.xml has no <image>")
            width, height = int(stack.get("w")), int(stack.get("h"))
            top = stack.find("stack")
            if top is None:
                raise VideError(f"'{name}' has no layer stack")
            notes = {}
            root = Group(os.path.splitext(name)[0])
            _ora_children(z, top, root, folder, itertools.count(), notes)
    except VideError:
        raise
    except KeyError as err:
        raise VideError(f"'{name}' is incomplete: {_short(err)}") from None
    except (zipfile.BadZipFile, ET.ParseError, EOFError, OSError, ValueError, TypeError, struct.error) as err:
        raise VideError(f"'{name}' is not an OpenRaster file that can be read (damaged or cut short?): "
                        f"{_short(err)}") from None
    return Canvas(width, height, root), notes


def _ora_children(z, stack, group, folder, counter, notes):
    """Fills `group` from a <stack> element (top first, as the format stores it)."""
    for element in stack:
        name = element.get("name", "")
        visible = element.get("visibility", "visible") != "hidden"
        opacity = float(element.get("opacity", "1"))
        if element.tag == "stack":
            child = Group(name or "Group", visible=visible)
            _ora_children(z, element, child, folder, counter, notes)
            if opacity < 1:
                notes.setdefault("group opacity applied to each layer", []).append(name)
                for inner in child.layers():
                    inner.opacity *= opacity
            if child.children:
                group.children.append(child)
            continue
        if element.tag != "layer" or not element.get("src", "").lower().endswith(".png"):
            notes.setdefault("skipped (not a PNG layer)", []).append(name or element.tag)
            continue
        op = element.get("composite-op", "svg:src-over")
        if op != "svg:src-over":
            notes.setdefault("blend mode shown as normal", []).append(f"{name} ({op.split(':')[-1]})")
        data = z.read(element.get("src"))
        if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
            raise VideError(f"Layer '{name}' ({element.get('src')}) is not a PNG image")
        w, h = struct.unpack(">II", data[16:24])
        png = os.path.join(folder, f"{next(counter):04d}.png")
        with open(png, "wb") as f:
            f.write(data)
        x, y = int(float(element.get("x", "0"))), int(float(element.get("y", "0")))
        group.children.append(Layer(name or "Layer", (x, y, x + w, y + h), png, visible, opacity))
