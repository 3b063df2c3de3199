"""Chapter 2 (NVSwitch topology): its figures, its claims table and the numbers its prose cites, computed by
:mod:`multigpu.evidence.wiring`, :mod:`multigpu.evidence.claims.topology` and
:mod:`multigpu.evidence.measurements` with a calibration passed in.

Its words come in both editions' languages (:mod:`multigpu.book.lang`): each figure function draws in the
current language (the notebook shows both with ``plotting.show_both``), the wiring diagrams and schematics
of :mod:`multigpu.book.diagrams` too (:func:`diagram_wiring`, :func:`diagram_multinode`, :func:`diagram_schematic`);
the tables' Chinese headers and label cells are the messages of :data:`TABLE_HEADERS` and the ``*_LABELS``
tuples, and :func:`facts` holds every text fact in English and, as ``<name>_zh``, in Chinese."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from multigpu.book import claim_values, diagrams, glue, lang, plotting
from multigpu.book.glue import Facts, plain
from multigpu.book.glue import verdict_facts as glue_verdicts
from multigpu.book.lang import N_, _
from multigpu.book.vocabulary import CHECK_LABELS  # noqa: F401  (the chapter's table translates them)
from multigpu.comm import calibration, collectives
from multigpu.comm.calibration import Calibration
from multigpu.common.units import GiB, KiB, MiB
from multigpu.evidence import claims, generations, measurements, wiring
from multigpu.evidence.claims import topology as checks

# ------------------------------------------------------------------ the words of figures and tables
# The evidence layer names its systems, algorithms, patterns and rows in English; these messages are their
# Chinese (multigpu.book.lang.label: a label missing here fails the notebook in Chinese, not just the check).

#: The systems' short names that hold words (:data:`multigpu.evidence.wiring.LABELS` of the compared three,
#: :data:`multigpu.evidence.wiring.SCALING_LABELS`), for legends and the wiring table.
SYSTEM_LABELS = (N_("NVSwitch (HGX H200)"), N_("full mesh (8x H200, hypothetical)"), N_("PCIe Gen4 (8x L40S)"),
                 N_("HGX H200 nodes (8 GPUs, NDR)"), N_("DGX A100 nodes (8 GPUs, HDR)"),
                 N_("GB200 NVL72 racks (72 GPUs, NDR)"))
#: The all-reduce algorithms as the chapter prints them (:data:`multigpu.evidence.wiring.ALLREDUCE_ALGORITHMS`).
ALGORITHM_LABELS = (N_("ring"), N_("tree"), N_("NVLS"), N_("one-shot"), N_("two-shot (MultiShot)"))
#: The traffic patterns of :func:`multigpu.evidence.wiring.rack_patterns`.
PATTERN_LABELS = (N_("one pair alone"), N_("permutation across the bisection (i to i + n/2)"),
                  N_("one GPU to all others (fan-out)"), N_("all others to one GPU (incast)"), N_("all-to-all"))
#: The row groups of :func:`multigpu.evidence.wiring.error_summary`.
ROWS_LABELS = (N_("large messages and rates"), N_("small messages (< 64 MiB)"), N_("fitted on"),
               N_("not fitted on"), N_("all"))
#: What each row of :func:`multigpu.evidence.wiring.model_vs_measurement` measured.
WHAT_LABELS = (N_("GPU-GPU copy, both ways"), N_("GPU-GPU copy, one way"), N_("all-to-all, per-GPU NIC rate"),
               N_("allgather busbw (ring)"), N_("allreduce busbw (nvls)"), N_("allreduce busbw (ring)"),
               N_("alltoall busbw (direct)"), N_("host-to-GPU copy"), N_("reducescatter busbw (ring)"))
#: The units of the chapter's claims (:mod:`multigpu.evidence.claims.topology`).
UNIT_LABELS = (
    N_("year; GPUs; GB/s per pair (bidirectional, line rate)"),
    N_("first switch generation with SHARP; NVLS / ring busbw"),
    N_("TB/s (72 x per-GPU bidirectional: a sum, not a bisection)"),
    N_("GB/s per direction per peer (one GPU sending to 71 peers at once)"),
    N_("GB/s per link (bidirectional): 900 / 7"), N_("GB/s per pair (bidirectional) while all 8 GPUs exchange data"),
    N_("switch / mesh bandwidth (line rate)"),
    N_("steps for N = 8 (chunks passed around a ring until every rank holds the sum)"),
    N_("us per added GPU (ring latency term, LL protocol, NVLink)"),
    N_("x faster than ring all-reduce at best (8x H200)"),
    N_("x NVLink / HDR port, per GPU, one direction (H100)"))
#: The columns whose cells are words to translate, in every table the notebook shows through
#: :func:`multigpu.book.tables.use_for_dataframes` (the rest is data: numbers, ids, system names).
LABEL_COLUMNS = claim_values.label_columns("verdict", "algorithm", "pattern", "rows", "what", "check", "known_miss")
#: The wiring table's label column too (elsewhere ``system`` holds catalogue ids): the notebook shows it with
#: :func:`multigpu.book.tables.show_table`.
WIRING_LABEL_COLUMNS = ("system",)

#: The headers of the chapter's tables (:func:`multigpu.book.tables.header` of their columns, the two-level ones
#: flattened by :func:`multigpu.book.tables.flat_columns`), as messages.
TABLE_HEADERS = (
    N_("System"), N_("Wiring"), N_("GPUs"), N_("GPU (GB/s per direction)"), N_("GPU (GB/s, both directions)"),
    N_("Pair (GB/s per direction)"), N_("Pair (GB/s, both directions)"), N_("Pair share (%)"),
    N_("Blog P2P (GB/s, both directions)"), N_("Model mesh GPU (GB/s, both directions)"),
    N_("Blog switch (GB/s, both directions)"), N_("Model switch GPU (GB/s, both directions)"),
    N_("Model mesh pair (GB/s, both directions)"), N_("Model switch pair (GB/s, both directions)"),
    N_("All-reduce time (µs): NVSwitch (HGX H200)"), N_("All-reduce time (µs): Full mesh (8x H200, hypothetical)"),
    N_("All-reduce time (µs): PCIe Gen4 (8x L40S)"), N_("All-to-all time (µs): NVSwitch (HGX H200)"),
    N_("All-to-all time (µs): Full mesh (8x H200, hypothetical)"), N_("All-to-all time (µs): PCIe Gen4 (8x L40S)"),
    N_("All-reduce bus bandwidth (GB/s): NVSwitch (HGX H200)"),
    N_("All-reduce bus bandwidth (GB/s): Full mesh (8x H200, hypothetical)"),
    N_("All-reduce bus bandwidth (GB/s): PCIe Gen4 (8x L40S)"),
    N_("All-to-all bus bandwidth (GB/s): NVSwitch (HGX H200)"),
    N_("All-to-all bus bandwidth (GB/s): Full mesh (8x H200, hypothetical)"),
    N_("All-to-all bus bandwidth (GB/s): PCIe Gen4 (8x L40S)"),
    N_("Algorithm"), N_("Protocol"), N_("From (KiB)"), N_("To (KiB)"), N_("Latency (µs)"),
    N_("Bus bandwidth (GB/s, limit)"), N_("Steps"), N_("Latency LL (µs)"), N_("Latency simple (µs)"),
    N_("Bytes factor"), N_("Ring small (µs)"), N_("Ring large (µs)"), N_("NVLS small (µs)"),
    N_("Ring bus bandwidth (GB/s)"), N_("NVLS bus bandwidth (GB/s)"), N_("Gain (×)"), N_("Auto algorithm"),
    N_("Measured bus bandwidth (GB/s)"), N_("Measured algorithm"), N_("Pattern"), N_("Flows"),
    N_("Per flow (GB/s per direction)"), N_("Most sent by one GPU (GB/s per direction)"), N_("Delivered (TB/s)"),
    N_("GPUs per domain"), N_("NVLink (GB/s per direction)"), N_("NIC (GB/s per direction)"), N_("Ratio (×)"),
    N_("Node NIC (GB/s per direction)"), N_("All-reduce bus bandwidth 1 (GB/s)"),
    N_("All-reduce bus bandwidth 2 (GB/s)"), N_("All-to-all bus bandwidth 1 (GB/s)"),
    N_("All-to-all bus bandwidth 2 (GB/s)"), N_("Nodes"), N_("Tree bus bandwidth (GB/s)"),
    N_("Hierarchical bus bandwidth (GB/s)"), N_("Rows"), N_("Count"), N_("Median absolute error (%)"),
    N_("Worst absolute error (%)"), N_("Worst ID"), N_("ID"), N_("What"), N_("Size (MiB)"), N_("Measured (GB/s)"),
    N_("Predicted (GB/s)"), N_("Error (%)"), N_("Fitted"), N_("Check"), N_("Within tolerance"), N_("Known miss"),
    N_("Verdict"), N_("Seed value"), N_("Model value"), N_("Unit"),
)


def _system(system_id: str) -> str:
    """The short name of a compared system (:func:`multigpu.evidence.wiring.label`) in the current language."""
    return lang.label(wiring.label(system_id))


# ------------------------------------------------------------------ plots (in the current language)


def _style(i: int) -> dict[str, object]:
    return {"color": plotting.COLORS[i % len(plotting.COLORS)], "linestyle": plotting.LINESTYLES[i % 8],
            "marker": plotting.MARKERS[i % 8]}


def _size_axis(ax, sizes: np.ndarray) -> None:
    ticks = [s for s in (KiB, 32 * KiB, MiB, 32 * MiB, GiB, 16 * GiB) if sizes.min() <= s <= sizes.max()]
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks, [_size_label(s) for s in ticks])
    ax.minorticks_off()


def _size_label(size: float) -> str:
    for unit, factor in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if size >= factor:
            return f"{size / factor:g} {unit}"
    return f"{size:g} B"


def plot_group_bandwidth(axes, frame: pd.DataFrame | None = None, fan: dict[str, pd.DataFrame] | None = None) -> None:
    """Two panels: left, one GPU sending to 1..7 peers at once (per peer, dashed; total, solid);
    right, each GPU's all-to-all total against the group size. Line rate, GB/s per direction, log scale."""
    frame = wiring.group_bandwidth() if frame is None else frame
    fan = {s: wiring.fanout(s) for s in wiring.COMPARED} if fan is None else fan
    left, right = axes
    for i, system_id in enumerate(wiring.COMPARED):
        style = _style(i)
        data = fan[system_id]
        left.plot(data["peers"], data["total_GBps_per_dir"], label=_("{system}: total", system=_system(system_id)),
                  **style)
        left.plot(data["peers"], data["per_peer_GBps_per_dir"],
                  label=_("{system}: per peer", system=_system(system_id)),
                  **{**style, "linestyle": ":", "marker": "x" if style["marker"] != "x" else "+"})
        rows = frame[frame["system"] == wiring.label(system_id)]
        right.plot(rows["gpus"], rows["gpu_alltoall_GBps_per_dir"], label=_system(system_id), **style)
    for ax in axes:
        ax.set_yscale("log")
        ax.set_ylim(0.2, 800)
    left.set_xlabel(_("peers GPU 0 sends to at once"))
    left.set_title(_("one GPU to many peers"), fontsize=10)
    right.set_xlabel(_("GPUs in the all-to-all"))
    right.set_title(_("every GPU to every other"), fontsize=10)
    left.legend(fontsize=plotting.SMALL_PT, loc="lower left", ncols=2)
    right.legend(fontsize=plotting.SMALL_PT, loc="lower right")


