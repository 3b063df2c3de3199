"""Chapter 3's figures, each drawn in the current language (the notebook shows both editions with
``plotting.show_both``): where a training step and a decode step spend their time, how tensor and data
parallelism scale, the decode step's communication against its compute, and what NVSwitch buys a server.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib import ticker
from matplotlib.figure import Figure

from multigpu.book import lang, plotting
from multigpu.book.lang import _
from multigpu.comm.calibration import Calibration
from multigpu.compute import models
from multigpu.evidence import bottlenecks, underload


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
    """Stacked bars of :func:`~multigpu.evidence.bottlenecks.training_breakdown`: share of the step per part
    (%), one bar per setup and layout."""
    labels = [_("{setup}: {layout}", setup=lang.label(s), layout=lang.label(lay))
              for s, lay in zip(table["setup"], table["layout"])]
    gaps = [i for i in range(1, len(table)) if table["setup"].iloc[i] != table["setup"].iloc[i - 1]]
    parts = {lang.label(bottlenecks.PART_NAMES[k]): table[f"{k}_pct"].to_numpy() for k in bottlenecks.PARTS}
    _stacked_barh(ax, labels, parts, gaps)
    ax.set_xlim(0, 100)


def plot_decode_breakdown(ax, table: pd.DataFrame) -> None:
    """Stacked bars of :func:`~multigpu.evidence.bottlenecks.decode_breakdown`: milliseconds per decode step by part."""
    labels = [_("{setup}, TP {tp}: batch {batch}", setup=lang.label(s), tp=tp, batch=b)
              for s, tp, b in zip(table["setup"], table["tp"], table["batch"])]
    case = list(zip(table["setup"], table["tp"]))
    gaps = [i for i in range(1, len(table)) if case[i] != case[i - 1]]
    parts = [(_("weights read"), table["weights_ms"].to_numpy()), (_("KV-cache read"), table["kv_cache_ms"].to_numpy()),
             (_("fixed kernel time of the layers"), table["layer_fixed_ms"].to_numpy()),
             (_("compute beyond the reads"), table["other_compute_ms"].to_numpy()),
             (_("TP all-reduces"), table["allreduce_ms"].to_numpy())]
    if not parts[3][1].any():  # memory-bound throughout: no empty legend entry
        del parts[3]
    _stacked_barh(ax, labels, dict(parts), gaps)


def plot_scaling(axes, table: pd.DataFrame) -> None:
    """Three panels (DP, TP, PP) of :func:`~multigpu.evidence.bottlenecks.scaling`: efficiency (%) against
    GPUs, one line per setup."""
    titles = {"DP": _("data parallel (weak scaling)"), "TP": _("tensor parallel (strong)"),
              "PP": _("pipeline parallel (strong)")}
    setups = list(dict.fromkeys(table["setup"]))
    for ax, kind in zip(axes, ("DP", "TP", "PP")):
        part = table[table["kind"] == kind]
        for setup, color, style, marker in zip(setups, plotting.COLORS, plotting.LINESTYLES, plotting.MARKERS):
            line = part[part["setup"] == setup]
            ax.plot(line["gpus"], line["efficiency_pct"], color=color, linestyle=style, marker=marker,
                    label=lang.label(setup))
        ax.set_xscale("log", base=2)
        ax.set_xticks(bottlenecks.SCALING_COUNTS[kind], [str(n) for n in bottlenecks.SCALING_COUNTS[kind]])
        ax.set_ylim(0, 105)
        ax.set_title(titles[kind], fontsize=10)
        if kind in ("DP", "PP"):
            ax.axvline(11, color="#888888", linewidth=0.8)
            ax.text(12, 55, _("more than\none node"), fontsize=plotting.SMALL_PT, color="#444444")
    axes[2].legend(loc="lower left", fontsize=plotting.SMALL_PT)


def plot_dp_share(ax, sweep: pd.DataFrame) -> None:
    """Exposed DP communication share against sequences per GPU per step, one line per setup."""
    for (setup, part), color, style, marker in zip(sweep.groupby("setup", sort=False), plotting.COLORS,
                                                   plotting.LINESTYLES, plotting.MARKERS):
        ax.plot(part["seqs_per_gpu"], part["dp_comm_pct"], color=color, linestyle=style, marker=marker,
                label=lang.label(setup))
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
        ax.plot(part["batch"], part["ratio"], color=color, linestyle=style, marker=marker,
                label=_("{setup}, TP {tp}", setup=lang.label(setup), tp=tp))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(bottlenecks.DECODE_BATCHES, [str(n) for n in bottlenecks.DECODE_BATCHES])
    ax.axhline(1, color="#888888", linewidth=0.8)
    ax.set_ylim(top=60)  # room above the curves for the legend
    ax.legend(fontsize=plotting.SMALL_PT, loc="upper center", ncol=2)


def plot_throughput_vs_rate(ax, dtypes: Sequence[str] = ("bf16", "fp8"), cal: Calibration | None = None) -> None:
    """Our throughput-per-GPU against per-user-rate curves (mesh and switch, each dtype; tokens/s) with
    NVIDIA's Table 2 points."""
    styles = iter(zip(plotting.COLORS, plotting.LINESTYLES))
    for dtype in dtypes:
        for name, system in ((_("NVLink mesh"), bottlenecks.MESH), ("NVSwitch", bottlenecks.SWITCH)):
            color, style = next(styles)
            curve = bottlenecks.throughput_curve(system, dtype, cal=cal)
            ax.plot(curve["tokens_per_s_per_user"], curve["tokens_per_s_per_gpu"], color=color, linestyle=style,
                    marker="", label=_("our model, {dtype}, {system}", dtype=dtype.upper(), system=name))
            plotting.band(ax, curve["tokens_per_s_per_user"], curve["tokens_per_s_per_gpu_lo"],
                          curve["tokens_per_s_per_gpu_hi"], color)
    nv = bottlenecks.nvidia_table2()
    ax.plot(nv["rate_tokens_per_s_per_user"], nv["mesh_tokens_per_s_per_gpu"], linestyle="none", marker="v",
            markersize=7, color=plotting.COLORS[6], label=_("NVIDIA Table 2, point-to-point"))
    ax.plot(nv["rate_tokens_per_s_per_user"], nv["switch_tokens_per_s_per_gpu"], linestyle="none", marker="^",
            markersize=7, color=plotting.COLORS[4], label=_("NVIDIA Table 2, NVSwitch"))
    plotting.legend_with_band(ax, fontsize=plotting.SMALL_PT)


