"""Pure numpy/scipy core of VIDE: no Blender imports here, so every stage is testable on plain arrays."""
