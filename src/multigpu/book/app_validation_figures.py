"""The validation appendix's figures, each drawn in the current language (the notebook shows both editions with
:func:`multigpu.book.plotting.show_both`): predicted against measured, the held-out and sealed sweeps, the runs the
model cannot tell apart, the anchored latency factors, one cluster across node counts and NCCL's protocol switches.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from multigpu.book import lang, plotting
from multigpu.book.diagrams import wrap_text
from multigpu.book.lang import _
from multigpu.book.vocabulary import short_system_name
from multigpu.comm import calibration, collectives
from multigpu.comm.calibration import Calibration
from multigpu.common import units
from multigpu.evidence import (
    deployment,
    sweeps,
    validation,
)
from multigpu.evidence.sweeps import SMALL_SIDE, WIDE_MISS


def _scatter(ax, part: pd.DataFrame, style: int, label: str) -> None:
    """``part``'s rows as markers, filled where a constant was fitted on the row; ``label`` names the group
    in the legend (in the current language)."""
    color, marker = plotting.COLORS[style % 8], plotting.MARKERS[style % 8]
    for filled in (True, False):
        rows = part[(part["set"] == "fitted on") == filled]
        if len(rows):
            ax.scatter(rows["measured"], rows["predicted"], marker=marker, s=36, linewidths=1.2,
                       facecolors=color if filled else "none", edgecolors=color,
                       label=_("{group}, fitted on", group=label) if filled
                       else _("{group}, not fitted on", group=label))


def _diagonal(ax, lo: float, hi: float) -> None:
    line = np.array([lo, hi])
    ax.plot(line, line, color="#444444", linewidth=1, linestyle="-", marker="")
    for factor in (0.9, 1.1):
        ax.plot(line, factor * line, color="#888888", linewidth=0.8, linestyle="--", marker="")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)


def plot_predicted_vs_measured(axes, table: pd.DataFrame | None = None, label_above_pct: float = 10.0) -> None:
    """Two panels of :func:`~multigpu.evidence.validation.comparisons`, predicted against measured on log axes,
    with y = x (solid) and +-10 % (dashed): bandwidths (collectives and copies, GB/s) on the left, training
    iterations (s) on the right. Filled markers: a constant was fitted on the row; hollow: not. Rows off by
    more than ``label_above_pct`` (%) are labelled with their ref. Words in the current language."""
    table = validation.comparisons() if table is None else table
    left, right = axes
    bw = table[table["kind"] != "training"]
    groups = ((_("collectives, reference set"), (bw["kind"] == "collective") & (bw["set"] != "out of sample")),
              (_("copies, reference set"), bw["kind"] == "copy"),
              (_("collectives, out of sample"), bw["set"] == "out of sample"))
    for style, (label, mask) in enumerate(groups):
        _scatter(left, bw[mask], style, label)
    train = table[table["kind"] == "training"]
    _scatter(right, train, 3, _("training runs"))
    for ax, part in ((left, bw), (right, train)):
        values = np.concatenate([part["measured"].to_numpy(), part["predicted"].to_numpy()])
        _diagonal(ax, values.min() / 1.6, values.max() * 1.6)
        far = part[part["error_pct"].abs() > label_above_pct].sort_values("measured")
        for j, row in enumerate(far.itertuples()):
            ax.annotate(row.ref, (row.measured, row.predicted), textcoords="offset points",
                        xytext=(6, -11 if j % 2 else 5), fontsize=plotting.SMALL_PT)
        ax.legend(fontsize=plotting.SMALL_PT, loc="lower right")
    left.set_title(_("collectives and copies"), fontsize=10)
    right.set_title(_("training iterations (DGX A100 nodes)"), fontsize=10)
    left.set_xlabel(_("measured (GB/s, log scale)"))
    left.set_ylabel(_("predicted (GB/s, log scale)"))
    right.set_xlabel(_("measured (s per iteration, log scale)"))
    right.set_ylabel(_("predicted (s per iteration, log scale)"))


def figure_predicted_vs_measured(table: pd.DataFrame) -> Figure:
    """The model against every measurement it can reproduce: predicted against measured, bandwidths (GB/s)
    and training iterations (s), from :func:`multigpu.evidence.validation.comparisons` (``table``), in the
    current language."""
    fig, axes = plotting.figure(
        _("The model against every measurement it can reproduce"), _("measured"), _("predicted"),
        source=_("multigpu.evidence.validation.comparisons: measurements.compare and out_of_sample "
                 "(data/measurements.csv and published collectives), trainingruns.training_validation "
                 "(Megatron-LM, Korthikanti et al. 2022)"),
        nrows=2, figsize=(6.8, 8.8))
    plot_predicted_vs_measured(axes, table)
    within = int((table["error_pct"].abs() <= 10).sum())
    return plotting.set_alt(fig, _("Two scatter plots, log-log, of {n} comparisons, predicted against measured: "
                                   "bandwidths of collectives and copies (GB/s), and training iterations (s); "
                                   "errors {errors}, {within} of {n} within 10 %.", n=len(table),
                                   errors=plotting.span(table["error_pct"], "%"), within=within))


def figure_twins(points: pd.DataFrame) -> Figure:
    """busbw (GB/s) against message size for runs the model cannot tell apart (``points``: :func:`multigpu.evidence.sweepchecks.twin_points`):
    each run measured (the widest held-out pair in colour, the others grey), the model's one line and the band
    within :data:`~multigpu.evidence.sweeps.WIDE_MISS` of it; in the current language."""
    fig, ax = plotting.figure(
        _("Runs the model cannot tell apart: {n} published runs of one machine and collective",
          n=points["sweep"].nunique()),
        _("message size (log scale)"), _("busbw (GB/s)"), figsize=(6.8, 3.6),
        source=_("data/sweeps.csv; multigpu.evidence.sweeps.wide_misses"))
    model = points.groupby("bytes")["predicted"].first()
    ax.fill_between(model.index, model / (1 + WIDE_MISS), model / (1 - WIDE_MISS), color=plotting.COLORS[1],
                    alpha=0.15, linewidth=0, label=_("within {pct:.0f} % of the model", pct=100 * WIDE_MISS))
    ax.plot(model.index, model, color=plotting.COLORS[1], marker="", label=_("model"))
    for sweep, run in points[~points["pair"]].groupby("sweep", sort=False):
        ax.plot(run["bytes"], run["measured"], color="#aaaaaa", marker=".", markersize=4, linewidth=0.8, zorder=2)
    for color, (sweep, run) in zip((plotting.COLORS[0], plotting.COLORS[2]),
                                   points[points["pair"]].groupby("sweep", sort=False)):
        ax.plot(run["bytes"], run["measured"], color=color, marker="o", markersize=4, linewidth=1.2, zorder=3,
                label=_("{sweep} ({split})", sweep=sweep, split=lang.label(run["split"].iloc[0])))
    ax.plot([], [], color="#aaaaaa", marker=".", label=_("other runs, same inputs"))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: units.format_size(v)))
    ax.set_ylim(0, None)
    ax.legend(fontsize=plotting.SMALL_PT, loc="upper left")
    runs_ = points.drop_duplicates("sweep")
    return plotting.set_alt(fig, _("Measured busbw of {n} runs with the same inputs to the model against message "
                                   "size, with the model's line and the band within {pct:.0f} % of it; the two "
                                   "runs drawn in colour are held out.", n=len(runs_), pct=100 * WIDE_MISS))


def figure_anchored(points: pd.DataFrame) -> Figure:
    """Each held-out and sealed sweep (``points``: :func:`multigpu.evidence.sweepchecks.anchored_points`): its median absolute error (%) on the
    small messages a factor anchored on its smallest sizes has not seen, as shipped (circle) and with that
    factor (diamond), log scale; in the current language."""
    unseen = points[~points["fitted_on"] & (points["size_class"] == "small") & (points["split"] != "fit")]
    data = unseen.assign(shipped=100 * unseen["rel_error"].abs(), anchored=100 * unseen["rel_error_fitted"].abs())
    rows = data.groupby(["split", "sweep"])[["shipped", "anchored"]].median().reset_index()
    rows["split"] = pd.Categorical(rows["split"], list(sweeps.SHOWN_SPLITS), ordered=True)
    rows = rows.sort_values(["split", "shipped"]).reset_index(drop=True)
    y = np.arange(len(rows)) + (rows["split"] == "sealed").to_numpy() * 1.0  # a gap between the two splits
    count, kib = deployment.ANCHOR_POINTS, deployment.ANCHOR_MAX_BYTES / 1024
    fig, ax = plotting.figure(
        _("A latency factor from {count} small sizes, judged on the sizes it has not seen", count=count),
        _("median absolute error on small messages (%, log scale)"), _("sweep"),
        figsize=(6.8, 1.6 + 0.24 * len(rows)), phone_figsize=(plotting.PHONE_FIGWIDTH_IN, 2.4 + 0.5 * len(rows)),
        source=_("data/sweeps.csv (held-out and sealed sweeps); multigpu.evidence.deployment.sweep_points "
                 "(factor fitted on each sweep's {count} smallest sizes, at most {kib:.0f} KiB)", count=count,
                 kib=kib))
    ax.hlines(y, rows[["shipped", "anchored"]].min(axis=1), rows[["shipped", "anchored"]].max(axis=1),
              color="#999999", linewidth=1)
    ax.scatter(rows["shipped"], y, marker="o", s=28, color=plotting.COLORS[0], label=_("as shipped"), zorder=3)
    ax.scatter(rows["anchored"], y, marker="D", s=28, color=plotting.COLORS[1],
               label=_("with the factor from the {count} smallest sizes", count=count), zorder=3)
    ax.axvline(100 * SMALL_SIDE, color="#444444", linestyle="--", linewidth=0.8)
    ax.text(100 * SMALL_SIDE, -0.8, f" {100 * SMALL_SIDE:.0f} %", fontsize=plotting.SMALL_PT, va="bottom", ha="left")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_yticks(y, [f"{sweep} ({_(split)})" for sweep, split in zip(rows["sweep"], rows["split"])],
                  fontsize=plotting.SMALL_PT)
    ax.invert_yaxis()
    ax.legend(fontsize=plotting.SMALL_PT, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=2, frameon=False)
    return plotting.set_alt(fig, _("{n} sweeps, held out and sealed: each one's median error on the small messages "
                                   "its latency factor was not fitted on, as shipped and with the factor fitted on "
                                   "its {count} smallest sizes; median over their points {before:.1f} % as "
                                   "shipped, {after:.1f} % with the factor.", n=len(rows), count=count,
                                   before=data["shipped"].median(), after=data["anchored"].median()))


def figure_holdout_sweeps(comparison: pd.DataFrame, cal: Calibration | None = None,
                          split: str = "holdout") -> Figure:
    """Each sweep of ``split`` (``holdout`` or ``sealed``): measured busbw (markers) and the model's (line)
    against message size, log axes; in the current language."""
    held = comparison[comparison["split"] == split]
    names = sorted(held["sweep"].unique())
    ncols = 2
    nrows = -(-len(names) // ncols)
    title = (_("Held-out sweeps: the model against measurements it never saw") if split == "holdout" else
             _("Sealed sweeps, opened once: the model against measurements no fit or change saw"))
    fig, axes = plotting.figure(
        title, _("message size (bytes, log scale)"),
        _("busbw (GB/s, log scale)"), ncols=ncols, nrows=nrows, figsize=(6.8, 0.9 + 2.7 * nrows),
        source=_("data/sweeps.csv (published nccl-tests, rccl-tests and torch.distributed sweeps, split by a "
                 "hash of their id before any comparison); multigpu.evidence.sweeps.compare"))
    for ax, name in zip(axes, names):
        part = held[held["sweep"] == name].sort_values("bytes")
        plotting.points(ax, part["bytes"], part["measured"], color=plotting.COLORS[0], label=_("measured"))
        ax.plot(part["bytes"], part["predicted"], color=plotting.COLORS[1], marker="", label=_("model"))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        _label_log_y(ax)
        ax.set_title(_panel_title(name, part["system"].iloc[0], part["gpus"].iloc[0], part["nodes"].iloc[0]),
                     fontsize=plotting.SMALL_PT + 0.5)
        ax.tick_params(labelsize=plotting.SMALL_PT)
    for ax in list(axes)[len(names):]:
        ax.set_visible(False)
    axes[0].legend(fontsize=plotting.SMALL_PT, loc="upper left")
    errors = 100 * held["rel_error"].abs()
    alt = (_("{n} log-log panels, one per held-out sweep: measured busbw (points) and the model's (line) against "
             "message size; median error {median:.1f} %, worst {worst:.0f} %.") if split == "holdout" else
           _("{n} log-log panels, one per sealed sweep: measured busbw (points) and the model's (line) against "
             "message size; median error {median:.1f} %, worst {worst:.0f} %."))
    return plotting.set_alt(fig, alt.format(n=len(names), median=errors.median(), worst=errors.max()))


def figure_scale_out(points: pd.DataFrame) -> Figure:
    """busbw (GB/s) against node count for one cluster (``points``: :func:`multigpu.evidence.sweepchecks.scale_points`), one panel per size:
    measured (filled: held out; open: fit sweep), the model (line) and the NIC bound (dashed); in the current
    language."""
    sizes = sorted(points["bytes"].unique())
    lo, hi = int(points["nodes"].min()), int(points["nodes"].max())
    fig, axes = plotting.figure(
        _("One cluster at {lo} to {hi} nodes: all-reduce on AWS p5 (H100, EFA)", lo=lo, hi=hi), _("nodes (log scale)"),
        _("busbw (GB/s)"), ncols=len(sizes), figsize=(6.8, 3.2),
        source=_("data/sweeps.csv (crazyguitar/aws-gpu-communication-benchmark, NCCL 2.27.7); "
                 "multigpu.evidence.sweeps.compare; NIC bound: every node's EFA line rate"))
    for ax, size in zip(axes, sizes):
        part = points[points["bytes"] == size]
        ax.plot(part["nodes"], part["bound"], color="#999999", linestyle="--", marker="", label=_("NIC bound"))
        ax.plot(part["nodes"], part["predicted"], color=plotting.COLORS[1], marker="", label=_("model"))
        for split, face in (("holdout", plotting.COLORS[0]), ("fit", "none")):
            mine = part[part["split"] == split]
            ax.scatter(mine["nodes"], mine["measured"], s=24, facecolors=face, edgecolors=plotting.COLORS[0],
                       zorder=3, label=_("measured, held out") if split == "holdout" else _("measured, fit sweep"))
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_ylim(0, None)
        ax.set_title(_("{size} per rank", size=units.format_size(size)), fontsize=plotting.SMALL_PT + 0.5)
        ax.tick_params(labelsize=plotting.SMALL_PT)
    axes[-1].legend(fontsize=plotting.SMALL_PT, loc="lower left")  # the largest size leaves the bottom free
    held = points[points["split"] == "holdout"]
    return plotting.set_alt(fig, _("{n} panels, one per message size: measured all-reduce busbw of one AWS p5 "
                                   "cluster at {lo} to {hi} nodes, the model's line and the NIC bound; median error "
                                   "{median:.1f} % on the held-out runs, worst {worst:.0f} % over all.",
                                   n=len(sizes), lo=lo, hi=hi, median=100 * held["rel_error"].abs().median(),
                                   worst=100 * points["rel_error"].abs().max()))


def _label_log_y(ax) -> None:
    """Plain numbers on a log y axis (1, 10, 100); where the data span less than a decade, so that no power of
    ten falls inside, the 2s and 5s between them are labelled too."""
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    low, high = ax.get_ylim()
    if np.floor(np.log10(high)) - np.ceil(np.log10(low)) < 1:
        ax.yaxis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.tick_params(axis="y", which="minor", labelsize=plotting.SMALL_PT)
    else:
        ax.yaxis.set_minor_formatter(NullFormatter())


def _panel_title(name: str, system: str, gpus: int, nodes: int) -> str:
    """A sweep's panel title in the current language: its id (the key of the appendix's tables), then its system
    by name (:func:`_system_words`), GPU and node counts."""
    line = _("{system}, {gpus} GPUs, {nodes} node(s)", system=_system_words(system), gpus=gpus, nodes=nodes)
    return name + "\n" + wrap_text(line, PANEL_TITLE_WIDTH)


#: The widest line of a sweep panel's title (half-width characters): two panels' titles side by side never meet.
PANEL_TITLE_WIDTH = 44



def _system_words(system: str) -> str:
    """A sweep's system as a reader names it: the short catalogue name, and the fabric of a ``<id>@<fabric>``
    variant in parentheses."""
    base, _sep, fabric = system.partition("@")
    name = short_system_name(base)
    return _("{name} ({fabric})", name=name, fabric=fabric) if fabric else name


#: fit sweeps whose model curve is drawn with NCCL's choice of algorithm and protocol at every size
PROTOCOL_SWEEPS = ("h200-8-ar-torch-mleng", "rtx4090-4-ar-nccltests-kalavai", "h100-32-4n-ar-ib-ncclt309",
                   "mi300x-16-2n-ar-roce-rccltests")


def figure_protocol_switches(cal: Calibration | None = None, names: tuple[str, ...] = PROTOCOL_SWEEPS) -> Figure:
    """Measured busbw of some fit sweeps (markers) and the model's (line), the line split where the model
    switches algorithm or protocol (LL, LL128, Simple; ring, tree, NVLS), each piece labelled; in the current
    language (the choices' names are NCCL's, the same in every language)."""
    cal = calibration.resolve(cal)
    by_name = {s.sweep: s for s in sweeps.sweeps()}
    data = sweeps.points()
    fig, axes = plotting.figure(
        _("Where the model switches protocol and algorithm, against measured sweeps"),
        _("message size (bytes, log scale)"), _("busbw (GB/s, log scale)"), ncols=2, nrows=2, figsize=(6.8, 7.8),
        source=_("data/sweeps.csv (fit sweeps); multigpu.comm.collectives.evaluate (the model's choice at each "
                 "size)"))
    for ax, name in zip(axes, names):
        sweep = by_name[name]
        part = data[data["sweep"] == name].sort_values("bytes")
        factor = collectives.busbw_factor(sweep.op, sweep.gpus)
        measured = part["busbw_GBps"].fillna(part["bytes"] / part["time_us"] / 1e3 * factor)
        plotting.points(ax, part["bytes"], measured, color="#444444", label=_("measured"), zorder=3)
        sizes = 2.0 ** np.arange(np.log2(part["bytes"].min()), np.log2(part["bytes"].max()) + 0.01, 0.25)
        chosen = collectives.evaluate(sweep.op, sweep.system, sweep.gpus, sizes, nodes=sweep.nodes, cal=cal)
        busbw = sizes / sweeps.harness_time_us(sweep, chosen["time_us"], calibration.resolve(cal)) / 1e3 * factor
        labels = [f"{a} {p}" for a, p in zip(chosen["algorithm"], chosen["protocol"])]
        start = 0
        for style, end in enumerate([*np.flatnonzero(np.array(labels[1:]) != np.array(labels[:-1])) + 1, len(labels)]):
            piece = slice(max(start - 1, 0), end)
            ax.plot(sizes[piece], busbw[piece], color=plotting.COLORS[style % 8], marker="",
                    linestyle=plotting.LINESTYLES[style % len(plotting.LINESTYLES)],
                    label=_("model: {choice}", choice=labels[start]))
            start = end
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        _label_log_y(ax)
        ax.set_title(_panel_title(name, sweep.system, sweep.gpus, sweep.nodes), fontsize=plotting.SMALL_PT + 0.5)
        ax.tick_params(labelsize=plotting.SMALL_PT)
        ax.legend(fontsize=plotting.SMALL_PT, loc="upper left")
    return plotting.set_alt(fig, _("{n} log-log panels, one per fit sweep ({names}): measured busbw (points) "
                                   "against message size, and the model's line, split and labelled where it "
                                   "switches algorithm or protocol.", n=len(names),
                                   names=_("; ").join(_("{system}, {gpus} GPUs",
                                                          system=_system_words(by_name[k].system),
                                                          gpus=by_name[k].gpus) for k in names)))
