"""Operators, one module per task: vectorize (Vectorize Image), add_image (Add Image), cutout (Import Cutout,
Move Layer), swap (Make Swap), bind (Bind to Armature, Update Weights), rig2d (Add 2D IK, Lock to 2D, Bind
Rigidly to Bone, Attach to Bone), export (Export Sprites). batch.py and poll.py hold what they share."""

import bpy

from . import add_image, bind, cutout, export, rig2d, swap, vectorize

classes = (vectorize.classes + add_image.classes + cutout.classes + swap.classes + bind.classes + rig2d.classes
           + export.classes)

register, unregister = bpy.utils.register_classes_factory(classes)
