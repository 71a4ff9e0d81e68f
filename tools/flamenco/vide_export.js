// SPDX-License-Identifier: GPL-3.0-or-later
//
// Flamenco job type: VIDE sprite export on a render farm. Copy this file into the Manager's `scripts/` folder
// (next to flamenco-manager) and restart it; "VIDE Sprite Export" then shows in the Flamenco add-on's job types.
// Every Worker needs Blender 4.2+ with VIDE installed.
//
// Each action's frames are split into chunks of `chunk_size`, one task each:
//   blender -b file.blend -c vide export --out DIR --actions NAME --frames A-B --size S --formats frames
// then one task after all of them builds the sheets, JSON, GIFs and MP4s from the frames:
//   blender -b file.blend -c vide merge DIR --formats sheet,gif,mp4
// and one task exports the glTF:  blender -b file.blend -c vide export --out DIR --formats glb

const JOB_TYPE = {
  label: "VIDE Sprite Export",
  description: "Render a VIDE character's actions as frames, sprite sheets with JSON, GIFs, MP4s and a glTF",
  settings: [
    { key: "actions", type: "string", required: true,
      eval: "C.scene.vide_sprite_actions",
      evalInfo: { showLinkButton: true, description: "Every action animating the armature's bones" },
      description: "Actions and their frame ranges, as 'walk:1-24,run:1-16'" },
    { key: "chunk_size", type: "int32", default: 8, propargs: { min: 1 },
      description: "Frames rendered by one task", visible: "submission" },
    { key: "size", type: "int32", default: 256, propargs: { min: 2 },
      description: "Pixels along the frames' longer side", visible: "submission" },
    { key: "formats", type: "string", default: "frames,sheet,gif,mp4,glb",
      description: "Comma-separated, of frames,sheet,gif,mp4,glb", visible: "submission" },
    { key: "camera", type: "string", default: "",
      description: "Camera object (empty: the scene's, or one made to frame every action)", visible: "submission" },
    { key: "output_dir", type: "string", subtype: "dir_path", required: true, visible: "submission",
      description: "Folder the sprites go into (every Worker must reach it)" },
    { key: "blendfile", type: "string", required: true, description: "The .blend to export", visible: "web" },
  ],
};

// "walk:1-24,run:1-16" as [{name, first, last}].
function parseActions(text) {
  return text.split(",").filter((s) => s.trim()).map((item) => {
    const cut = item.lastIndexOf(":");
    const [first, last] = item.slice(cut + 1).split("-").map(Number);
    if (cut < 1 || !(last >= first)) throw `bad action range "${item}", expected name:first-last`;
    return { name: item.slice(0, cut).trim(), first, last };
  });
}

// Frames first..last in pieces of at most `size`: [[a, b], ...].
function chunkRange(first, last, size) {
  const out = [];
  for (let a = first; a <= last; a += size) out.push([a, Math.min(a + size - 1, last)]);
  return out;
}

function blenderTask(name, settings, args) {
  const task = author.Task(name, "blender");
  task.addCommand(author.Command("blender-render", {
    exe: "{blender}",
    exeArgs: "{blenderArgs}",
    argsBefore: [],
    blendfile: settings.blendfile,
    args: ["-c", "vide"].concat(args),
  }));
  return task;
}

function compileJob(job) {
  const settings = job.settings;
  const formats = settings.formats.split(",").map((s) => s.trim());
  const camera = settings.camera ? ["--camera", settings.camera] : [];
  const out = settings.output_dir;
  const renders = [];
  if (formats.some((f) => ["frames", "sheet", "gif", "mp4"].includes(f))) {
    for (const action of parseActions(settings.actions)) {
      for (const [a, b] of chunkRange(action.first, action.last, settings.chunk_size)) {
        const task = blenderTask(`render-${action.name}-${a}-${b}`, settings, [
          "export", "--out", out, "--actions", action.name, "--frames", `${a}-${b}`,
          "--size", `${settings.size}`, "--formats", "frames"].concat(camera));
        job.addTask(task);
        renders.push(task);
      }
    }
  }
  const merged = formats.filter((f) => ["sheet", "gif", "mp4"].includes(f));
  if (merged.length) {
    const merge = blenderTask("merge", settings, ["merge", out, "--formats", merged.join(",")]);
    for (const task of renders) merge.addDependency(task);
    job.addTask(merge);
  }
  if (formats.includes("glb")) {
    job.addTask(blenderTask("gltf", settings, ["export", "--out", out, "--formats", "glb"].concat(camera)));
  }
}
