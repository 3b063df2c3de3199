"""Chapter 2's figures, each drawn in the current language (the notebook shows both editions with
``plotting.show_both``): what a group of GPUs gets from each wiring, all-reduce against message size, the ring's
terms, what NVLS gains, scaling across nodes, the model against measurements, and the drawn topologies
(:mod:`multigpu.book.diagrams`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from multigpu.book import diagrams, lang, plotting, schematics
from multigpu.book.lang import N_, _
from multigpu.comm import collectives
from multigpu.comm.calibration import Calibration
from multigpu.common.units import GiB, KiB, MiB
from multigpu.evidence import topology


def _system(system_id: str) -> str:
    """The short name of a compared system (:func:`multigpu.evidence.topology.label`) in the current language."""
    return lang.label(topology.label(system_id))


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
            return f"{size / factor:.3g} {unit}"  # three significant figures: 8.18 MiB
    return f"{size:.3g} B"


def plot_group_bandwidth(axes, frame: pd.DataFrame | None = None, fan: dict[str, pd.DataFrame] | None = None) -> None:
    """Two panels: left, one GPU sending to 1..7 peers at once (per peer, dashed; total, solid);
    right, each GPU's all-to-all total against the group size. Line rate, GB/s per direction, log scale."""
    frame = topology.group_bandwidth() if frame is None else frame
    fan = {s: topology.fanout(s) for s in topology.COMPARED} if fan is None else fan
    left, right = axes
    for i, system_id in enumerate(topology.COMPARED):
        style = _style(i)
        data = fan[system_id]
        left.plot(data["peers"], data["total_GBps_per_dir"], label=_("{system}: total", system=_system(system_id)),
                  **style)
        left.plot(data["peers"], data["per_peer_GBps_per_dir"],
                  label=_("{system}: per peer", system=_system(system_id)),
                  **{**style, "linestyle": ":", "marker": "x" if style["marker"] != "x" else "+"})
        rows = frame[frame["system"] == topology.label(system_id)]
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
    frame = topology.allreduce_vs_size() if frame is None else frame
    for i, (name, rows) in enumerate(frame.groupby("algorithm", sort=False)):
        ax.plot(rows["bytes"], rows["time_us"], label=lang.label(name), markevery=8, **_style(i))
    if mesh is not None:
        ax.plot(mesh["bytes"], mesh["time_us"], color="#999999", linewidth=4, alpha=0.6, zorder=0, marker="",
                label=_("{system}: NCCL's choice", system=_system(topology.MESH)))
        if "time_us_lo" in mesh:
            plotting.band(ax, mesh["bytes"], mesh["time_us_lo"], mesh["time_us_hi"], "#000000")  # dark: on shading
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
    style = {"fontsize": plotting.SMALL_PT, "loc": "upper left", "bbox_to_anchor": (0.0, 0.9), "frameon": True,
             "framealpha": 1, "edgecolor": "#cccccc"}
    if mesh is not None and "time_us_lo" in mesh:
        plotting.legend_with_band(ax, _("90 % prediction interval of NCCL's choice"), **style)
    else:
        ax.legend(**style)


def plot_ring_terms(ax, frame: pd.DataFrame | None = None) -> None:
    """Ring all-reduce time relative to 2 GPUs, small and large message, against the GPU count."""
    frame = topology.ring_terms() if frame is None else frame
    first = frame.iloc[0]
    ax.plot(frame["gpus"], frame["ring_small_us"] / first["ring_small_us"],
            label=_("{size}: latency-bound", size=_size_label(8 * KiB)), **_style(0))
    ax.plot(frame["gpus"], frame["ring_large_us"] / first["ring_large_us"],
            label=_("{size}: bandwidth-bound", size=_size_label(GiB)), **_style(1))
    ax.plot(frame["gpus"], frame["steps"] / first["steps"], label=_("steps 2(N-1), relative"), color="#999999",
            linestyle="--", marker="", linewidth=1)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="upper left")


def _band(ax, x, frame: pd.DataFrame, column: str, color) -> None:
    """``column``'s prediction band (``<column>_lo`` to ``<column>_hi``) where the frame has one."""
    if f"{column}_lo" in frame:
        plotting.band(ax, x, frame[f"{column}_lo"], frame[f"{column}_hi"], color)


