"""Diagrams drawn from the model: the graph is the topology's, the bytes are the collective model's, and every
figure keeps the house rules (title, source, <= 7 in wide, >= 8 pt text, Okabe-Ito colours, AA contrast)."""

from __future__ import annotations

import functools
import re

import matplotlib
import matplotlib.pyplot as plt
import pytest
from editions import CHINESE, NUMBER
from matplotlib.colors import to_hex
from matplotlib.patches import FancyArrowPatch

from multigpu.book import diagrams, lang, plotting, schematics
from multigpu.comm import calibration, collectives
from multigpu.common.errors import InputError
from multigpu.hardware import catalog, wiring

S = 1e9
WIRING = sorted(set(diagrams.CLASS_EXAMPLES.values()) | {"h200-p2p-8", "pcie-l40s-8"})
ALGORITHMS = tuple(schematics.SCHEMATICS)


@functools.cache
def wiring_figure_of(system_id: str):
    return diagrams.wiring_figure(system_id)


@functools.cache
def schematic(algorithm: str, n: int = 4):
    return schematics.allreduce_schematic(algorithm, n, S)


@functools.cache
def multinode(system_id: str, nodes: int = 2):
    return diagrams.multinode_figure(system_id, nodes)


def all_figures():
    return ([("wiring", s) for s in diagrams.CLASS_EXAMPLES.values()] + [("schematic", a) for a in ALGORITHMS]
            + [("multinode", "hgx-h100"), ("multinode", "pcie-a100-8")])


def draw(kind: str, arg: str):
    return {"wiring": wiring_figure_of, "schematic": schematic, "multinode": multinode}[kind](arg)


def physical_edges(system_id: str):
    return [e for e in wiring.for_system(system_id).edges if e.kind != "bounce"]


def texts(fig):
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]


# ------------------------------------------------------------------ the graph is the topology


@pytest.mark.parametrize("system_id", WIRING)
def test_wiring_graph_has_the_topologys_vertices_and_one_edge_per_link(system_id):
    graph, edges = diagrams.wiring_graph(system_id), physical_edges(system_id)
    assert set(graph) == {e.src for e in edges} | {e.dst for e in edges}
    assert graph.number_of_edges() * 2 == len(edges)
    for e in edges:
        data = graph.edges[e.src, e.dst]
        assert (data["bw_GBps_per_dir"], data["kind"], data["link_id"]) == (e.bw_GBps_per_dir, e.kind, e.link_id)


def test_class_examples_cover_every_topology_class_and_the_rack():
    kinds = {wiring.for_system(s).kind for s in diagrams.CLASS_EXAMPLES.values()}
    assert kinds == {"nvswitch", "mesh", "hybrid-cube-mesh", "pcie-tree", "pcie-bridged"}
    assert wiring.for_system(diagrams.CLASS_EXAMPLES["NVL72 rack"]).gpus_per_node == 72


@pytest.mark.parametrize("system_id", ["hgx-h100", "dgx-1-v100", "pcie-a100-8", "mi300x-8"])
def test_layout_is_fixed_and_layered_by_role(system_id):
    graph = diagrams.wiring_graph(system_id)
    pos = diagrams.wiring_layout(graph)
    assert pos == diagrams.wiring_layout(diagrams.wiring_graph(system_id))
    assert len(set(pos.values())) == len(pos), "two vertices drawn on the same spot"
    height = {"nvswitch": 0, "gpu": 1, "pcisw": 2, "cpu": 3, "sys": 3, "nic": 4, "net": 5}
    for v, (x, y) in pos.items():
        assert y == height[diagrams.role(v)]
    assert [pos[f"gpu{i}"][0] for i in range(8)] == list(range(8))


