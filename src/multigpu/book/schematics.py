"""All-reduce schematics drawn by code from the model, never by hand: :func:`allreduce_schematic` draws ring,
tree, NVLS, one-shot and two-shot all-reduce on ``n`` GPUs with the bytes every link carries, from
:func:`link_bytes` (bytes per direction per link for one all-reduce of ``size_bytes`` bytes per GPU, the
nccl-tests size). They follow the house rules of :mod:`multigpu.book.diagrams` (title, source line, at most 7
inches wide, no text under 8 pt, labels at WCAG AA contrast) and draw in the current language.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import networkx as nx
from matplotlib.figure import Figure

from multigpu.book import lang, plotting
from multigpu.book.diagrams import (
    BLACK,
    BLUE,
    LABEL_PT,
    PHONE_TEXT_IN,
    VERMILLION,
    WHITE,
    WIDTH_IN,
    below,
    blank_axes,
    draw_vertices,
    finish,
    ink,
    phone_figure,
    role,
    size_text,
    vertex_label,
    wrap_text,
)
from multigpu.book.lang import N_, _, text_width
from multigpu.common.errors import InputError

#: The all-reduce schematics the book draws: GPUs, and bytes each GPU contributes (1 GB = 1e9 bytes).
SCHEMATIC_GPUS = 4


SCHEMATIC_BYTES = 1e9


#: all-reduce algorithms drawn here -> the name :mod:`multigpu.comm.collectives` gives them
SCHEMATICS: dict[str, str] = {"ring": "ring", "tree": "tree", "nvls": "nvls", "oneshot": "direct",
                              "twoshot": "two-shot"}


def double_binary_tree(n: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """NCCL's double binary tree on ranks 0..n-1 (trees.cc): two lists of (parent, child) edges.

    The second tree mirrors the first (rank r -> n-1-r) for even ``n`` and shifts it by one for odd ``n``,
    so that a rank that is an inner node in one tree is a leaf in the other. Each tree carries half the data.
    """
    first = [(_btree_parent(n, r), r) for r in range(1, n)]
    if n % 2:
        real = lambda v: (v + 1) % n  # noqa: E731  (virtual rank v of the shifted tree)
    else:
        real = lambda v: n - 1 - v  # noqa: E731
    return first, [(real(p), real(c)) for p, c in first]


def _btree_parent(n: int, rank: int) -> int:
    """Parent of ``rank`` > 0 in NCCL's binary tree over ``n`` ranks (lowest set bit rule)."""
    bit = rank & -rank
    up = (rank ^ bit) | (bit << 1)
    return up if up < n else rank ^ bit


def link_bytes(algorithm: str, n: int, size_bytes: float) -> dict[str, dict]:
    """Bytes each link carries, per direction, in one all-reduce of ``size_bytes`` bytes per GPU (S).

    Returns ``{"links": {(src, dst): bytes}, "send": {gpu: bytes}, "recv": {gpu: bytes}}``: ``links`` the
    bytes crossing each directed link ``src -> dst`` (vertices ``gpu{i}`` and ``nvswitch``), ``send`` and
    ``recv`` the bytes each GPU puts on / takes off its links in total. Closed forms:

    - ``ring``: each GPU sends 2(n-1)/n S to the next (reduce-scatter, then all-gather, n-1 steps of S/n);
    - ``oneshot``: each GPU sends all of S to each of the n-1 peers, (n-1) S in all;
    - ``twoshot``: reduce-scatter then all-gather by direct transfers, S/n to each peer in each, 2S/n per
      link, 2(n-1)/n S per GPU;
    - ``nvls``: each GPU sends S up to the switch, which reduces it, plus its reduced 1/n slice for the
      switch to multicast (S/n); down it gets its slice (S/n) and the multicast result (S): (n+1)/n S each
      way, as :mod:`multigpu.comm.collectives` counts it (the floor is S each way);
    - ``tree``: NCCL's double binary tree, each tree carrying S/2: S/2 up each tree edge (reduce) and S/2
      down (broadcast), summed where both trees use the same pair.
    """
    if algorithm not in SCHEMATICS:
        raise InputError(f"unknown all-reduce '{algorithm}'; expected one of {', '.join(SCHEMATICS)}")
    if n < 2 or size_bytes <= 0:
        raise InputError(f"an all-reduce needs at least 2 GPUs and a positive size; got n={n}, {size_bytes} bytes")
    links = _LINK_RULES[algorithm](n, float(size_bytes))
    send = {f"gpu{i}": sum(b for (s, _), b in links.items() if s == f"gpu{i}") for i in range(n)}
    recv = {f"gpu{i}": sum(b for (_, d), b in links.items() if d == f"gpu{i}") for i in range(n)}
    return {"links": links, "send": send, "recv": recv}


