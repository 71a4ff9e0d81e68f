"""Geodesic binds: distances from each bone inside the shape, kept per mesh so that a bone's new smoothness
re-weights without measuring again."""

from dataclasses import dataclass

import numpy as np

from ..bridge.rig import bone_smoothness, rest_fingerprint, write_groups
from ..core.bind_weights import geodesic_weights, joint_blend
from ..core.geodesic import Domain, bone_distances
from ..core.weights import MEASURED_REACH, REACH


@dataclass
class Measured:
    names: list
    dist: np.ndarray  # (vertices, bones)
    fingerprint: bytes  # of the mesh, its placement and the rest pose the distances were measured for
    weights: object  # as last written (CSR)
    blend: object = None  # Joint Blending, factored for this mesh and bones
    reach: float = np.inf  # how far past the nearest bone the distances were measured


kept = {}  # Object.session_uid -> Measured


def measure(ob, arm, points, tris, names, heads, tails, settings):
    """(weights, which bones lie wholly outside, what to keep) for a bind of `ob`."""
    smoothness = bone_smoothness(arm, names, settings.smoothness)
    # Cut short only for Joint Blending, whose seeds fall off from the nearest bone's distance (MEASURED_REACH).
    reach = MEASURED_REACH * float(np.max(smoothness, initial=0.0)) if settings.joint_blend else np.inf
    domain = Domain.from_mesh(points, tris, bones=len(names))
    dist, outside = bone_distances(domain, heads, tails, reach)
    blend = joint_blend(points, tris, heads, tails, settings, domain)
    weights = geodesic_weights(dist, smoothness, blend, settings)
    if np.isfinite(dist).all():  # nothing was beyond the reach: any smoothness re-weights from these
        reach = np.inf
    return weights, outside, Measured(names, dist, rest_fingerprint(ob, arm), weights, blend, reach)


def reweight(ob, arm, settings):
    """Weights `ob` again from its kept distances with its bones' current smoothness. False, changing
    nothing, when nothing is kept, it no longer fits the mesh and the rest pose, or (distances cut short, with
    Joint Blending) a bone's smoothness grew past a fifth of how far they were measured (REACH of its smoothness
    lengths: five times the largest smoothness of the bind; seeds under exp(-REACH) are then 0, and pruned)."""
    measured = kept.get(ob.session_uid)
    if measured is None or measured.fingerprint != rest_fingerprint(ob, arm):
        return False
    smoothness = bone_smoothness(arm, measured.names, settings.smoothness)
    if REACH * float(np.max(smoothness, initial=0.0)) > measured.reach:
        return False
    weights = geodesic_weights(measured.dist, smoothness, measured.blend, settings)
    write_groups(ob, measured.names, weights, previous=measured.weights)
    measured.weights = weights
    return True