def test_wiring_figure_draws_every_link_with_width_growing_with_bandwidth():
    graph, fig = diagrams.wiring_graph("dgx-1-v100"), wiring_figure_of("dgx-1-v100")
    assert len([p for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch)]) == graph.number_of_edges()
    handles = fig.legends[0].legend_handles
    counts = [int(re.search(r"(\d+) links?$", h.get_label()).group(1)) for h in handles]
    assert sum(counts) == graph.number_of_edges()
    rates = [float(re.search(r": ([\d.,]+) GB/s per direction", h.get_label()).group(1)) for h in handles]
    assert rates == sorted(rates, reverse=True) and {25.0, 50.0, 12.5} <= set(rates)
    widths = [h.get_linewidth() for h in handles]
    assert widths == sorted(widths, reverse=True) and widths[0] > widths[-1]
    assert diagrams.edge_width(450) > diagrams.edge_width(64) > diagrams.edge_width(12.5) > 0


def test_rack_is_drawn_by_tray_with_one_link_per_gpu():
    fig = wiring_figure_of("gb200-nvl72")
    tray_labels = [t.get_text() for t in texts(fig) if t.get_text().startswith("GPUs ")]
    assert len(tray_labels) == 72 // diagrams.TRAY_GPUS and tray_labels[0] == "GPUs 0-3"
    assert "GPU0" not in [t.get_text() for t in texts(fig)], "72 overlapping GPU labels"
    assert "72 links" in fig.legends[0].legend_handles[0].get_label()


@pytest.mark.parametrize("system_id, gpus, fabric, nic", [
    ("hgx-h100", 8, "450 GB/s", "8 NICs at 50 GB/s"),
    ("mi300x-8", 8, "full mesh, 28 links) at 64 GB/s", "8 NICs at 50 GB/s"),
    ("h200-p2p-8", 8, "full mesh, 28 links) at 64 GB/s", "8 NICs"),
    ("dgx-1-v100", 8, "4 others at 25 or 50 GB/s per direction; 12 of 28 pairs", "4 NICs at 12.5 GB/s"),
    ("pcie-a100-8", 8, "no GPU-to-GPU links", "1 NIC at 12.5 GB/s"),
    ("pcie-a100-nvl-pairs", 8, "4 groups of 2 by direct links at 300 GB/s", "1 NIC at 12.5 GB/s"),
    ("gb200-nvl72", 72, "900 GB/s", "72 NICs at 50 GB/s"),
])
def test_wiring_alt_text_states_gpu_count_and_bandwidths(system_id, gpus, fabric, nic):
    text = diagrams.wiring_alt_text(system_id)
    assert f"{gpus} GPUs" in text and fabric in text and nic in text and "GB/s per direction" in text


def test_multinode_joins_nic_m_of_every_node_to_leaf_m_at_the_nic_rate():
    topo = wiring.for_system("hgx-h100")
    graph, _ = diagrams.multinode_graph("hgx-h100", nodes=3)
    nic_rate = topo.edges[topo.index[("nic0", "net")]].bw_GBps_per_dir
    for m in range(8):
        assert sorted(graph[f"leaf{m}"]) == sorted([f"n{k}:nic{m}" for k in range(3)] + ["net"])
        assert graph.edges["n0:nic0", "leaf0"]["bw_GBps_per_dir"] == nic_rate == 50
        assert graph.edges[f"leaf{m}", "net"]["bw_GBps_per_dir"] == 3 * nic_rate
    assert sorted(graph["n1:gpu5"]) == ["n1:nic5", "n1:nvswitch"]
    single, _ = diagrams.multinode_graph("pcie-a100-8")
    assert sorted(single["leaf0"]) == ["n0:nic0", "n1:nic0", "net"] and len(single["n0:nic0"]) == 9


def test_multinode_refuses_what_it_cannot_draw():
    for bad in (lambda: diagrams.multinode_figure("hgx-h100", 1), lambda: diagrams.multinode_figure("hgx-h100", 5),
                lambda: diagrams.multinode_figure("gb200-nvl72")):
        with pytest.raises(InputError):
            bad()


# ------------------------------------------------------------------ bytes on each link