def plot_allreduce_vs_size(ax, frame: pd.DataFrame | None = None, mesh: pd.DataFrame | None = None,
                           regions: dict[str, float] | None = None) -> None:
    """All-reduce time against size, one line per algorithm (log-log); NCCL's choice on the mesh as a wide
    grey line; the latency-bound and bandwidth-bound ranges of :func:`regimes` shaded and named."""
    frame = wiring.allreduce_vs_size() if frame is None else frame
    for i, (name, rows) in enumerate(frame.groupby("algorithm", sort=False)):
        ax.plot(rows["bytes"], rows["time_us"], label=lang.label(name), markevery=8, **_style(i))
    if mesh is not None:
        ax.plot(mesh["bytes"], mesh["time_us"], color="#999999", linewidth=4, alpha=0.6, zorder=0, marker="",
                label=_("{system}: NCCL's choice", system=_system(wiring.MESH)))
    ax.set_yscale("log")
    _size_axis(ax, frame["bytes"].to_numpy())
    lo, hi = float(frame["bytes"].min()), float(frame["bytes"].max())
    if regions:
        top = ax.get_xaxis_transform()
        ax.axvspan(lo, regions["latency_bound_to_bytes"], color="#e8e8e8", zorder=-2)
        ax.axvspan(regions["bandwidth_bound_from_bytes"], hi, color="#f4f4f4", zorder=-2)
        ax.text(lo * 1.4, 0.97, _("latency-bound"), transform=top, fontsize=8, va="top")
        ax.text(hi / 1.4, 0.97, _("bandwidth-bound"), transform=top, fontsize=8, va="top", ha="right")
    ax.set_xlim(lo, hi)
    ax.legend(fontsize=plotting.SMALL_PT, loc="upper left", bbox_to_anchor=(0.0, 0.9), frameon=True, framealpha=1,
              edgecolor="#cccccc")