def plot_nvls_gain(ax, frame: pd.DataFrame | None = None) -> None:
    """Ring and NVLS all-reduce busbw against the GPU count (model lines, each with its 90 % prediction band),
    measured points on top."""
    frame = topology.nvls_gain() if frame is None else frame
    for column, style, label in (("ring_busbw_GBps", _style(0), _("model: ring")),
                                 ("nvls_busbw_GBps", _style(2), _("model: NVLS (in-switch reduction)"))):
        ax.plot(frame["gpus"], frame[column], label=label, **style)
        _band(ax, frame["gpus"], frame, column, style["color"])
    measured = frame.dropna(subset=["measured_busbw_GBps"])
    for algorithm, marker in (("ring", "o"), ("nvls", "s")):
        rows = measured[measured["measured_algorithm"] == algorithm]
        if len(rows):
            chosen = lang.label(topology.ALLREDUCE_ALGORITHMS.get(algorithm, algorithm))
            ax.scatter(rows["gpus"], rows["measured_busbw_GBps"], marker=marker, s=60, facecolors="none",
                       edgecolors="black", linewidths=1.2, zorder=3,
                       label=_("measured (NCCL chose {algorithm})", algorithm=chosen))
    ax.set_ylim(0, 600)
    plotting.legend_with_band(ax, fontsize=8, loc="lower right")


def plot_scaling(axes, frame: pd.DataFrame | None = None) -> None:
    """Two panels, busbw (log) against GPUs (log 2): all-reduce left, all-to-all right, one line per system, each
    with its 90 % prediction band."""
    frame = topology.scaling() if frame is None else frame
    left, right = axes
    for i, (name, rows) in enumerate(frame.groupby("system", sort=False)):
        for ax, column in ((left, "allreduce_busbw_GBps"), (right, "alltoall_busbw_GBps")):
            ax.plot(rows["gpus"], rows[column], label=lang.label(name), **_style(i))
            _band(ax, rows["gpus"], rows, column, _style(i)["color"])
    for ax, title in ((left, _("all-reduce")), (right, _("all-to-all"))):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ticks = sorted(set(frame["gpus"]))
        ax.set_xticks(ticks, [str(t) for t in ticks], fontsize=plotting.SMALL_PT)
        ax.minorticks_off()
        ax.set_ylim(10, 2000)
        ax.set_title(title, fontsize=10)
    plotting.legend_with_band(left, fontsize=8, loc="lower right")


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
    frame = topology.model_vs_measurement() if frame is None else frame
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


def figure_group_bandwidth() -> Figure:
    """What one GPU sends (GB/s per direction, line rate, log scale): to 1..7 peers at once (left), and in an
    all-to-all of 2..8 GPUs (right), on the three compared systems."""
    fig, axes = plotting.figure(
        _("What one GPU sends: to several peers at once, and in an all-to-all"),
        _("GPUs (count)"), _("bandwidth, one direction (GB/s, log scale)"),
        source=_("multigpu.evidence.topology.fanout and group_bandwidth (line rate, max-min fair sharing of links); "
                 "catalogue systems hgx-h200, h200-p2p-8, pcie-l40s-8"),
        nrows=2, figsize=(6.8, 7.6))
    frame = topology.group_bandwidth()
    fan = {s: topology.fanout(s) for s in topology.COMPARED}
    plot_group_bandwidth(axes, frame, fan)
    totals = _("; ").join(f"{_system(s)} {plotting.span(fan[s]['total_GBps_per_dir'], 'GB/s')}" for s in fan)
    return plotting.set_alt(fig, _("Two line charts, log scale. Top: what GPU 0 sends in total to 1 to 7 peers at "
                                   "once ({totals}), and per peer, which falls as peers are added. Bottom: each "
                                   "GPU's all-to-all bandwidth against the group size, {span}.", totals=totals,
                                   span=plotting.span(frame["gpu_alltoall_GBps_per_dir"], "GB/s")))