@pytest.mark.parametrize("n", range(2, 9))
def test_link_bytes_closed_forms(n):
    ring, one, two, nvls = (schematics.link_bytes(a, n, S) for a in ("ring", "oneshot", "twoshot", "nvls"))
    assert len(ring["links"]) == (n if n > 2 else 2)
    assert all(b == pytest.approx(2 * (n - 1) / n * S) for b in ring["links"].values())
    assert len(one["links"]) == len(two["links"]) == n * (n - 1)
    assert set(one["links"].values()) == {S} and all(b == pytest.approx((n - 1) * S) for b in one["send"].values())
    assert all(b == pytest.approx(2 * S / n) for b in two["links"].values())
    assert all(b == pytest.approx(2 * (n - 1) / n * S) for b in two["send"].values())
    assert len(nvls["links"]) == 2 * n and all(b == pytest.approx((n + 1) / n * S) for b in nvls["links"].values())
    for result in (ring, one, two, nvls, schematics.link_bytes("tree", n, S)):
        assert result["send"] == pytest.approx(result["recv"]), "every GPU receives what it sends"


@pytest.mark.parametrize("n", range(2, 9))
def test_tree_is_two_spanning_trees_each_carrying_half(n):
    for tree in schematics.double_binary_tree(n):
        assert len(tree) == n - 1 and {c for _, c in tree} | {p for p, _ in tree} == set(range(n))
        assert len({c for _, c in tree}) == n - 1, "every rank but the root has one parent"
    tree = schematics.link_bytes("tree", n, S)
    assert sum(tree["links"].values()) == pytest.approx(2 * (n - 1) * S)
    assert max(tree["links"].values()) <= S


def test_double_binary_tree_matches_ncclgetbtree_on_4_and_8_ranks():
    first, second = schematics.double_binary_tree(4)
    assert sorted(first) == [(0, 2), (2, 1), (2, 3)] and sorted(second) == [(1, 0), (1, 2), (3, 1)]
    first, _ = schematics.double_binary_tree(8)
    assert sorted(first) == [(0, 4), (2, 1), (2, 3), (4, 2), (4, 6), (6, 5), (6, 7)]


@pytest.mark.parametrize("n", range(2, 9))
def test_ring_and_two_shot_send_the_models_busbw_factor(n):
    factor = collectives.busbw_factor("allreduce", n)
    for algorithm in ("ring", "twoshot"):
        assert all(b == pytest.approx(factor * S) for b in schematics.link_bytes(algorithm, n, S)["send"].values())
    ring_bound = collectives.lower_bound_us("allreduce", "hgx-h100", n, S, algorithm="ring")
    nvls_bound = collectives.lower_bound_us("allreduce", "hgx-h100", n, S, algorithm="nvls")
    assert ring_bound / nvls_bound == pytest.approx(factor)
    nvls = schematics.link_bytes("nvls", n, S)["send"]["gpu0"]
    assert nvls >= S, "NVLS cannot move less than the lower bound's S per GPU"


def slope_us_per_byte(plan) -> float:
    big = 1e12  # far above the bandwidth ramp, where time is affine in bytes
    return float((plan.time_us(2 * big) - plan.time_us(big)) / big)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_one_shot_and_two_shot_bytes_per_link_are_the_models(n):
    where = collectives.place("allreduce", "hgx-h100", n)
    flow = wiring.pattern_bandwidth(where.topo, where.gpus, "alltoall", where.efficiency()).min_flow_GBps
    for algorithm, model_name in (("oneshot", "direct"), ("twoshot", "two-shot")):
        (plan,) = collectives.plans("allreduce", "hgx-h100", n, algorithm=model_name)
        per_link = schematics.link_bytes(algorithm, n, S)["links"][("gpu0", "gpu1")]
        assert slope_us_per_byte(plan) * flow * 1e3 == pytest.approx(per_link / S)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_nvls_bytes_per_port_are_the_models(n):
    cal, topo = calibration.default(), wiring.for_system("hgx-h100")
    (plan,) = collectives.plans("allreduce", topo, n, algorithm="nvls")
    edge = topo.edges[topo.index[("gpu0", "nvswitch")]]
    bw = edge.bw_GBps_per_dir * cal.efficiency(edge.link_class, topo.arch) * cal.nvls_efficiency(topo.arch, False)
    links = schematics.link_bytes("nvls", n, S)["links"]
    assert slope_us_per_byte(plan) * bw * 1e3 == pytest.approx(links[("gpu0", "nvswitch")] / S)
    assert links[("nvswitch", "gpu0")] == links[("gpu0", "nvswitch")]


