"""Explanatory diagrams drawn by code from the model, never by hand.

Wiring diagrams
    :func:`wiring_figure` draws one catalogue system from its topology graph
    (:func:`multigpu.hardware.wiring.for_system`): every vertex, every link
    (both directions merged into one line), line width growing with the raw line
    rate in GB/s per direction (1 GB = 1e9 bytes). :func:`multinode_figure`
    joins identical nodes rail by rail; :data:`CLASS_EXAMPLES` names one system
    per topology class.
All-reduce schematics
    :mod:`multigpu.book.schematics`, drawn with the helpers here.

Every figure has a title and a source line, is at most 7 inches wide, uses no
text under 8 pt, draws in :data:`multigpu.book.plotting.COLORS` and puts node
labels on fills they contrast with at WCAG AA (:func:`contrast_ratio` >= 4.5).
Under :func:`multigpu.book.plotting.phone_layout` each draws its phone drawing
instead (:func:`phone_figure`): 3.8 inches wide, its texts wrapped to that and
stacked under the drawing (:func:`below`), a wide layout turned or stacked.

Words come in the current language (:mod:`multigpu.book.lang`, catalog
``multigpu.po``): a figure or alt text made inside ``lang.using("zh")`` is
Chinese (``plotting.show_both`` draws both editions); ids, numbers and units
stay as they are.
"""

from __future__ import annotations

import math
import re
import textwrap

import matplotlib.pyplot as plt
import networkx as nx
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch

from multigpu.book import lang, plotting
from multigpu.book.vocabulary import short_system_name, system_name
from multigpu.book.lang import N_, _, text_width
from multigpu.common.errors import InputError
from multigpu.hardware import catalog, wiring

BLACK, ORANGE, BLUE, GREEN, PINK, SKY, VERMILLION, GREY = plotting.COLORS
WHITE = "#FFFFFF"
WIDTH_IN = 7.0  #: the book's column, inches
LABEL_PT = 8.5  #: node and link labels, points (the floor is 8)
SOURCE_PT = 8.0  #: source line, points
TITLE_PT = 12.0

#: topology class (as the book names it) -> catalogue system drawn for it
CLASS_EXAMPLES: dict[str, str] = {
    "NVSwitch node": "hgx-h100",
    "full mesh": "mi300x-8",
    "hybrid cube mesh": "dgx-1-v100",
    "PCIe tree": "pcie-a100-8",
    "NVLink-bridged pairs": "pcie-a100-nvl-pairs",
    "NVL72 rack": "gb200-nvl72",
}

#: vertex role -> (fill, label colour, what it is)
ROLES: dict[str, tuple[str, str, str]] = {
    "gpu": (BLUE, WHITE, "GPU"),
    "nvswitch": (BLACK, WHITE, "NVLink switch"),
    "pcisw": (GREY, BLACK, "PCIe switch / root port"),
    "cpu": (ORANGE, BLACK, "CPU socket"),
    "sys": (ORANGE, BLACK, "socket-to-socket fabric"),
    "nic": (GREEN, BLACK, "NIC"),
    "net": (SKY, BLACK, "scale-out fabric"),
    "leaf": (SKY, BLACK, "rail leaf switch"),
}
#: link kind -> (line colour, name in the legend)
#: (English: a message, translated by :func:`multigpu.book.lang.label` when drawn)
KINDS: dict[str, tuple[str, str]] = {
    "nvswitch": (BLUE, N_("NVLink to switch")),
    "nvlink": (BLUE, N_("NVLink")),
    "nvlink-capped": (BLUE, N_("NVLink (capped)")),
    "nvlink-bridge": (PINK, N_("NVLink bridge")),
    "infinity-fabric": (BLUE, N_("Infinity Fabric")),
    "c2c": (BLUE, N_("NVLink-C2C")),
    "pcie": (GREY, N_("PCIe")),
    "inter-socket": (ORANGE, N_("CPU socket link")),
    "infiniband": (GREEN, N_("InfiniBand NIC")),
    "ethernet": (GREEN, N_("Ethernet NIC")),
    "uplink": (SKY, N_("Leaf uplink, non-blocking (sum of its NICs)")),
}
#: topology kind (:attr:`multigpu.hardware.wiring.Topology.kind`) -> its name for people (a message)
TOPOLOGY_KINDS: dict[str, str] = {"nvswitch": N_("NVSwitch node"), "mesh": N_("full mesh"),
                                  "hybrid-cube-mesh": N_("hybrid cube mesh"), "pcie-tree": N_("PCIe tree"),
                                  "pcie-bridged": N_("PCIe, NVLink-bridged pairs")}
