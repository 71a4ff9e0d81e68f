"""A bind's weights (vertices, bones; a scipy.sparse CSR matrix) from what its method measured, with the bind's
settings: Joint Blending or not, then the strongest few kept, pruned and normalized. Every bind, re-weight and
insertion ends here."""

import numpy as np

from .smooth_weights import (GEODESIC_REACH, MESHFREE_SCALE, MESHFREE_WIDTH_FLOOR, ZONE, JointBlend,
                             exponential_seeds, meshfree_seeds)
from .weights import falloff_weights, strongest


def joint_blend(points, tris, heads, tails, settings, domain=None):
    """Joint Blending factored for this mesh and these bones (for Meshfree C², its handles and joints:
    BoneRig.held), or None when it is off, solved on its zone (`JointBlend`). A `Domain` of the mesh, when the
    method has one, gives the outline's vertices. Geodesic's also gives its thinned nodes: where they are closer
    together than the vertices are to the outline on average (limbs 4 or more nodes wide), the blend is solved on
    them (`JointBlend`'s `coarse`); thinned further, it would blur the joints."""
    if not settings.joint_blend:
        return None
    outline = None if domain is None else np.flatnonzero(domain.on_boundary)
    if settings.method == 'MESHFREE':
        return JointBlend(points, tris, heads, tails, 1.0 / (MESHFREE_SCALE * settings.joint_blend),
                          width_floor=MESHFREE_WIDTH_FLOOR, outline=outline, zone=ZONE)
    coarse = None
    if domain is not None and domain.interpolation is not None and domain.spacing <= domain.clearance.mean():
        tri, inside = domain.coarse
        coarse = domain.nodes, tri.simplices[inside], domain.interpolation
    return JointBlend(points, tris, heads, tails, 1.0 / settings.joint_blend, GEODESIC_REACH, outline=outline,
                      coarse=coarse, zone=ZONE)


def finish(weights, blend, settings):
    """Blended over the mesh (Joint Blending) or not, with the strongest kept, pruned and normalized."""
    if blend is not None:
        return blend(weights, settings.max_influences, settings.prune)
    return strongest(weights, settings.max_influences, settings.prune)


def meshfree_weights(weights, blend, settings):
    """Meshfree C² weights (n, bones) as the rig gives them, blended (from `meshfree_seeds`) or not."""
    return finish(weights if blend is None else meshfree_seeds(weights), blend, settings)


def geodesic_weights(dist, smoothness, blend, settings):
    """Geodesic weights from inside distances (n, bones) and each bone's smoothness."""
    if blend is None:
        return falloff_weights(dist, smoothness, settings.max_influences, settings.prune)
    return finish(exponential_seeds(dist[blend.nodes], smoothness), blend, settings)
