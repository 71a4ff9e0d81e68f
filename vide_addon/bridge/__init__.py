"""The only modules that move data between Blender and numpy, in bulk."""
