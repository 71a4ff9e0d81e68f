"""Operators, one module each."""

import bpy

from . import add_image, bind, cutout, export, rig2d, vectorize

classes = vectorize.classes + add_image.classes + cutout.classes + bind.classes + rig2d.classes + export.classes

register, unregister = bpy.utils.register_classes_factory(classes)
