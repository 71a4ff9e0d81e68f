"""Meshfree C² binds: the bone rig (samples, handles and their distances) is kept per mesh, so that bones added
to the armature later go into its weights instead of a new bind."""

from dataclasses import dataclass

import numpy as np

from ..bridge.rig import deform_bones, mesh_in_plane, placement, write_groups
from ..core.bind_weights import joint_blend, meshfree_weights
from ..core.meshfree_bones import BoneRig


@dataclass
class KeptRig:
    rig: BoneRig
    names: list  # in the rig's order: as bound, then as inserted
    heads: np.ndarray  # (bones, 2) in the mesh's plane
    tails: np.ndarray
    placement: bytes
    settings: tuple  # the bind's meshfree settings the rig was made with
    blend: object = None  # Joint Blending, factored for this mesh and bones


kept = {}  # Object.session_uid -> KeptRig


def measure(ob, arm, points, tris, names, heads, tails, settings):
    """(weights, which bones lie wholly outside, what to keep) for a bind of `ob`."""
    rig = BoneRig(points, tris, heads, tails, settings.spacing(points), settings.spread, settings.chains,
                  settings.joint_pull)
    blend = joint_blend(points, tris, *rig.held(), settings, rig.samples.domain)
    weights = meshfree_weights(rig.vertex_weights(), blend, settings)
    return weights, rig.outside, KeptRig(rig, names, heads, tails, placement(ob, arm), settings.meshfree_key(),
                                         blend)


def insert(ob, arm, settings):
    """Adds the bones `arm` gained since `ob` was bound into its kept weights and writes them. Returns how
    many were inserted; 0, with nothing kept any more, when that cannot be done (nothing kept, other
    settings, the mesh or a bone moved, a bone gone, a first joint): the caller binds again."""
    rig = kept.pop(ob.session_uid, None)  # back only once the insertion went through
    if rig is None or rig.settings != settings.meshfree_key() or rig.placement != placement(ob, arm):
        return 0
    plane, points, tris = mesh_in_plane(ob)
    names, heads, tails, _flat = deform_bones(arm, plane)
    where = {name: i for i, name in enumerate(names)}
    new = [i for i, name in enumerate(names) if name not in set(rig.names)]
    if not new or not all(name in where for name in rig.names):
        return 0
    at = [where[name] for name in rig.names]
    moved = max(np.abs(heads[at] - rig.heads).max(), np.abs(tails[at] - rig.tails).max())
    if moved > 1e-7 * rig.rig.size or not all(rig.rig.add(heads[i], tails[i]) for i in new):
        return 0
    rig.names += [names[i] for i in new]
    rig.heads, rig.tails = np.vstack([rig.heads, heads[new]]), np.vstack([rig.tails, tails[new]])
    rig.blend = joint_blend(points, tris, *rig.rig.held(), settings, rig.rig.samples.domain)
    write_groups(ob, rig.names, meshfree_weights(rig.rig.vertex_weights(), rig.blend, settings))
    ob.vide.bind.bones = "\n".join(names)
    kept[ob.session_uid] = rig
    return len(new)
