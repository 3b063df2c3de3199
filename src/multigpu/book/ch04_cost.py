"""Chapter 4 (cost-benefit): its tables, figures and the facts its prose cites.

Tables and figures draw on :mod:`multigpu.market.cost`, :mod:`multigpu.market.premium`
and :mod:`multigpu.market.sensitivity`. Every number or sentence the chapter's
Markdown cites is built here, by one ``*_facts`` function per section, from the
price table the notebook passes down (``inputs.price_table()``) and the
calibration (None: the shipped one); the notebook glues each dict with
:func:`multigpu.book.glue.glue_all`. Nothing here reads the environment.

Units: prices in USD per GPU-hour unless a column says otherwise (:func:`market_table`
also gives them in the offer's currency); training costs in USD per job, serving
costs in USD per million output tokens; premiums in per cent (``_pct``); times in
hours (``_h``) or days; ratios and factors dimensionless.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from multigpu.book import plotting
from multigpu.book.glue import Facts, verdict_facts
from multigpu.comm.calibration import Calibration
from multigpu.evidence import answer, claims, guide
from multigpu.evidence.claims import cost as cost_claims
from multigpu.hardware import catalog
from multigpu.market import cost, premium, prices, sensitivity, workloads
from multigpu.market.prices import PriceTable

#: The system pairs of the break-even table: (NVLink-class system, slower system with the same GPUs).
VALUE_PAIRS = (("dgx-a100", "pcie-a100-8"), ("hgx-h200", "h200-p2p-8"))
#: The workloads the chapter's prose names.
TRAIN_8B, TRAIN_70B = "train-llama3.1-8b", "train-llama3.1-70b"
SERVE_8B, SERVE_70B, SERVE_70B_2K = "serve-llama3.1-8b-30tps", "serve-llama3.1-70b-30tps", "serve-llama3.1-70b-2k-30tps"
#: The workload each tornado chart prefers (another of the same kind when it has no NVLink / PCIe pair).
TORNADO_PREFERRED = {"train": TRAIN_70B, "serve": SERVE_8B}
#: The tornado factors that are market inputs (price, utilisation); the others are the model's constants.
MARKET_FACTORS = ("price of the NVLink offer", "price of the PCIe offer", "utilisation of the NVLink offer",
                  "utilisation of the PCIe offer")
#: Prices the exercises assume (USD per GPU-hour): a PCIe rental; an on-demand and a spot price of one GPU.
EXERCISE_PCIE_USD = 1.50
EXERCISE_ON_DEMAND_USD, EXERCISE_SPOT_USD = 4.00, 2.50


def _price_source(table: PriceTable, function: str) -> str:
    """A figure's source line: the price file's name and hash, and the function that drew it."""
    return f"{table.source_label()}; {function}"


# ------------------------------------------------------------------ plots


def plot_landscape(ax: Any, table: PriceTable | None = None) -> None:
    """Every offer's USD per GPU-hour (log scale) by GPU, one marker per interconnect class; hollow
    markers for spot, reserved and community prices, filled for on-demand."""
    t = cost.offers(table)
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
            ax.scatter(sel["price_per_gpu_hour_usd"], [y[g] + offset for g in sel["gpu_name"]], marker=marker,
                       s=36, color=color if on_demand else "none", edgecolors=color, linewidths=1.2,
                       label=f"{cls}, {'on-demand' if on_demand else 'spot / reserved / community'}")
    ax.set_xscale("log")
    ax.set_yticks(range(len(order)), order, fontsize=8.5)
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower right", fontsize=plotting.SMALL_PT)


def plot_break_even(ax: Any, value: pd.DataFrame, charged: pd.DataFrame | None = None) -> None:
    """Break-even premium (%, log scale) per workloads.workload for each system pair of ``value``
    (:func:`interconnect_value`, several pairs stacked), infinite ones drawn to the edge, against the
    band of premiums charged by the same provider (``charged``: :func:`charged_premiums`)."""
    data = value.copy()
    data["pair"] = [f"{catalog.system(a).name.split(' /')[0]} vs {catalog.system(b).name.split(' (')[0]}"
                    for a, b in zip(data["nvlink_system"], data["pcie_system"])]
    finite = data.loc[data["break_even_premium_pct"].map(math.isfinite), "break_even_premium_pct"]
    top = 10 ** math.ceil(math.log10(max([100.0, *finite.clip(lower=1).tolist()]) * 2))
    floor = 0.1
    order = list(dict.fromkeys(data["workload"]))
    pairs = list(dict.fromkeys(data["pair"]))
    height = 0.8 / len(pairs)
    hatch = plotting.hatches()
    for j, pair in enumerate(pairs):
        part = data[data["pair"] == pair]
        ys = [order.index(w) + (j - (len(pairs) - 1) / 2) * height for w in part["workload"]]
        values = [top if math.isinf(v) else max(v, floor) for v in part["break_even_premium_pct"]]
        fill = plotting.COLORS[(2 * j + 2) % len(plotting.COLORS)]
        ax.barh(ys, [v - floor for v in values], height, left=floor, label=pair, hatch=next(hatch),
                color=fill, edgecolor="black", linewidth=0.6)
        on_bar = {"facecolor": fill, "edgecolor": "none", "pad": 1.0}  # a solid box: no hatching behind text
        for yv, v in zip(ys, part["break_even_premium_pct"]):
            text = "PCIe misses the floor: unbounded" if math.isinf(v) else f"{v:.1f} %".replace("-0.0", "0.0")
            ax.annotate(text, (top if math.isinf(v) else max(v, floor), yv), textcoords="offset points",
                        xytext=(-4 if math.isinf(v) else 3, 0), ha="right" if math.isinf(v) else "left",
                        va="center", fontsize=plotting.SMALL_PT,
                        color=plotting.text_color_on(fill) if math.isinf(v) else "#000000",
                        bbox=on_bar if math.isinf(v) else None)
    if charged is not None and not charged.empty:
        lo, hi = charged["premium_pct"].min(), charged["premium_pct"].max()
        ax.axvspan(max(lo, floor), max(hi, floor * 1.5), color="#bbbbbb", alpha=0.5,
                   label="premium charged (same provider, price file)")
    ax.set_xscale("log")
    ax.set_xlim(floor, top)
    ax.set_yticks(range(len(order)), order, fontsize=8)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.legend(loc="upper right", fontsize=plotting.SMALL_PT, framealpha=1.0, frameon=True)


def _short_label(workload_id: str) -> str:
    """A two-line tick label: the model size, and the query shape and floor for serving."""
    w = workloads.workload(workload_id)
    family, size = w.model.rsplit("-", 1)
    if w.kind == "train":
        return f"{family}\n{size.upper()}"
    return f"{size.upper()} {w.input_tokens // 1024}K/{w.output_tokens}\n{w.min_tokens_per_s_per_user:g} tok/s"


def plot_best_by_class(axes: Any, best: pd.DataFrame) -> None:
    """Two panels: the cheapest offer per interconnect class for the training jobs (USD per job) and
    the serving targets (USD per million output tokens), grouped bars on a log scale."""
    classes = [c for c in (*cost.NVLINK_CLASSES, cost.PCIE_CLASS) if c in set(best["interconnect_class"])]
    for ax, kind, unit in zip(axes, ("train", "serve"), ("USD per job", "USD per 1M output tokens")):
        part = best[[workloads.workload(w).kind == kind for w in best["workload"]]]
        names = list(dict.fromkeys(part["workload"]))
        width = 0.8 / max(1, len(classes))
        hatch = plotting.hatches()
        for i, cls in enumerate(classes):
            rows = part[part["interconnect_class"] == cls]
            xs = [names.index(w) + (i - (len(classes) - 1) / 2) * width for w in rows["workload"]]
            ax.bar(xs, rows["cost_usd"], width, label=cls, hatch=next(hatch),
                   color=plotting.COLORS[(i + 1) % len(plotting.COLORS)], edgecolor="black", linewidth=0.6)
        ax.set_yscale("log")
        ax.set_ylabel(f"cheapest offer\n({unit}, log scale)")
        ax.set_xticks(range(len(names)), [_short_label(n) for n in names], fontsize=plotting.SMALL_PT)
        ax.set_title("training jobs" if kind == "train" else "serving targets", fontsize=10)
        ax.grid(axis="x", visible=False)
    axes[0].legend(loc="upper left", fontsize=plotting.SMALL_PT)


def plot_tornado(ax: Any, table: pd.DataFrame | None, title: str = "") -> None:
    """A tornado of :func:`sensitivity`: each factor's NVLink / PCIe cost ratio from its low to its high
    setting, around the base ratio; the dashed line at 1 is where the two offers cost the same."""
    if table is None or table.empty:
        ax.text(0.5, 0.5, "no NVLink / PCIe pair in this price file", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_yticks([])
        return
    base = float(table["ratio_base"].iloc[0])
    ys = range(len(table))
    hatch = plotting.hatches()
    low_hatch, high_hatch = next(hatch), next(hatch)
    ax.barh(ys, table["ratio_low"] - base, left=base, color=plotting.COLORS[5], edgecolor="black", linewidth=0.6,
            hatch=low_hatch, label="low setting")
    ax.barh(ys, table["ratio_high"] - base, left=base, color=plotting.COLORS[1], edgecolor="black",
            linewidth=0.6, hatch=high_hatch, label="high setting")
    ax.axvline(base, color="black", linewidth=1.0)
    ax.axvline(1.0, color="#444444", linewidth=1.0, linestyle="--", label="equal cost")
    ax.set_yticks(list(ys), [f.replace(" (both)", "\n(both offers)").replace(" of the ", "\nof the ")
                             for f in table["factor"]], fontsize=plotting.SMALL_PT)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right", fontsize=plotting.SMALL_PT)


def fmt(value: Any, spec: str = ".1f", unit: str = "", none: str = "n/a") -> str:
    """A number as prose text: ``format(value, spec)`` with ``unit`` appended; ``none`` for a missing
    value (None, NaN) and "unbounded" for infinity. For glued text that must read right with any
    price file, including one that lacks the offers a number needs."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return none
    if isinstance(value, float) and math.isinf(value):
        return "unbounded"
    return f"{format(value, spec)}{unit}"


