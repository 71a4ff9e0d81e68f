"""`python -m vide_addon export character.blend --out DIR ...` (and `merge DIR`) with the bpy wheel: the same
command as `blender -b character.blend -c vide ...`, for tests and CI."""

import sys

from .cli import main

sys.exit(main(sys.argv[1:]))