def figure_allreduce_vs_size(cal: Calibration | None = None) -> Figure:
    """All-reduce time (µs, log scale) against the message size per GPU (bytes, log scale) on 8x H200 with
    NVSwitch, one line per algorithm, NCCL's choice on the mesh, and the latency- and bandwidth-bound ranges."""
    regions = topology.regimes(cal=cal)
    mesh_choice = topology.allreduce_choice(cal=cal)
    fig, ax = plotting.figure(
        _("All-reduce on 8x H200 (NVSwitch): time by algorithm"),
        _("message size per GPU (bytes, log scale)"), _("time (µs, log scale)"),
        source=_("multigpu.comm.collectives (alpha-beta per algorithm and protocol, NCCL 2.30 latencies, calibrated "
                 "bandwidth); multigpu.evidence.topology.allreduce_vs_size, allreduce_choice and regimes; band from "
                 "multigpu.evidence.intervals (held-out residuals)"))
    frame = topology.allreduce_vs_size(cal=cal)
    plot_allreduce_vs_size(ax, frame, mesh=mesh_choice, regions=regions)
    small, large = mesh_choice.iloc[0], mesh_choice.iloc[-1]
    return plotting.set_alt(fig, _("Line chart, log-log: all-reduce time on 8x H200 against message size ({low} to "
                                   "{high}), one line per algorithm, {span}; latency-bound below {latency}, "
                                   "bandwidth-bound from {bandwidth}. NCCL's choice on the mesh has a band for its "
                                   "90 % prediction interval: {small_band} at {low}, {large_band} at {high}.",
                                   low=_size_label(frame["bytes"].min()),
                                   high=_size_label(frame["bytes"].max()), span=plotting.span(frame["time_us"], "µs"),
                                   latency=_size_label(regions["latency_bound_to_bytes"]),
                                   bandwidth=_size_label(regions["bandwidth_bound_from_bytes"]),
                                   small_band=plotting.span([small["time_us_lo"], small["time_us_hi"]], "µs"),
                                   large_band=plotting.span([large["time_us_lo"], large["time_us_hi"]], "µs")))


def figure_ring_terms(cal: Calibration | None = None) -> Figure:
    """Ring all-reduce time relative to 2 GPUs (ratio), latency-bound and bandwidth-bound message, against the
    GPUs on one NVLink switch (GB200 NVL72)."""
    fig, ax = plotting.figure(
        _("Ring all-reduce as the group grows (one NVLink switch)"),
        _("GPUs on one NVLink switch (count)"), _("time relative to 2 GPUs (ratio)"),
        source=_("multigpu.evidence.topology.ring_terms on gb200-nvl72 (a 72-GPU NVLink domain), ring algorithm only"))
    frame = topology.ring_terms(cal=cal)
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
        source=_("model: multigpu.evidence.topology.nvls_gain, bands from multigpu.evidence.intervals (held-out "
                 "residuals); measured: nccl-tests on 8x H200 (stas00/ml-engineering, data/measurements.csv rows "
                 "15-19)"))
    frame = topology.nvls_gain(cal=cal)
    plot_nvls_gain(ax, frame)
    eight = frame.set_index("gpus").loc[8]
    return plotting.set_alt(fig, _("Line chart: all-reduce busbw at 8 GiB against 2 to 8 GPUs; ring stays at {ring}, "
                                   "NVLS rises from {nvls}; measured points {measured}. Each line has a band for its "
                                   "90 % prediction interval, at 8 GPUs {band} for NVLS.",
                                   ring=plotting.span(frame["ring_busbw_GBps"], "GB/s"),
                                   nvls=plotting.span(frame["nvls_busbw_GBps"], "GB/s"),
                                   measured=plotting.span(frame["measured_busbw_GBps"], "GB/s"),
                                   band=plotting.span([eight["nvls_busbw_GBps_lo"], eight["nvls_busbw_GBps_hi"]],
                                                      "GB/s")))