# ------------------------------------------------------------------ figures


def figure_landscape(table: PriceTable) -> Figure:
    """Figure: every offer's price (USD per GPU-hour, log scale) by GPU (:func:`plot_landscape`)."""
    fig, ax = plotting.figure(
        "Rental price per GPU-hour, every offer of the price file",
        "price (USD per GPU-hour, log scale)", "GPU (sorted by median price)",
        source=_price_source(table, "multigpu.book.ch04_cost.plot_landscape"), figsize=(6.8, 4.8))
    plot_landscape(ax, table)
    t = cost.offers(table)
    return plotting.set_alt(fig, f"Dot chart, log scale: {len(t)} rental offers of {t['gpu_name'].nunique()} GPUs, "
                                 f"{plotting.span(t['price_per_gpu_hour_usd'], 'USD per GPU-hour', '.2f')}, one "
                                 "marker shape per interconnect class, hollow for spot, reserved and community "
                                 "prices.")


def figure_break_even(value: pd.DataFrame, charged: pd.DataFrame, table: PriceTable) -> Figure:
    """Figure: the break-even premium (%) per workload of :func:`interconnect_values` against the band of
    premiums charged (``charged``: :func:`multigpu.market.premium.charged_premiums` of ``table``)."""
    fig, ax = plotting.figure(
        "Break-even premium of the faster interconnect, by workload",
        "break-even premium over the slower system (% per GPU-hour, log scale)", "workload",
        source="multigpu.market.premium.interconnect_value (model only); premiums charged: "
               f"{table.source_label()}",
        figsize=(6.8, 5.4))
    plot_break_even(ax, value, charged)
    premiums = value["break_even_premium_pct"]
    unbounded = int(premiums.map(math.isinf).sum())
    band = (f"; premiums charged {plotting.span(charged['premium_pct'], '%')}"
            if charged is not None and not charged.empty else "")
    return plotting.set_alt(fig, "Bar chart, log scale: break-even premium per workload, "
                                 f"{plotting.span(premiums.clip(lower=0), '%')}"
                                 f"{f', {unbounded} unbounded' if unbounded else ''}{band}.")