@pytest.mark.parametrize("n", [2, 4, 8])
def test_tree_busiest_gpu_sends_what_the_model_charges_a_node(n):
    """The model's tree across k nodes charges the busiest node 1 x S on 2 nodes and 2 x S from 3 (no SHARP)."""
    nodes = 2 if n == 2 else 3
    where = collectives.place("allreduce", "hgx-h100", 8 * nodes, nodes=nodes)
    assert not where.topo.in_network_reduction
    busiest = max(schematics.link_bytes("tree", n, S)["send"].values())
    assert busiest / S == pytest.approx(collectives._tree_inter_node_bytes(where))


def test_link_bytes_refuses_bad_input():
    for args in (("butterfly", 4, S), ("ring", 1, S), ("ring", 4, 0)):
        with pytest.raises(InputError):
            schematics.link_bytes(*args)
    with pytest.raises(InputError):
        schematics.allreduce_schematic("ring", 9)


# ------------------------------------------------------------------ schematics label every link


@pytest.mark.parametrize("algorithm, labels", [("ring", 4), ("oneshot", 6), ("twoshot", 12), ("nvls", 4), ("tree", 6)])
def test_schematic_labels_every_link_with_its_bytes(algorithm, labels):
    fig = schematic(algorithm)
    drawn = [t.get_text() for ax in fig.axes for t in ax.texts if re.fullmatch(r"[\d.]+ [kMG]?B", t.get_text())]
    assert len(drawn) == labels
    expected = {"ring": "1.5 GB", "oneshot": "1 GB", "twoshot": "250 MB", "nvls": "1.25 GB", "tree": "500 MB"}
    assert set(drawn) == {expected[algorithm]}
    gpus = [t.get_text() for ax in fig.axes for t in ax.texts if re.fullmatch(r"GPU\d", t.get_text())]
    assert len(gpus) == 4 * (2 if algorithm in ("tree", "twoshot") else 1)


@pytest.mark.parametrize("algorithm, links, most", [
    ("ring", 4, "1.5 GB"), ("oneshot", 12, "3 GB"), ("twoshot", 12, "1.5 GB"), ("nvls", 8, "1.25 GB"), ("tree", 10, "2 GB"),
])
def test_schematic_alt_text_states_gpus_links_and_bytes(algorithm, links, most):
    text = schematics.schematic_alt_text(algorithm, 4, S)
    assert "on 4 GPUs" in text and f"{links} directed links" in text and f"sends at most {most}" in text


# ------------------------------------------------------------------ house rules


@pytest.mark.parametrize("kind, arg", all_figures())
def test_title_source_width_and_text_floor(kind, arg):
    fig = draw(kind, arg)
    assert fig._suptitle is not None and fig._suptitle.get_text()
    sources = [t for t in fig.texts if t.get_text().startswith(("Source: multigpu.book.diagrams.", "Source: multigpu.book.schematics."))]
    assert len(sources) == 1
    if kind != "schematic":
        assert f"multigpu.hardware.wiring.for_system('{arg}')" in sources[0].get_text().replace("\n", "")
    assert fig.get_size_inches()[0] <= 7.0
    assert fig.get_tightbbox(fig.canvas.get_renderer()).width <= 7.0, "text spills past the 7 in column"
    small = [(t.get_text(), t.get_fontsize()) for t in texts(fig) if t.get_fontsize() < 8]
    assert not small