def figure_scaling(cal: Calibration | None = None) -> Figure:
    """All-reduce (left) and all-to-all (right) busbw at 1 GiB (GB/s, log scale) against the GPUs of a job
    (count, log scale), as it leaves the NVLink domain."""
    fig, axes = plotting.figure(
        _("Leaving the NVLink domain: busbw as the job grows"),
        _("GPUs in the job (count, log scale)"), _("busbw at 1 GiB (GB/s, log scale)"),
        source=_("multigpu.evidence.topology.scaling (collective model; one NIC per GPU, rail-optimised, non-blocking "
                 "fabric), bands from multigpu.evidence.intervals; catalogue systems hgx-h200, dgx-a100, "
                 "gb200-nvl72"),
        ncols=2, figsize=(6.8, 4.4))
    frame = topology.scaling(cal=cal)
    plot_scaling(axes, frame)
    return plotting.set_alt(fig, _("Two line charts, log scales: busbw at 1 GiB against {low} to {high} GPUs per "
                                   "system; all-reduce {allreduce}, all-to-all {alltoall}, falling once the job "
                                   "leaves one NVLink domain. Each line has a band for its 90 % prediction interval: "
                                   "{within} of the line inside one domain, {across} across domains.",
                                   low=frame["gpus"].min(), high=frame["gpus"].max(),
                                   allreduce=plotting.span(frame["allreduce_busbw_GBps"], "GB/s"),
                                   alltoall=plotting.span(frame["alltoall_busbw_GBps"], "GB/s"),
                                   within=_band_share(frame[frame["domains"] == 1]),
                                   across=_band_share(frame[frame["domains"] > 1])))


def _band_share(rows: pd.DataFrame) -> str:
    """The all-reduce band of ``rows`` as shares of the line, for alt text: "47 to 117 %"."""
    value = rows["allreduce_busbw_GBps"]
    return plotting.span(100 * pd.concat([rows["allreduce_busbw_GBps_lo"] / value,
                                          rows["allreduce_busbw_GBps_hi"] / value]), "%", fmt=".0f")


def figure_predicted_vs_measured(comparison: pd.DataFrame | None = None, cal: Calibration | None = None) -> Figure:
    """Predicted against measured (GB/s, log-log) and each row's error (%), for a ``comparison`` of
    :func:`multigpu.evidence.measurements.compare` (else one made with ``cal``)."""
    fig, axes = plotting.figure(
        _("The model against published measurements"),
        _("measured (GB/s, log scale)"), _("predicted (GB/s, log scale)"),
        source=_("multigpu.evidence.measurements.compare over data/measurements.csv (nccl-tests, nvbandwidth, "
                 "p2pBandwidthLatencyTest, DeepEP; sources row by row)"),
        nrows=2, figsize=(6.8, 8.4))
    frame = topology.model_vs_measurement(comparison, cal=cal)
    plot_predicted_vs_measured(axes, frame)
    within = int((frame["error_pct"].abs() <= 10).sum())
    return plotting.set_alt(fig, _("Two scatter plots of {rows} published measurements: predicted against measured "
                                   "bandwidth ({span}), and each one's model error, {errors}; {within} of {rows} "
                                   "within 10 %.", rows=len(frame), span=plotting.span(frame["measured_GBps"], "GB/s"),
                                   errors=plotting.span(frame["error_pct"], "%"), within=within))


def diagram_wiring(system_id: str) -> Figure:
    """:func:`multigpu.book.diagrams.wiring_figure` of ``system_id`` with its alt text, in the current language."""
    return plotting.set_alt(diagrams.wiring_figure(system_id), diagrams.wiring_alt_text(system_id))


def diagram_multinode(system_id: str = "hgx-h100", nodes: int = 2) -> Figure:
    """:func:`multigpu.book.diagrams.multinode_figure` with its alt text, in the current language."""
    return plotting.set_alt(diagrams.multinode_figure(system_id, nodes), diagrams.multinode_alt_text(system_id, nodes))


def diagram_schematic(algorithm: str) -> Figure:
    """:func:`multigpu.book.schematics.allreduce_schematic` of ``algorithm`` on :data:`schematics.SCHEMATIC_GPUS` GPUs with
    :data:`schematics.SCHEMATIC_BYTES` bytes each, with its alt text, in the current language."""
    return plotting.set_alt(schematics.allreduce_schematic(algorithm, n=schematics.SCHEMATIC_GPUS, size_bytes=schematics.SCHEMATIC_BYTES),
                            schematics.schematic_alt_text(algorithm, n=schematics.SCHEMATIC_GPUS, size_bytes=schematics.SCHEMATIC_BYTES))
