"""Export Sprites: the `vide export` command from the VIDE tab, with the same options, a progress bar and a
report of what it wrote."""

from pathlib import Path

import bpy
from bpy.props import BoolProperty, EnumProperty, IntProperty, StringProperty

from ..core.errors import VideError
from ..export import FORMATS, Options, export
from .poll import SaysWhyNot

FORMAT_ITEMS = [
    ('frames', "Frames", "One PNG per frame, straight alpha, in <folder>/<action>/"),
    ('sheet', "Sheet", "A sprite sheet PNG and its TexturePacker JSON hash per action"),
    ('gif', "GIF", "An animated GIF with transparency per action"),
    ('mp4', "MP4", "An H.264 preview on white per action (when Blender has FFmpeg)"),
    ('glb', "glTF", "Every action in one glTF binary (.glb)"),
]


class VIDE_OT_export_sprites(SaysWhyNot, bpy.types.Operator):
    """Render each action of the armature as frames, a sprite sheet with JSON, a GIF and an MP4, and export a
    glTF with every action (the same as `blender -b file.blend -c vide export`)"""

    bl_idname = "vide.export_sprites"
    bl_label = "Export Sprites"
    bl_options = {'REGISTER', 'UNDO'}

    directory: StringProperty(name="Folder", subtype='DIR_PATH', default="//sprites/",
                              description="Where the files go (// is the .blend's folder)")
    actions: StringProperty(name="Actions", default="",
                            description="Comma-separated action names; empty: every action that animates the bones")
    use_frames: BoolProperty(name="Only Frames", default=False,
                             description="Render only this range of each action (frames only: merge them later)")
    frame_first: IntProperty(name="First", default=1, description="First frame to render")
    frame_last: IntProperty(name="Last", default=12, description="Last frame to render")
    size: IntProperty(name="Size", default=Options.size, min=2, soft_max=2048, subtype='PIXEL',
                      description="Pixels along the frames' longer side")
    formats: EnumProperty(name="Formats", items=FORMAT_ITEMS, options={'ENUM_FLAG'}, default=set(FORMATS),
                          description="What to write")
    camera: StringProperty(name="Camera", default="",
                           description="Camera to render with; empty: the scene's, or one made to frame every action")

    @classmethod
    def problem(cls, context):
        if context.scene is None or not any(ob.type == 'ARMATURE' for ob in context.scene.objects):
            return "Add an armature with animated bones to export sprites"
        if context.mode not in {'OBJECT', 'POSE'}:
            return "Switch to Object or Pose Mode to export sprites"
        return None

    def invoke(self, context, event):
        return context.window_manager.invoke_props_dialog(self, width=360)

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "directory")
        layout.prop(self, "actions")
        layout.prop_search(self, "camera", context.scene, "objects")
        layout.prop(self, "size")
        row = layout.row(heading="Formats")
        row.prop(self, "formats")
        layout.prop(self, "use_frames")
        col = layout.column(align=True)
        col.active = self.use_frames
        col.prop(self, "frame_first")
        col.prop(self, "frame_last")

    def execute(self, context):
        out = Path(bpy.path.abspath(self.directory))
        if not self.directory or (self.directory.startswith("//") and not bpy.data.filepath):
            self.report({'ERROR'}, "Choose an absolute folder, or save the .blend first (// is its folder)")
            return {'CANCELLED'}
        wm = context.window_manager
        wm.progress_begin(0, 1000)
        try:
            frames = None
            if self.use_frames:
                if self.frame_last < self.frame_first:
                    raise VideError(f"frame range {self.frame_first}-{self.frame_last} is empty")
                frames = (self.frame_first, self.frame_last)
            options = Options(out=out, size=self.size, camera=self.camera or None, frames=frames,
                              actions=[a.strip() for a in self.actions.split(",") if a.strip()] or None,
                              formats=set(self.formats))
            written = export(context.scene, options, lambda f, _what: wm.progress_update(int(f * 1000)))
        except VideError as err:
            self.report({'ERROR'}, str(err)[:1].upper() + str(err)[1:])
            return {'CANCELLED'}
        finally:
            wm.progress_end()
        frames = sum(1 for w in written if w.parent != out)
        files = sorted(w.name for w in written if w.parent == out)
        self.report({'INFO'}, f"Wrote {frames} frames{' and ' if files else ''}{', '.join(files)} into {out}")
        return {'FINISHED'}


classes = (VIDE_OT_export_sprites,)