def figure_best_by_class(best: pd.DataFrame, table: PriceTable) -> Figure:
    """Figure: the cheapest offer per interconnect class (:func:`best_by_class` of ``table``): USD per
    training job and USD per million output tokens, two panels."""
    fig, axes = plotting.figure(
        "Cheapest offer per interconnect class", "workload", "cost",
        source=_price_source(table, "multigpu.book.ch04_cost.best_by_class"), nrows=2, figsize=(6.8, 7.6))
    plot_best_by_class(axes, best)
    kinds = best["workload"].map(lambda w: workloads.workload(w).kind)
    return plotting.set_alt(fig, "Two bar charts, log scale: the cheapest offer per interconnect class for "
                                 f"training jobs, {plotting.span(best.loc[kinds == 'train', 'cost_usd'], 'USD per job')}, "
                                 "and serving targets, "
                                 f"{plotting.span(best.loc[kinds == 'serve', 'cost_usd'], 'USD per 1M output tokens')}.")


def figure_tornado(kind: str, workload_id: str | None, tornado: pd.DataFrame | None, table: PriceTable) -> Figure:
    """Figure: a tornado chart of one :func:`tornados` entry, the NVLink / PCIe cost ratio (dimensionless)
    from each input's low to its high setting; ``kind`` is "training" or "serving"."""
    fig, ax = plotting.figure(
        f"What moves the NVLink / PCIe cost ratio: {kind}", "NVLink cost / PCIe cost (ratio)", "input varied",
        source=_price_source(table, "multigpu.market.sensitivity.sensitivity"))
    plot_tornado(ax, tornado, title=workload_id or "no workload with an NVLink / PCIe pair")
    if tornado is None or tornado.empty:
        return plotting.set_alt(fig, f"Empty tornado chart ({kind}): no workload has an NVLink / PCIe pair.")
    ratios = pd.concat([tornado["ratio_low"], tornado["ratio_high"]])
    return plotting.set_alt(fig, f"Tornado chart ({kind}, {workload_id}): NVLink over PCIe cost ratio, base "
                                 f"{float(tornado['ratio_base'].iloc[0]):.2f}, moving {plotting.span(ratios)} as "
                                 f"each of {len(tornado)} inputs goes from its low to its high setting.")


# ------------------------------------------------------------------ tables


def best_by_class(workload_ids: Iterable[str] | None = None, table: PriceTable | None = None,
                  cal: Calibration | None = None, pricing: Iterable[str] | None = None) -> pd.DataFrame:
    """Per workload and interconnect class, the cheapest feasible offer (optionally of some pricing types
    only): its price (USD per GPU-hour), layout, time (hours; serving: GPU-hours per million output tokens)
    and cost (``cost_usd`` in ``cost_unit``: USD per job or per million output tokens)."""
    table = prices.resolve(table)
    rows = []
    for wid in (list(workload_ids) if workload_ids is not None else list(workloads.workloads_table())):
        costs = cost.offer_costs(wid, table, cal=cal)
        if pricing is not None:
            costs = costs[costs["pricing"].isin(list(pricing))]
        costs = costs[costs["feasible"]].sort_values(["cost_usd", "offer"], kind="stable")
        for cls, group in costs.groupby("interconnect_class", sort=False):
            top = group.iloc[0]
            rows.append({"workload": wid, "interconnect_class": cls, "offer": int(top["offer"]),
                         "provider": top["provider"], "instance": top["instance"], "gpu": top["gpu"],
                         "pricing": top["pricing"], "price_per_gpu_hour_usd": top["price_per_gpu_hour_usd"],
                         "layout": top["layout"], "time_h": top["time_h"], "cost_usd": top["cost_usd"],
                         "cost_unit": top["cost_unit"]})
    return pd.DataFrame(rows, columns=["workload", "interconnect_class", "offer", "provider", "instance", "gpu",
                                       "pricing", "price_per_gpu_hour_usd", "layout", "time_h", "cost_usd",
                                       "cost_unit"])


