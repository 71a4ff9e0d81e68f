"""Every VIDE operator greys itself out through one poll (ops/poll.py), which says why in the tooltip."""

import bpy
import pytest


def operator(cls):
    module, name = cls.bl_idname.split(".")
    return getattr(getattr(bpy.ops, module), name)


def test_every_operator_polls_through_the_one_mixin(vide):
    says_why_not = vide.vide_addon.ops.poll.SaysWhyNot
    hand_written = [cls.bl_idname for cls in vide.vide_addon.ops.classes
                    if not issubclass(cls, says_why_not) or cls.poll.__func__ is not says_why_not.poll.__func__]
    assert hand_written == []


def test_an_operator_that_cannot_run_in_an_empty_scene_says_why(scene, vide):
    """Blender puts the poll message into the error of a call that poll refuses; without one it says only
    "poll() failed, context is incorrect"."""
    refused = [cls for cls in vide.vide_addon.ops.classes if not operator(cls).poll()]
    assert {cls.bl_idname for cls in refused} >= {"vide.vectorize_image", "vide.bind_armature", "vide.add_ik_2d",
                                                  "vide.export_sprites"}
    for cls in refused:
        with pytest.raises(RuntimeError) as err:
            operator(cls)()
        message = str(err.value).split("poll()", 1)[1].strip()
        assert message and "context is incorrect" not in message, (cls.bl_idname, str(err.value))
