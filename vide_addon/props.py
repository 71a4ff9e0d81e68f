"""VIDE's settings on Blender data: vectorize settings (scene defaults and per object), what an object
remembers about its source image and its binding, and each bone's smoothness."""

import bpy
from bpy.props import (BoolProperty, EnumProperty, FloatProperty, FloatVectorProperty, IntProperty, PointerProperty,
                       StringProperty)

from . import binding
from .bridge import swaps
from .core.bind_settings import BindSettings
from .core.vectorize import Settings

DEFAULT = Settings()  # the defaults live in the core; the properties below take them from there
BIND = BindSettings()


class VectorizeSettings:
    """The Vectorize Image parameters, shared by the operator (redo panel) and the property groups."""

    alpha_threshold: FloatProperty(
        name="Alpha Threshold", default=DEFAULT.alpha_threshold, min=0.001, max=1.0, subtype='FACTOR',
        options={'SKIP_SAVE'},
        description="Pixels with at least this alpha are part of the shape")
    contour_tolerance: FloatProperty(
        name="Contour Tolerance", default=DEFAULT.contour_tolerance, min=0.0, soft_max=10.0, subtype='PIXEL',
        options={'SKIP_SAVE'},
        description="How far the simplified outline may stray outwards from the true contour. "
                    "It never cuts inwards into the art")
    margin: FloatProperty(
        name="Margin", default=DEFAULT.margin, min=0.0, soft_max=16.0, subtype='PIXEL', options={'SKIP_SAVE'},
        description="Grows the outline outwards, to keep soft anti-aliased edges inside the mesh")
    min_island_area: FloatProperty(
        name="Min Island Area", default=DEFAULT.min_island_area, min=0.0, soft_max=1000.0, options={'SKIP_SAVE'},
        description="Separate pieces and holes smaller than this many square pixels are dropped")
    keep_holes: BoolProperty(
        name="Keep Holes", default=DEFAULT.keep_holes, options={'SKIP_SAVE'},
        description="Cut holes where the image is transparent inside the shape")
    vertex_spacing: FloatProperty(
        name="Vertex Spacing", default=DEFAULT.vertex_spacing, min=0.0, soft_max=200.0, subtype='PIXEL',
        options={'SKIP_SAVE'},
        description="Distance between interior vertices. 0 picks it from the image size "
                    "(about 80 vertices across the longest side)")

    def to_core(self):
        return Settings(**{name: getattr(self, name) for name in Settings.__dataclass_fields__})

    def copy_from(self, other):
        for name in Settings.__dataclass_fields__:
            setattr(self, name, getattr(other, name))


class VIDE_PG_vectorize_settings(VectorizeSettings, bpy.types.PropertyGroup):
    pass


class BindProperties:
    """The Bind to Armature parameters, shared by the operator (redo panel) and what a bound mesh keeps
    for re-weighting live."""

    method: EnumProperty(
        name="Method", default=BIND.method, options={'SKIP_SAVE'},
        items=[('GEODESIC', "Geodesic",
                "Weight falls off with the distance from the bone measured inside the shape"),
               ('MESHFREE', "Meshfree C²",
                "Closed-form, C²-smooth, compactly supported weights over distance inside the shape "
                "(Xian, Jin and Wang); independent of the mesh")],
        description="How the weights are computed")
    sample_spacing: FloatProperty(
        name="Sample Spacing", default=BIND.sample_spacing, min=0.0, soft_max=0.1, subtype='DISTANCE', unit='LENGTH',
        options={'SKIP_SAVE'},
        description="Meshfree: distance between the samples that fill the shape. 0 picks it from the mesh's "
                    "size (about 100 across its longest side)")
    spread: FloatProperty(
        name="Spread", default=BIND.spread, min=0.05, max=0.95, subtype='FACTOR', options={'SKIP_SAVE'},
        description="Meshfree: how far each bone's support reaches between its own cell and the nearest other "
                    "bone. Small gives sharp transitions, large wide ones")
    chains: EnumProperty(
        name="Joints", default=BIND.chains, options={'SKIP_SAVE'},
        items=[('PULL_IN', "Compact C²", "Bones that share a joint are pulled in from it, keeping compact "
                                         "C² weights"),
               ('GAUSSIAN', "Gaussian", "The paper's fallback for touching bones: global, smooth, approximating")],
        description="Meshfree: what to do with bones that share a joint, as armature chains do")
    joint_pull: FloatProperty(
        name="Joint Pull-In", default=BIND.joint_pull, min=0.05, max=0.49, subtype='FACTOR', options={'SKIP_SAVE'},
        description="Meshfree, Compact C²: how much of each bone's length its handle is pulled in from both "
                    "ends. More gives wider, smoother bends at the joints and shorter rigid middles")
    smoothness: FloatProperty(
        name="Smoothness", default=BIND.smoothness, min=1e-4, soft_max=1.0, subtype='DISTANCE', unit='LENGTH',
        options={'SKIP_SAVE'},
        description="How far a bone's weight spreads inside the shape: small gives sharp joints (elbows), "
                    "large soft ones (backs, hair). Bones with their own Smoothness use theirs")
    joint_blend: FloatProperty(
        name="Joint Blending", default=BIND.joint_blend, min=0.0, soft_max=10.0, options={'SKIP_SAVE'},
        description="Spreads each bend over about a limb's width by diffusing the weights over the mesh, only "
                    "between parts the shape joins; 2.5 for characters that bend far at knees, hips, arms. 0 keeps "
                    "the weights as measured; 1 holds them as hard as Blender's bone heat (Meshfree C² counts it "
                    "double)")
    max_influences: IntProperty(
        name="Max Influences", default=BIND.max_influences, min=1, max=8, options={'SKIP_SAVE'},
        description="How many bones at most move each vertex (the strongest are kept)")
    prune: FloatProperty(
        name="Prune Below", default=BIND.prune, min=0.0, max=0.1, subtype='FACTOR', options={'SKIP_SAVE'},
        description="Weights smaller than this are dropped and the rest renormalized")
    preserve_volume: BoolProperty(
        name="Preserve Volume", default=BIND.preserve_volume, options={'SKIP_SAVE'},
        description="Ticks the Armature modifier's Preserve Volume: bone rotations blend as dual quaternions "
                    "instead of linearly")

    def to_core(self):
        return BindSettings(**{name: getattr(self, name) for name in BindSettings.__dataclass_fields__})

    def copy_from(self, other):
        for name in BindSettings.__dataclass_fields__:
            setattr(self, name, getattr(other, name))


