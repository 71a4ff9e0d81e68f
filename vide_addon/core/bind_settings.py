"""What Bind to Armature is asked for: the method and its settings. Their defaults live here (the properties in
props.py take theirs from this class), and the binding takes this, not an operator or a property group."""

from dataclasses import dataclass

import numpy as np

from .meshfree import SPREAD
from .meshfree_bones import JOINT_PULL
from .weights import MAX_INFLUENCES, PRUNE

AUTO_SAMPLES = 100.0  # meshfree samples across the mesh's longest side when Sample Spacing is 0


@dataclass(frozen=True)
class BindSettings:
    method: str = "GEODESIC"  # or "MESHFREE"
    smoothness: float = 0.03  # geodesic: how far a bone's weight spreads, for bones without their own (scene units)
    sample_spacing: float = 0.0  # meshfree: distance between samples; 0: AUTO_SAMPLES across the mesh
    spread: float = SPREAD  # meshfree: how far a support reaches towards the nearest other bone
    chains: str = "PULL_IN"  # meshfree, bones that share a joint: "PULL_IN" (Joint Pull-In) or "GAUSSIAN"
    joint_pull: float = JOINT_PULL  # meshfree, "PULL_IN": fraction of each bone pulled in from both ends
    joint_blend: float = 0.0  # Joint Blending's strength (0: off)
    max_influences: int = MAX_INFLUENCES
    prune: float = PRUNE
    preserve_volume: bool = False  # the Armature modifier's Preserve Volume

    def meshfree_key(self):
        """What a meshfree bind's kept weights depend on besides the mesh and the bones."""
        return self.sample_spacing, self.spread, self.chains, self.joint_pull

    def spacing(self, points):
        """The meshfree sample spacing for a mesh with these vertices (n, 2)."""
        return self.sample_spacing or float(np.ptp(points, axis=0).max()) / AUTO_SAMPLES
