"""Test characters for posing: the sample character and real sprites from tests/data/kenney, each with a
skeleton drawn by hand over the picture and a set of test poses. Shared by bench/deform_quality.py and the
deformation tests.

Bones are (head, tail, parent, connected) in pixels of the sprite as stored (y up, before scaling); a pose is
degrees per bone, counter-clockwise as seen from the front (see `rig.bend`).
"""

from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np
from scipy import ndimage

import rig
from stage import import_plane, load_png, save_png

COLLAPSED = 0.05  # posed / rest area below this counts as flipped or collapsed
KENNEY = Path(__file__).resolve().parent.parent / "tests" / "data" / "kenney"

# The Kenney people are 96 x 128 px, drawn alike: head 46-93 px up, vest 22-48, shorts 9-22, legs below;
# arms hang beside the body from the shoulders (30 and 66 px across) to the hands 8 px up.
PERSON = {
    "torso": ((48, 22), (48, 46), None, False),
    "head": ((48, 48), (48, 86), "torso", False),
    "thigh.L": ((40, 22), (40, 11), "torso", False),
    "shin.L": ((40, 11), (40, 1), "thigh.L", True),
    "thigh.R": ((56, 22), (56, 11), "torso", False),
    "shin.R": ((56, 11), (56, 1), "thigh.R", True),
    "arm.upper.L": ((31, 42), (25, 25), "torso", False),
    "arm.lower.L": ((25, 25), (22, 9), "arm.upper.L", True),
    "arm.upper.R": ((65, 42), (71, 25), "torso", False),
    "arm.lower.R": ((71, 25), (74, 9), "arm.upper.R", True),
}
PERSON_POSES = {
    "knee 90°": {"shin.L": 90},
    "hip 45°": {"thigh.L": -45},
    "arm 60°": {"arm.upper.R": 60},
    "spine 30°": {"torso": 30, "thigh.L": -30, "thigh.R": -30},
    "head 30°": {"head": 30},
}

# The frog (128 x 128 px): a body 27-94 px across and up to 70 px, hind legs folded beside it (knees 34 px up,
# feet along the bottom corners), two small front feet under it.
FROG = {
    "body": ((62, 10), (62, 42), None, False),
    "head": ((62, 42), (62, 66), "body", True),
    "thigh.L": ((36, 22), (23, 33), "body", False),
    "shin.L": ((23, 33), (21, 9), "thigh.L", True),
    "foot.L": ((21, 9), (11, 3), "shin.L", True),
    "thigh.R": ((88, 22), (101, 33), "body", False),
    "shin.R": ((101, 33), (103, 9), "thigh.R", True),
    "foot.R": ((103, 9), (113, 3), "shin.R", True),
    "hand.L": ((50, 14), (47, 3), "body", False),
    "hand.R": ((74, 14), (77, 3), "body", False),
}
FROG_POSES = {
    "knee 45°": {"shin.L": -45},
    "hip 30°": {"thigh.R": -30},
    "ankle 45°": {"foot.L": 45},
    "head 30°": {"head": 30},
    "hand 45°": {"hand.R": 45},
}

SAMPLE_POSES = {
    "knee 90°": {"shin.front": 90},
    "hip 45°": {"thigh.front": -45},
    "arm 60°": {"arm.upper": 60},
    "spine 30°": {"torso": 30, "thigh.front": -30, "thigh.back": -30},
    "head 30°": {"head": 30},
}


@dataclass
class Character:
    bones: dict
    poses: dict
    file: str = ""  # a sprite in tests/data/kenney; empty for the sample character
    scale: float = 1.0  # the sprite is resized by this (bilinear) before vectorizing
    knee_and_hip: list = field(default_factory=list)  # the poses the tests hold to no flipped triangle


CHARACTERS = {
    "sample": Character(rig.BONES, SAMPLE_POSES, knee_and_hip=["knee 90°", "hip 45°"]),
    "malePerson": Character(PERSON, PERSON_POSES, "animated_characters__malePerson_idle.png", 3,
                            ["knee 90°", "hip 45°"]),
    "femaleAdventurer": Character(PERSON, PERSON_POSES, "animated_characters__femaleAdventurer_idle.png", 3,
                                  ["knee 90°", "hip 45°"]),
    "zombie": Character(PERSON, PERSON_POSES, "animated_characters__zombie_idle.png", 2, ["knee 90°", "hip 45°"]),
    "frog": Character(FROG, FROG_POSES, "enemies__frog.png", 3, ["knee 45°", "hip 30°"]),
}


def sprite_pixels(file, scale):
    """The sprite's RGBA pixels (row 0 at the bottom), resized bilinearly by `scale`."""
    px = load_png(KENNEY / file)
    if scale != 1:
        px = np.clip(ndimage.zoom(px, (scale, scale, 1), order=1), 0.0, 1.0)
    return px


def rigged(name, folder):
    """Character `name` as one image plane (its PNG written into `folder`), vectorized with the default
    settings, and its armature: (plane, armature)."""
    ch = CHARACTERS[name]
    if not ch.file:
        return rig.rigged_character(folder)
    px = sprite_pixels(ch.file, ch.scale)
    plane = import_plane(save_png(Path(folder) / f"{name}.png", px))
    bpy.ops.vide.vectorize_image()
    h, w = px.shape[:2]
    bones = {b: (np.multiply(head, ch.scale), np.multiply(tail, ch.scale), parent, connected)
             for b, (head, tail, parent, connected) in ch.bones.items()}
    return plane, rig.build_armature(plane, f"{name} rig", bones, (w, h))


def pose(arm, angles):
    """Sets the armature to its rest pose, then bends the bones in `angles` (degrees per bone)."""
    for bone in arm.pose.bones:
        bone.rotation_mode = 'QUATERNION'
        bone.rotation_quaternion = (1, 0, 0, 0)
    for bone, degrees in angles.items():
        rig.bend(arm, bone, degrees)


def flat_corners(ob, depsgraph=None):
    """Each triangle's corners (m, 3, 2) in the picture's plane (x-z), rest or evaluated."""
    source = ob.evaluated_get(depsgraph) if depsgraph else ob
    me = source.to_mesh() if depsgraph else ob.data
    co = np.empty(len(me.vertices) * 3)
    me.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3) @ np.array(source.matrix_world)[:3, :3].T
    me.calc_loop_triangles()
    tris = np.empty(len(me.loop_triangles) * 3, np.int64)
    me.loop_triangles.foreach_get("vertices", tris)
    if depsgraph:
        source.to_mesh_clear()
    return co[:, [0, 2]][tris.reshape(-1, 3)]


def deformation(rest, posed):
    """(area ratio posed / rest (signed), distortion σ1/σ2) per triangle, from corners (m, 3, 2)."""
    e_rest = np.stack([rest[:, 1] - rest[:, 0], rest[:, 2] - rest[:, 0]], axis=2)  # columns are edges
    e_posed = np.stack([posed[:, 1] - posed[:, 0], posed[:, 2] - posed[:, 0]], axis=2)
    maps = e_posed @ np.linalg.inv(e_rest)
    sv = np.linalg.svd(maps, compute_uv=False)
    return np.linalg.det(maps), sv[:, 0] / np.maximum(sv[:, 1], 1e-12)
