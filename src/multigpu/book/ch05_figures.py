"""Chapter 5's figures, each drawn in the current language (the notebook shows both editions with
``plotting.show_both``): the decision matrix (the cheapest class per model, kind of workload and pricing type), the
cost of each class against the cheapest, and the cost-time Pareto fronts. The data are computed before, once
(:mod:`multigpu.evidence.guide`, :func:`multigpu.book.ch05_guide.class_cost_frames`,
:func:`multigpu.book.ch05_guide.pareto_options`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from multigpu.book import glue, lang, plotting
from multigpu.book.lang import N_, _
from multigpu.book.money import currency, in_currency
from multigpu.book.vocabulary import short_gpu_name
from multigpu.compute import models
from multigpu.evidence import guide
from multigpu.market import recommend
from multigpu.market.prices import PriceTable


#: Fill colour and hatch of each guide class: lightness differs, so the classes read in grey-scale print.
CLASS_STYLE = {"PCIe": ("#FFFFFF", ""), "NVLink bridge": ("#E69F00", "///"), "GPU mesh node": ("#CC79A7", "xx"),
               "NVSwitch node": ("#56B4E9", "..."),
               "multi-node / NVL72": ("#0072B2", "xxx"), "none feasible": ("#BBBBBB", "")}


#: Each guide class's short name, the first line of its cells in the decision matrix.
SHORT_CLASS = {"PCIe": N_("PCIe"), "NVLink bridge": N_("bridge"), "GPU mesh node": N_("mesh"),
               "NVSwitch node": N_("NVSwitch"), "multi-node / NVL72": N_("multi-node"), "none feasible": N_("none")}


def plot_decision_matrix(ax: Any, table: pd.DataFrame, legend: pd.DataFrame | None = None) -> None:
    """The decision matrix: model size (rows) x workload and pricing type (columns); each cell is filled with a
    light tint of its guide class and names it (first line: the class's short name), then the GPU and the
    number of instances, in black or white, whichever contrasts more; no hatching behind text; above, the key
    of the classes in ``legend`` (default ``table``; an empty frame: no key)."""
    from matplotlib.patches import Patch, Rectangle

    columns = list(dict.fromkeys(zip(table["kind"], table["pricing"])))
    model_ids = list(dict.fromkeys(table.sort_values("params_B", kind="stable")["model"]))
    cells = table.set_index(["model", "kind", "pricing"])
    # each class: a light Okabe-Ito tint (black text reads on all)
    fills = {"PCIe": "#ffffff", "NVLink bridge": plotting.tint(plotting.COLORS[1], 0.35),
             "GPU mesh node": plotting.tint(plotting.COLORS[4], 0.4),
             "NVSwitch node": plotting.tint(plotting.COLORS[5], 0.4),
             "multi-node / NVL72": plotting.tint(plotting.COLORS[2], 0.45), "none feasible": "#dddddd"}
    for j, (kind, pricing) in enumerate(columns):
        for i, model_id in enumerate(model_ids):
            row = cells.loc[(model_id, kind, pricing)]
            cls = row["guide_class"]
            ax.add_patch(Rectangle((j, i), 1, 1, facecolor=fills[cls], edgecolor="#777777", linewidth=0.8))
            label = lang.label(SHORT_CLASS[cls])
            if cls != "none feasible":
                label += f"\n{short_gpu_name(row['gpu'])}\nx{int(row['instances'])}"
            ax.text(j + 0.5, i + 0.5, label, ha="center", va="center", fontsize=plotting.SMALL_PT,
                    linespacing=1.15, color=plotting.text_color_on(fills[cls]))
    ax.set_xlim(0, len(columns))
    ax.set_ylim(len(model_ids), 0)
    ax.set_xticks([j + 0.5 for j in range(len(columns))],
                  [f"{lang.label('train' if k == 'train' else 'serve')}\n{lang.label(p)}" for k, p in columns],
                  fontsize=plotting.SMALL_PT)
    names = [models.model(m).name.split(" (")[0] for m in model_ids]
    ax.set_yticks([i + 0.5 for i in range(len(model_ids))], ["\n".join(n.rsplit(" ", 1)) for n in names],
                  fontsize=plotting.SMALL_PT + 1)
    ax.grid(False)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    kinds = [k for k, _p in columns]
    if "train" in kinds and "serve" in kinds:
        ax.axvline(kinds.index("serve"), color="black", linewidth=2.0)
    legend = table if legend is None else legend
    if legend.empty:
        return
    present = [c for c in (*guide.CLASSES, "none feasible") if c in set(legend["guide_class"])]
    handles = [Patch(facecolor=fills[c], edgecolor="#777777",
                     label=lang.label(c) if SHORT_CLASS[c] == c else _("{short}: {name}", short=lang.label(SHORT_CLASS[c]),
                                                                 name=lang.label(c)))
               for c in present]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.01), ncols=3,
              fontsize=plotting.SMALL_PT + 0.5, title=_("cheapest class (first line of each cell)"),
              title_fontsize=plotting.SMALL_PT + 0.5)


def plot_class_costs(ax: Any, frame: pd.DataFrame) -> None:
    """Against model size (log scale): each guide class's cheapest option over the cheapest option of any
    class (1 = the cheapest class), one line per class, from :func:`class_costs`; the smaller classes are
    drawn on top, so that a tie at 1 shows them."""
    floor = frame.groupby("model")["cost"].transform("min")
    frame = frame.assign(relative=frame["cost"] / floor)
    for i, cls in enumerate(guide.CLASSES):
        part = frame[frame["guide_class"] == cls].sort_values("params_B", kind="stable")
        if part.empty:
            continue
        ax.plot(part["params_B"], part["relative"], label=lang.label(cls),
                color=plotting.COLORS[i * 2 % len(plotting.COLORS)], linestyle=plotting.LINESTYLES[i],
                marker=plotting.MARKERS[i], zorder=5 - i)
    ax.axhline(1.0, color="#444444", linewidth=0.8)
    ax.set_xscale("log")
    ax.legend(fontsize=8)


def plot_pareto(ax: Any, frame: pd.DataFrame, title: str, deadline_h: float | None = None,
                legend: bool = True) -> None:
    """Every option that runs, cost per job against hours (log-log), one marker per guide class; the Pareto
    front (:func:`multigpu.market.recommend.pareto`) as a step line; the deadline as a dashed line. A frame
    with no option that runs gives an empty panel that says so."""
    ran = frame.dropna(subset=["cost_usd", "time_h"])
    if ran.empty:
        ax.text(0.5, 0.5, _("no option runs"), transform=ax.transAxes, ha="center", va="center", fontsize=9)
        ax.set_title(title, fontsize=9)
        return
    for i, cls in enumerate(guide.CLASSES):
        part = ran[ran["guide_class"] == cls]
        if part.empty:
            continue
        color = plotting.COLORS[i * 2 % len(plotting.COLORS)]
        ax.scatter(part["time_h"], part["cost_usd"], s=14, marker=plotting.MARKERS[i], facecolors="none",
                   edgecolors=color, linewidths=0.9, label=lang.label(cls))
    front = recommend.pareto(ran).sort_values("time_h", kind="stable")
    ax.step(front["time_h"], front["cost_usd"], where="post", color="black", linewidth=1.2, label=_("Pareto front"))
    _front_intervals(ax, front)
    if deadline_h is not None:
        ax.axvline(deadline_h, color="#444444", linestyle="--", linewidth=1.0, label=_("deadline"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(title, fontsize=9)
    if legend:
        ax.legend(fontsize=plotting.SMALL_PT, loc="center left", bbox_to_anchor=(1.02, 0.5))


def _front_intervals(ax: Any, front: pd.DataFrame) -> None:
    """Each front option's 90 % prediction interval (``time_h_lo``/``_hi``, ``cost_usd_lo``/``_hi``): a grey
    segment along the diagonal, since a job's time and its cost move together (one legend entry)."""
    if "time_h_lo" not in front:
        return
    spans = front.dropna(subset=["time_h_lo", "time_h_hi", "cost_usd_lo", "cost_usd_hi"])
    for k, row in enumerate(spans.itertuples()):
        ax.plot([row.time_h_lo, row.time_h_hi], [row.cost_usd_lo, row.cost_usd_hi], color="#888888", linewidth=2.5,
                alpha=0.4, marker="none", solid_capstyle="butt", zorder=1,
                label=_("90 % interval of a front option") if k == 0 else None)


def figure_decision_matrix(decided: pd.DataFrame, table: PriceTable) -> Figure:
    """The decision matrix (:func:`plot_decision_matrix`) of :func:`multigpu.evidence.guide.decisions` on
    ``table``, with the chapter's title and source line, in the current language."""
    fig, ax = plotting.figure(
        _("Cheapest interconnect class by model, workload and pricing type"), _("workload and pricing type"),
        _("model"), source=_("{source}; multigpu.evidence.guide.decisions (cell: GPU and instances rented)",
                             source=glue.say(table.source_label())),
        figsize=(6.8, 6.4), nrows=2 if plotting.on_phone() else 1,
        phone_figsize=(plotting.PHONE_FIGWIDTH_IN, 2 * 0.5 * decided["model"].nunique() + 2.0))
    if plotting.on_phone():  # training's columns over serving's: eight columns do not fit a phone
        for i, (panel, kind) in enumerate(zip(ax, ("train", "serve"))):
            key = decided if i == 1 else decided.iloc[:0]  # the key once, under both
            plot_decision_matrix(panel, decided[decided["kind"] == kind], legend=key)
        ax[0].set_xlabel("")
    else:
        plot_decision_matrix(ax, decided)
    counts = decided["guide_class"].value_counts()
    classes = _(", ").join(_("{cls} {n}", cls=lang.label(c), n=counts[c])
                           for c in (*guide.CLASSES, "none feasible") if c in counts)
    return plotting.set_alt(fig, _("Grid of {models} models (rows) by {columns} workload and pricing columns; each "
                                   "cell names the cheapest interconnect class, the GPU and how many are rented. "
                                   "Cells per class: {classes}.", models=decided["model"].nunique(),
                                   columns=len(set(zip(decided["kind"], decided["pricing"]))), classes=classes))


def figure_class_costs(frames: Mapping[str, pd.DataFrame], table: PriceTable, pricing: str) -> Figure:
    """Training (USD per job) and real-time serving (USD per million output tokens) side by side, from
    :func:`class_cost_frames`: each guide class's cheapest option at ``pricing`` prices over the cheapest of
    all, against model size (billion parameters)."""
    fig, axes = plotting.figure(
        _("Cheapest option of each class, relative to the cheapest overall"),
        _("model size (billion parameters, log scale)"), _("cost / cheapest option's cost"), nrows=2,
        figsize=(6.8, 7.4), source=_("{source}, {pricing} offers; multigpu.evidence.guide.class_costs",
                                     source=glue.say(table.source_label()), pricing=lang.label(pricing)))
    worst, sizes = [], []
    for ax, kind in zip(axes, ("train", "serve")):
        frame = frames[kind]
        plot_class_costs(ax, frame)
        ax.set_title(_("{kind} ({unit})", kind=lang.label(guide.KIND_TITLES[kind]), unit=lang.label(guide.cost_unit(kind))),
                     fontsize=10)
        relative = frame["cost"] / frame.groupby("model")["cost"].transform("min")
        worst.append(_("{kind} up to {span}", kind=lang.label(guide.KIND_TITLES[kind]),
                       span=plotting.span([relative.max()], lang.label(TIMES))))
        sizes += list(frame["params_B"])
    return plotting.set_alt(fig, _("Two line charts: each interconnect class's cheapest option over the cheapest "
                                   "overall against model size ({sizes} billion parameters), 1 being the cheapest; "
                                   "{worst}.", sizes=plotting.span(sizes), worst=_("; ").join(worst)))


def figure_pareto(frames: Mapping[str, pd.DataFrame], table: PriceTable, pricing: str) -> Figure:
    """Cost per job (in the edition's currency: USD, or CNY in Chinese at ``table``'s FX rate) against time
    (hours) of every training option of :func:`pareto_options`, one panel per model, with the Pareto front and
    the guide's deadline, in the current language."""
    frames = {m: f.assign(**{c: in_currency(f[c], table) for c in ("cost_usd", "cost_usd_lo", "cost_usd_hi")
                             if c in f}) for m, f in frames.items()}
    fig, axes = plotting.figure(
        _("Cost against time of every training option"), _("job time (hours, log scale)"),
        _("cost per job ({currency}, log scale)", currency=currency()), nrows=len(frames),
        figsize=(6.8, 0.8 + 3.4 * len(frames)),
        source=_("{source}, {pricing} offers; multigpu.market.recommend.train and pareto; intervals from "
                 "multigpu.evidence.intervals (published training runs)", source=glue.say(table.source_label()),
                 pricing=lang.label(pricing)))
    words = []
    runs = [i for i, frame in enumerate(frames.values()) if frame.dropna(subset=["cost_usd", "time_h"]).size]
    for i, (ax, (model_id, frame)) in enumerate(zip(axes if len(frames) > 1 else [axes], frames.items())):
        name = models.model(model_id).name
        # the legend once, on the last panel with options (an empty panel has nothing to name)
        plot_pareto(ax, frame, name, guide.DEADLINE_DAYS * 24, legend=bool(runs) and i == runs[-1])
        ran = frame.dropna(subset=["cost_usd", "time_h"])
        words.append(_("{name}: {n} options, {hours} hours, {cost}", name=name, n=len(ran),
                       hours=plotting.span(ran["time_h"]), cost=plotting.span(ran["cost_usd"], currency()))
                     if len(ran) else _("{name}: no option runs", name=name))
    return plotting.set_alt(fig, _("Scatter plots, log-log, one per model: cost per training job against job time "
                                   "with the Pareto front, each front option's 90 % interval along the diagonal, and "
                                   "the deadline. {panels}.", panels=_("; ").join(words)))


TIMES = N_("times")