class VIDE_PG_bind(BindProperties, bpy.types.PropertyGroup):
    armature: PointerProperty(
        name="Armature", type=bpy.types.Object, description="The armature this mesh was bound to by VIDE")
    bones: StringProperty(name="Bones", options={'HIDDEN'},
                          description="The deform bones the mesh was weighted for, one per line")


def _bone_smoothness_changed(bone, _context):
    binding.reweight_armature(bone.id_data)


class VIDE_PG_bone(bpy.types.PropertyGroup):
    smoothness: FloatProperty(
        name="Smoothness", default=0.0, min=0.0, soft_max=1.0, subtype='DISTANCE', unit='LENGTH',
        update=_bone_smoothness_changed,
        description="How far this bone's weight spreads inside the shape (VIDE weights): small gives a sharp "
                    "joint, large a soft one. 0 uses the Smoothness of Bind to Armature. Bound meshes "
                    "re-weight as you change it")


def _retag(settings, _context):
    """Drivers read draw order and a swap's choice: tag the object so that they run again at once (setting a
    property from Python alone leaves them as they were until the next frame change)."""
    settings.id_data.update_tag()


def _draw_order_changed(settings, context):
    """The drawings of a swap share one place: a new draw order for one is the draw order of all."""
    if settings.swap is not None:
        for other in swaps.members(settings.swap):
            if other.vide.draw_order != settings.draw_order:
                other.vide.draw_order = settings.draw_order
    _retag(settings, context)


class VIDE_PG_object(bpy.types.PropertyGroup):
    """What a vectorized object remembers, so that vectorizing again starts from the image."""

    image: PointerProperty(
        name="Source Image", type=bpy.types.Image,
        description="The image this mesh was vectorized from")
    uv_to_local: FloatVectorProperty(
        name="Image Placement", size=9, options={'HIDDEN'},
        description="Affine map from image UV to the object's local space (row-major 3x3)")
    flip: BoolProperty(name="Flip Faces", options={'HIDDEN'})
    settings: PointerProperty(type=VIDE_PG_vectorize_settings)
    bind: PointerProperty(type=VIDE_PG_bind)
    auto_update: BoolProperty(
        name="Auto Update Weights", default=False,
        description="Armatures: when deform bones are added or removed (on leaving Edit Mode), weight the meshes "
                    "VIDE bound to this armature again")
    is_layer: BoolProperty(name="Cutout Layer", options={'HIDDEN'},
                           description="Imported by Import Cutout; its depth follows Draw Order")
    draw_order: IntProperty(
        name="Draw Order", default=0, update=_draw_order_changed,
        description="Stacking of the cutout's layers: higher draws in front. Keyframe it to change the order "
                    "during an animation")
    swap: PointerProperty(
        name="Swap", type=bpy.types.Object, options={'HIDDEN'},
        description="The sprite swap this layer is one drawing of (an empty that holds which one is shown)")
    swap_index: IntProperty(name="Swap Index", default=0, options={'HIDDEN'},
                            description="This layer's number in its swap; shown when the swap's choice is it")
    is_swap: BoolProperty(name="Sprite Swap", options={'HIDDEN'},
                          description="Holds the choice of a sprite swap (made by Make Swap or Import Cutout)")
    swap_choice: EnumProperty(
        name="Shown", items=lambda self, _context: swaps.choice_items(self.id_data), default=0, update=_retag,
        description="Which drawing of the swap is shown. Keyframe it (I over the field) to swap drawings "
                    "during an animation: it holds each key until the next")


classes = (VIDE_PG_vectorize_settings, VIDE_PG_bind, VIDE_PG_object, VIDE_PG_bone)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Scene.vide_vectorize = PointerProperty(type=VIDE_PG_vectorize_settings)
    bpy.types.Scene.vide_bind = PointerProperty(type=VIDE_PG_bind)
    bpy.types.Object.vide = PointerProperty(type=VIDE_PG_object)
    bpy.types.Bone.vide = PointerProperty(type=VIDE_PG_bone)


def unregister():
    del bpy.types.Bone.vide
    del bpy.types.Object.vide
    del bpy.types.Scene.vide_bind
    del bpy.types.Scene.vide_vectorize
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