def plot_ring_terms(ax, frame: pd.DataFrame | None = None) -> None:
    """Ring all-reduce time relative to 2 GPUs, small and large message, against the GPU count."""
    frame = wiring.ring_terms() if frame is None else frame
    first = frame.iloc[0]
    ax.plot(frame["gpus"], frame["ring_small_us"] / first["ring_small_us"],
            label=_("{size}: latency-bound", size=_size_label(8 * KiB)), **_style(0))
    ax.plot(frame["gpus"], frame["ring_large_us"] / first["ring_large_us"],
            label=_("{size}: bandwidth-bound", size=_size_label(GiB)), **_style(1))
    ax.plot(frame["gpus"], frame["steps"] / first["steps"], label=_("steps 2(N-1), relative"), color="#999999",
            linestyle="--", marker="", linewidth=1)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="upper left")


def plot_nvls_gain(ax, frame: pd.DataFrame | None = None) -> None:
    """Ring and NVLS all-reduce busbw against the GPU count (model lines), measured points on top."""
    frame = wiring.nvls_gain() if frame is None else frame
    ax.plot(frame["gpus"], frame["ring_busbw_GBps"], label=_("model: ring"), **_style(0))
    ax.plot(frame["gpus"], frame["nvls_busbw_GBps"], label=_("model: NVLS (in-switch reduction)"), **_style(2))
    measured = frame.dropna(subset=["measured_busbw_GBps"])
    for algorithm, marker in (("ring", "o"), ("nvls", "s")):
        rows = measured[measured["measured_algorithm"] == algorithm]
        if len(rows):
            chosen = lang.label(wiring.ALLREDUCE_ALGORITHMS.get(algorithm, algorithm))
            ax.scatter(rows["gpus"], rows["measured_busbw_GBps"], marker=marker, s=60, facecolors="none",
                       edgecolors="black", linewidths=1.2, zorder=3,
                       label=_("measured (NCCL chose {algorithm})", algorithm=chosen))
    ax.set_ylim(0, 550)
    ax.legend(fontsize=8, loc="lower right")


def plot_scaling(axes, frame: pd.DataFrame | None = None) -> None:
    """Two panels, busbw (log) against GPUs (log 2): all-reduce left, all-to-all right, one line per system."""
    frame = wiring.scaling() if frame is None else frame
    left, right = axes
    for i, (name, rows) in enumerate(frame.groupby("system", sort=False)):
        left.plot(rows["gpus"], rows["allreduce_busbw_GBps"], label=lang.label(name), **_style(i))
        right.plot(rows["gpus"], rows["alltoall_busbw_GBps"], label=lang.label(name), **_style(i))
    for ax, title in ((left, _("all-reduce")), (right, _("all-to-all"))):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ticks = sorted(set(frame["gpus"]))
        ax.set_xticks(ticks, [str(t) for t in ticks], fontsize=plotting.SMALL_PT)
        ax.minorticks_off()
        ax.set_ylim(10, 2000)
        ax.set_title(title, fontsize=10)
    left.legend(fontsize=8, loc="lower right")


#: The kinds of measurement the comparison figure tells apart (:func:`_group`), as messages.
GROUP_LABELS = (N_("all-reduce busbw"), N_("all-gather / reduce-scatter busbw"), N_("all-to-all busbw"),
                N_("NIC rate"), N_("copy rate"))


def _group(what: str) -> str:
    """The kind of a measurement row, for the figure's markers (English: a message of :data:`GROUP_LABELS`)."""
    if what.startswith("allreduce"):
        return "all-reduce busbw"
    if what.startswith(("allgather", "reducescatter")):
        return "all-gather / reduce-scatter busbw"
    if what.startswith("alltoall"):
        return "all-to-all busbw"
    return "NIC rate" if "NIC" in what else "copy rate"


def plot_predicted_vs_measured(axes, frame: pd.DataFrame | None = None, label_above_pct: float = 10.0) -> None:
    """Two panels: predicted against measured (log-log, y = x and +-10 % lines), and the error of each row
    against the measured value. Filled markers: a constant was fitted on the row; hollow: it was not.
    Rows off by more than ``label_above_pct`` are labelled with their id."""
    frame = wiring.model_vs_measurement() if frame is None else frame
    left, right = axes
    groups = frame["what"].map(_group)
    for i, group in enumerate(dict.fromkeys(groups)):
        for fitted in (True, False):
            rows = frame[(groups == group) & (frame["fitted"] == fitted)]
            if not len(rows):
                continue
            style = _style(i)
            marker = dict(marker=style["marker"], s=34, facecolors=style["color"] if fitted else "none",
                          edgecolors=style["color"], linewidths=1.2)
            name = lang.label(group)
            left.scatter(rows["measured_GBps"], rows["predicted_GBps"],
                         label=_("{group}, fitted on", group=name) if fitted else
                         _("{group}, not fitted on", group=name), **marker)
            right.scatter(rows["measured_GBps"], rows["error_pct"], **marker)
    lo, hi = 0.7, 1.5 * float(max(frame["measured_GBps"].max(), frame["predicted_GBps"].max()))
    line = np.array([lo, hi])
    left.plot(line, line, color="#444444", linewidth=1, marker="", linestyle="-")
    for f in (0.9, 1.1):
        left.plot(line, f * line, color="#888888", linewidth=0.8, marker="", linestyle="--")
        right.axhline(100 * (f - 1), color="#888888", linewidth=0.8, linestyle="--")
    right.axhline(0, color="#444444", linewidth=1)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
    left.set_yscale("log")
    left.set_ylim(lo, hi)
    left.set_ylabel(_("predicted (GB/s, log scale)"))
    right.set_ylabel(_("model error: predicted / measured - 1 (%)"))
    left.set_title(_("predicted against measured"), fontsize=10)
    right.set_title(_("error of each measurement"), fontsize=10)
    worst = frame[frame["error_pct"].abs() > label_above_pct].sort_values("measured_GBps")
    for j, (_row, row) in enumerate(worst.iterrows()):
        right.annotate(f"#{row['id']}", (row["measured_GBps"], row["error_pct"]), textcoords="offset points",
                       xytext=(6, 6 if j % 2 else -12), fontsize=plotting.SMALL_PT)
    left.legend(fontsize=plotting.SMALL_PT, loc="lower right")


# ------------------------------------------------------------------ figures, with their house-style set-up
# Each draws in the current language (multigpu.book.lang): plotting.show_both(figure_...) shows both.