@pytest.mark.parametrize("kind, arg", all_figures())
def test_node_labels_contrast_with_their_fill_and_colours_are_okabe_ito(kind, arg):
    fig = draw(kind, arg)
    palette = {c.lower() for c in plotting.COLORS}
    filled = [t for t in texts(fig) if t.get_bbox_patch() is not None]
    assert filled
    for t in filled:
        fill, ink = to_hex(t.get_bbox_patch().get_facecolor()), to_hex(t.get_color())
        assert diagrams.contrast_ratio(ink, fill) >= 4.5, (t.get_text(), ink, fill)
        assert fill in palette | {"#ffffff"}
    for patch in fig.axes[0].patches:
        if isinstance(patch, FancyArrowPatch):
            assert to_hex(patch.get_edgecolor()) in palette


def test_contrast_ratio_known_values():
    assert diagrams.contrast_ratio("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert diagrams.contrast_ratio("#0072B2", "#0072B2") == pytest.approx(1.0)
    assert diagrams.contrast_ratio("#FFFFFF", "#0072B2") == diagrams.contrast_ratio("#0072B2", "#FFFFFF")
    assert diagrams.contrast_ratio("#FFFFFF", "#009E73") < 4.5 < diagrams.contrast_ratio("#000000", "#009E73")
    for fill, ink, _ in diagrams.ROLES.values():
        assert diagrams.contrast_ratio(ink, fill) >= 4.5


@pytest.mark.parametrize("make", [lambda: diagrams.wiring_figure("hgx-h100"),
                                  lambda: diagrams.wiring_figure("gb200-nvl72"),
                                  lambda: diagrams.multinode_figure("dgx-1-v100"),
                                  lambda: schematics.allreduce_schematic("tree", 4)])
def test_svg_is_byte_identical_between_runs(make):
    first, second = make(), make()
    try:
        assert plotting.to_svg(first) == plotting.to_svg(second)
    finally:
        plt.close(first)
        plt.close(second)


def test_svg_is_the_same_under_any_hash_seed():
    """nbval re-executes the notebooks in a fresh kernel, with another string-hash seed: a drawing that iterates
    a set (a networkx subgraph does) would change between runs. Checked on the rack, the one that did."""
    import subprocess
    import sys

    code = ("import hashlib; from multigpu.book import diagrams, plotting; "
            "print(hashlib.sha256(plotting.to_svg(diagrams.wiring_figure('gb200-nvl72')).encode()).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ, "PYTHONHASHSEED": seed},
                              capture_output=True, text=True, check=True).stdout for seed in ("1", "2")}
    assert len(digests) == 1


# ------------------------------------------------------------------ the Chinese edition

def chinese(kind: str, arg: str):
    """The figure drawn in Chinese (not cached: the caller closes it)."""
    with lang.using("zh"):
        return {"wiring": diagrams.wiring_figure, "schematic": schematics.allreduce_schematic,
                "multinode": diagrams.multinode_figure}[kind](arg)


@pytest.mark.parametrize("kind, arg", all_figures())
def test_chinese_figures_keep_the_house_rules(kind, arg):
    fig = chinese(kind, arg)
    try:
        _check_chinese_figure(fig, kind, arg)
    finally:
        plt.close(fig)


def _check_chinese_figure(fig, kind: str, arg: str) -> None:
    assert CHINESE.search(fig._suptitle.get_text())
    sources = [t.get_text() for t in fig.texts if t.get_text().startswith(("来源：multigpu.book.diagrams.", "来源：multigpu.book.schematics."))]
    assert len(sources) == 1
    if kind != "schematic":
        assert f"multigpu.hardware.wiring.for_system('{arg}')" in sources[0].replace("\n", "")
    assert fig.get_tightbbox(fig.canvas.get_renderer()).width <= 7.0, "text spills past the 7 in column"
    assert not [(t.get_text(), t.get_fontsize()) for t in texts(fig) if t.get_fontsize() < 8]
    assert not plotting.contrast_problems(fig)
    legends = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert all(CHINESE.search(t) for t in legends), legends
    prose = re.compile(r"\b(?:the|of|per|to|link|links|node|GPUs)\b")
    english = [t.get_text() for t in texts(fig)
               if prose.search(t.get_text()) and t.get_text() not in sources]  # the source names files and functions
    assert not english, english