def _ring_links(n: int, s: float) -> dict[tuple[str, str], float]:
    return {(f"gpu{i}", f"gpu{(i + 1) % n}"): 2 * (n - 1) / n * s for i in range(n)} if n > 2 else \
        {("gpu0", "gpu1"): s, ("gpu1", "gpu0"): s}


def _all_pairs(n: int, per_link: float) -> dict[tuple[str, str], float]:
    return {(f"gpu{a}", f"gpu{b}"): per_link for a in range(n) for b in range(n) if a != b}


def _nvls_links(n: int, s: float) -> dict[tuple[str, str], float]:
    each_way = (n + 1) / n * s
    return {key: each_way for i in range(n) for key in ((f"gpu{i}", "nvswitch"), ("nvswitch", f"gpu{i}"))}


def _tree_links(n: int, s: float) -> dict[tuple[str, str], float]:
    links: dict[tuple[str, str], float] = {}
    for tree in double_binary_tree(n):
        for parent, child in tree:
            for key in ((f"gpu{child}", f"gpu{parent}"), (f"gpu{parent}", f"gpu{child}")):
                links[key] = links.get(key, 0.0) + s / 2
    return links


_LINK_RULES = {
    "ring": _ring_links, "oneshot": lambda n, s: _all_pairs(n, s), "twoshot": lambda n, s: _all_pairs(n, 2 * s / n),
    "nvls": _nvls_links, "tree": _tree_links,
}


def _circle(n: int, radius: float = 1.0) -> dict[str, tuple[float, float]]:
    """GPU i on a circle, GPU 0 on top, clockwise."""
    return {f"gpu{i}": (radius * math.sin(2 * math.pi * i / n), radius * math.cos(2 * math.pi * i / n))
            for i in range(n)}


def _text_box(ax, text: str) -> tuple[float, float]:
    """Estimated (width, height) of a label at :data:`LABEL_PT` in ``ax``'s data units (equal aspect)."""
    fig_w, fig_h = ax.figure.get_size_inches()
    box = ax.get_position()
    span_x, span_y = abs(ax.get_xlim()[1] - ax.get_xlim()[0]), abs(ax.get_ylim()[1] - ax.get_ylim()[0])
    inches_per_unit = min(box.width * fig_w / span_x, box.height * fig_h / span_y)
    lines = text.split("\n")
    width_in = (max(text_width(line) for line in lines) * 0.62 + 0.8) * LABEL_PT / 72
    return width_in / inches_per_unit, (len(lines) * 1.25 + 0.4) * LABEL_PT / 72 / inches_per_unit


def _clear(spot, size, placed: list) -> bool:
    """Whether a box of ``size`` at ``spot`` misses every (centre, size) box in ``placed``."""
    return all(abs(spot[0] - c[0]) * 2 > size[0] + s[0] or abs(spot[1] - c[1]) * 2 > size[1] + s[1]
               for c, s in placed)


def _place_label(ax, a, b, text: str, placed: list, colour: str = BLACK) -> None:
    """Put ``text`` along the segment a-b at the first point whose box misses the boxes in ``placed``."""
    size = _text_box(ax, text)
    spots = [(a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]))
             for t in (0.5, 0.36, 0.64, 0.28, 0.72, 0.2, 0.8)]
    spot = next((p for p in spots if _clear(p, size, placed)), spots[0])
    placed.append((spot, size))
    ax.text(*spot, text, fontsize=LABEL_PT, ha="center", va="center", color=ink(colour), zorder=4,
            bbox={"boxstyle": "round,pad=0.15", "fc": WHITE, "ec": "none"})


def _obstacles(ax, pos: dict) -> list:
    """The vertex boxes, as (centre, size) for :func:`_place_label` to avoid."""
    return [(xy, _text_box(ax, vertex_label(v) if v != "nvswitch" else _("NVSwitch\n(reduces)")))
            for v, xy in pos.items()]


def _gpu_graph(n: int, pos: dict) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from((v, {"role": role(v)}) for v in pos)
    return graph


def _arrows(graph: nx.DiGraph, pos: dict, ax, edges, colour: str, rad: float = 0.0, both: bool = False) -> None:
    nx.draw_networkx_edges(graph, pos, edges, ax=ax, edge_color=colour, width=1.6, arrows=True, node_size=900,
                           arrowstyle="<|-|>" if both else "-|>", arrowsize=12, connectionstyle=f"arc3,rad={rad}")


