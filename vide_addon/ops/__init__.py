"""Operators, one module each."""

import bpy

from . import add_image, vectorize

classes = vectorize.classes + add_image.classes

register, unregister = bpy.utils.register_classes_factory(classes)