def figure_group_bandwidth() -> Figure:
    """What one GPU sends (GB/s per direction, line rate, log scale): to 1..7 peers at once (left), and in an
    all-to-all of 2..8 GPUs (right), on the three compared systems."""
    fig, axes = plotting.figure(
        _("What one GPU sends: to several peers at once, and in an all-to-all"),
        _("GPUs (count)"), _("bandwidth, one direction (GB/s, log scale)"),
        source=_("multigpu.evidence.wiring.fanout and group_bandwidth (line rate, max-min fair sharing of links); "
                 "catalogue systems hgx-h200, h200-p2p-8, pcie-l40s-8"),
        nrows=2, figsize=(6.8, 7.6))
    frame = wiring.group_bandwidth()
    fan = {s: wiring.fanout(s) for s in wiring.COMPARED}
    plot_group_bandwidth(axes, frame, fan)
    totals = _("; ").join(f"{_system(s)} {plotting.span(fan[s]['total_GBps_per_dir'], 'GB/s')}" for s in fan)
    return plotting.set_alt(fig, _("Two line charts, log scale. Top: what GPU 0 sends in total to 1 to 7 peers at "
                                   "once ({totals}), and per peer, which falls as peers are added. Bottom: each "
                                   "GPU's all-to-all bandwidth against the group size, {span}.", totals=totals,
                                   span=plotting.span(frame["gpu_alltoall_GBps_per_dir"], "GB/s")))


def figure_allreduce_vs_size(cal: Calibration | None = None) -> Figure:
    """All-reduce time (µs, log scale) against the message size per GPU (bytes, log scale) on 8x H200 with
    NVSwitch, one line per algorithm, NCCL's choice on the mesh, and the latency- and bandwidth-bound ranges."""
    regions = wiring.regimes(cal=cal)
    mesh_choice = pd.DataFrame(collectives.evaluate("allreduce", wiring.MESH, 8, wiring.SIZES, cal=cal))
    fig, ax = plotting.figure(
        _("All-reduce on 8x H200 (NVSwitch): time by algorithm"),
        _("message size per GPU (bytes, log scale)"), _("time (µs, log scale)"),
        source=_("multigpu.comm.collectives (alpha-beta per algorithm and protocol, NCCL 2.30 latencies, calibrated "
                 "bandwidth); multigpu.evidence.wiring.allreduce_vs_size and regimes"))
    frame = wiring.allreduce_vs_size(cal=cal)
    plot_allreduce_vs_size(ax, frame, mesh=mesh_choice, regions=regions)
    return plotting.set_alt(fig, _("Line chart, log-log: all-reduce time on 8x H200 against message size ({low} to "
                                   "{high}), one line per algorithm, {span}; latency-bound below {latency}, "
                                   "bandwidth-bound from {bandwidth}.", low=_size_label(frame["bytes"].min()),
                                   high=_size_label(frame["bytes"].max()), span=plotting.span(frame["time_us"], "µs"),
                                   latency=_size_label(regions["latency_bound_to_bytes"]),
                                   bandwidth=_size_label(regions["bandwidth_bound_from_bytes"])))


def figure_ring_terms(cal: Calibration | None = None) -> Figure:
    """Ring all-reduce time relative to 2 GPUs (ratio), latency-bound and bandwidth-bound message, against the
    GPUs on one NVLink switch (GB200 NVL72)."""
    fig, ax = plotting.figure(
        _("Ring all-reduce as the group grows (one NVLink switch)"),
        _("GPUs on one NVLink switch (count)"), _("time relative to 2 GPUs (ratio)"),
        source=_("multigpu.evidence.wiring.ring_terms on gb200-nvl72 (a 72-GPU NVLink domain), ring algorithm only"))
    frame = wiring.ring_terms(cal=cal)
    plot_ring_terms(ax, frame)
    last = frame.iloc[-1]
    return plotting.set_alt(fig, _("Line chart: ring all-reduce time relative to 2 GPUs, 2 to {gpus} GPUs; a "
                                   "latency-bound message grows {small:.1f} times, like the step count, a "
                                   "bandwidth-bound one {large:.1f} times.", gpus=int(last["gpus"]),
                                   small=last["ring_small_us"] / frame["ring_small_us"].iloc[0],
                                   large=last["ring_large_us"] / frame["ring_large_us"].iloc[0]))


def figure_nvls_gain(cal: Calibration | None = None) -> Figure:
    """Ring and NVLS all-reduce busbw (GB/s) at 8 GiB against the GPU count on 8x H200: model lines, measured
    points."""
    fig, ax = plotting.figure(
        _("In-switch reduction (NVLS) against ring all-reduce, 8x H200"),
        _("GPUs in the all-reduce (count)"), _("all-reduce busbw at 8 GiB (GB/s)"),
        source=_("model: multigpu.evidence.wiring.nvls_gain; measured: nccl-tests on 8x H200 "
                 "(stas00/ml-engineering, data/measurements.csv rows 15-19)"))
    frame = wiring.nvls_gain(cal=cal)
    plot_nvls_gain(ax, frame)
    return plotting.set_alt(fig, _("Line chart: all-reduce busbw at 8 GiB against 2 to 8 GPUs; ring stays at {ring}, "
                                   "NVLS rises from {nvls}; measured points {measured}.",
                                   ring=plotting.span(frame["ring_busbw_GBps"], "GB/s"),
                                   nvls=plotting.span(frame["nvls_busbw_GBps"], "GB/s"),
                                   measured=plotting.span(frame["measured_busbw_GBps"], "GB/s")))


def figure_scaling(cal: Calibration | None = None) -> Figure:
    """All-reduce (left) and all-to-all (right) busbw at 1 GiB (GB/s, log scale) against the GPUs of a job
    (count, log scale), as it leaves the NVLink domain."""
    fig, axes = plotting.figure(
        _("Leaving the NVLink domain: busbw as the job grows"),
        _("GPUs in the job (count, log scale)"), _("busbw at 1 GiB (GB/s, log scale)"),
        source=_("multigpu.evidence.wiring.scaling (collective model; one NIC per GPU, rail-optimised, non-blocking "
                 "fabric); catalogue systems hgx-h200, dgx-a100, gb200-nvl72"),
        ncols=2, figsize=(6.8, 4.4))
    frame = wiring.scaling(cal=cal)
    plot_scaling(axes, frame)
    return plotting.set_alt(fig, _("Two line charts, log scales: busbw at 1 GiB against {low} to {high} GPUs per "
                                   "system; all-reduce {allreduce}, all-to-all {alltoall}, falling once the job "
                                   "leaves one NVLink domain.", low=frame["gpus"].min(), high=frame["gpus"].max(),
                                   allreduce=plotting.span(frame["allreduce_busbw_GBps"], "GB/s"),
                                   alltoall=plotting.span(frame["alltoall_busbw_GBps"], "GB/s")))


