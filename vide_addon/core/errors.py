"""The one exception the core raises for bad input; the Blender layer turns it into a report."""


class VideError(Exception):
    """Input VIDE cannot work with. The message is shown to the user as is, so it says what to do."""
