"""`python -m vide_addon export character.blend --out DIR ...` (and `merge DIR`) with the bpy wheel: the same
command as `blender -b character.blend -c vide ...`, for tests and CI."""

import os
import sys

import bpy

from .cli import main

status = main(sys.argv[1:])
if bpy.app.version[:2] == (4, 2):
    # bpy 4.2.23 segfaults at interpreter exit (see tests/conftest.py); everything is written, leave now.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
sys.exit(status)
