"""Chapter 4's figures, each drawn in the current language (the notebook shows both editions with
``plotting.show_both``): the price landscape, the break-even premiums against those charged, the cheapest
offer per interconnect class and the sensitivity (tornado) charts; money in :func:`multigpu.book.money.currency`.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from multigpu.book import lang, plotting, vocabulary
from multigpu.book.lang import N_, _
from multigpu.book.money import currency, in_currency, price_source
from multigpu.common.numtext import number_text
from multigpu.compute import models
from multigpu.market import cost, prices, workloads
from multigpu.market.prices import PriceTable


def plot_landscape(ax: Any, table: PriceTable | None = None) -> None:
    """Every offer's price per GPU-hour (:func:`currency`: USD, or CNY in Chinese; log scale) by GPU, one
    marker per interconnect class; hollow markers for spot, reserved and community prices, filled for on-demand."""
    table = prices.resolve(table)
    t = cost.offers(table)
    t = t.assign(price=in_currency(t["price_per_gpu_hour_usd"], table))
    order = (t.groupby("gpu_name")["price_per_gpu_hour_usd"].median().sort_values(kind="stable").index.tolist())
    y = {g: i for i, g in enumerate(order)}
    classes = [c for c in (*cost.NVLINK_CLASSES, cost.PCIE_CLASS) if c in set(t["interconnect_class"])]
    for i, cls in enumerate(classes):
        part = t[t["interconnect_class"] == cls]
        color, marker = plotting.COLORS[i % len(plotting.COLORS)], plotting.MARKERS[i % len(plotting.MARKERS)]
        for on_demand in (True, False):
            sel = part[(part["pricing"] == "on-demand") == on_demand]
            if sel.empty:
                continue
            offset = (i - (len(classes) - 1) / 2) * 0.12
            label = (_("{interconnect}, on-demand", interconnect=lang.label(cls)) if on_demand else
                     _("{interconnect}, spot / reserved / community", interconnect=lang.label(cls)))
            ax.scatter(sel["price"], [y[g] + offset for g in sel["gpu_name"]], marker=marker,
                       s=36, color=color if on_demand else "none", edgecolors=color, linewidths=1.2, label=label)
    ax.set_xscale("log")
    ax.set_yticks(range(len(order)), order, fontsize=8.5)
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower right", fontsize=plotting.SMALL_PT)


def plot_break_even(ax: Any, value: pd.DataFrame, charged: pd.DataFrame | None = None) -> None:
    """Break-even premium (%, log scale) per workloads.workload for each system pair of ``value``
    (:func:`interconnect_value`, several pairs stacked), infinite ones drawn to the edge, against the
    band of premiums charged by the same provider (``charged``: :func:`charged_premiums`)."""
    data = value.copy()
    data["pair"] = [_("{nvlink} vs {pcie}", nvlink=vocabulary.short_system_name(a), pcie=vocabulary.short_system_name(b))
                    for a, b in zip(data["nvlink_system"], data["pcie_system"])]
    finite = data.loc[data["break_even_premium_pct"].map(math.isfinite), "break_even_premium_pct"]
    top = 10 ** math.ceil(math.log10(max([100.0, *finite.clip(lower=1).tolist()]) * 2))
    floor = 0.1
    order = list(dict.fromkeys(data["workload"]))
    pairs = list(dict.fromkeys(data["pair"]))
    height = 0.8 / len(pairs)
    hatch = plotting.hatches()
    unbounded = _("unbounded") if plotting.on_phone() else _("PCIe misses the floor: unbounded")
    for j, pair in enumerate(pairs):
        part = data[data["pair"] == pair]
        ys = [order.index(w) + (j - (len(pairs) - 1) / 2) * height for w in part["workload"]]
        values = [top if math.isinf(v) else max(v, floor) for v in part["break_even_premium_pct"]]
        fill = plotting.COLORS[(2 * j + 2) % len(plotting.COLORS)]
        ax.barh(ys, [v - floor for v in values], height, left=floor, label=pair, hatch=next(hatch),
                color=fill, edgecolor="black", linewidth=0.6)
        on_bar = {"facecolor": fill, "edgecolor": "none", "pad": 1.0}  # a solid box: no hatching behind text
        for yv, v in zip(ys, part["break_even_premium_pct"]):
            text = unbounded if math.isinf(v) else f"{number_text(v, '.1f')} %"
            ax.annotate(text, (top if math.isinf(v) else max(v, floor), yv), textcoords="offset points",
                        xytext=(-4 if math.isinf(v) else 3, 0), ha="right" if math.isinf(v) else "left",
                        va="center", fontsize=plotting.SMALL_PT,
                        color=plotting.text_color_on(fill) if math.isinf(v) else "#000000",
                        bbox=on_bar if math.isinf(v) else None)
    if charged is not None and not charged.empty:
        lo, hi = charged["premium_pct"].min(), charged["premium_pct"].max()
        ax.axvspan(max(lo, floor), max(hi, floor * 1.5), color="#bbbbbb", alpha=0.5,
                   label=_("premium charged (same provider, price file)"))
    ax.set_xscale("log")
    ax.set_xlim(floor, top)
    ax.set_yticks(range(len(order)), [_tick_label(w) for w in order], fontsize=8)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.legend(loc="upper right", fontsize=plotting.SMALL_PT, framealpha=1.0, frameon=True)


#: How each training method and serving read on an axis (:data:`multigpu.market.workloads.METHODS`).
METHOD_WORDS = {"pretrain": N_("pre-train"), "full": N_("fine-tune"), "lora": N_("LoRA"), "serve": N_("serve")}


def _tick_label(workload_id: str) -> str:
    """A workload as one tick label in the current language: what is done to which model ("pre-train Llama 3.1
    8B", "LoRA Llama 3.1 70B"), and for serving the query shape and the floor on a second line."""
    w = workloads.workload(workload_id)
    what = lang.label(METHOD_WORDS["serve" if w.kind == "serve" else w.method])
    name = f"{what} {models.model(w.model).name}"
    if w.kind != "serve":
        return name
    return f"{name}\n{w.input_tokens // 1024}K/{w.output_tokens}, {w.min_tokens_per_s_per_user:g} tok/s"


def _short_label(workload_id: str) -> str:
    """A two-line tick label: the model size, and the query shape and floor for serving."""
    w = workloads.workload(workload_id)
    name = models.model(w.model).name  # "Llama 3.1 8B": the family, then the size ("DeepSeek-V3": both)
    family, size = name.rsplit(" ", 1) if " " in name else (name, name)
    if w.kind == "train":
        return f"{family}\n{size}" if family != size else name
    return f"{size} {w.input_tokens // 1024}K/{w.output_tokens}\n{w.min_tokens_per_s_per_user:g} tok/s"


def plot_best_by_class(axes: Any, best: pd.DataFrame, table: PriceTable | None = None) -> None:
    """Two panels: the cheapest offer per interconnect class for the training jobs (per job) and the serving
    targets (per million output tokens), grouped bars on a log scale, in :func:`currency` (USD, or CNY in
    Chinese by ``table``'s FX table)."""
    table = prices.resolve(table)
    classes = [c for c in (*cost.NVLINK_CLASSES, cost.PCIE_CLASS) if c in set(best["interconnect_class"])]
    units = (_("{currency} per job", currency=currency()),
             _("{currency} per 1M output tokens", currency=currency()))
    for ax, kind, unit in zip(axes, ("train", "serve"), units):
        part = best[[workloads.workload(w).kind == kind for w in best["workload"]]]
        names = list(dict.fromkeys(part["workload"]))
        width = 0.8 / max(1, len(classes))
        hatch = plotting.hatches()
        for i, cls in enumerate(classes):
            rows = part[part["interconnect_class"] == cls]
            xs = [names.index(w) + (i - (len(classes) - 1) / 2) * width for w in rows["workload"]]
            ax.bar(xs, in_currency(rows["cost_usd"], table), width, label=lang.label(cls), hatch=next(hatch),
                   color=plotting.COLORS[(i + 1) % len(plotting.COLORS)], edgecolor="black", linewidth=0.6)
        ax.set_yscale("log")
        ax.set_ylabel(_("cheapest offer\n({unit}, log scale)", unit=unit))
        ax.set_xticks(range(len(names)), [_short_label(n) for n in names], fontsize=plotting.SMALL_PT)
        ax.set_title(_("training jobs") if kind == "train" else _("serving targets"), fontsize=10)
        ax.grid(axis="x", visible=False)
    axes[0].legend(loc="upper left", fontsize=plotting.SMALL_PT)


def _factor_tick(factor: str) -> str:
    """A tornado factor as a tick label: English on two lines; Chinese (short) on one."""
    if lang.current() == "en":
        return factor.replace(" (both)", "\n(both offers)").replace(" of the ", "\nof the ")
    return lang.label(factor)


def plot_tornado(ax: Any, table: pd.DataFrame | None, title: str = "") -> None:
    """A tornado of :func:`sensitivity`: each factor's NVLink / PCIe cost ratio from its low to its high
    setting, around the base ratio; the dashed line at 1 is where the two offers cost the same."""
    if table is None or table.empty:
        ax.text(0.5, 0.5, _("no NVLink / PCIe pair in this price file"), ha="center", va="center",
                transform=ax.transAxes)
        ax.set_yticks([])
        return
    base = float(table["ratio_base"].iloc[0])
    ys = range(len(table))
    hatch = plotting.hatches()
    low_hatch, high_hatch = next(hatch), next(hatch)
    ax.barh(ys, table["ratio_low"] - base, left=base, color=plotting.COLORS[5], edgecolor="black", linewidth=0.6,
            hatch=low_hatch, label=_("low setting"))
    ax.barh(ys, table["ratio_high"] - base, left=base, color=plotting.COLORS[1], edgecolor="black",
            linewidth=0.6, hatch=high_hatch, label=_("high setting"))
    ax.axvline(base, color="black", linewidth=1.0)
    ax.axvline(1.0, color="#444444", linewidth=1.0, linestyle="--", label=_("equal cost"))
    ax.set_yticks(list(ys), [_factor_tick(f) for f in table["factor"]], fontsize=plotting.SMALL_PT)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right", fontsize=plotting.SMALL_PT)


def figure_landscape(table: PriceTable) -> Figure:
    """Figure: every offer's price per GPU-hour (USD; CNY in Chinese; log scale) by GPU (:func:`plot_landscape`)."""
    fig, ax = plotting.figure(
        _("Rental price per GPU-hour, every offer of the price file"),
        _("price ({currency} per GPU-hour, log scale)", currency=currency()), _("GPU (sorted by median price)"),
        source=price_source(table, "multigpu.book.ch04_figures.plot_landscape", converted=True), figsize=(6.8, 4.8))
    plot_landscape(ax, table)
    t = cost.offers(table)
    unit = _("{currency} per GPU-hour", currency=currency())
    return plotting.set_alt(fig, _("Dot chart, log scale: {offers} rental offers of {gpus} GPUs, {span}, one marker "
                                   "shape per interconnect class, hollow for spot, reserved and community prices.",
                                   offers=len(t), gpus=t["gpu_name"].nunique(),
                                   span=plotting.span(in_currency(t["price_per_gpu_hour_usd"], table), unit, ".2f")))


def figure_break_even(value: pd.DataFrame, charged: pd.DataFrame, table: PriceTable) -> Figure:
    """Figure: the break-even premium (%) per workload of :func:`multigpu.evidence.cost.interconnect_values` against the band of
    premiums charged (``charged``: :func:`multigpu.market.premium.charged_premiums` of ``table``)."""
    s = table.stamp()
    fig, ax = plotting.figure(
        _("Break-even premium of the faster interconnect, by workload"),
        _("break-even premium over the slower system (% per GPU-hour, log scale)"), _("workload"),
        source=_("multigpu.market.premium.interconnect_value (model only); premiums charged: price file {name} "
                 "(sha256 {sha})", name=s["name"], sha=s["sha256_12"]),
        figsize=(6.8, 5.4), phone_figsize=(plotting.PHONE_FIGWIDTH_IN, 2.4 + 0.45 * value["workload"].nunique()))
    plot_break_even(ax, value, charged)
    premiums = value["break_even_premium_pct"]
    unbounded = int(premiums.map(math.isinf).sum())
    band = (_("; premiums charged {span}", span=plotting.span(charged["premium_pct"], "%"))
            if charged is not None and not charged.empty else "")
    many = _(", {count} unbounded", count=unbounded) if unbounded else ""
    return plotting.set_alt(fig, _("Bar chart, log scale: break-even premium per workload, {span}{unbounded}{band}.",
                                   span=plotting.span(premiums.clip(lower=0), "%"), unbounded=many, band=band))


def figure_best_by_class(best: pd.DataFrame, table: PriceTable) -> Figure:
    """Figure: the cheapest offer per interconnect class (:func:`multigpu.evidence.cost.best_by_class` of ``table``): per training job
    and per million output tokens (USD; CNY in Chinese), two panels."""
    fig, axes = plotting.figure(
        _("Cheapest offer per interconnect class"), _("workload"), _("cost"),
        source=price_source(table, "multigpu.evidence.cost.best_by_class", converted=True), nrows=2,
        figsize=(6.8, 7.6))
    plot_best_by_class(axes, best, table)
    kinds = best["workload"].map(lambda w: workloads.workload(w).kind)
    return plotting.set_alt(fig, _(
        "Two bar charts, log scale: the cheapest offer per interconnect class for training jobs, {train}, and "
        "serving targets, {serve}.",
        train=plotting.span(in_currency(best.loc[kinds == "train", "cost_usd"], table),
                            _("{currency} per job", currency=currency())),
        serve=plotting.span(in_currency(best.loc[kinds == "serve", "cost_usd"], table),
                            _("{currency} per 1M output tokens", currency=currency()))))


def figure_tornado(kind: str, workload_id: str | None, tornado: pd.DataFrame | None, table: PriceTable) -> Figure:
    """Figure: a tornado chart of one :func:`tornados` entry, the NVLink / PCIe cost ratio (dimensionless)
    from each input's low to its high setting; ``kind`` is "training" or "serving"."""
    fig, ax = plotting.figure(
        _("What moves the NVLink / PCIe cost ratio: {kind}", kind=lang.label(kind)), _("NVLink cost / PCIe cost (ratio)"),
        _("input varied"), source=price_source(table, "multigpu.market.sensitivity.sensitivity"))
    plot_tornado(ax, tornado, title=vocabulary.workload_title(workload_id) if workload_id else
                 _("no workload with an NVLink / PCIe pair"))
    if tornado is None or tornado.empty:
        return plotting.set_alt(fig, _("Empty tornado chart ({kind}): no workload has an NVLink / PCIe pair.",
                                       kind=lang.label(kind)))
    ratios = pd.concat([tornado["ratio_low"], tornado["ratio_high"]])
    return plotting.set_alt(fig, _("Tornado chart ({kind}, {workload}): NVLink over PCIe cost ratio, base {base:.2f}, "
                                   "moving {span} as each of {inputs} inputs goes from its low to its high setting.",
                                   kind=lang.label(kind), workload=vocabulary.workload_title(workload_id),
                                   base=float(tornado["ratio_base"].iloc[0]),
                                   span=plotting.span(ratios), inputs=len(tornado)))