def test_chinese_wiring_draws_the_same_links_at_the_same_rates():
    fig, graph = chinese("wiring", "dgx-1-v100"), diagrams.wiring_graph("dgx-1-v100")
    labels = [h.get_label() for h in fig.legends[0].legend_handles]
    plt.close(fig)
    assert sum(int(re.search(r"(\d+) 条链路$", label).group(1)) for label in labels) == graph.number_of_edges()
    assert [NUMBER.findall(a) for a in labels] == [NUMBER.findall(h.get_label())
                                                   for h in wiring_figure_of("dgx-1-v100").legends[0].legend_handles]


@pytest.mark.parametrize("system_id", WIRING + ["gb200-nvl72"])
def test_chinese_alt_text_states_the_same_numbers(system_id):
    english = diagrams.wiring_alt_text(system_id)
    with lang.using("zh"):
        text = diagrams.wiring_alt_text(system_id)
    assert CHINESE.search(text) and sorted(NUMBER.findall(text)) == sorted(NUMBER.findall(english))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_chinese_schematic_alt_text_and_caption_state_the_same_numbers(algorithm):
    english = schematics.schematic_alt_text(algorithm, 6, S) + schematics._schematic_caption(
        algorithm, 6, S, schematics.link_bytes(algorithm, 6, S))
    with lang.using("zh"):
        text = schematics.schematic_alt_text(algorithm, 6, S) + schematics._schematic_caption(
            algorithm, 6, S, schematics.link_bytes(algorithm, 6, S))
    assert CHINESE.search(text) and sorted(NUMBER.findall(text)) == sorted(NUMBER.findall(english))


def test_multinode_alt_text_in_both_languages():
    english = diagrams.multinode_alt_text("hgx-h100", 2)
    assert english.startswith("2 nodes of DGX H100 / HGX H100")
    assert "8 leaf switches, 50 GB/s per direction per NIC" in english
    with lang.using("zh"):
        text = diagrams.multinode_alt_text("hgx-h100", 2)
    assert CHINESE.search(text) and sorted(NUMBER.findall(text)) == sorted(NUMBER.findall(english))


def test_every_catalogue_system_and_link_kind_has_its_chinese_words():
    kinds = {wiring.for_system(s).kind for s in catalog.systems()}
    assert kinds <= set(diagrams.TOPOLOGY_KINDS)
    for kind in kinds:
        assert CHINESE.search(lang.label(diagrams.TOPOLOGY_KINDS[kind], "zh")), kind
        assert " " in diagrams.TOPOLOGY_KINDS[kind], "a name, not an id"
    links = {e.kind for s in catalog.systems() for e in wiring.for_system(s).edges if e.kind != "bounce"}
    assert links <= set(diagrams.KINDS)
    for _colour, name in diagrams.KINDS.values():
        assert lang.label(name, "zh")
    for name in schematics._TITLES.values():
        assert CHINESE.search(lang.label(name, "zh")), name


def test_english_is_drawn_outside_any_language_block_and_in_english():
    with lang.using("en"):
        inside = plotting.to_svg(schematics.allreduce_schematic("ring"))
    outside = plotting.to_svg(schematics.allreduce_schematic("ring"))
    plt.close("all")
    assert inside == outside


def test_wrap_keeps_english_as_textwrap_and_breaks_chinese_by_width():
    import textwrap

    text = "multigpu.book.diagrams.wiring_figure drawn from a long list of words " * 3
    assert diagrams.wrap_text(text, 60) == textwrap.fill(text, 60)
    chinese_text = ("来源：multigpu.book.diagrams.wiring_figure 依据 "
                    "multigpu.hardware.wiring.for_system('hgx-h100') 绘制") * 2
    lines = diagrams.wrap_text(chinese_text, 50).split("\n")
    assert len(lines) > 1 and all(lang.text_width(line) <= 50 or " " not in line for line in lines)
    assert "".join(lines).replace(" ", "") == chinese_text.replace(" ", "")


# ------------------------------------------------------------------ phone drawings