def figure_predicted_vs_measured(comparison: pd.DataFrame | None = None, cal: Calibration | None = None) -> Figure:
    """Predicted against measured (GB/s, log-log) and each row's error (%), for a ``comparison`` of
    :func:`multigpu.evidence.measurements.compare` (else one made with ``cal``)."""
    fig, axes = plotting.figure(
        _("The model against published measurements"),
        _("measured (GB/s, log scale)"), _("predicted (GB/s, log scale)"),
        source=_("multigpu.evidence.measurements.compare over data/measurements.csv (nccl-tests, nvbandwidth, "
                 "p2pBandwidthLatencyTest, DeepEP; sources row by row)"),
        nrows=2, figsize=(6.8, 8.4))
    frame = wiring.model_vs_measurement(comparison, cal=cal)
    plot_predicted_vs_measured(axes, frame)
    within = int((frame["error_pct"].abs() <= 10).sum())
    return plotting.set_alt(fig, _("Two scatter plots of {rows} published measurements: predicted against measured "
                                   "bandwidth ({span}), and each one's model error, {errors}; {within} of {rows} "
                                   "within 10 %.", rows=len(frame), span=plotting.span(frame["measured_GBps"], "GB/s"),
                                   errors=plotting.span(frame["error_pct"], "%"), within=within))


# ------------------------------------------------------------------ the model's diagrams (multigpu.book.diagrams)


def diagram_wiring(system_id: str) -> Figure:
    """:func:`multigpu.book.diagrams.wiring_figure` of ``system_id`` with its alt text, in the current language."""
    return plotting.set_alt(diagrams.wiring_figure(system_id), diagrams.wiring_alt_text(system_id))


def diagram_multinode(system_id: str = "hgx-h100", nodes: int = 2) -> Figure:
    """:func:`multigpu.book.diagrams.multinode_figure` with its alt text, in the current language."""
    return plotting.set_alt(diagrams.multinode_figure(system_id, nodes), diagrams.multinode_alt_text(system_id, nodes))


def diagram_schematic(algorithm: str) -> Figure:
    """:func:`multigpu.book.diagrams.allreduce_schematic` of ``algorithm`` on :data:`SCHEMATIC_GPUS` GPUs with
    :data:`SCHEMATIC_BYTES` bytes each, with its alt text, in the current language."""
    return plotting.set_alt(diagrams.allreduce_schematic(algorithm, n=SCHEMATIC_GPUS, size_bytes=SCHEMATIC_BYTES),
                            diagrams.schematic_alt_text(algorithm, n=SCHEMATIC_GPUS, size_bytes=SCHEMATIC_BYTES))


# ------------------------------------------------------------------ the article's claims

#: The claims chapter 2 checks (:mod:`multigpu.evidence.claims.topology`).
CLAIMS = ("C05", "C06", "C07", "C08", "C09", "C10", "C11", "C14", "C15", "C19", "C25")
def verdicts(cal: Calibration | None = None) -> dict[str, claims.Verdict]:
    """The verdicts of :data:`CLAIMS` by id, checked with calibration ``cal`` (None: the shipped one)."""
    inputs = claims.Inputs(cal=cal)
    return {claim_id: claims.check(claim_id, inputs) for claim_id in CLAIMS}


def claims_table(cal: Calibration | None = None) -> pd.DataFrame:
    """The chapter's claims indexed by ``id``: ``verdict``, ``seed_value`` (the article's, as text),
    ``model_value`` and ``unit`` (the model's value and its unit, per claim)."""
    frame = pd.DataFrame([v.to_dict() for v in verdicts(cal).values()]).set_index("id")
    return frame[["verdict", "seed_value", "model_value", "unit"]]


# ------------------------------------------------------------------ the prose's numbers
# Each function returns the named values one section of the chapter cites (myst-nb glue names), computed by
# multigpu.evidence (wiring, claims.topology, measurements) with calibration ``cal`` (None: the shipped one);
# facts() gathers them all. Bandwidths are GB/s (1e9 B/s), per direction unless the name says bidir; busbw in
# the nccl-tests convention; times in µs (``_us``) or ms (``_ms``); ``_x`` are dimensionless ratios.

#: Measurement ids (data/measurements.csv) whose model error the chapter names; the two whose time gap it gives.
NAMED_ERRORS = (8, 10, 11, 63, 65, 66, 73)
GAP_ROWS = (10, 11)
#: Exercise inputs: tensor parallelism over 4 GPUs with a large and a decode-size all-reduce (bytes), and a
#: 1 GB KV-cache slice sent to 8 peers of an NVL72.
EX1_GPUS, EX1_LARGE, EX1_SMALL = 4, 1 * GiB, 64 * KiB
EX2_SYSTEM, EX2_PEERS, EX2_SLICE_GB = "gb200-nvl72", 8, 1
#: The all-reduce schematics: GPUs, and bytes each GPU contributes (1 GB = 1e9 bytes).
SCHEMATIC_GPUS, SCHEMATIC_BYTES = 4, 1e9


def verdict_facts(cal: Calibration | None = None) -> Facts:
    """``{id}_verdict`` (in bold) and ``{id}_tests`` (what decided it) for each claim of :data:`CLAIMS`, with
    their Chinese as ``{id}_verdict_zh`` and ``{id}_tests_zh`` (the tests' findings rendered from the catalogs)."""
    checked = verdicts(cal)
    return glue.per_language(lambda: glue_verdicts(checked))


def wiring_facts() -> Facts:
    """Three ways to wire eight GPUs, at line rate: each GPU's budget (``sw_gpu_bidir``, ``mesh_gpu_bidir``,
    bidirectional), one pair's share (``sw_pair``, ``mesh_pair``, ``pcie_pair``; ``mesh_share`` %), and the
    numbers of claims C05 (``c05_*``: years, GPU count, GB/s) and C09 (``c09_*``: GB/s, peer count); the
    all-reduce schematics' GPUs and buffer (``schematic_gpus``, ``schematic_GB``, GB = 1e9 bytes)."""
    table = wiring.wiring_table().set_index("system")
    switch, mesh, pcie = (table.loc[wiring.label(s)] for s in wiring.COMPARED)
    out: Facts = {"schematic_gpus": SCHEMATIC_GPUS, "schematic_GB": SCHEMATIC_BYTES / 1e9,
                  "sw_gpu_bidir": switch["gpu_GBps_bidir"], "mesh_gpu_bidir": mesh["gpu_GBps_bidir"],
                  "sw_pair": switch["pair_GBps_per_dir"], "mesh_pair": mesh["pair_GBps_per_dir"],
                  "mesh_share": mesh["pair_share_pct"], "pcie_pair": pcie["pair_GBps_per_dir"]}
    c05 = checks.first_nvswitch()
    for key in ("year", "gpus", "pair_GBps_per_dir", "pair_GBps_bidir", "alltoall_pair_GBps_per_dir",
                "first8_year", "first8_pair_GBps_bidir"):
        out[f"c05_{key}"] = c05[key]
    c09 = checks.mesh_link()
    for key in ("gpu_GBps_bidir", "peers", "split_GBps_bidir", "split_GBps_per_dir", "link_GBps_bidir",
                "link_GBps_per_dir"):
        out[f"c09_{key}"] = c09[key]
    return out