#: GPUs per compute tray of an NVL72 rack (catalogue notes of gb200-nvl72: 18 trays of 4 GPUs)
TRAY_GPUS = 4


# ------------------------------------------------------------------ helpers


def contrast_ratio(fg_hex: str, bg_hex: str) -> float:
    """WCAG 2 contrast ratio of two ``#RRGGBB`` colours, 1 (same) to 21 (black on white)."""
    lighter, darker = sorted((_luminance(fg_hex), _luminance(bg_hex)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _luminance(hex_colour: str) -> float:
    """WCAG relative luminance of ``#RRGGBB``, 0 to 1."""
    channels = [int(hex_colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def ink(colour: str, background: str = WHITE) -> str:
    """``colour`` for text on ``background`` if it has AA contrast (>= 4.5), else black."""
    return colour if contrast_ratio(colour, background) >= 4.5 else BLACK


def role(vertex: str) -> str:
    """The role of a topology vertex: ``gpu3`` -> ``gpu``, ``pcisw1`` -> ``pcisw``, ``net`` -> ``net``."""
    return vertex.rstrip("0123456789")


def edge_width(bw_GBps_per_dir: float) -> float:
    """Line width in points for a link of ``bw_GBps_per_dir`` GB/s per direction (grows with it)."""
    return 0.6 + 0.8 * math.log2(1 + bw_GBps_per_dir / 8)


def _gbps(bw: float) -> str:
    """A bandwidth in GB/s, three significant digits: 63.02 -> '63', 1800 -> '1,800'."""
    return f"{bw:,.0f}" if bw >= 100 else f"{bw:.3g}"


def size_text(value: float) -> str:
    """Bytes in decimal units: 1.5e9 -> '1.5 GB', 2.5e8 -> '250 MB'."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} B"


def wrap_text(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` half-width characters (a CJK character counts two): English as
    :func:`textwrap.fill` breaks it; text with CJK characters broken between them too, never inside a word."""
    if text_width(text) == len(text):
        return textwrap.fill(text, width)
    lines = [""]
    for token in re.findall(r"[^\s\u2e80-\uffef]+|\s+|.", text):
        if text_width(lines[-1] + token) > width and lines[-1].strip():
            lines.append("")
            token = token.lstrip()
        lines[-1] += token
    return "\n".join(line.rstrip() for line in lines)


def finish(fig: Figure, title: str, source: str) -> Figure:
    """Add the title and the wrapped source line (house style, >= 8 pt), in the current language; a phone
    drawing's (:func:`phone_figure`) wrapped to its width, the source line under everything drawn."""
    line = _("Source: {source}", source=source)
    if getattr(fig, "mg_phone", False):
        fig.suptitle(plotting.wrap_title(title, PHONE_TEXT_IN, TITLE_PT), fontsize=TITLE_PT)
        fig.text(0.01, below(fig), plotting.wrap_source(line, PHONE_TEXT_IN, SOURCE_PT), fontsize=SOURCE_PT,
                 color="#444444", ha="left", va="top")
        return fig
    fig.suptitle(title, fontsize=TITLE_PT)
    fig.text(0.01, -0.02, wrap_text(line, 105), fontsize=SOURCE_PT, color="#444444", ha="left", va="top")
    return fig


#: Width (inches) that a phone drawing's title, legend labels, caption and source line wrap to.
PHONE_TEXT_IN = plotting.PHONE_FIGWIDTH_IN - 0.2
#: Inches of a phone drawing per unit of a wiring layout (a GPU's spacing): "GPU7" and its neighbours apart.
PHONE_IN_PER_UNIT = 0.42
#: Inches a row of a phone drawing's turned multi-node view takes (a GPU and its NIC).
PHONE_ROW_IN = 0.3


def phone_figure(title: str, panels_in: list[float], gap_in: float = 0.0) -> tuple[Figure, list]:
    """A diagram's phone drawing (:func:`multigpu.book.plotting.phone_layout`, marked ``mg_phone``):
    :data:`multigpu.book.plotting.PHONE_FIGWIDTH_IN` wide, room at the top for ``title`` wrapped
    (:func:`finish` draws it), then blank axes the full width, ``panels_in`` inches high each, stacked with
    ``gap_in`` inches above each (for a panel's title). What goes under them is placed with :func:`below`."""
    lines = plotting.wrap_title(title, PHONE_TEXT_IN, TITLE_PT).count("\n") + 1
    top = lines * TITLE_PT * 1.3 / 72 + 0.25
    height = top + sum(panels_in) + gap_in * len(panels_in)
    fig = plt.figure(figsize=(plotting.PHONE_FIGWIDTH_IN, height))
    fig.mg_phone = True
    axes, y = [], height - top
    for panel in panels_in:
        y -= gap_in + panel
        axes.append(blank_axes(fig, (0.02, y / height, 0.96, panel / height)))
    return fig, axes


def below(fig: Figure, gap_in: float = 0.1) -> float:
    """The figure fraction ``gap_in`` inches under everything drawn so far: where a phone drawing stacks its
    legend, caption and source line, one under the other (the saved extent grows to hold them)."""
    return (fig.get_tightbbox(fig.canvas.get_renderer()).y0 - gap_in) / fig.get_figheight()


def phone_legend(fig: Figure, handles: list) -> None:
    """A phone drawing's legend: under everything drawn so far, one column, each label wrapped to the width."""
    for handle in handles:
        handle.set_label(plotting.wrap_title(handle.get_label(), PHONE_TEXT_IN - 0.6, LABEL_PT))
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, below(fig)), ncol=1, fontsize=LABEL_PT)


def blank_axes(fig: Figure, rect: tuple[float, float, float, float]):
    """Axes without ticks, grid or frame, equal aspect, for a diagram."""
    ax = fig.add_axes(rect)
    ax.set_axis_off()
    ax.set_aspect("equal")
    return ax


def draw_vertices(graph: nx.Graph, pos: dict, ax, labels: dict[str, str] | None = None) -> None:
    """Vertices as labelled rounded boxes filled by role; label colour chosen for contrast (on a phone drawing
    the boxes hug their labels, so that a row of eight fits)."""
    labels = labels or {v: vertex_label(v) for v in graph}
    pad = 0.15 if getattr(ax.figure, "mg_phone", False) else 0.3
    for name, (fill, ink, _what) in ROLES.items():
        members = {v: labels[v] for v in graph if graph.nodes[v].get("role", role(v)) == name and v in labels}
        if members:
            nx.draw_networkx_labels(graph, pos, members, ax=ax, font_size=LABEL_PT, font_color=ink,
                                    font_family=plt.rcParams["font.family"],  # the house fonts, CJK fallback too
                                    bbox={"boxstyle": f"round,pad={pad}", "fc": fill, "ec": "none"})


def vertex_label(vertex: str) -> str:
    """Display name: gpu3 -> 'GPU3', pcisw1 -> 'PCIe1', nvswitch -> 'NVSwitch', net -> 'fabric' (words in the
    current language)."""
    names = {"gpu": "GPU", "pcisw": "PCIe", "cpu": "CPU", "nic": "NIC", "leaf": _("leaf")}
    fixed = {"nvswitch": "NVSwitch", "sys": "UPI/xGMI", "net": _("fabric")}
    return fixed.get(vertex) or names.get(role(vertex), role(vertex)) + vertex[len(role(vertex)):]


# ------------------------------------------------------------------ wiring


def wiring_graph(system_id: str) -> nx.Graph:
    """The topology of ``system_id`` as an undirected graph: one edge per link, both directions merged.

    Vertices carry ``role``; edges carry ``bw_GBps_per_dir`` (raw line rate, GB/s per direction),
    ``kind`` and ``link_id``. Virtual host-memory staging edges are left out (they are no wire).
    """
    graph = nx.Graph(system_id=system_id)
    for edge in wiring.for_system(system_id).edges:
        if edge.kind == "bounce":
            continue
        for vertex in (edge.src, edge.dst):
            graph.add_node(vertex, role=role(vertex))
        if not graph.has_edge(edge.src, edge.dst):
            graph.add_edge(edge.src, edge.dst, bw_GBps_per_dir=edge.bw_GBps_per_dir, kind=edge.kind,
                           link_id=edge.link_id)
    return graph


def _gpus(graph: nx.Graph) -> list[str]:
    return sorted((v for v in graph if role(v) == "gpu"), key=lambda v: int(v[3:]))


def _of_role(graph: nx.Graph, name: str) -> list[str]:
    return sorted((v for v in graph if role(v) == name), key=lambda v: int(v[len(name):] or 0))


def _mean_x(pos: dict, vertices: list[str], default: float) -> float:
    xs = [pos[v][0] for v in vertices if v in pos]
    return sum(xs) / len(xs) if xs else default


def wiring_layout(graph: nx.Graph) -> dict[str, tuple[float, float]]:
    """Fixed positions by role (no randomness): GPUs in a row (x = index, y = 1), the NVLink switch below
    (y = 0), PCIe switches above their GPUs (y = 2), CPU sockets above their switches with the socket link
    between them (y = 3), NICs above the GPUs they serve (y = 4), the fabric on top (y = 5)."""
    gpus = _gpus(graph)
    pos: dict[str, tuple[float, float]] = {g: (float(i), 1.0) for i, g in enumerate(gpus)}
    middle = (len(gpus) - 1) / 2
    for v in _of_role(graph, "pcisw"):
        pos[v] = (_mean_x(pos, [u for u in graph[v] if role(u) == "gpu"], middle), 2.0)
    for v in _of_role(graph, "cpu"):
        pos[v] = (_mean_x(pos, [u for u in graph[v] if role(u) == "pcisw"], middle), 3.0)
    if "sys" in graph:
        pos["sys"] = (_mean_x(pos, _of_role(graph, "cpu"), middle), 3.0)
    nics = _of_role(graph, "nic")
    for m, v in enumerate(nics):
        served = [g for i, g in enumerate(gpus) if i * len(nics) // len(gpus) == m]
        pos[v] = (_mean_x(pos, served, middle), 4.0)
    if "net" in graph:
        pos["net"] = (middle, 5.0)
    if "nvswitch" in graph:
        pos["nvswitch"] = (middle, 0.0)
    return pos


def _arc(a: tuple[float, float], b: tuple[float, float]) -> str:
    """Connection style bending a GPU-to-GPU link below the GPU row, deeper for farther GPUs."""
    span = abs(b[0] - a[0])
    if span <= 1:
        return "arc3,rad=0.0" if span == 0 else "arc3,rad=0.35"
    depth = 0.25 + 0.18 * span  # peak depth below the row, in GPU spacings
    return f"arc3,rad={2 * depth / span * (1 if b[0] > a[0] else -1):.3f}"


def _draw_links(graph: nx.Graph, pos: dict, ax) -> list[Line2D]:
    """Draw every link, width from its GB/s per direction; return one legend handle per link type."""
    groups: dict[tuple[str, str | None, float], list[tuple[str, str]]] = {}
    for a, b, data in graph.edges(data=True):
        groups.setdefault((data["kind"], data["link_id"], data["bw_GBps_per_dir"]), []).append((a, b))
    handles = []
    for (kind, link_id, bw), edges in sorted(groups.items(), key=lambda item: -item[0][2]):
        colour, name = KINDS[kind][0], lang.label(KINDS[kind][1])
        for a, b in edges:
            direct = role(a) == role(b) == "gpu"
            a, b = (a, b) if pos[a][0] <= pos[b][0] else (b, a)
            nx.draw_networkx_edges(graph, pos, [(a, b)], ax=ax, width=edge_width(bw), edge_color=colour,
                                   arrows=True, arrowstyle="-", node_size=0,
                                   connectionstyle=_arc(pos[a], pos[b]) if direct else "arc3,rad=0.0")
        generation = link_generation(link_id, KINDS[kind][1]) if link_id else ""
        name = _("{name} ({generation})", name=name, generation=generation) if generation else name
        handles.append(Line2D([], [], color=colour, linewidth=edge_width(bw),
                              label=_("{name}: {rate} GB/s per direction, {links}", name=name, rate=_gbps(bw),
                                      links=_links(len(edges)))))
    return handles


def link_generation(link_id: str, kind_name: str) -> str:
    """What the catalogue's name of link ``link_id`` adds to ``kind_name`` (the link kind's English name): its
    name up to a parenthesis, a comma, " for " or " in ", without the words the kind already says ("PCIe Gen5 x16"
    under "PCIe" -> "Gen5 x16", "InfiniBand NDR 4x" under "InfiniBand NIC" -> "NDR 4x"); empty if nothing."""
    name = re.split(r" \(|, | for | in ", catalog.link(link_id).name)[0]
    said = {word.lower() for word in kind_name.split()}
    return " ".join(word for word in name.split() if word.lower() not in said)


def _links(k: int) -> str:
    """'1 link', '8 links' (current language)."""
    return _("{count} link", count=k) if k == 1 else _("{count} links", count=k)


def wiring_figure(system_id: str) -> Figure:
    """The wiring of catalogue system ``system_id``: every vertex and link of its topology graph.

    Line width grows with the raw line rate (GB/s per direction); the legend names each link type, its
    rate and how many such links there are. Racks of more than 16 GPUs are drawn tray by tray
    (:func:`_rack_figure`).
    """
    plotting.apply_style()
    graph = wiring_graph(system_id)
    if len(_gpus(graph)) > 16:
        return _rack_figure(system_id, graph)
    pos = wiring_layout(graph)
    title = _("Wiring of {system} ({kind})", system=short_system_name(system_id),
              kind=lang.label(TOPOLOGY_KINDS[wiring.for_system(system_id).kind]))
    low = _lowest_arc(graph, pos) - 0.4
    if plotting.on_phone():
        fig, (ax,) = phone_figure(title, [(5.4 - low) * PHONE_IN_PER_UNIT])
    else:
        fig = plt.figure(figsize=(WIDTH_IN, 5.6))
        ax = blank_axes(fig, (0.02, 0.27, 0.96, 0.63))
    ax.set_aspect("auto")
    handles = _draw_links(graph, pos, ax)
    draw_vertices(graph, pos, ax)
    ax.set_ylim(low, 5.4)
    margin = 0.55 if plotting.on_phone() else 0.7  # half a box, and a little
    ax.set_xlim(-margin, len(_gpus(graph)) - 1 + margin)
    if plotting.on_phone():
        phone_legend(fig, handles)
    else:
        fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=1, fontsize=LABEL_PT)
    return finish(fig, title, _wiring_source(system_id))


def _lowest_arc(graph: nx.Graph, pos: dict) -> float:
    """The lowest point the drawing reaches below the GPU row (arcs, the switch), in layout units."""
    low = min(y for _, y in pos.values())
    for a, b in graph.edges():
        if role(a) == role(b) == "gpu":
            span = abs(pos[a][0] - pos[b][0])
            low = min(low, 1.0 - (0.35 * span / 2 if span <= 1 else 0.25 + 0.18 * span))
    return low


def _wiring_source(system_id: str, function: str = "wiring_figure") -> str:
    return _("multigpu.book.diagrams.{function} drawn from multigpu.hardware.wiring.for_system('{system}') "
             "(catalogue data/systems.csv and data/links.csv; raw line rates, GB = 1e9 bytes)",
             function=function, system=system_id)


def _rack_figure(system_id: str, graph: nx.Graph) -> Figure:
    """A rack-scale NVLink domain: compute trays of :data:`TRAY_GPUS` GPUs around the NVLink switch (on a phone
    each tray labelled with its GPUs' numbers alone, the legend saying so)."""
    gpus = _gpus(graph)
    trays = math.ceil(len(gpus) / TRAY_GPUS)
    phone = plotting.on_phone()
    title = _("Wiring of {system}: {gpus} GPUs in {trays} trays on one NVLink switch",
              system=short_system_name(system_id), gpus=len(gpus), trays=trays)
    if phone:
        fig, (ax,) = phone_figure(title, [plotting.PHONE_FIGWIDTH_IN - 0.2])
    else:
        fig = plt.figure(figsize=(WIDTH_IN, 6.6))
        ax = blank_axes(fig, (0.02, 0.14, 0.96, 0.78))
    pos = {"nvswitch": (0.0, 0.0)}
    for t in range(trays):
        angle = math.pi / 2 - 2 * math.pi * t / trays
        members = gpus[t * TRAY_GPUS:(t + 1) * TRAY_GPUS]
        _draw_tray(ax, pos, members, angle)
        first, last = t * TRAY_GPUS, t * TRAY_GPUS + len(members) - 1
        ax.text(3.55 * math.cos(angle), 3.55 * math.sin(angle),
                f"{first}-{last}" if phone else _("GPUs {first}-{last}", first=first, last=last),
                fontsize=LABEL_PT, ha="center", va="center")
    sub = graph.subgraph(gpus + ["nvswitch"])
    bw = next(d["bw_GBps_per_dir"] for _, _, d in sub.edges(data=True))
    edges = sorted(tuple(sorted(e)) for e in sub.edges())  # a subgraph iterates in hash order: fix it
    nx.draw_networkx_edges(sub, pos, edgelist=edges, ax=ax, width=edge_width(bw) / 3, edge_color=BLUE, alpha=0.6)
    draw_vertices(graph.subgraph(["nvswitch"]), pos, ax, {"nvswitch": _("NVLink\nswitch")})
    ax.set_xlim(-4.3, 4.3)
    ax.set_ylim(-4.0, 4.0)
    handle = Line2D([], [], color=BLUE, linewidth=edge_width(bw) / 3,
                    label=_("NVLink to switch: {rate} GB/s per direction per GPU, {links} (drawn at 1/3 width)",
                            rate=_gbps(bw), links=_links(len(gpus))))
    dot = Line2D([], [], color=BLUE, marker="o", linestyle="none",
                 label=_("GPU ({count} per compute tray, numbered beside it)", count=TRAY_GPUS) if phone else
                 _("GPU ({count} per compute tray)", count=TRAY_GPUS))
    if phone:
        phone_legend(fig, [handle, dot])
        fig.text(0.5, below(fig), plotting.wrap_title(_host_summary(graph), PHONE_TEXT_IN, LABEL_PT),
                 fontsize=LABEL_PT, ha="center", va="top")
    else:
        fig.legend(handles=[handle, dot], loc="lower center", bbox_to_anchor=(0.5, 0.04), fontsize=LABEL_PT)
        fig.text(0.5, 0.02, _host_summary(graph), fontsize=LABEL_PT, ha="center", va="center")
    return finish(fig, title, _wiring_source(system_id))


def _draw_tray(ax, pos: dict, members: list[str], angle: float) -> None:
    """One compute tray: a rounded box at ``angle`` with its GPUs as dots, placed tangentially."""
    centre = (2.8 * math.cos(angle), 2.8 * math.sin(angle))
    tangent = (-math.sin(angle), math.cos(angle))
    ax.add_patch(FancyBboxPatch((centre[0] - 0.42, centre[1] - 0.42), 0.84, 0.84, boxstyle="round,pad=0.02",
                                fc="#f2f2f2", ec=GREY, lw=0.8, zorder=1))
    for k, gpu in enumerate(members):
        offset = (k - (len(members) - 1) / 2) * 0.2
        pos[gpu] = (centre[0] + offset * tangent[0], centre[1] + offset * tangent[1])
        ax.plot(*pos[gpu], marker="o", markersize=6, color=BLUE, zorder=3)


def _host_summary(graph: nx.Graph) -> str:
    """One line on the host side of a rack: CPUs, PCIe and NICs, from the graph."""
    pcie = _edge_rates(graph, "gpu", "pcisw")
    nic = _edge_rates(graph, "nic", "net")
    cpus = len(_of_role(graph, "cpu"))
    if not nic:
        return _("Host side (not drawn): {cpus} CPUs; each GPU on PCIe at {pcie} GB/s (per direction)", cpus=cpus,
                 pcie=_rates(pcie))
    return _("Host side (not drawn): {cpus} CPUs; each GPU on PCIe at {pcie} GB/s; {nics} at {nic} GB/s (per "
             "direction)", cpus=cpus, pcie=_rates(pcie), nics=_nics(len(_of_role(graph, "nic"))), nic=_rates(nic))


def _nics(k: int) -> str:
    """'1 NIC', '8 NICs' (current language)."""
    return _("{count} NIC", count=k) if k == 1 else _("{count} NICs", count=k)


def _edge_rates(graph: nx.Graph, role_a: str, role_b: str) -> list[float]:
    """The distinct line rates (GB/s per direction) of links between two roles."""
    return sorted({d["bw_GBps_per_dir"] for a, b, d in graph.edges(data=True) if {role(a), role(b)} == {role_a, role_b}})


def _rates(rates: list[float]) -> str:
    return _(" or ").join(_gbps(r) for r in rates)


def wiring_alt_text(system_id: str) -> str:
    """One or two sentences saying what :func:`wiring_figure` shows, computed from the graph (GB/s per direction)."""
    graph = wiring_graph(system_id)
    n = len(_gpus(graph))
    host = _("each GPU on PCIe at {pcie} GB/s per direction under {switches} PCIe switches or root ports and {cpus} "
             "CPU sockets", pcie=_rates(_edge_rates(graph, "gpu", "pcisw")), switches=len(_of_role(graph, "pcisw")),
             cpus=len(_of_role(graph, "cpu")))
    nic = _edge_rates(graph, "nic", "net")
    nics = _("; {nics} at {rate} GB/s per direction to the fabric", nics=_nics(len(_of_role(graph, "nic"))),
             rate=_rates(nic)) if nic else ""
    return _("Wiring of {system}: {gpus} GPUs, {fabric}. Host side: {host}{nics}.", system=system_name(system_id),
             gpus=n,
             fabric=_gpu_fabric(graph), host=host, nics=nics)


def _gpu_fabric(graph: nx.Graph) -> str:
    """How the GPUs reach each other, read off the graph."""
    gpus = _gpus(graph)
    switch = _edge_rates(graph, "gpu", "nvswitch")
    if switch:
        return _("each linked to one NVLink switch at {rate} GB/s per direction", rate=_rates(switch))
    direct = graph.subgraph(gpus).copy()
    if direct.number_of_edges() == 0:
        return _("with no GPU-to-GPU links: all GPU traffic crosses the PCIe tree")
    rates = _rates(sorted({d["bw_GBps_per_dir"] for _, _, d in direct.edges(data=True)}))
    groups = [len(c) for c in nx.connected_components(direct)]
    pairs = len(gpus) * (len(gpus) - 1) // 2
    if len(groups) > 1 and direct.number_of_edges() == sum(g * (g - 1) // 2 for g in groups):
        return _("joined in {groups} groups of {size} by direct links at {rate} GB/s per direction; groups talk over "
                 "PCIe", groups=len(groups), size=groups[0], rate=rates)
    if direct.number_of_edges() == pairs:
        return _("every pair linked directly (full mesh, {pairs} links) at {rate} GB/s per direction", pairs=pairs,
                 rate=rates)
    degree = sorted({d for _v, d in direct.degree()})
    return _("each linked directly to {degree} others at {rate} GB/s per direction; {missing} of {pairs} pairs have "
             "no direct link", degree=_rates(degree), rate=rates, missing=pairs - direct.number_of_edges(),
             pairs=pairs)


# ------------------------------------------------------------------ multi-node


def multinode_figure(system_id: str, nodes: int = 2) -> Figure:
    """``nodes`` identical nodes of ``system_id`` joined rail by rail: NIC ``m`` of every node to leaf ``m``.

    Each GPU reaches the fabric through the NIC its route to ``net`` uses; NIC rates (GB/s per direction)
    and the GPU-to-NIC PCIe rate come from the topology. The fabric above the leaves is non-blocking.
    """
    topo = wiring.for_system(system_id)
    if not 2 <= nodes <= 4:
        raise InputError(f"multinode_figure draws 2 to 4 nodes; got {nodes}")
    if topo.gpus_per_node > 8 or not topo.nics_per_node:
        raise InputError(f"{system_id}: the multi-node view draws nodes of at most 8 GPUs with NICs")
    plotting.apply_style()
    graph, pos = multinode_graph(system_id, nodes)
    title = _("{nodes} nodes of {system}, rail-optimised: NIC m of every node on leaf m", nodes=nodes,
              system=short_system_name(system_id))
    columns = nodes * (topo.gpus_per_node + 1)
    if plotting.on_phone():  # turned a quarter: the GPUs in a column, the fabric on the right
        pos = {v: (y, -x) for v, (x, y) in pos.items()}
        fig, (ax,) = phone_figure(title, [(columns + 0.2) * PHONE_ROW_IN])
    else:
        fig = plt.figure(figsize=(WIDTH_IN, 4.8))
        ax = blank_axes(fig, (0.02, 0.2, 0.96, 0.7))
    ax.set_aspect("auto")
    handles = _draw_links(graph, pos, ax)
    digits = columns > 20
    draw_vertices(graph, pos, ax, {v: _multinode_label(v, digits) for v in graph})
    _node_frames(ax, topo, nodes, turned=plotting.on_phone())
    if plotting.on_phone():
        ax.set_xlim(-1.9, 4.1)
        ax.set_ylim(-(columns - 1.2), 0.8)
        phone_legend(fig, handles)
    else:
        ax.set_xlim(-0.8, columns - 1.2)
        ax.set_ylim(-1.7, 4.0)
        fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0), fontsize=LABEL_PT)
    return finish(fig, title, _wiring_source(system_id, "multinode_figure"))


def multinode_alt_text(system_id: str, nodes: int = 2) -> str:
    """One sentence saying what :func:`multinode_figure` shows: the nodes, leaves and NIC rate (GB/s per
    direction), in the current language."""
    graph, _pos = multinode_graph(system_id, nodes)
    leaves = _of_role(graph, "leaf")
    nic = sorted({d["bw_GBps_per_dir"] for a, b, d in graph.edges(data=True)
                  if {role(a.split(":")[-1]), role(b.split(":")[-1])} == {"nic", "leaf"}})
    return _("{nodes} nodes of {system} joined rail by rail: NIC m of each node links to leaf switch m ({leaves} "
             "leaf switches, {rate} GB/s per direction per NIC).", nodes=nodes, system=system_name(system_id),
             leaves=len(leaves), rate=_rates(nic))


def multinode_graph(system_id: str, nodes: int = 2) -> tuple[nx.Graph, dict[str, tuple[float, float]]]:
    """The multi-node view as a graph and its fixed layout: vertices ``n{k}:gpu{i}``, ``n{k}:nic{m}``,
    ``n{k}:nvswitch``, ``leaf{m}`` and ``net``; edges carry ``bw_GBps_per_dir``, ``kind`` and ``link_id``."""
    topo = wiring.for_system(system_id)
    graph, pos, width = nx.Graph(), {}, topo.gpus_per_node + 1
    nic_of = {g: _nic_of(topo, g) for g in range(topo.gpus_per_node)}
    nics = sorted(set(nic_of.values()), key=lambda v: int(v[3:]))
    for k in range(nodes):
        _add_node_view(graph, pos, topo, k, k * width, nic_of)
    for m, nic in enumerate(nics):
        leaf = f"leaf{m}"
        xs = [pos[f"n{k}:{nic}"][0] for k in range(nodes)]
        graph.add_node(leaf, role="leaf")
        pos[leaf] = (sum(xs) / len(xs), 2.4)
        up = topo.edges[topo.index[(nic, "net")]]
        for k in range(nodes):
            graph.add_edge(f"n{k}:{nic}", leaf, bw_GBps_per_dir=up.bw_GBps_per_dir, kind=up.kind, link_id=up.link_id)
    graph.add_node("net", role="net")
    pos["net"] = ((nodes * width - 2) / 2, 3.6)
    for m in range(len(nics)):  # non-blocking: a leaf's uplink carries all its NICs at once
        rail = sum(d["bw_GBps_per_dir"] for _, _, d in graph.edges(f"leaf{m}", data=True))
        graph.add_edge(f"leaf{m}", "net", bw_GBps_per_dir=rail, kind="uplink", link_id=None)
    return graph, pos


def _nic_of(topo: wiring.Topology, gpu: int) -> str:
    """The NIC on GPU ``gpu``'s route to the fabric."""
    return next(topo.edges[i].src for i in topo.route(gpu, "net").edges if topo.edges[i].dst == "net")


def _add_node_view(graph: nx.Graph, pos: dict, topo: wiring.Topology, k: int, x0: float,
                   nic_of: dict[int, str]) -> None:
    """One node's GPUs (y = 0), NICs above the GPUs they serve (y = 1) and NVLink switch (y = -1)."""
    pcie = topo.edges[topo.index[("gpu0", next(b for a, b in topo.index if a == "gpu0" and b.startswith("pcisw")))]]
    for g in range(topo.gpus_per_node):
        graph.add_node(f"n{k}:gpu{g}", role="gpu")
        pos[f"n{k}:gpu{g}"] = (x0 + g, 0.0)
    for nic in sorted(set(nic_of.values())):
        served = [g for g, m in nic_of.items() if m == nic]
        graph.add_node(f"n{k}:{nic}", role="nic")
        pos[f"n{k}:{nic}"] = (x0 + sum(served) / len(served), 1.1)
        for g in served:
            graph.add_edge(f"n{k}:gpu{g}", f"n{k}:{nic}", bw_GBps_per_dir=pcie.bw_GBps_per_dir, kind="pcie",
                           link_id=pcie.link_id)
    if topo.has_switch:
        port = topo.edges[topo.index[("gpu0", "nvswitch")]]
        graph.add_node(f"n{k}:nvswitch", role="nvswitch")
        pos[f"n{k}:nvswitch"] = (x0 + (topo.gpus_per_node - 1) / 2, -1.1)
        for g in range(topo.gpus_per_node):
            graph.add_edge(f"n{k}:gpu{g}", f"n{k}:nvswitch", bw_GBps_per_dir=port.bw_GBps_per_dir, kind=port.kind,
                           link_id=port.link_id)


def _multinode_label(vertex: str, digits: bool = False) -> str:
    """``n0:gpu3`` -> 'G3' ('3' with ``digits``), ``n1:nic0`` -> 'N0', ``leaf2`` -> 'L2', ``n0:nvswitch`` ->
    'NVSwitch'."""
    local = vertex.split(":")[-1]
    short = {"gpu": "G", "nic": "N", "leaf": "L"}
    if role(local) not in short:
        return vertex_label(local)
    return ("" if digits else short[role(local)]) + local[len(role(local)):]


def _node_frames(ax, topo: wiring.Topology, nodes: int, turned: bool = False) -> None:
    """A grey frame and caption around each node's GPUs, NICs and switch (``turned``: the layout turned a
    quarter, (x, y) -> (y, -x), the caption above the frame)."""
    for k in range(nodes):
        x0 = k * (topo.gpus_per_node + 1) - 0.5
        if turned:
            ax.add_patch(FancyBboxPatch((-1.75, -x0 - topo.gpus_per_node), 3.25, topo.gpus_per_node,
                                        boxstyle="round,pad=0.05", fc="none", ec=GREY, lw=0.8, zorder=0))
            ax.text(-1.75, -x0 + 0.12, _("node {k}", k=k), fontsize=LABEL_PT, ha="left", va="bottom")
            continue
        ax.add_patch(FancyBboxPatch((x0, -1.45), topo.gpus_per_node, 2.95, boxstyle="round,pad=0.05",
                                    fc="none", ec=GREY, lw=0.8, zorder=0))
        ax.text(x0 + 0.05, -1.62, _("node {k}", k=k), fontsize=LABEL_PT, ha="left", va="top")


# ------------------------------------------------------------------ all-reduce traffic


# ------------------------------------------------------------------ all-reduce schematics