def phone(kind: str, arg: str, language: str = "en"):
    """The figure's phone drawing as the book makes it (:func:`plotting.phone_layout`, :func:`plotting.phone_fit`);
    the caller closes it."""
    with lang.using(language), plotting.phone_layout():
        return plotting.phone_fit(draw.__wrapped__(kind, arg) if hasattr(draw, "__wrapped__") else
                                  {"wiring": diagrams.wiring_figure, "schematic": schematics.allreduce_schematic,
                                   "multinode": diagrams.multinode_figure}[kind](arg))


def label_boxes(fig):
    """The drawn extent (px) of every text on the diagram's axes: vertex boxes, byte labels, tray numbers."""
    renderer = plotting._renderer(fig)
    return [(t.get_text(), (t.get_bbox_patch() or t).get_window_extent(renderer))
            for ax in fig.axes for t in ax.texts if t.get_text().strip()]


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("kind, arg", all_figures())
def test_phone_drawing_fits_a_phone_column_with_its_labels_apart(kind, arg, language):
    fig = phone(kind, arg, language)
    try:
        assert fig.mg_phone and fig.get_figwidth() == plotting.PHONE_FIGWIDTH_IN
        assert plotting.min_text_px(fig, plotting.PHONE_COLUMN_PX) >= plotting.MIN_TEXT_PX
        assert plotting.natural_width_px(fig) <= plotting.PHONE_FIGWIDTH_IN * 96 + 20, "text spills past the width"
        assert not plotting.label_title_overlaps(fig) and not plotting.contrast_problems(fig)
        boxes = label_boxes(fig)
        clashes = [(a, b) for i, (a, box) in enumerate(boxes) for b, other in boxes[i + 1:] if box.overlaps(other)]
        assert not clashes
        title, source = fig._suptitle.get_text(), max(fig.texts, key=lambda t: -t.get_position()[1])
        assert source.get_text().startswith(("Source:", "来源："))
        lowest = min(artist.get_window_extent(fig.canvas.get_renderer()).y0 for artist in [*fig.legends, *fig.axes])
        assert source.get_window_extent(fig.canvas.get_renderer()).y1 < lowest, "the source line under everything"
        assert "\n" in title or plotting.text_width(title) < 50
    finally:
        plt.close(fig)


def test_phone_wiring_draws_the_same_links_at_the_same_rates_as_the_desktop():
    for system_id in ("dgx-1-v100", "pcie-a100-nvl-pairs"):
        fig = phone("wiring", system_id)
        labels = [h.get_label().replace("\n", " ") for h in fig.legends[0].legend_handles]
        plt.close(fig)
        assert labels == [h.get_label() for h in wiring_figure_of(system_id).legends[0].legend_handles]


def test_phone_multinode_is_the_desktop_layout_turned_a_quarter():
    desktop, turned = multinode("hgx-h100"), phone("multinode", "hgx-h100")
    try:
        boxes = {t.get_text(): t.get_position() for t in turned.axes[0].texts if t.get_bbox_patch() is not None}
        gpus = sorted((xy for text, xy in boxes.items() if text.startswith("G")), key=lambda xy: -xy[1])
        assert len({x for x, _ in gpus}) == 1, "the GPUs in one column"
        assert turned.get_figheight() > 1.5 * turned.get_figwidth() and desktop.get_figwidth() > desktop.get_figheight()
    finally:
        plt.close(turned)


def test_legend_names_link_generations_not_ids():
    assert diagrams.link_generation("pcie5-x16", "PCIe") == "Gen5 x16"
    assert diagrams.link_generation("infiniband-ndr", "InfiniBand NIC") == "NDR 4x"
    assert diagrams.link_generation("nvswitch3", "NVLink to switch") == "NVSwitch gen3"
    assert diagrams.link_generation("nvlink-bridge-a100", "NVLink bridge") == ""
    ids = set(catalog.links())
    for system_id in WIRING:
        labels = " ".join(h.get_label() for h in wiring_figure_of(system_id).legends[0].legend_handles)
        assert not [i for i in ids if f"({i})" in labels], labels
    assert wiring_figure_of("hgx-h100")._suptitle.get_text() == "Wiring of DGX H100 (NVSwitch node)"