def _ring_panel(ax, n: int, s: float) -> None:
    pos = _circle(n)
    graph = _gpu_graph(n, pos)
    links = link_bytes("ring", n, s)["links"]
    edges = list(links)
    _arrows(graph, pos, ax, edges, BLUE, rad=-0.25 if n > 2 else -0.3)
    placed = _obstacles(ax, pos)
    for (a, b), value in links.items():
        mid = ((pos[a][0] + pos[b][0]) / 2, (pos[a][1] + pos[b][1]) / 2)
        norm = math.hypot(*mid) or 1.0
        spot = (mid[0] / norm * 1.05, mid[1] / norm * 1.05) if n > 2 else (0.45 if a == "gpu0" else -0.45, 0.0)
        _place_label(ax, spot, spot, size_text(value), placed, BLUE)
    draw_vertices(graph, pos, ax)


def _pairs_panel(ax, n: int, per_link: float, colour: str) -> None:
    pos = _circle(n)
    graph = _gpu_graph(n, pos)
    pairs = [(f"gpu{a}", f"gpu{b}") for a in range(n) for b in range(a + 1, n)]
    _arrows(graph, pos, ax, pairs, colour, both=True)
    placed = _obstacles(ax, pos)
    for a, b in pairs if n <= PAIR_LABELS_UP_TO else [p for p in pairs if "gpu0" in p]:
        _place_label(ax, pos[a], pos[b], size_text(per_link), placed, colour)
    draw_vertices(graph, pos, ax)


def _nvls_panel(ax, n: int, s: float) -> None:
    pos = {**_circle(n), "nvswitch": (0.0, 0.0)}
    graph = _gpu_graph(n, pos)
    value = link_bytes("nvls", n, s)["links"][("gpu0", "nvswitch")]
    spokes = [(f"gpu{i}", "nvswitch") for i in range(n)]
    _arrows(graph, pos, ax, spokes, BLUE, both=True)
    placed = _obstacles(ax, pos)
    for a, b in spokes:
        _place_label(ax, pos[a], pos[b], size_text(value), placed, BLUE)
    draw_vertices(graph, pos, ax, {**{v: vertex_label(v) for v in pos}, "nvswitch": _("NVSwitch\n(reduces)")})


def _tree_panel(ax, n: int, tree: list[tuple[int, int]], s: float, colour: str) -> None:
    pos = _tree_layout(n, tree)
    graph = _gpu_graph(n, pos)
    edges = [(f"gpu{p}", f"gpu{c}") for p, c in tree]
    _arrows(graph, pos, ax, edges, colour, both=True)
    ax.set_ylim(min(y for _, y in pos.values()) - 0.35, 1.3)
    for a, b in edges:
        _side_label(ax, pos[a], pos[b], size_text(s / 2), colour)
    draw_vertices(graph, pos, ax)


def _side_label(ax, parent, child, text: str, colour: str) -> None:
    """Label a tree edge beside it, on the side the child lies (right of a vertical edge): left labels lower,
    right labels higher, so that the labels of neighbouring subtrees never meet."""
    side = -1 if child[0] < parent[0] - 1e-9 else 1
    t = 0.62 if side < 0 else 0.38
    mid = (parent[0] + t * (child[0] - parent[0]), parent[1] + t * (child[1] - parent[1]))
    ax.text(mid[0] + 0.06 * side, mid[1], text, fontsize=LABEL_PT, color=ink(colour), va="center", zorder=4,
            ha="right" if side < 0 else "left", bbox={"boxstyle": "round,pad=0.1", "fc": WHITE, "ec": "none"})


def _tree_layout(n: int, tree: list[tuple[int, int]]) -> dict[str, tuple[float, float]]:
    """Root on top, each level one unit lower; a level's GPUs spread in rank order."""
    parent = {c: p for p, c in tree}
    depth = {r: 0 for r in range(n)}
    for r in range(n):
        v = r
        while v in parent:
            v, depth[r] = parent[v], depth[r] + 1
    pos = {}
    for level in sorted(set(depth.values())):
        ranks = sorted(r for r in range(n) if depth[r] == level)
        for k, r in enumerate(ranks):
            pos[f"gpu{r}"] = (2.6 * (k + 0.5) / len(ranks) - 1.3, 1.0 - 0.85 * level)
    return pos


