"""Shared test helpers: synthetic images, image planes made with Blender's own importer, and measurements
of a vectorized mesh in image pixels."""

import itertools

import numpy as np
from stage import import_plane, save_png


# ---------------------------------------------------------------- synthetic alpha shapes (row 0 = bottom)

def grid(h, w):
    """Pixel-centre coordinates (x, y) of an h x w image."""
    yy, xx = np.mgrid[0:h, 0:w] + 0.5
    return xx, yy


def legs(h=160, w=120, gap=2):
    """Two legs `gap` px apart, joined by a hip at the top."""
    a = np.zeros((h, w), np.float32)
    mid = w // 2
    a[10:120, mid - 30:mid - gap // 2] = 1
    a[10:120, mid + gap - gap // 2:mid + 30] = 1
    a[120:150, mid - 30:mid + 30] = 1
    return a


def ring(h=128, w=128, outer=50, inner=20):
    xx, yy = grid(h, w)
    r = np.hypot(xx - w / 2, yy - h / 2)
    return ((r < outer) & (r > inner)).astype(np.float32)


def islands(h=100, w=160):
    xx, yy = grid(h, w)
    a = np.zeros((h, w), np.float32)
    for cx in (30, 80, 130):
        a[np.hypot(xx - cx, yy - 50) < 18] = 1
    return a


def border_shape(h=80, w=100):
    """A shape that touches all four image borders (a plus sign)."""
    a = np.zeros((h, w), np.float32)
    a[:, 40:60] = 1
    a[30:50, :] = 1
    return a


def soft_disk(h=128, w=128, radius=40.0):
    """An anti-aliased disk whose 0.5 alpha contour is the circle of `radius` around the centre."""
    xx, yy = grid(h, w)
    return np.clip(radius - np.hypot(xx - w / 2, yy - h / 2) + 0.5, 0, 1).astype(np.float32)


def rgba(alpha, color=(0.9, 0.4, 0.1)):
    """An RGBA image with a colour ramp (so pixel positions are visible in renders) and the given alpha."""
    h, w = alpha.shape
    xx, yy = grid(h, w)
    out = np.empty((h, w, 4), np.float32)
    out[..., 0] = color[0] * xx / w
    out[..., 1] = color[1] + 0.5 * yy / h
    out[..., 2] = color[2]
    out[..., 3] = alpha
    return out


# ---------------------------------------------------------------- Blender side

def image_plane(tmp_path, alpha, name="shape", align='-Y'):
    """An image plane made by Blender's own Images as Planes from `alpha` (saved as PNG).

    Each call writes its own file: Images as Planes reuses an image already loaded from the same path.
    In Blender 5.0 it also reuses a material of the same name, so a test that makes several planes gives
    each its own name.
    """
    folder = tmp_path / f"plane{next(_planes)}"
    folder.mkdir()
    return import_plane(save_png(folder / f"{name}.png", rgba(alpha)), align)


_planes = itertools.count()


def select_only(*objects):
    import bpy

    for ob in bpy.context.view_layer.objects:
        ob.select_set(ob in objects)
    bpy.context.view_layer.objects.active = objects[0]


def mesh_arrays(ob):
    """(local co (n, 3), triangles (m, 3), per-vertex uv (n, 2)) of a triangle mesh."""
    me = ob.data
    co = np.empty(len(me.vertices) * 3, np.float32)
    me.vertices.foreach_get("co", co)
    loops = np.empty(len(me.loops), np.int32)
    me.loops.foreach_get("vertex_index", loops)
    sizes = np.empty(len(me.polygons), np.int32)
    me.polygons.foreach_get("loop_total", sizes)
    assert (sizes == 3).all(), "every face is a triangle"
    uv_loop = np.empty(len(me.loops) * 2, np.float32)
    me.uv_layers.active.data.foreach_get("uv", uv_loop)
    uv = np.zeros((len(me.vertices), 2))
    uv[loops] = uv_loop.reshape(-1, 2)
    return co.reshape(-1, 3).astype(np.float64), loops.reshape(-1, 3), uv


def mesh_in_pixels(ob, shape):
    """Vertices in image pixels (from UVs) and triangles counter-clockwise in image space."""
    _co, tris, uv = mesh_arrays(ob)
    h, w = shape
    pts = uv * [w, h]
    return pts, oriented(pts, tris)


def oriented(pts, tris):
    area = signed_areas(pts, tris)
    return np.where((area < 0)[:, None], tris[:, ::-1], tris)


def signed_areas(pts, tris):
    a, b, c = pts[tris[:, 0]], pts[tris[:, 1]], pts[tris[:, 2]]
    return 0.5 * ((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0]))


def covered_pixels(pts, tris, shape, eps=1e-9):
    """Boolean (h, w): pixel centres inside (or on the edge of) some triangle."""
    h, w = shape
    out = np.zeros(shape, bool)
    for t in tris:
        p = pts[t]
        x0, y0 = np.floor(p.min(axis=0) - 0.5).astype(int)
        x1, y1 = np.ceil(p.max(axis=0) - 0.5).astype(int)
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w - 1), min(y1, h - 1)
        if x1 < x0 or y1 < y0:
            continue
        yy, xx = np.mgrid[y0:y1 + 1, x0:x1 + 1] + 0.5
        inside = np.ones(xx.shape, bool)
        for i in range(3):
            a, b = p[i], p[(i + 1) % 3]
            cross = (b[0] - a[0]) * (yy - a[1]) - (b[1] - a[1]) * (xx - a[0])
            inside &= cross >= -eps * np.hypot(*(b - a))
        out[y0:y1 + 1, x0:x1 + 1] |= inside
    return out