def pair_facts(cal: Calibration | None = None) -> Facts:
    """One pair, or everyone at once (line rate): NVIDIA's Table 1 beside the model (``t1_*``, bidirectional),
    one GPU sending to 1..7 peers (``fan_*``), the PCIe server's lone fifth GPU (``pcie_a2a5``), and claim
    C10's pair in an 8-GPU all-to-all on switch and mesh (``c10_switch``, ``c10_mesh``, bidirectional)."""
    table1 = wiring.blog_table1().set_index("gpus")
    out: Facts = {"t1_mesh8": table1.loc[8, "model_mesh_gpu_GBps_bidir"],
                  "t1_switch8": table1.loc[8, "model_switch_gpu_GBps_bidir"],
                  "t1_sw_pair8": table1.loc[8, "model_switch_pair_GBps_bidir"],
                  "t1_sw_pair4": table1.loc[4, "model_switch_pair_GBps_bidir"],
                  "t1_mesh_pair8": table1.loc[8, "model_mesh_pair_GBps_bidir"]}
    fan_switch, fan_mesh, fan_pcie = (wiring.fanout(s).set_index("peers") for s in wiring.COMPARED)
    out |= {"fan_sw_total": fan_switch.loc[7, "total_GBps_per_dir"],
            "fan_sw_peer7": fan_switch.loc[7, "per_peer_GBps_per_dir"],
            "fan_mesh_total7": fan_mesh.loc[7, "total_GBps_per_dir"],
            "fan_pcie_total": fan_pcie.loc[1, "total_GBps_per_dir"],
            "fan_pcie_peer7": fan_pcie.loc[7, "per_peer_GBps_per_dir"]}
    groups = wiring.group_bandwidth()
    pcie_groups = groups[groups["system"] == wiring.label(wiring.PCIE)].set_index("gpus")
    out["pcie_a2a5"] = pcie_groups.loc[5, "gpu_alltoall_GBps_per_dir"]
    c10 = checks.switch_vs_mesh((2, 8), cal=cal)
    out["c10_switch"] = c10["switch_pair_in_alltoall_GBps_bidir"][-1]
    out["c10_mesh"] = c10["mesh_pair_in_alltoall_GBps_bidir"][-1]
    return out


def collective_facts(cal: Calibration | None = None) -> Facts:
    """From wiring to collectives (1 GiB): NCCL's NVLink efficiency on Hopper (``sm_eff_pct``, %), the fewest
    GPUs NVLS runs on (``nvls_from``), the mesh's 6-GPU ring packing (``mesh6_ring_pct``, % of its all-to-all),
    claim C11's switch / mesh ratios (``c11_*``, x) and switch / PCIe all-reduce busbw on 8 GPUs
    (``sw_over_pcie8``, x)."""
    resolved = calibration.resolve(cal)
    groups = wiring.group_bandwidth()
    mesh_groups = groups[groups["system"] == wiring.label(wiring.MESH)].set_index("gpus")
    out: Facts = {"mesh6_ring_pct": 100 * mesh_groups.loc[6, "gpu_ring_GBps_per_dir"]
                  / mesh_groups.loc[6, "gpu_alltoall_GBps_per_dir"],
                  "sm_eff_pct": 100 * resolved.value("sm_efficiency", "nvlink.hopper")}
    groups_1GiB = wiring.collective_table(nbytes=1 * GiB, cal=cal)
    switch_groups = groups_1GiB[groups_1GiB["system"] == wiring.label(wiring.SWITCH)]
    out["nvls_from"] = int(switch_groups[switch_groups["allreduce_algorithm"] == "nvls"]["gpus"].min())
    c11 = checks.switch_vs_mesh(cal=cal)
    counts = c11["gpus"]
    out |= {"c11_pair2": c11["pair_ratio_x"][counts.index(2)],
            "c11_a2a8": c11["alltoall_gpu_ratio_x"][counts.index(8)],
            "c11_a2a_busbw2": c11["alltoall_busbw_ratio_x"][counts.index(2)],
            "c11_a2a_busbw8": c11["alltoall_busbw_ratio_x"][counts.index(8)],
            "c11_ar8": c11["allreduce_busbw_ratio_x"][counts.index(8)],
            "c11_ar4": c11["allreduce_busbw_ratio_x"][counts.index(4)]}
    busbw_8 = wiring.wide(groups_1GiB, "allreduce_busbw_GBps").loc[8]
    out["sw_over_pcie8"] = busbw_8[wiring.label(wiring.SWITCH)] / busbw_8[wiring.label(wiring.PCIE)]
    return out