def landscape(table: PriceTable | None = None) -> pd.DataFrame:
    """The offers as the price landscape: GPU, interconnect class, provider type, pricing, USD per
    GPU-hour (and in the offer's currency), date observed; sorted by GPU, class, price."""
    t = cost.offers(table)
    out = t[["offer", "provider", "provider_type", "instance", "gpu", "gpu_name", "interconnect_class", "pricing",
             "currency", "price_per_gpu_hour", "price_per_gpu_hour_usd", "observed"]].copy()
    return out.sort_values(["gpu_name", "interconnect_class", "price_per_gpu_hour_usd", "offer"],
                           kind="stable").reset_index(drop=True)


def landscape_summary(table: PriceTable | None = None, by: tuple[str, ...] = ("gpu_name", "interconnect_class")
                      ) -> pd.DataFrame:
    """Per group (default: GPU and interconnect class; any columns of :func:`multigpu.market.cost.offers`, e.g.
    ``("provider_type", "interconnect_class")``): offers, lowest / median / highest USD per GPU-hour,
    and the dates the prices were seen; sorted by median price."""
    t = cost.offers(table)
    g = t.groupby(list(by), sort=True)
    out = g.agg(offers=("offer", "size"), min_usd_per_gpu_hour=("price_per_gpu_hour_usd", "min"),
                median_usd_per_gpu_hour=("price_per_gpu_hour_usd", "median"),
                max_usd_per_gpu_hour=("price_per_gpu_hour_usd", "max"),
                observed_from=("observed", "min"), observed_to=("observed", "max")).reset_index()
    out["observed_from"] = out["observed_from"].map(lambda d: d.isoformat())
    out["observed_to"] = out["observed_to"].map(lambda d: d.isoformat())
    return out.sort_values(["median_usd_per_gpu_hour"] + list(by), kind="stable").reset_index(drop=True)


def job_summary(workload_ids: Iterable[str] | None = None, table: PriceTable | None = None,
                cal: Calibration | None = None, pricing: str | None = None) -> pd.DataFrame:
    """Per workload and pricing type (only ``pricing`` if given): feasible offers, the cheapest offer (its id and
    ``cheapest``, "provider: instance (pricing)") with its cost, time and layout, and the most expensive
    feasible cost of the same pricing type (the spread a buyer can lose by choosing blind). ``cost_usd`` and
    ``max_cost_usd`` are in ``cost_unit`` (USD per job, or per million output tokens); ``time_h`` is the job's
    wall-clock hours (serving: GPU-hours per million output tokens). Offers of different pricing types are
    never compared with each other."""
    table = prices.resolve(table)
    labels = cost.offers(table).set_index("offer")["label"]
    types = [pricing] if pricing is not None else guide.pricing_types(table)
    rows = []
    for wid in (list(workload_ids) if workload_ids is not None else list(workloads.workloads_table())):
        costs = cost.offer_costs(wid, table, cal=cal)
        for kind in types:
            part = costs[costs["pricing"] == kind]
            ok = part[part["feasible"]].sort_values("rank")
            row = {"workload": wid, "pricing": kind, "feasible_offers": len(ok), "offers": len(part),
                   "cheapest_offer": None, "cheapest": None, "cheapest_gpu": None, "cheapest_class": None,
                   "layout": None, "time_h": math.nan, "cost_usd": math.nan, "max_cost_usd": math.nan,
                   "cost_unit": workloads.workload(wid).cost_unit}
            if not ok.empty:
                top = ok.iloc[0]
                row.update(cheapest_offer=int(top["offer"]), cheapest=labels.loc[int(top["offer"])],
                           cheapest_gpu=top["gpu"], cheapest_class=top["interconnect_class"], layout=top["layout"],
                           time_h=float(top["time_h"]), cost_usd=float(top["cost_usd"]),
                           max_cost_usd=float(ok["cost_usd"].max()))
            rows.append(row)
    return pd.DataFrame(rows)


def size_table(table: PriceTable, cal: Calibration | None = None) -> pd.DataFrame:
    """The selection guide's training jobs by model size (chapter 5's and claim C26's one answer): per pricing
    type, the cheapest NVLink-class option's cost per job over the cheapest PCIe option's."""
    return guide.size_table(guide.decisions(table, kinds=("train",), cal=cal))


