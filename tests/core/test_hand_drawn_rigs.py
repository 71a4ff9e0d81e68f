"""Rigs drawn the way artists draw them, without Blender: joints a little apart, bones across each other,
limbs thinner than the sample spacing a few units apart. Meshfree C² binds them all, as Geodesic does."""

import numpy as np
import pytest
from test_geodesic_and_weights import LEGS, polygon_mesh
from test_meshfree import CHAIN_HEAD, CHAIN_TAIL
from vide_addon.core.meshfree_bones import JOINT_PULL, BoneRig


def right_foot(pts):
    return (pts[:, 0] > 44) & (pts[:, 1] < 30)


@pytest.mark.parametrize("apart", [0.2, 1.0, 4.0])
@pytest.mark.parametrize("chains", ["PULL_IN", "GAUSSIAN"])
def test_joints_a_little_apart_are_joints(apart, chains):
    """Each bone's head moved `apart` units off its parent's tail (spacing 2): the joints still count as
    shared, so the handles are pulled in (or the Gaussian used) instead of the bind failing."""
    pts, tris = polygon_mesh(LEGS, 3.0, jitter=0.2)
    angle = np.linspace(0, 2 * np.pi, len(CHAIN_HEAD), endpoint=False)
    heads = CHAIN_HEAD + apart * np.column_stack([np.cos(angle), np.sin(angle)])
    rig = BoneRig(pts, tris, heads, CHAIN_TAIL, 2.0, chains=chains)
    w = rig.vertex_weights()
    assert np.abs(w.sum(axis=1) - 1).max() < 1e-9 and w.min() >= 0
    if chains == "PULL_IN":
        assert rig.joint_pull == JOINT_PULL
        assert w[right_foot(pts), :3].max() < 0.01, "the left leg's bones stay off the right foot"


def test_bones_drawn_across_each_other_bind():
    """Two bones that cross (an arm drawn over the body) touch where they cross: their supports may cover
    each other, and the bind goes through with weights that sum to 1 and interpolate elsewhere."""
    box = np.array([(0, 0), (100, 0), (100, 100), (0, 100)], float)
    pts, tris = polygon_mesh(box, 3.0, jitter=0.2)
    heads, tails = np.array([(20., 20.), (20., 80.), (85., 50.)]), np.array([(80., 80.), (80., 20.), (95., 50.)])
    w = BoneRig(pts, tris, heads, tails, 2.0).vertex_weights()
    assert np.abs(w.sum(axis=1) - 1).max() < 1e-9 and w.min() >= 0
    near_third = np.hypot(pts[:, 0] - 90, pts[:, 1] - 50) < 3
    assert w[near_third, 2].min() > 0.99, "a bone clear of the crossing keeps its own weights"


def test_legs_thinner_than_the_sample_spacing_take_nothing_from_each_other():
    """Hooves 5 units wide and 2 apart, with samples 8 units apart: few or no samples inside a leg, so its
    vertices look along the mesh, never across the gap. The left leg's only bone is high up; the right foot's
    bone, 2 units away in a straight line, must still put nothing on the left foot."""
    legs = np.array([(0, 0), (5, 0), (5, 60), (7, 60), (7, 0), (12, 0), (12, 80), (0, 80)], float)
    pts, tris = polygon_mesh(legs, 1.0, jitter=0.1)
    heads, tails = np.array([(2.5, 55.), (9.5, 30.), (6., 65.)]), np.array([(2.5, 40.), (9.5, 5.), (6., 78.)])
    w = BoneRig(pts, tris, heads, tails, 8.0).vertex_weights()
    assert np.abs(w.sum(axis=1) - 1).max() < 1e-9
    left_foot = (pts[:, 1] < 20) & (pts[:, 0] <= 5)
    assert w[left_foot, 1].max() < 0.01, w[left_foot, 1].max()


def test_a_bone_with_both_ends_inside_is_not_outside():
    """Pulled in from its joints, the handle of a bone spanning a notch lies wholly in the notch; the bone
    itself does not, and is not reported as outside."""
    u_shape = np.array([(0, 0), (60, 0), (60, 60), (50, 60), (50, 10), (10, 10), (10, 60), (0, 60)], float)
    pts, tris = polygon_mesh(u_shape, 2.0, jitter=0.2)
    heads, tails = np.array([(5., 50.), (5., 20.)]), np.array([(55., 50.), (5., 50.)])
    rig = BoneRig(pts, tris, heads, tails, 2.0)
    assert rig.joint_pull > 0 and rig.outside == [False, False]
    assert not BoneRig(pts, tris, [(20., 40.)], [(40., 40.)], 2.0).outside == [False], "wholly in the notch"
