"""Operators, one module each."""

import bpy

from . import add_image, bind, cutout, rig2d, swap, vectorize

classes = vectorize.classes + add_image.classes + cutout.classes + swap.classes + bind.classes + rig2d.classes

register, unregister = bpy.utils.register_classes_factory(classes)