def market_table(currency: str = "CNY", workload_ids: Iterable[str] = (), table: PriceTable | None = None,
                 cal: Calibration | None = None) -> pd.DataFrame:
    """The offers quoted in ``currency``: price per GPU-hour in it and in USD, and for each workload of
    ``workload_ids`` the cost in that currency (``cost_<workload>``; empty where infeasible).
    Empty (with the columns) when the file has no offer in ``currency``."""
    table = prices.resolve(table)
    t = cost.offers(table)
    t = t[t["currency"] == currency]
    out = pd.DataFrame({"provider": t["provider"], "instance": t["instance"], "gpu": t["gpu"],
                        "interconnect_class": t["interconnect_class"], "pricing": t["pricing"],
                        "observed": t["observed"].map(lambda d: d.isoformat()),
                        f"price_{currency}_per_gpu_hour": t["price_per_gpu_hour"],
                        "price_USD_per_gpu_hour": t["price_per_gpu_hour_usd"]})
    for wid in workload_ids:
        costs = cost.offer_costs(wid, table, cal=cal).set_index("offer")
        unit = "per_job" if workloads.workload(wid).kind == "train" else "per_1M_tokens"
        out[f"{wid} ({currency} {unit})"] = [costs.loc[i, "cost"] for i in t["offer"]]
    return out.reset_index(drop=True)


def interconnect_values(cal: Calibration | None = None) -> pd.DataFrame:
    """The break-even table of the chapter, from the model only (no prices): :func:`multigpu.market.premium.
    interconnect_value` for each pair of :data:`VALUE_PAIRS`, stacked; GPU-hours per job (serving: per
    million output tokens) of both systems and the break-even premium (%) the faster one allows."""
    return pd.concat([premium.interconnect_value(nv, pc, cal=cal) for nv, pc in VALUE_PAIRS], ignore_index=True)


def tornado_workload(kind: str, table: PriceTable, cal: Calibration | None = None) -> str | None:
    """The workload of ``kind`` ("train" or "serve") whose tornado the chapter draws: the preferred one of
    :data:`TORNADO_PREFERRED` if the price table has an NVLink / PCIe pair for it, else the first workload
    of that kind that has one; None if none has."""
    ids = [TORNADO_PREFERRED[kind]] + [w for w, spec in workloads.workloads_table().items() if spec.kind == kind]
    return next((w for w in ids if sensitivity.default_pair(w, table, cal=cal) is not None), None)


def tornados(table: PriceTable, cal: Calibration | None = None) -> list[tuple[str, str | None, pd.DataFrame | None]]:
    """The chapter's two tornado charts: (``"training"`` or ``"serving"``, workload id or None, the
    :func:`multigpu.market.sensitivity.sensitivity` table of its default pair or None). The table's ratios
    are NVLink cost / PCIe cost per job (serving: per million output tokens), dimensionless."""
    out = []
    for kind, name in (("train", "training"), ("serve", "serving")):
        wid = tornado_workload(kind, table, cal)
        out.append((name, wid, sensitivity.sensitivity(wid, table=table, cal=cal) if wid else None))
    return out


# ------------------------------------------------------------------ facts for the prose


def price_facts(table: PriceTable) -> Facts:
    """The price file the page uses: ``price_stamp`` (Markdown sentence), ``n_offers``, ``n_providers``,
    ``n_gpus`` (counts), ``observed_from`` and ``observed_to`` (ISO dates, text)."""
    stamp = table.stamp()
    return {"price_stamp": table.stamp_markdown(), "n_offers": int(stamp["offers"]),
            "n_providers": int(table.offers["provider"].nunique()), "n_gpus": int(table.offers["gpu"].nunique()),
            "observed_from": stamp["observed_from"], "observed_to": stamp["observed_to"]}


def intro_facts(table: PriceTable, cal: Calibration | None = None) -> Facts:
    """The chapter's opening: :func:`price_facts` and ``in_short``, its answer in two sentences (the training and
    serving lines of the introduction's decision table, :mod:`multigpu.evidence.answer`); and the selection
    guide's training job that the size table uses (``guide_tokens_per_param``, ``guide_deadline_days``)."""
    decided = answer.decision_table(table, cal)
    lines = answer.summary(decided, pd.DataFrame(columns=["pricing", "text"]))
    return price_facts(table) | {"in_short": f"{lines[0]} {lines[1]} {lines[2]}",
                                 "guide_tokens_per_param": guide.TOKENS_PER_PARAM,
                                 "guide_deadline_days": guide.DEADLINE_DAYS}


def landscape_facts(table: PriceTable) -> Facts:
    """The price landscape in numbers: ``cheapest_usd`` and ``dearest_usd`` (USD per GPU-hour) with their GPU
    (``cheapest_gpu``, ``dearest_gpu``) and the cheapest one's ``cheapest_pricing``; the GPU and
    interconnect class whose offers span the widest price range (``spread_gpu``, text), that range as a
    factor (``spread_x``, highest / lowest price) and its number of offers (``spread_offers``)."""
    land = landscape(table)
    lo = land.loc[land["price_per_gpu_hour_usd"].idxmin()]
    hi = land.loc[land["price_per_gpu_hour_usd"].idxmax()]
    summary = landscape_summary(table)
    spread = summary.assign(x=summary["max_usd_per_gpu_hour"] / summary["min_usd_per_gpu_hour"]).sort_values(
        "x", ascending=False, kind="stable").iloc[0]
    return {"cheapest_usd": float(lo["price_per_gpu_hour_usd"]), "cheapest_gpu": str(lo["gpu_name"]),
            "cheapest_pricing": str(lo["pricing"]), "dearest_usd": float(hi["price_per_gpu_hour_usd"]),
            "dearest_gpu": str(hi["gpu_name"]), "spread_x": float(spread["x"]),
            "spread_gpu": f"{spread['gpu_name']} ({spread['interconnect_class']})",
            "spread_offers": int(spread["offers"])}


