"""A drawing's points for a graph that gives none: laid out from its edges alone, deterministically.

Classical multidimensional scaling of the graph's hop distances (the two leading eigenvectors of
the double-centred squared-distance matrix, by power iteration from a fixed start) puts nodes that
are few steps apart near each other and keeps the graph's overall shape; a few rounds of
force-directed spreading (Fruchterman and Reingold's repulsion, with their edges' attraction) then
pull apart the nodes MDS set on top of one another. Nothing random: the same graph gives the same
points on every machine (nodes are taken in sorted order, ties broken by name).

Disconnected parts are laid out one by one and set side by side, largest first.
"""

from __future__ import annotations

import math
from collections import deque

MAX_NODES = 1_500  # past this, nodes are set on a grid: the layout's cost grows with the square
POWER_ROUNDS = 80
SPREAD_ROUNDS = 60
SPACING = 60.0  # the distance between neighbours, in the drawing's units

Point = tuple[float, float]


def layout(nodes: list[str], edges: dict[str, list[str]]) -> dict[str, Point]:
    """Points for ``nodes`` (ids), with neighbours ``edges[n]`` (either direction is enough); every
    point lies at x, y >= SPACING."""
    names = sorted(set(nodes))
    if len(names) > MAX_NODES:
        return _grid(names)
    adj: dict[str, set[str]] = {n: set() for n in names}
    for a, bs in edges.items():
        for b in bs:
            if a in adj and b in adj and a != b:
                adj[a].add(b)
                adj[b].add(a)
    parts = _components(names, adj)
    placed: dict[str, Point] = {}
    x_offset = 0.0
    for part in parts:
        points = _spread(_mds(part, adj), adj)
        xs = [p[0] for p in points.values()]
        ys = [p[1] for p in points.values()]
        x0, y0 = min(xs), min(ys)
        for n, (x, y) in points.items():
            placed[n] = (x - x0 + x_offset + SPACING, y - y0 + SPACING)
        x_offset += max(xs) - x0 + SPACING * 2
    return placed


def _grid(names: list[str]) -> dict[str, Point]:
    side = math.ceil(math.sqrt(len(names)))
    return {n: (SPACING * (1 + i % side), SPACING * (1 + i // side)) for i, n in enumerate(names)}


def _components(names: list[str], adj: dict[str, set[str]]) -> list[list[str]]:
    seen: set[str] = set()
    parts = []
    for n in names:
        if n in seen:
            continue
        part = sorted(_hops(n, adj))
        seen.update(part)
        parts.append(part)
    parts.sort(key=lambda p: (-len(p), p[0]))
    return parts


def _hops(start: str, adj: dict[str, set[str]]) -> dict[str, int]:
    dist = {start: 0}
    queue = deque([start])
    while queue:
        n = queue.popleft()
        for m in sorted(adj[n]):
            if m not in dist:
                dist[m] = dist[n] + 1
                queue.append(m)
    return dist


def _mds(part: list[str], adj: dict[str, set[str]]) -> dict[str, Point]:
    n = len(part)
    if n == 1:
        return {part[0]: (0.0, 0.0)}
    if n == 2:
        return {part[0]: (0.0, 0.0), part[1]: (SPACING, 0.0)}
    index = {name: i for i, name in enumerate(part)}
    sq = [[0.0] * n for _ in range(n)]
    for name in part:
        row = sq[index[name]]
        for other, d in _hops(name, adj).items():
            row[index[other]] = float(d * d)
    # double centring: B = -1/2 (D2 - row means - column means + grand mean)
    means = [sum(r) / n for r in sq]
    grand = sum(means) / n
    b = [[-0.5 * (sq[i][j] - means[i] - means[j] + grand) for j in range(n)] for i in range(n)]
    units: list[list[float]] = []  # the eigenvectors found, of length 1
    scales: list[float] = []
    for k in range(2):
        v = [math.cos(i * (1.3 + k)) + 0.5 * math.sin(i * 0.7 + k) for i in range(n)]  # a fixed start
        value = 0.0
        for _ in range(POWER_ROUNDS):
            w = [sum(x * y for x, y in zip(row, v)) for row in b]
            for axis in units:  # deflation: stay apart from the axis already found
                dot = sum(x * y for x, y in zip(w, axis))
                w = [x - dot * y for x, y in zip(w, axis)]
            value = math.sqrt(sum(x * x for x in w)) or 1.0
            v = [x / value for x in w]
        units.append(v)
        scales.append(math.sqrt(max(value, 1e-9)))
    xs = [x * scales[0] * SPACING for x in units[0]]
    ys = [y * scales[1] * SPACING for y in units[1]]
    if sum(xs[i] for i in range(n) if i < n // 2) > sum(xs[i] for i in range(n) if i >= n // 2):
        xs = [-x for x in xs]  # a fixed orientation, whatever sign the iteration ended with
    if sum(ys[i] for i in range(n) if i < n // 2) > sum(ys[i] for i in range(n) if i >= n // 2):
        ys = [-y for y in ys]
    # scaled so that neighbours lie SPACING apart, as the spreading expects
    lengths = sorted(math.hypot(xs[index[a]] - xs[index[b]], ys[index[a]] - ys[index[b]])
                     for a in part for b in adj[a] if a < b)
    typical = lengths[len(lengths) // 2] if lengths else SPACING
    f = SPACING / typical if typical > 1e-6 else 1.0
    return {name: (xs[i] * f, ys[i] * f) for i, name in enumerate(part)}


def _spread(points: dict[str, Point], adj: dict[str, set[str]]) -> dict[str, Point]:
    """Fruchterman-Reingold rounds from the given points, with a step that cools to nothing."""
    names = sorted(points)
    if len(names) < 3:
        return points
    pos = {n: list(points[n]) for n in names}
    k = SPACING
    step = SPACING / 2
    for _ in range(SPREAD_ROUNDS):
        moves = {n: [0.0, 0.0] for n in names}
        for i, a in enumerate(names):
            pa = pos[a]
            for b in names[i + 1:]:
                pb = pos[b]
                dx, dy = pa[0] - pb[0], pa[1] - pb[1]
                d2 = dx * dx + dy * dy
                if d2 > 9 * k * k:
                    continue  # far apart: their push is too small to matter
                if d2 < 1e-6:  # on top of each other: pushed apart along a fixed direction
                    dx, dy, d2 = 0.1, 0.1 * (i % 3 - 1) + 0.05, 0.02
                f = 2.5 * k * k / d2
                moves[a][0] += dx * f
                moves[a][1] += dy * f
                moves[b][0] -= dx * f
                moves[b][1] -= dy * f
            for b in adj[a]:
                if b <= a:
                    continue
                pb = pos[b]
                dx, dy = pa[0] - pb[0], pa[1] - pb[1]
                d = math.sqrt(dx * dx + dy * dy) or 1e-3
                f = d / k
                moves[a][0] -= dx * f
                moves[a][1] -= dy * f
                moves[b][0] += dx * f
                moves[b][1] += dy * f
        for n in names:
            mx, my = moves[n]
            length = math.sqrt(mx * mx + my * my)
            if length > 0:
                shift = min(length, step)
                pos[n][0] += mx / length * shift
                pos[n][1] += my / length * shift
        step *= 0.93
    return {n: (round(p[0], 1), round(p[1], 1)) for n, p in pos.items()}