def allreduce_schematic(algorithm: str, n: int = 4, size_bytes: float = 1e9) -> Figure:
    """The traffic of one all-reduce of ``size_bytes`` bytes per GPU on ``n`` GPUs (2 to 8), every link
    labelled with the bytes it carries per direction (:func:`link_bytes`)."""
    totals = link_bytes(algorithm, n, size_bytes)
    if n > 8:
        raise InputError(f"the schematic draws 2 to 8 GPUs; got {n}")
    plotting.apply_style()
    panels = 2 if algorithm in ("tree", "twoshot") else 1
    title = _("{algorithm} all-reduce of {size} on {n} GPUs", algorithm=lang.label(_TITLES[algorithm]),
              size=size_text(size_bytes), n=n)
    caption = _schematic_caption(algorithm, n, size_bytes, totals)
    if plotting.on_phone():  # the panels one under the other, each with room for its two-line title
        fig, axes = phone_figure(title, [PHONE_PANEL_IN] * panels, gap_in=0.45 if panels == 2 else 0.0)
    else:
        fig = plt.figure(figsize=(WIDTH_IN, 4.4 if panels == 2 else 5.0))
        axes = [blank_axes(fig, (0.02 + 0.49 * i, 0.13, 0.96 / panels, 0.72)) for i in range(panels)]
    for ax in axes:
        ax.set_xlim(-1.45, 1.45)
        ax.set_ylim(-1.45, 1.45)
    _draw_schematic(axes, algorithm, n, float(size_bytes))
    if plotting.on_phone():
        fig.text(0.5, below(fig), plotting.wrap_title(caption, PHONE_TEXT_IN, LABEL_PT), fontsize=LABEL_PT,
                 ha="center", va="top")
    else:
        fig.text(0.5, 0.07, wrap_text(caption, 95), fontsize=LABEL_PT, ha="center", va="center")
    return finish(fig, title,
                  _("multigpu.book.schematics.link_bytes (closed forms; per-GPU totals as multigpu.comm.collectives: "
                    "busbw_factor and the ring, one-shot, two-shot and NVLS plans). Bytes per direction per link."))


#: Height (inches) of a schematic's panel in its phone drawing: about the desktop panel's scale.
PHONE_PANEL_IN = 3.4


#: all-pairs schematics label every link up to this many GPUs; beyond, GPU 0's links (all links carry the same)
PAIR_LABELS_UP_TO = 5


_TITLES = {"ring": N_("Ring"), "tree": N_("Double binary tree"), "nvls": N_("NVLS (in-switch reduction)"),
           "oneshot": N_("One-shot"), "twoshot": N_("Two-shot")}


def _draw_schematic(axes: list, algorithm: str, n: int, s: float) -> None:
    if algorithm == "ring":
        _ring_panel(axes[0], n, s)
    elif algorithm == "nvls":
        _nvls_panel(axes[0], n, s)
    elif algorithm == "oneshot":
        _pairs_panel(axes[0], n, s, BLUE)
    elif algorithm == "twoshot":
        for ax, phase, colour in zip(axes, (_("1. reduce-scatter"), _("2. all-gather")), (BLUE, VERMILLION)):
            _pairs_panel(ax, n, s / n, colour)
            ax.set_title(_("{phase}:\nS/n to each peer, each way", phase=phase), fontsize=10)
    else:
        for k, (ax, tree, colour) in enumerate(zip(axes, double_binary_tree(n), (BLUE, VERMILLION))):
            _tree_panel(ax, n, tree, s, colour)
            ax.set_title(_("tree {k}, half the data: S/2 up each edge\n(reduce), S/2 down (broadcast)", k=k + 1),
                         fontsize=10)


def _schematic_caption(algorithm: str, n: int, s: float, totals: dict) -> str:
    """The per-GPU totals under a schematic (bytes), in the current language."""
    most = max(totals["send"].values())
    forms = {"ring": "2(n-1)/n x S", "oneshot": "(n-1) x S", "twoshot": "2(n-1)/n x S", "nvls": "(n+1)/n x S",
             "tree": _("up to 2 x S (S with 2 GPUs)")}
    alike = algorithm in ("oneshot", "twoshot") and n > PAIR_LABELS_UP_TO
    note = _(" (GPU0's links labelled; every link carries the same)") if alike else ""
    labels = _("S = {size} per GPU; labels: bytes per link per direction{note}.", size=size_text(s), note=note)
    if algorithm == "tree":
        sends = _("Each GPU sends {form} = {most} at most and receives as much.", form=forms[algorithm],
                  most=size_text(most))
    else:
        sends = _("Each GPU sends {form} = {most} and receives as much.", form=forms[algorithm], most=size_text(most))
    return _("{first} {second}", first=labels, second=sends)


def schematic_alt_text(algorithm: str, n: int = 4, size_bytes: float = 1e9) -> str:
    """One or two sentences saying what :func:`allreduce_schematic` shows (bytes per direction), in the current
    language."""
    totals = link_bytes(algorithm, n, size_bytes)
    per_link = sorted(set(totals["links"].values()))
    links = _(" or ").join(size_text(b) for b in per_link)
    most = size_text(max(totals["send"].values()))
    return _("{algorithm} all-reduce of {size} on {n} GPUs: {links} directed links, each carrying {per_link}; each "
             "GPU sends at most {most} and receives as much.", algorithm=lang.label(_TITLES[algorithm]),
             size=size_text(size_bytes), n=n, links=len(totals["links"]), per_link=links, most=most)