def charged_facts(table: PriceTable) -> Facts:
    """The premiums charged for the faster interconnect by one provider under one pricing type
    (:func:`multigpu.market.premium.charged_premiums`, % per GPU-hour): ``charged_sentence`` (how many
    pairs, lowest, highest and median premium) and ``charged_range`` (lowest to highest), both text."""
    charged = premium.charged_premiums(table)
    if charged.empty:
        return {"charged_sentence": "The file has no such pair, so it does not say what the faster interconnect "
                                    "is charged; the break-even premiums below do not need it, since they come "
                                    "from the model alone.",
                "charged_range": "this file has no such pair"}
    lo, hi, mid = (float(charged["premium_pct"].agg(f)) for f in ("min", "max", "median"))
    pairs = f"{len(charged)} such same-provider pair{'s' if len(charged) != 1 else ''}"
    return {"charged_sentence": f"The file has {pairs}, with premiums from {lo:.1f} % to {hi:.1f} % "
                                f"(median {mid:.1f} %). That is the number to beat.",
            "charged_range": f"{lo:.1f} % to {hi:.1f} % in this file"}


def break_even_facts(table: PriceTable, cal: Calibration | None = None) -> Facts:
    """What the interconnect is worth (:func:`interconnect_values`, model only; premiums in % per GPU-hour):
    ``be_train_min`` / ``be_train_max`` (one-node training on the A100 pair), ``be_train_70b``,
    ``be_serve_8b``, ``be_mesh_max`` (NVSwitch over the H200 mesh, any workload), numbers; as text
    ``be_serve_70b_2k`` ("359 %" or "unbounded"), ``serve_70b_8k`` (the premium, or why PCIe cannot serve),
    the layouts ``train_layout_8b``, ``train_layout_70b``, ``serve_layout_8b``, and ``be_vs_charged``: the
    workloads whose break-even premium exceeds every premium ``table`` charges."""
    value = interconnect_values(cal)
    a100 = value[value["nvlink_system"] == VALUE_PAIRS[0][0]].set_index("workload")
    one_node = [w for w in a100.index if workloads.workload(w).kind == "train" and workloads.workload(w).gpus <= 8]
    train = a100.loc[one_node, "break_even_premium_pct"]
    be_8k = float(a100.loc[SERVE_70B, "break_even_premium_pct"])
    out: Facts = {
        "be_train_min": float(train.min()), "be_train_max": float(train.max()),
        "be_train_70b": float(a100.loc[TRAIN_70B, "break_even_premium_pct"]),
        "be_serve_8b": float(a100.loc[SERVE_8B, "break_even_premium_pct"]),
        "be_serve_70b_2k": fmt(float(a100.loc[SERVE_70B_2K, "break_even_premium_pct"]), ".0f", " %"),
        "serve_70b_8k": (f"the PCIe box cannot meet the floor at all ({a100.loc[SERVE_70B, 'pcie_reason']})"
                         if math.isinf(be_8k) else f"the break-even premium is {be_8k:.0f} %"),
        "train_layout_8b": str(a100.loc[TRAIN_8B, "nvlink_layout"]),
        "train_layout_70b": str(a100.loc[TRAIN_70B, "nvlink_layout"]),
        "serve_layout_8b": f"{a100.loc[SERVE_8B, 'nvlink_layout']} on the NVSwitch board, "
                           f"{a100.loc[SERVE_8B, 'pcie_layout']} on PCIe",
        "be_mesh_max": float(value[value["nvlink_system"] == VALUE_PAIRS[1][0]]["break_even_premium_pct"].max()),
    }
    charged = premium.charged_premiums(table)
    if charged.empty:
        out["be_vs_charged"] = "the price file has no same-provider pair to compare them with"
    else:
        top = float(charged["premium_pct"].max())
        above = [w for w, v in zip(a100.index, a100["break_even_premium_pct"]) if v > top]
        out["be_vs_charged"] = "the break-even premium exceeds every premium charged for " + (
            ", ".join(f"`{w}`" for w in above) if above else "none of the workloads")
    return out