def boundary_edges(tris):
    """Edges used by exactly one triangle, oriented as in that triangle."""
    e = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])
    key = np.sort(e, axis=1)
    _, idx, counts = np.unique(key, axis=0, return_index=True, return_counts=True)
    return e[idx[counts == 1]]


def boundary_loops(tris):
    """Number of closed boundary loops (outer outlines plus holes)."""
    return _pieces(boundary_edges(tris), tris.max() + 1)


def _pieces(edges, n):
    """Number of connected pieces among the vertices that `edges` use."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    labels = connected_components(graph, directed=False)[1]
    return len(np.unique(labels[np.unique(edges)]))


def components(tris):
    """Number of edge-connected pieces of a triangle mesh."""
    return _pieces(np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]]]), tris.max() + 1)


def min_angles(pts, tris):
    a, b, c = pts[tris[:, 0]], pts[tris[:, 1]], pts[tris[:, 2]]
    out = []
    for p, q, r in ((a, b, c), (b, c, a), (c, a, b)):
        u, v = q - p, r - p
        cos = (u * v).sum(1) / (np.hypot(*u.T) * np.hypot(*v.T))
        out.append(np.degrees(np.arccos(np.clip(cos, -1, 1))))
    return np.min(out, axis=0)


def set_vertices_from_uv(ob, uv):
    """Moves every vertex of a vectorized plane to the place of its UV (n, 2) on the image (UVs moved with it)."""
    me = ob.data
    m = np.array(ob.vide.uv_to_local).reshape(3, 3)
    co = np.column_stack([uv, np.ones(len(uv))]) @ m
    me.vertices.foreach_set("co", co.astype(np.float32).ravel())
    loops = np.empty(len(me.loops), np.int32)
    me.loops.foreach_get("vertex_index", loops)
    me.uv_layers.active.data.foreach_set("uv", uv[loops].astype(np.float32).ravel())
    me.update()


def jitter_interior(ob, shape, seed=0, amount=0.25):
    """Moves the interior vertices of a vectorized plane by up to `amount` of their shortest edge, so that a
    symmetric mesh is no longer symmetric (the outline stays). Returns the new UVs (n, 2)."""
    _co, tris, uv = mesh_arrays(ob)
    edges = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])
    key, count = np.unique(np.sort(edges, axis=1), axis=0, return_counts=True)
    outline = np.zeros(len(uv), bool)
    outline[key[count == 1].ravel()] = True
    px = uv * [shape[1], shape[0]]
    shortest = np.full(len(uv), np.inf)
    length = np.hypot(*(px[key[:, 0]] - px[key[:, 1]]).T)
    np.minimum.at(shortest, key[:, 0], length)
    np.minimum.at(shortest, key[:, 1], length)
    move = np.random.default_rng(seed).uniform(-amount, amount, uv.shape) * shortest[:, None] / [shape[1], shape[0]]
    uv = uv + np.where(outline[:, None], 0.0, move)
    set_vertices_from_uv(ob, uv)
    return uv


# ---------------------------------------------------------------- rigs

def pixel_to_world(ob, shape, px):
    """World positions of image pixel coordinates (x, y up) on a vectorized plane."""
    h, w = shape
    m = np.array(ob.vide.uv_to_local).reshape(3, 3)
    uv = np.asarray(px, float) / [w, h]
    local = np.column_stack([uv, np.ones(len(uv))]) @ m
    mw = np.array(ob.matrix_world)
    return local @ mw[:3, :3].T + mw[:3, 3]


def add_armature(bones, name="Rig", matrix=None):
    """An armature object (at `matrix`, a mathutils Matrix, or the origin) with bones
    {name: (head, tail[, parent name])} given in world space."""
    import bpy

    arm = bpy.data.objects.new(name, bpy.data.armatures.new(name))
    bpy.context.scene.collection.objects.link(arm)
    to_local = np.eye(4)
    if matrix is not None:
        arm.matrix_world = matrix
        to_local = np.linalg.inv(np.array(matrix))
    select_only(arm)
    bpy.ops.object.mode_set(mode='EDIT')
    for bone_name, (head, tail, *parent) in bones.items():
        eb = arm.data.edit_bones.new(bone_name)
        eb.head, eb.tail = ((to_local @ [*p, 1.0])[:3].tolist() for p in (head, tail))
        if parent:
            eb.parent = arm.data.edit_bones[parent[0]]
    bpy.ops.object.mode_set(mode='OBJECT')
    return arm


def bone_weights(ob, names):
    """(n, bones) weights of the vertex groups `names` (0 where a vertex is not in a group)."""
    index = {ob.vertex_groups[n].index: col for col, n in enumerate(names) if n in ob.vertex_groups}
    out = np.zeros((len(ob.data.vertices), len(names)))
    for v in ob.data.vertices:
        for g in v.groups:
            if g.group in index:
                out[v.index, index[g.group]] = g.weight
    return out


def influences(ob):
    """Per vertex: (number of groups with a nonzero weight, their sum, the smallest weight)."""
    counts, sums, mins = [], [], []
    for v in ob.data.vertices:
        w = [g.weight for g in v.groups if g.weight > 0]
        counts.append(len(w))
        sums.append(sum(w))
        mins.append(min([g.weight for g in v.groups], default=0.0))
    return np.array(counts), np.array(sums), np.array(mins)


def interpolate_on_mesh(pts, tris, values, queries):
    """Values (n, k) at vertices, linearly interpolated at query points inside triangles of the mesh
    itself (never across a gap). Returns (values at queries, found mask)."""
    from scipy.spatial import cKDTree

    corners = pts[tris]
    centre = corners.mean(axis=1)
    radius = np.hypot(*(corners - centre[:, None]).transpose(2, 0, 1)).max()
    out = np.zeros((len(queries), values.shape[1]))
    found = np.zeros(len(queries), bool)
    for q, near in enumerate(cKDTree(centre).query_ball_point(queries, radius + 1e-9)):
        for t in near:
            a, b, c = corners[t]
            m = np.array([b - a, c - a]).T
            lam = np.linalg.solve(m, queries[q] - a)
            bary = np.array([1 - lam.sum(), *lam])
            if bary.min() >= -1e-9:
                out[q] = bary @ values[tris[t]]
                found[q] = True
                break
    return out, found