def size_facts(cal: Calibration | None = None) -> Facts:
    """All-reduce time against message size (8x H200): the latency- and bandwidth-bound ranges
    (``lat_bound_MiB``, ``bw_bound_MiB``), the mesh's time over the switch's at 1 KiB and 16 GiB
    (``mesh_small_x``, ``mesh_large_x``), the crossovers (``nccl_cross_MiB``, ``oneshot_to_KiB``,
    ``twoshot_to_MiB``); the ring's steps, latency (µs) and bytes per byte (``c14_*``, ``c15_slope`` µs per GPU,
    ``ring_*``, ``nvls_small72`` µs); and claim C19's two-shot figures (``c19_*``: µs, steps, x, MiB)."""
    regions = wiring.regimes(cal=cal)
    out: Facts = {"lat_bound_MiB": regions["latency_bound_to_bytes"] / MiB,
                  "bw_bound_MiB": regions["bandwidth_bound_from_bytes"] / MiB}
    mesh = collectives.evaluate("allreduce", wiring.MESH, 8, wiring.SIZES, cal=cal)["time_us"]
    switch = collectives.evaluate("allreduce", wiring.SWITCH, 8, wiring.SIZES, cal=cal)["time_us"]
    out["mesh_small_x"] = mesh[0] / switch[0]
    out["mesh_large_x"] = mesh[-1] / switch[-1]
    out["nccl_cross_MiB"] = wiring.fastest_ranges(cal=cal)["to_KiB"].iloc[0] / KiB
    names = wiring.ALLREDUCE_ALGORITHMS
    ranges = wiring.fastest_ranges(algorithms=tuple(names), cal=cal).set_index("algorithm")
    out["oneshot_to_KiB"] = ranges.loc[names["direct"], "to_KiB"]
    out["twoshot_to_MiB"] = ranges.loc[names["two-shot"], "to_KiB"] / KiB
    checked = verdicts(cal)
    at = wiring.ring_terms(cal=cal).set_index("gpus")
    out |= {"c14_steps8": checked["C14"].model_value, "c14_steps72": at.loc[72, "steps"],
            "c15_slope": checked["C15"].model_value}
    for n in (2, 8, 72):
        out[f"ring_lat{n}"] = at.loc[n, "latency_ll_us"]
        out[f"ring_bytes{n}"] = at.loc[n, "bytes_factor"]
    out |= {"ring_small_x": at.loc[72, "ring_small_us"] / at.loc[8, "ring_small_us"],
            "ring_large_x": at.loc[72, "ring_large_us"] / at.loc[8, "ring_large_us"],
            "nvls_small72": at.loc[72, "nvls_small_us"]}
    c19 = checks.multishot(cal=cal)
    for key in ("latency_us", "latency_spread_us", "steps_ring", "small_vs_ring_x", "max_vs_ring_x",
                "large_vs_ring_x", "max_vs_nccl_x", "large_vs_nccl_x"):
        out[f"c19_{key}"] = c19[key]
    out["c19_max_MiB"] = c19["max_vs_ring_bytes"] / MiB
    return out


def nvls_facts(cal: Calibration | None = None) -> Facts:
    """In-switch reduction: claim C06's figures (``c06_*``: year, bytes per byte, busbw GB/s at 16 GiB, gains x,
    the fewest GPUs it pays on) and NVLS over ring on 2 GPUs at 8 GiB (``nvls_gain2``, x)."""
    c06 = checks.first_in_switch_reduction(cal=cal)
    out: Facts = {f"c06_{key}": c06[key] for key in (
        "year", "ring_bytes_factor", "nvls_bytes_factor", "model_gain_x", "measured_gain_x", "ring_busbw_GBps",
        "nvls_busbw_GBps", "pays_from_gpus")}
    out["nvls_gain2"] = wiring.nvls_gain(cal=cal).set_index("gpus").loc[2, "gain_x"]
    return out


def rack_facts() -> Facts:
    """The Vera Rubin NVL72 at line rate: its aggregate (``rack_*``: GPUs, TB/s) and the per-flow rate of a
    fan-out and a permutation (``rack_fan``, ``rack_perm``, GB/s per direction) and an incast's total
    (``rack_incast``, TB/s)."""
    rack = wiring.rack_aggregate("vr-nvl72")
    out: Facts = {f"rack_{key}": rack[key] for key in (
        "gpus", "gpu_TBps_bidir", "gpu_TBps_per_dir", "sum_bidir_TBps", "delivered_TBps", "bisection_TBps_per_dir")}
    patterns = wiring.rack_patterns("vr-nvl72").set_index("pattern")
    out |= {"rack_fan": patterns.loc[wiring.FAN_OUT, "per_flow_GBps_per_dir"],
            "rack_incast": patterns.loc[wiring.INCAST, "delivered_TBps"],
            "rack_perm": patterns.loc[wiring.PERMUTATION, "per_flow_GBps_per_dir"]}
    return out


def scale_out_facts(cal: Calibration | None = None) -> Facts:
    """Beyond the NVLink domain (busbw GB/s at 1 GiB): claim C25's figures (``c25_*``: NVLink / NIC x, node NIC
    GB/s, busbw in one and two nodes), all-to-all busbw of 72 and 144 GPUs on NVL72 racks and 72 GPUs on HGX H200
    nodes, and all-reduce busbw over two HGX H200 nodes by algorithm (``mn_*``)."""
    out: Facts = {f"c25_{key}": value for key, value in checks.scale_out(cal=cal).items()}
    scaled = wiring.scaling(cal=cal)
    nvl = scaled[scaled["system"] == wiring.SCALING_LABELS["gb200-nvl72"]].set_index("gpus")
    h200 = scaled[scaled["system"] == wiring.SCALING_LABELS["hgx-h200"]].set_index("gpus")
    out |= {"nvl72_a2a72": nvl.loc[72, "alltoall_busbw_GBps"], "h200_a2a72": h200.loc[72, "alltoall_busbw_GBps"],
            "nvl72_a2a144": nvl.loc[144, "alltoall_busbw_GBps"]}
    two = wiring.multinode_allreduce(wiring.SWITCH, nodes=(2, 8), cal=cal).set_index("nodes").loc[2]
    out |= {"mn_nvls2": two["nvls_busbw_GBps"], "mn_ring2": two["ring_busbw_GBps"],
            "mn_hier2": two["hierarchical_busbw_GBps"]}
    return out


def measurement_facts(comparison: pd.DataFrame | None = None, cal: Calibration | None = None) -> Facts:
    """Model against measurement: row count and median absolute errors (``err_*``, %), the error of each row of
    :data:`NAMED_ERRORS` (``err_{id}``, %), the time gaps of :data:`GAP_ROWS` (``gap{id}``, µs, and ``pred10``),
    NVLS's latency (``nvls_latency``, µs) and the out-of-sample checks within tolerance (``oos_*``, counts)."""
    comparison = measurements.compare(cal=cal) if comparison is None else comparison
    summary = wiring.error_summary(comparison).set_index("rows")
    out: Facts = {"err_rows": summary.loc[wiring.ERRORS_ALL, "count"],
                  "err_median": summary.loc[wiring.ERRORS_ALL, "median_abs_error_pct"],
                  "err_fitted_median": summary.loc[wiring.ERRORS_FITTED, "median_abs_error_pct"],
                  "err_unfitted_median": summary.loc[wiring.ERRORS_UNFITTED, "median_abs_error_pct"],
                  "err_large_median": summary.loc[wiring.ERRORS_LARGE, "median_abs_error_pct"]}
    errors = wiring.model_vs_measurement(comparison).set_index("id")["error_pct"]
    out |= {f"err_{row_id}": errors[row_id] for row_id in NAMED_ERRORS}
    gaps = {row_id: wiring.time_gap_us(row_id, cal=cal) for row_id in GAP_ROWS}
    out |= {f"gap{row_id}": gap["gap_us"] for row_id, gap in gaps.items()}
    out["pred10"] = gaps[10]["predicted_us"]
    out["nvls_latency"] = calibration.resolve(cal).value("hop_latency_us", "nvlink.nvls.simple")
    oos = wiring.out_of_sample_table(cal=cal)
    out |= {"oos_rows": len(oos), "oos_within": int(oos["within_tolerance"].sum())}
    return out


