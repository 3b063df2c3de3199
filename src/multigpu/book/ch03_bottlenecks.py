"""Chapter 3 (communication bottlenecks): its figures, drawn from :mod:`multigpu.evidence.bottlenecks`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from multigpu.book import plotting
from multigpu.evidence import bottlenecks


def _stacked_barh(ax, labels: list[str], parts: dict[str, np.ndarray], gaps: list[int]) -> None:
    """Horizontal stacked bars, top to bottom in ``labels`` order, one blank slot before each index in ``gaps``."""
    y, position = [], 0.0
    for i in range(len(labels)):
        if i in gaps:
            position += 0.6
        y.append(position)
        position += 1.0
    y = -np.asarray(y)
    left = np.zeros(len(labels))
    for (name, values), color, hatch in zip(parts.items(), plotting.COLORS[1:] + plotting.COLORS[:1],
                                            plotting.hatches()):
        ax.barh(y, values, left=left, height=0.8, color=color, hatch=hatch, edgecolor="#333333", linewidth=0.5,
                label=name)
        left = left + values
    ax.set_yticks(y, labels, fontsize=8)
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8)



def plot_training_breakdown(ax, table: pd.DataFrame) -> None:
    """Stacked bars of :func:`training_breakdown`: share of the step per part, one bar per setup and layout."""
    labels = [f"{s}: {lay}" for s, lay in zip(table["setup"], table["layout"])]
    gaps = [i for i in range(1, len(table)) if table["setup"].iloc[i] != table["setup"].iloc[i - 1]]
    parts = {bottlenecks.PART_NAMES[k]: table[f"{k}_pct"].to_numpy() for k in bottlenecks.PARTS}
    _stacked_barh(ax, labels, parts, gaps)
    ax.set_xlim(0, 100)



def plot_decode_breakdown(ax, table: pd.DataFrame) -> None:
    """Stacked bars of :func:`decode_breakdown`: milliseconds per decode step by part."""
    labels = [f"{s}, TP {tp}: batch {b}" for s, tp, b in zip(table["setup"], table["tp"], table["batch"])]
    case = list(zip(table["setup"], table["tp"]))
    gaps = [i for i in range(1, len(table)) if case[i] != case[i - 1]]
    parts = {"weights read": table["weights_ms"].to_numpy(), "KV-cache read": table["kv_cache_ms"].to_numpy(),
             "compute beyond the reads": table["other_compute_ms"].to_numpy(),
             "TP all-reduces": table["allreduce_ms"].to_numpy()}
    if not parts["compute beyond the reads"].any():  # memory-bound throughout: no empty legend entry
        del parts["compute beyond the reads"]
    _stacked_barh(ax, labels, parts, gaps)



def plot_scaling(axes, table: pd.DataFrame) -> None:
    """Three panels (DP, TP, PP) of :func:`scaling`: efficiency against GPUs, one line per setup."""
    titles = {"DP": "data parallel (weak scaling)", "TP": "tensor parallel (strong)",
              "PP": "pipeline parallel (strong)"}
    setups = list(dict.fromkeys(table["setup"]))
    for ax, kind in zip(axes, ("DP", "TP", "PP")):
        part = table[table["kind"] == kind]
        for setup, color, style, marker in zip(setups, plotting.COLORS, plotting.LINESTYLES, plotting.MARKERS):
            line = part[part["setup"] == setup]
            ax.plot(line["gpus"], line["efficiency_pct"], color=color, linestyle=style, marker=marker, label=setup)
        ax.set_xscale("log", base=2)
        ax.set_xticks(bottlenecks.SCALING_COUNTS[kind], [str(n) for n in bottlenecks.SCALING_COUNTS[kind]])
        ax.set_ylim(0, 105)
        ax.set_title(titles[kind], fontsize=10)
        if kind in ("DP", "PP"):
            ax.axvline(11, color="#888888", linewidth=0.8)
            ax.text(12, 55, "more than\none node", fontsize=7, color="#444444")
    axes[2].legend(loc="lower left", fontsize=7)



def plot_dp_share(ax, sweep: pd.DataFrame) -> None:
    """Exposed DP communication share against sequences per GPU per step, one line per setup."""
    for (setup, part), color, style, marker in zip(sweep.groupby("setup", sort=False), plotting.COLORS,
                                                   plotting.LINESTYLES, plotting.MARKERS):
        ax.plot(part["seqs_per_gpu"], part["dp_comm_pct"], color=color, linestyle=style, marker=marker, label=setup)
    ax.set_xscale("log", base=2)
    ax.set_xticks(bottlenecks.DP_BATCHES, [str(n) for n in bottlenecks.DP_BATCHES])
    ax.axhline(50, color="#888888", linewidth=0.8)
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8)



def plot_decode_ratio(ax, table: pd.DataFrame) -> None:
    """All-reduce / compute time of a decode step against batch (log-log), one line per case."""
    cases = list(dict.fromkeys(zip(table["setup"], table["tp"])))
    for (setup, tp), color, style, marker in zip(cases, plotting.COLORS, plotting.LINESTYLES, plotting.MARKERS):
        part = table[(table["setup"] == setup) & (table["tp"] == tp) & table["fits"]]
        ax.plot(part["batch"], part["ratio"], color=color, linestyle=style, marker=marker, label=f"{setup}, TP {tp}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(bottlenecks.DECODE_BATCHES, [str(n) for n in bottlenecks.DECODE_BATCHES])
    ax.axhline(1, color="#888888", linewidth=0.8)
    ax.set_ylim(top=60)  # room above the curves for the legend
    ax.legend(fontsize=7, loc="upper center", ncol=2)



def plot_throughput_vs_rate(ax, dtypes: Sequence[str] = ("bf16", "fp8")) -> None:
    """Our throughput-per-GPU against per-user-rate curves (mesh and switch, each dtype) with NVIDIA's
    Table 2 points."""
    styles = iter(zip(plotting.COLORS, plotting.LINESTYLES))
    for dtype in dtypes:
        for name, system in (("NVLink mesh", bottlenecks.MESH), ("NVSwitch", bottlenecks.SWITCH)):
            color, style = next(styles)
            curve = bottlenecks.throughput_curve(system, dtype)
            ax.plot(curve["tokens_per_s_per_user"], curve["tokens_per_s_per_gpu"], color=color, linestyle=style,
                    marker="", label=f"our model, {dtype.upper()}, {name}")
    nv = bottlenecks.nvidia_table2()
    ax.plot(nv["rate_tokens_per_s_per_user"], nv["mesh_tokens_per_s_per_gpu"], linestyle="none", marker="v",
            markersize=7, color=plotting.COLORS[6], label="NVIDIA Table 2, point-to-point")
    ax.plot(nv["rate_tokens_per_s_per_user"], nv["switch_tokens_per_s_per_gpu"], linestyle="none", marker="^",
            markersize=7, color=plotting.COLORS[4], label="NVIDIA Table 2, NVSwitch")
    ax.legend(fontsize=7)



def plot_switch_benefit(ax, table: pd.DataFrame, dtypes: Sequence[str] = ("bf16", "fp8")) -> None:
    """Switch / mesh throughput against batch: NVIDIA's Table 3 and ours.

    ``table`` comes from :func:`compare_fixed_batch`.
    """
    ax.plot(table["batch"], table["nvidia_benefit_x"], color=plotting.COLORS[0], linestyle="none", marker="^",
            markersize=7, label="NVIDIA Table 3 (vendor-modelled)")
    for dtype, color, style, marker in zip(dtypes, plotting.COLORS[1:], plotting.LINESTYLES[1:], plotting.MARKERS[1:]):
        ax.plot(table["batch"], table[f"{dtype}_benefit_x"], color=color, linestyle=style, marker=marker,
                label=f"our model, {dtype.upper()}")
    ax.set_xscale("log", base=2)
    ax.set_xticks(table["batch"], [str(b) for b in table["batch"]])
    ax.legend(fontsize=8)
