"""Chapter 2 (NVSwitch topology): its figures, drawn from :mod:`multigpu.evidence.wiring`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from multigpu.book import plotting
from multigpu.common.units import GiB, KiB, MiB
from multigpu.evidence import wiring


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
        left.plot(data["peers"], data["total_GBps_per_dir"], label=f"{wiring.label(system_id)}: total", **style)
        left.plot(data["peers"], data["per_peer_GBps_per_dir"], label=f"{wiring.label(system_id)}: per peer",
                  **{**style, "linestyle": ":", "marker": "x" if style["marker"] != "x" else "+"})
        rows = frame[frame["system"] == wiring.label(system_id)]
        right.plot(rows["gpus"], rows["gpu_alltoall_GBps_per_dir"], label=wiring.label(system_id), **style)
    for ax in axes:
        ax.set_yscale("log")
        ax.set_ylim(0.2, 800)
    left.set_xlabel("peers GPU 0 sends to at once")
    left.set_title("one GPU to many peers", fontsize=10)
    right.set_xlabel("GPUs in the all-to-all")
    right.set_title("every GPU to every other", fontsize=10)
    left.legend(fontsize=7.5, loc="lower left", ncols=1)
    right.legend(fontsize=7.5, loc="lower right")



def plot_allreduce_vs_size(ax, frame: pd.DataFrame | None = None, mesh: pd.DataFrame | None = None,
                           regions: dict[str, float] | None = None) -> None:
    """All-reduce time against size, one line per algorithm (log-log); NCCL's choice on the mesh as a wide
    grey line; the latency-bound and bandwidth-bound ranges of :func:`regimes` shaded and named."""
    frame = wiring.allreduce_vs_size() if frame is None else frame
    for i, (name, rows) in enumerate(frame.groupby("algorithm", sort=False)):
        ax.plot(rows["bytes"], rows["time_us"], label=name, markevery=8, **_style(i))
    if mesh is not None:
        ax.plot(mesh["bytes"], mesh["time_us"], color="#999999", linewidth=4, alpha=0.6, zorder=0, marker="",
                label=f"{wiring.label(wiring.MESH)}: NCCL's choice")
    ax.set_yscale("log")
    _size_axis(ax, frame["bytes"].to_numpy())
    lo, hi = float(frame["bytes"].min()), float(frame["bytes"].max())
    if regions:
        top = ax.get_xaxis_transform()
        ax.axvspan(lo, regions["latency_bound_to_bytes"], color="#e8e8e8", zorder=-2)
        ax.axvspan(regions["bandwidth_bound_from_bytes"], hi, color="#f4f4f4", zorder=-2)
        ax.text(lo * 1.4, 0.97, "latency-bound", transform=top, fontsize=8, va="top")
        ax.text(hi / 1.4, 0.97, "bandwidth-bound", transform=top, fontsize=8, va="top", ha="right")
    ax.set_xlim(lo, hi)
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(0.0, 0.9), frameon=True, framealpha=1,
              edgecolor="#cccccc")



def plot_ring_terms(ax, frame: pd.DataFrame | None = None) -> None:
    """Ring all-reduce time relative to 2 GPUs, small and large message, against the GPU count."""
    frame = wiring.ring_terms() if frame is None else frame
    first = frame.iloc[0]
    ax.plot(frame["gpus"], frame["ring_small_us"] / first["ring_small_us"],
            label=f"{_size_label(8 * KiB)}: latency-bound", **_style(0))
    ax.plot(frame["gpus"], frame["ring_large_us"] / first["ring_large_us"],
            label=f"{_size_label(GiB)}: bandwidth-bound", **_style(1))
    ax.plot(frame["gpus"], frame["steps"] / first["steps"], label="steps 2(N-1), relative", color="#999999",
            linestyle="--", marker="", linewidth=1)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="upper left")



def plot_nvls_gain(ax, frame: pd.DataFrame | None = None) -> None:
    """Ring and NVLS all-reduce busbw against the GPU count (model lines), measured points on top."""
    frame = wiring.nvls_gain() if frame is None else frame
    ax.plot(frame["gpus"], frame["ring_busbw_GBps"], label="model: ring", **_style(0))
    ax.plot(frame["gpus"], frame["nvls_busbw_GBps"], label="model: NVLS (in-switch reduction)", **_style(2))
    measured = frame.dropna(subset=["measured_busbw_GBps"])
    for algorithm, marker in (("ring", "o"), ("nvls", "s")):
        rows = measured[measured["measured_algorithm"] == algorithm]
        if len(rows):
            ax.scatter(rows["gpus"], rows["measured_busbw_GBps"], marker=marker, s=60, facecolors="none",
                       edgecolors="black", linewidths=1.2, zorder=3,
                       label=f"measured (NCCL chose {wiring.ALLREDUCE_ALGORITHMS.get(algorithm, algorithm)})")
    ax.set_ylim(0, 550)
    ax.legend(fontsize=8, loc="lower right")



def plot_scaling(axes, frame: pd.DataFrame | None = None) -> None:
    """Two panels, busbw (log) against GPUs (log 2): all-reduce left, all-to-all right, one line per system."""
    frame = wiring.scaling() if frame is None else frame
    left, right = axes
    for i, (name, rows) in enumerate(frame.groupby("system", sort=False)):
        left.plot(rows["gpus"], rows["allreduce_busbw_GBps"], label=name, **_style(i))
        right.plot(rows["gpus"], rows["alltoall_busbw_GBps"], label=name, **_style(i))
    for ax, title in ((left, "all-reduce"), (right, "all-to-all")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ticks = sorted(set(frame["gpus"]))
        ax.set_xticks(ticks, [str(t) for t in ticks], fontsize=7.5)
        ax.minorticks_off()
        ax.set_ylim(10, 2000)
        ax.set_title(title, fontsize=10)
    left.legend(fontsize=8, loc="lower right")



def _group(what: str) -> str:
    """The kind of a measurement row, for the figure's markers."""
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
            left.scatter(rows["measured_GBps"], rows["predicted_GBps"],
                         label=f"{group}, {'fitted on' if fitted else 'not fitted on'}", **marker)
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
    left.set_ylabel("predicted (GB/s, log scale)")
    right.set_ylabel("model error: predicted / measured - 1 (%)")
    left.set_title("predicted against measured", fontsize=10)
    right.set_title("error of each measurement", fontsize=10)
    worst = frame[frame["error_pct"].abs() > label_above_pct].sort_values("measured_GBps")
    for j, (_, row) in enumerate(worst.iterrows()):
        right.annotate(f"#{row['id']}", (row["measured_GBps"], row["error_pct"]), textcoords="offset points",
                       xytext=(6, 6 if j % 2 else -12), fontsize=7.5)
    left.legend(fontsize=7.5, loc="lower right")