def job_facts(table: PriceTable, cal: Calibration | None = None) -> Facts:
    """Cost per job and per million tokens (:func:`job_summary`) at the reference pricing type
    (``job_pricing``, :func:`multigpu.evidence.guide.reference_pricing`), as text: ``cost_8b`` (USD per job, the
    8B pre-training job's cheapest offer), ``offer_8b`` (that offer by provider, instance and pricing type),
    ``time_8b_days`` (days), ``class_8b``, ``offer_70b_serve``, ``cost_70b_serve`` (USD per
    million output tokens), ``class_70b_serve`` ("n/a" where nothing can run it); as numbers:
    ``job_spread_min`` / ``job_spread_max`` (dearest over cheapest feasible offer of a workload, a factor),
    ``n_cases`` (workload-offer combinations) and ``n_infeasible`` (those that cannot run)."""
    jobs = job_summary(table=table, cal=cal, pricing=guide.reference_pricing(table)).set_index("workload")
    spread = (jobs["max_cost_usd"] / jobs["cost_usd"]).dropna()
    every = cost.cost_table(table=table, cal=cal)
    return {"job_pricing": guide.reference_pricing(table),
            "offer_8b": fmt(jobs.loc[TRAIN_8B, "cheapest"], "s"),
            "offer_70b_serve": fmt(jobs.loc[SERVE_70B, "cheapest"], "s"),
            "cost_8b": fmt(jobs.loc[TRAIN_8B, "cost_usd"], ",.0f"),
            "time_8b_days": fmt(jobs.loc[TRAIN_8B, "time_h"] / 24, ".0f"),
            "class_8b": fmt(jobs.loc[TRAIN_8B, "cheapest_class"], "s"),
            "cost_70b_serve": fmt(jobs.loc[SERVE_70B, "cost_usd"], ".2f"),
            "class_70b_serve": fmt(jobs.loc[SERVE_70B, "cheapest_class"], "s"),
            "job_spread_min": float(spread.min()) if len(spread) else math.nan,
            "job_spread_max": float(spread.max()) if len(spread) else math.nan,
            "n_infeasible": int((~every["feasible"].astype(bool)).sum()), "n_cases": len(every)}


def market_sentence(table: PriceTable, currency: str = "CNY") -> str:
    """How many offers the price table quotes in ``currency``, the FX rate they are converted at (units of
    ``currency`` per USD, with its date) and the lowest of them per GPU-hour, in ``currency``."""
    quoted = market_table(currency, (), table)
    if quoted.empty:
        return f"The file has no offer in {currency}."
    rate = table.fx[currency]
    low = quoted.sort_values(f"price_{currency}_per_gpu_hour", kind="stable").iloc[0]
    types = quoted["pricing"].value_counts()
    kinds = ", ".join(f"{n} {p}" for p, n in types.items())
    missing = [p for p in ("on-demand",) if p not in types]
    gap = (f" None is {missing[0]}: the file has no dated {missing[0]} offer in {currency} to compare with, so the "
           f"{currency} market is priced only under the other types." if missing else "")
    return (f"The file has {len(quoted)} offer{'s' if len(quoted) != 1 else ''} in {currency} ({kinds}), converted "
            f"at {1 / rate.usd_per_unit:.4f} {currency} per USD (rate of {rate.date.isoformat()}); the lowest is "
            f"{low[f'price_{currency}_per_gpu_hour']:.2f} {currency} per GPU-hour ({low['gpu']}, {low['pricing']})."
            + gap)


def market_facts(table: PriceTable) -> Facts:
    """The China market: ``cny_sentence`` (:func:`market_sentence` for CNY; prices in CNY per GPU-hour)."""
    return {"cny_sentence": market_sentence(table, "CNY")}


def tornado_text(tornado: pd.DataFrame | None, table: PriceTable) -> str:
    """One tornado chart in words: the pair of offers, the base NVLink / PCIe cost ratio (dimensionless; below
    1 the NVLink offer is cheaper), the widest bar with its two ratios, and the inputs that flip the ranking
    within the ranges tried. ``table`` is the price table the tornado was computed from (for the offers' names)."""
    if tornado is None:
        return "the price file has no NVLink / PCIe pair for it"
    labels = cost.offers(table).set_index("offer")["label"]
    nv, pc = labels.loc[tornado.attrs["nvlink_offer"]], labels.loc[tornado.attrs["pcie_offer"]]
    top = tornado.iloc[0]
    side = "cheaper" if top["ratio_base"] < 1 else "dearer"
    crosses = [f for f, a, b in zip(tornado["factor"], tornado["ratio_low"], tornado["ratio_high"])
               if min(a, b) < 1 < max(a, b)]
    flip = ("; within the ranges tried, the ranking flips with the " + ", the ".join(crosses)
            if crosses else "; no single input flips the ranking within the ranges tried")
    return (f"{nv} against {pc}: the NVLink offer costs {top['ratio_base']:.2f} times the PCIe one per job "
            f"({side}); the widest bar is the {top['factor']} ({top['ratio_low']:.2f} to {top['ratio_high']:.2f})"
            + flip)


def tornado_facts(table: PriceTable, cal: Calibration | None = None) -> Facts:
    """The tornado charts in words (:func:`tornados`): ``tornado_train`` and ``tornado_serve``
    (:func:`tornado_text`), and ``tornado_compare``: the widest spread (in the dimensionless cost ratio) of
    the market inputs (:data:`MARKET_FACTORS`) against that of the model's efficiency and bandwidth."""
    charts = [t for _, _, t in tornados(table, cal)]
    out: Facts = {"tornado_train": tornado_text(charts[0], table), "tornado_serve": tornado_text(charts[1], table)}
    present = [t for t in charts if t is not None]
    if not present:
        out["tornado_compare"] = "with no pair in the price file, there is nothing to compare"
        return out
    spreads = pd.concat(present)
    market = float(spreads[spreads["factor"].isin(MARKET_FACTORS)]["spread"].max())
    model = float(spreads[~spreads["factor"].isin(MARKET_FACTORS)]["spread"].max())
    out["tornado_compare"] = (
        f"the price and utilisation bars span up to {market:.2f} in the ratio, the model's efficiency and "
        f"bandwidth bars up to {model:.2f}: " + (
            "the prices and how busy the instances will be decide more than the model's constants do"
            if market > model else "the model's constants decide as much as the prices do"))
    return out