def takeaway_facts(cal: Calibration | None = None) -> Facts:
    """The key takeaways' ratios (x): switch / mesh for a pair and per GPU in an 8-GPU all-to-all, NVLS's gain,
    MultiShot's best gain over the ring, NVLink / NIC per GPU with NDR and HDR on the H100."""
    c11 = checks.switch_vs_mesh(cal=cal)
    return {"tk_pair2": c11["pair_ratio_x"][c11["gpus"].index(2)],
            "tk_gpu8": c11["alltoall_gpu_ratio_x"][c11["gpus"].index(8)],
            "tk_nvls8": checks.first_in_switch_reduction(cal=cal)["model_gain_x"],
            "tk_multishot": checks.multishot(cal=cal)["max_vs_ring_x"],
            "tk_ndr": checks.scale_out(cal=cal)["h100_ndr_x"], "tk_hdr": checks.scale_out(cal=cal)["h100_hdr_x"]}


def exercise_facts(cal: Calibration | None = None) -> Facts:
    """The exercises: 1, tensor parallelism over :data:`EX1_GPUS` GPUs on switch and mesh (line-rate GB/s,
    all-reduce times in ms and µs, NCCL's choice and two-shot); 2, one GPU of an NVL72 feeding
    :data:`EX2_PEERS` peers (GB/s per flow, ms per :data:`EX2_SLICE_GB` GB slice); 3, the ring-to-NVLS crossover
    (KiB) and both plans' latency (µs) and busbw limit (GB/s)."""
    pair = (wiring.SWITCH, wiring.MESH)
    s_label, m_label = wiring.label(wiring.SWITCH), wiring.label(wiring.MESH)
    large = wiring.collective_table(pair, counts=(EX1_GPUS,), nbytes=EX1_LARGE, cal=cal).set_index("system")
    small = wiring.collective_table(pair, counts=(EX1_GPUS,), nbytes=EX1_SMALL, cal=cal).set_index("system")
    gb = wiring.group_bandwidth(pair, counts=(EX1_GPUS,)).set_index("system")
    out: Facts = {"ex1_sw_gpu": gb.loc[s_label, "gpu_alltoall_GBps_per_dir"],
                  "ex1_mesh_gpu": gb.loc[m_label, "gpu_alltoall_GBps_per_dir"],
                  "ex1_sw_pair": gb.loc[s_label, "pair_in_alltoall_GBps_per_dir"],
                  "ex1_mesh_pair": gb.loc[m_label, "pair_in_alltoall_GBps_per_dir"],
                  "ex1_large_x": large.loc[m_label, "allreduce_time_us"] / large.loc[s_label, "allreduce_time_us"],
                  "ex1_sw_large_ms": large.loc[s_label, "allreduce_time_us"] / 1e3,
                  "ex1_mesh_large_ms": large.loc[m_label, "allreduce_time_us"] / 1e3,
                  "ex1_sw_small_us": small.loc[s_label, "allreduce_time_us"],
                  "ex1_mesh_small_us": small.loc[m_label, "allreduce_time_us"]}
    for key, system_id in (("sw", wiring.SWITCH), ("mesh", wiring.MESH)):
        out[f"ex1_{key}_2shot_us"] = collectives.time_us("allreduce", system_id, EX1_GPUS, EX1_SMALL,
                                                         algorithm="two-shot", cal=cal)
    fan = wiring.fanout(EX2_SYSTEM, peers=(1, EX2_PEERS)).set_index("peers")
    out |= {"ex2_fan_peer": fan.loc[EX2_PEERS, "per_peer_GBps_per_dir"],
            "ex2_fan_ms": generations.transfer_time_ms(EX2_SLICE_GB, fan.loc[EX2_PEERS, "per_peer_GBps_per_dir"]),
            "ex2_pair": fan.loc[1, "per_peer_GBps_per_dir"],
            "ex2_pair_ms": generations.transfer_time_ms(EX2_SLICE_GB, fan.loc[1, "per_peer_GBps_per_dir"])}
    names = wiring.ALLREDUCE_ALGORITHMS
    plans = wiring.fastest_ranges(cal=cal).set_index("algorithm")
    ring, nvls = plans.loc[names["ring"]], plans.loc[names["nvls"]]
    out |= {"ex3_cross_KiB": ring["to_KiB"], "ex3_ring_lat": ring["latency_us"],
            "ex3_ring_bw": ring["busbw_GBps_limit"], "ex3_nvls_lat": nvls["latency_us"],
            "ex3_nvls_bw": nvls["busbw_GBps_limit"]}
    return out


def in_short(f: Facts) -> str:
    """The chapter's answer in two sentences in the current language, from its pair, collective and NVLS facts
    (``f``: :func:`facts`' values; ratios x, GB/s)."""
    even = abs(f["c11_a2a8"] - 1) < 0.05
    edge = (_("the wiring alone gives the switch no edge") if even else
            _("the switch keeps {ratio:.2f}x the mesh's all-to-all bandwidth", ratio=f["c11_a2a8"]))
    return _("An NVSwitch gives one pair of GPUs the whole port, {pair2:.1f}x a mesh link; with all 8 GPUs talking at "
             "once each pair gets {switch8:.0f} GB/s through the switch and {mesh8:.0f} on a mesh, so {edge}. What the "
             "switch adds at 8 GPUs is in-switch reduction: an all-reduce {allreduce8:.2f}x as fast as on the mesh.",
             pair2=f["c11_pair2"], switch8=f["t1_sw_pair8"], mesh8=f["t1_mesh_pair8"], edge=edge,
             allreduce8=f["c11_ar8"])


def facts(cal: Calibration | None = None, comparison: pd.DataFrame | None = None) -> Facts:
    """Every value chapter 2's prose cites, by glue name (the section functions above, merged), computed with
    calibration ``cal`` (None: the shipped one), as plain Python numbers or Markdown text. ``comparison``:
    a :func:`multigpu.evidence.measurements.compare` already made with ``cal``, to reuse. Each text fact is
    there in English and, as ``<name>_zh``, in Chinese (:func:`multigpu.book.glue.per_language`); the numbers
    once, for both editions."""
    merged: Facts = {}
    for part in (verdict_facts(cal), wiring_facts(), pair_facts(cal), collective_facts(cal), size_facts(cal),
                 nvls_facts(cal), rack_facts(), scale_out_facts(cal), measurement_facts(comparison, cal),
                 takeaway_facts(cal), exercise_facts(cal)):
        merged |= part
    merged |= glue.per_language(lambda: {"in_short": in_short(merged)})
    return {name: plain(value) for name, value in merged.items()}