def plot_switch_benefit(ax, table: pd.DataFrame, dtypes: Sequence[str] = ("bf16", "fp8")) -> None:
    """Switch / mesh throughput against batch: NVIDIA's Table 3 and ours.

    ``table`` comes from :func:`~multigpu.evidence.bottlenecks.compare_fixed_batch`.
    """
    ax.plot(table["batch"], table["nvidia_benefit_x"], color=plotting.COLORS[0], linestyle="none", marker="^",
            markersize=7, label=_("NVIDIA Table 3 (vendor-modelled)"))
    for dtype, color, style, marker in zip(dtypes, plotting.COLORS[1:], plotting.LINESTYLES[1:], plotting.MARKERS[1:]):
        ax.plot(table["batch"], table[f"{dtype}_benefit_x"], color=color, linestyle=style, marker=marker,
                label=_("our model, {dtype}", dtype=dtype.upper()))
    ax.set_xscale("log", base=2)
    ax.set_xticks(table["batch"], [str(b) for b in table["batch"]])
    ax.legend(fontsize=8)


def plot_under_load(axes, table: pd.DataFrame) -> None:
    """Two panels of :func:`~multigpu.evidence.underload.curves`: the 99th percentile of TTFT (s) and of the time
    per output token (ms) against requests per second per server, one line per setup, each limit a grey line."""
    limits = ((axes[0], "ttft_p99_s", 1.0, underload.LIMITS.ttft_p99_s,
               _("time to first token, p99 (s, log scale)")),
              (axes[1], "tpot_p99_s", 1e3, 1e3 * underload.LIMITS.tpot_p99_s,
               _("time per output token, p99 (ms, log scale)")))
    for ax, column, scale, limit, label in limits:
        for (setup, part), color, style, marker in zip(table.groupby("setup", sort=False), plotting.COLORS,
                                                       plotting.LINESTYLES, plotting.MARKERS):
            tp = int(part["tp"].iloc[0])
            ax.plot(part["rate_per_s"], scale * part[column], color=color, linestyle=style, marker=marker,
                    label=_("{setup}, TP {tp}", setup=lang.label(setup), tp=tp))
        ax.axhline(limit, color="#888888", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # plain numbers at 1, 2 and 5 of each decade (0.5, 200)
            axis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(ticker.FuncFormatter(lambda value, pos: f"{value:g}"))
            axis.set_minor_formatter(ticker.NullFormatter())
        ax.set_ylabel(label)
    axes[0].text(table["rate_per_s"].min(), 1.15 * underload.LIMITS.ttft_p99_s, _("MLPerf's limit"),
                 fontsize=plotting.SMALL_PT, color="#444444")
    axes[1].legend(fontsize=plotting.SMALL_PT, loc="upper left")


def _train_case() -> str:
    """The training case of the figures' source lines, e.g. "Llama 3.1 8B, BF16, seq 2048"."""
    return _("{model}, BF16, seq {seq}", model=models.model(bottlenecks.TRAIN_MODEL).name, seq=bottlenecks.SEQ)


def _serve_case() -> str:
    """The serving model of the figures' source lines, e.g. "Llama 3.1 70B"."""
    return models.model(bottlenecks.SERVE_MODEL).name


def _prompt() -> str:
    """The prompt and output lengths as NVIDIA's post writes them: "8K/256" (tokens)."""
    return f"{bottlenecks.INPUT_TOKENS // 1024}K/{bottlenecks.OUTPUT_TOKENS}"


def figure_training_breakdown(table: pd.DataFrame) -> Figure:
    """Where a training step's time goes (share of the step, %), one bar per setup and layout of
    :func:`multigpu.evidence.bottlenecks.training_breakdown` (``table``)."""
    fig, ax = plotting.figure(
        _("Where a training step's time goes"), _("share of the step time (%)"), _("setup and layout"),
        source=_("multigpu training model ({case}, {seqs} sequences per GPU per step); "
                 "multigpu.evidence.bottlenecks.training_breakdown", case=_train_case(),
                 seqs=bottlenecks.SEQS_PER_GPU), figsize=(6.8, 6.8))
    plot_training_breakdown(ax, table)
    comm = table["tp_pct"] + table["pp_pct"] + table["dp_pct"]
    return plotting.set_alt(fig, _("Stacked bar chart of {n} training setups and layouts: share of the step spent "
                                   "computing, {compute}, in the pipeline bubble, and in exposed communication, "
                                   "{comm}.", n=len(table), compute=plotting.span(table["compute_pct"], "%"),
                                   comm=plotting.span(comm, "%")))


def figure_decode_breakdown(table: pd.DataFrame) -> Figure:
    """Where a decode step's time goes (ms per step), one bar per case of
    :func:`multigpu.evidence.bottlenecks.decode_breakdown` (``table``)."""
    fig, ax = plotting.figure(
        _("Where a decode step's time goes"), _("time per decode step (ms)"),
        _("setup, tensor-parallel degree and batch"),
        source=_("multigpu inference model ({model}, BF16, {prompt}K-token prompts, {output} output tokens); "
                 "multigpu.evidence.bottlenecks.decode_breakdown", model=_serve_case(),
                 prompt=bottlenecks.INPUT_TOKENS // 1024, output=bottlenecks.OUTPUT_TOKENS),
        figsize=(6.8, 6.8))
    plot_decode_breakdown(ax, table)
    return plotting.set_alt(fig, _("Stacked bar chart of {n} decode cases: milliseconds per decode step, {step}, "
                                   "split into weight reads, KV-cache reads, the layers' fixed kernel time, "
                                   "other compute and TP all-reduces "
                                   "({share} of the step).", n=len(table),
                                   step=plotting.span(table["step_ms"], "ms"),
                                   share=plotting.span(table["allreduce_pct"], "%")))


def figure_scaling(table: pd.DataFrame) -> Figure:
    """Scaling efficiency (%) against GPU count, one panel each for DP, TP and PP, from
    :func:`multigpu.evidence.bottlenecks.scaling` (``table``)."""
    fig, axes = plotting.figure(
        _("Scaling efficiency against GPU count"), _("GPUs"), _("scaling efficiency (%)"),
        source=_("multigpu training model ({case}); multigpu.evidence.bottlenecks.scaling", case=_train_case()),
        nrows=3, figsize=(6.8, 8.6))
    plot_scaling(axes, table)
    lows = _("; ").join(f"{kind} {plotting.span(part['efficiency_pct'], '%')}"
                        for kind, part in table.groupby("kind"))
    return plotting.set_alt(fig, _("Three line charts, one each for data, tensor and pipeline parallelism: "
                                   "scaling efficiency against GPU count per setup: {ranges}.", ranges=lows))


def figure_dp_share(sweep: pd.DataFrame) -> Figure:
    """Exposed data-parallel communication (% of the step) against sequences per GPU per step, from
    :func:`multigpu.evidence.bottlenecks.dp_batch_sweep` (``sweep``)."""
    fig, ax = plotting.figure(
        _("Exposed data-parallel communication against batch"), _("sequences per GPU per step (log scale)"),
        _("exposed DP communication (% of the step)"),
        source=_("multigpu training model ({case}, ZeRO-1); multigpu.evidence.bottlenecks.dp_batch_sweep",
                 case=_train_case()))
    plot_dp_share(ax, sweep)
    of_step = _("% of the step")  # a message of its own: Babel does not extract a _() nested in another
    return plotting.set_alt(fig, _("Line chart: exposed data-parallel communication, {share}, against {seqs} "
                                   "sequences per GPU per step; it falls as the batch grows.",
                                   share=plotting.span(sweep["dp_comm_pct"], of_step),
                                   seqs=plotting.span(sweep["seqs_per_gpu"])))


def figure_decode_ratio(table: pd.DataFrame) -> Figure:
    """All-reduce time over compute time of a decode step (ratio) against batch, from
    :func:`multigpu.evidence.bottlenecks.decode_ratio` (``table``)."""
    fig, ax = plotting.figure(
        _("Decode: all-reduce time over compute time"), _("batch (concurrent queries, log scale)"),
        _("all-reduce time / compute time (log scale)"),
        source=_("multigpu inference model ({model}, BF16, {prompt}K-token prompts); "
                 "multigpu.evidence.bottlenecks.decode_ratio", model=_serve_case(),
                 prompt=bottlenecks.INPUT_TOKENS // 1024))
    plot_decode_ratio(ax, table)
    fits = table[table["fits"]]
    return plotting.set_alt(fig, _("Line chart, log-log: all-reduce time over compute time of a decode step against "
                                   "batch {batch}, {ratio}, one line per setup and tensor-parallel degree.",
                                   batch=plotting.span(fits["batch"]), ratio=plotting.span(fits["ratio"], fmt=".2g")))


def figure_switch_benefit(table: pd.DataFrame) -> Figure:
    """NVSwitch over point-to-point throughput per GPU (ratio) against batch: NVIDIA's Table 3 and ours, from
    :func:`multigpu.evidence.bottlenecks.compare_fixed_batch` (``table``)."""
    fig, ax = plotting.figure(
        _("NVSwitch over point-to-point: throughput ratio against batch"),
        _("batch (concurrent queries, log scale)"), _("NVSwitch / point-to-point throughput per GPU (ratio)"),
        source=_("NVIDIA blog (Aug 2024) Table 3, vendor-modelled; multigpu inference model, {model}, H200, TP=2, "
                 "{prompt}", model=_serve_case(), prompt=_prompt()))
    plot_switch_benefit(ax, table)
    ours = table[[c for c in table.columns if c.endswith("_benefit_x") and not c.startswith("nvidia")]]
    times = _("times")
    return plotting.set_alt(fig, _("Line chart: NVSwitch over point-to-point throughput per GPU against batch "
                                   "{batch}; NVIDIA's Table 3 {nvidia}, our model {ours}.",
                                   batch=plotting.span(table["batch"]),
                                   nvidia=plotting.span(table["nvidia_benefit_x"], times),
                                   ours=plotting.span(ours.to_numpy().ravel(), times)))


def figure_throughput_vs_rate(cal: Calibration | None = None) -> Figure:
    """Throughput per GPU (tokens/s) against speed per user (tokens/s), TP=2: our curves and NVIDIA's
    Table 2 points."""
    fig, ax = plotting.figure(
        _("Throughput per GPU against speed per user (TP=2)"), _("tokens per second per user"),
        _("tokens per second per GPU"),
        source=_("NVIDIA blog (Aug 2024) Table 2, vendor-modelled; multigpu inference model, {model}, H200, "
                 "{prompt}, batches 1-64 that fit; bands from multigpu.evidence.intervals (published serving runs)",
                 model=_serve_case(), prompt=_prompt()))
    plot_throughput_vs_rate(ax, cal=cal)
    nv = bottlenecks.nvidia_table2()
    tput = pd.concat([nv["mesh_tokens_per_s_per_gpu"], nv["switch_tokens_per_s_per_gpu"]])
    per_gpu, per_user = _("tokens/s per GPU"), _("tokens/s per user")
    curve = bottlenecks.throughput_curve(bottlenecks.SWITCH, "bf16", cal=cal)
    shares = pd.concat([curve["tokens_per_s_per_gpu_lo"], curve["tokens_per_s_per_gpu_hi"]]) / pd.concat(
        [curve["tokens_per_s_per_gpu"]] * 2)
    return plotting.set_alt(fig, _("Line chart: throughput per GPU against speed per user, our model's curves for "
                                   "the NVLink mesh and NVSwitch in BF16 and FP8, with NVIDIA's Table 2 points "
                                   "({throughput} at {rate}). Each curve has a band for its 90 % prediction "
                                   "interval, {band} the curve.", throughput=plotting.span(tput, per_gpu),
                                   rate=plotting.span(nv["rate_tokens_per_s_per_user"], per_user),
                                   band=plotting.span(shares, _("times"), fmt=".2g")))


def figure_under_load(table: pd.DataFrame) -> Figure:
    """Latency at the 99th percentile against request rate under load, from
    :func:`multigpu.evidence.underload.curves` (``table``)."""
    work = underload.WORKLOAD
    fig, axes = plotting.figure(
        _("Latency under load against request rate"), _("requests per second per 8-GPU server (log scale)"),
        _("time to first token, p99 (s, log scale)"),
        source=_("multigpu.compute.queueing, a simulation of in-flight batching ({model}, BF16, {isl} tokens in, "
                 "{osl} out, requests arriving at random); limits of MLPerf Inference's Llama 2 70B Server "
                 "scenario; multigpu.evidence.underload", model=_serve_case(), isl=work["input_tokens"],
                 osl=work["output_tokens"]), nrows=2, figsize=(6.8, 7.4))
    plot_under_load(axes, table)
    return plotting.set_alt(fig, _("Two line charts against requests per second per server, {rate}, one line per "
                                   "setup: the 99th percentile of the time to first token, {ttft}, and of the time "
                                   "per output token, {tpot}, each rising towards the setup's capacity.",
                                   rate=plotting.span(table["rate_per_s"]),
                                   ttft=plotting.span(table["ttft_p99_s"], "s"),
                                   tpot=plotting.span(1e3 * table["tpot_p99_s"], "ms")))