def c24_summary(table: PriceTable, cal: Calibration | None = None) -> str:
    """C24 in one sentence: over the book's workloads and the NVLink / PCIe pairs in which the NVLink-class
    offer charges more per GPU-hour (:func:`multigpu.evidence.claims.cost.premium_cases`), in how many cases
    (count and %) it is still cheaper per job, overall and for training and serving apart."""
    cases = cost_claims.premium_cases(table, cal)
    if not cases["cases"]:
        return ("The price file has no NVLink-class offer that charges more per GPU-hour than a comparable "
                "PCIe-only offer, so there is no case to count.")
    return (f"Over the book's workloads and the pairs in which the NVLink-class offer charges more per GPU-hour "
            f"than its PCIe reference, it is cheaper per job in {cases['cheaper']} of {cases['cases']} cases "
            f"({cases['share_pct']:.0f} %): {fmt(cases['train_share_pct'], '.0f', ' %')} of the training cases "
            f"and {fmt(cases['serve_share_pct'], '.0f', ' %')} of the serving ones.")


def claims_facts(table: PriceTable, cal: Calibration | None = None) -> Facts:
    """The article's cost claims checked with ``table``: ``c24_verdict`` and ``c26_verdict`` (bold Markdown),
    ``c24_explanation`` and ``c26_explanation`` (the checks' accounts, with the price file's name and hash),
    and ``c24_summary`` (:func:`c24_summary`; counts and %)."""
    inputs = claims.Inputs(cal=cal, prices=table)
    out: Facts = {}
    for claim_id in ("C24", "C26"):
        verdict = claims.check(claim_id, inputs)
        out.update(verdict_facts({claim_id: verdict}))
        out[f"{claim_id.lower()}_explanation"] = verdict.explanation
    out["c24_summary"] = c24_summary(table, cal)
    out["length_takeaway"] = length_takeaway(table, cal)
    return out


def length_takeaway(table: PriceTable, cal: Calibration | None = None) -> str:
    """Whether job length moves the pick, from C26's length test: a sentence with the model, the token
    multiples tried and the pricing types at which the pick moves from PCIe to an NVLink class."""
    near, picks, flips = cost_claims.length_test(table, cal)
    short, long = cost_claims.LENGTH_SCALES[0], cost_claims.LENGTH_SCALES[-1]
    n = picks["pricing"].nunique()
    moved = (f"moves the pick from PCIe to an NVLink class at {', '.join(flips)} prices ({len(flips)} of {n} "
             f"pricing types)" if flips else f"moves the pick between PCIe and an NVLink class at none of the {n} "
             f"pricing types of this file")
    return (f"Cost per job is proportional to the job's tokens while its layout stays; training {near} on "
            f"{short:g}x instead of {long:g}x its token budget (the guide's deadline applies) {moved}.")


def exercise_facts(cal: Calibration | None = None) -> Facts:
    """The exercises' numbers. Break-even (70B pre-training, A100 NVSwitch against A100 PCIe nodes):
    ``ex1_hn`` and ``ex1_hp`` (GPU-hours per job), ``ex1_price`` (the assumed PCIe price, USD per GPU-hour),
    ``ex1_be`` (break-even price, USD per GPU-hour), ``ex1_pct`` (break-even premium, %). Utilisation:
    ``ex2_od`` and ``ex2_spot`` (assumed prices, USD per GPU-hour) and ``ex2_u`` (the break-even utilisation,
    %). Job length (8B pre-training on one A100 NVSwitch node): ``ex3_tokens_B`` (billion tokens),
    ``ex3_days`` and ``ex3_days_2x`` (days, as given and with twice the tokens). No price file is used."""
    ex = premium.interconnect_value(*VALUE_PAIRS[0], [TRAIN_70B], cal=cal).iloc[0]
    plan8 = cost.plan(TRAIN_8B, VALUE_PAIRS[0][0], 8, cal)
    days = plan8.time_h() / 24
    return {"ex1_price": EXERCISE_PCIE_USD, "ex1_hn": float(ex["nvlink_gpu_hours"]),
            "ex1_hp": float(ex["pcie_gpu_hours"]),
            "ex1_be": EXERCISE_PCIE_USD * float(ex["pcie_gpu_hours"]) / float(ex["nvlink_gpu_hours"]),
            "ex1_pct": float(ex["break_even_premium_pct"]),
            "ex2_od": EXERCISE_ON_DEMAND_USD, "ex2_spot": EXERCISE_SPOT_USD,
            "ex2_u": 100 * EXERCISE_SPOT_USD / EXERCISE_ON_DEMAND_USD,
            "ex3_tokens_B": workloads.workload(TRAIN_8B).tokens / 1e9, "ex3_days": days, "ex3_days_2x": 2 * days}


def facts(table: PriceTable, cal: Calibration | None = None) -> Facts:
    """Every fact the chapter's prose cites (the union of the section functions above), by glue name."""
    return {**intro_facts(table, cal), **landscape_facts(table), **charged_facts(table), **break_even_facts(table, cal),
            **job_facts(table, cal), **market_facts(table), **tornado_facts(table, cal),
            **claims_facts(table, cal), **exercise_facts(cal)}
