"""Chapter 4 (cost-benefit): its figures and prose helpers, drawn from :mod:`multigpu.market.cost`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import pandas as pd

from multigpu.book import plotting
from multigpu.comm.calibration import Calibration
from multigpu.hardware import catalog
from multigpu.market import cost, prices, workloads
from multigpu.market.prices import PriceTable


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
    ax.legend(loc="lower right", fontsize=7.5)



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
        ax.barh(ys, [v - floor for v in values], height, left=floor, label=pair, hatch=next(hatch),
                color=plotting.COLORS[(2 * j + 2) % len(plotting.COLORS)], edgecolor="black", linewidth=0.6)
        for yv, v in zip(ys, part["break_even_premium_pct"]):
            text = "PCIe misses the floor: unbounded" if math.isinf(v) else f"{v:.1f} %".replace("-0.0", "0.0")
            ax.annotate(text, (top if math.isinf(v) else max(v, floor), yv), textcoords="offset points",
                        xytext=(-4 if math.isinf(v) else 3, 0), ha="right" if math.isinf(v) else "left",
                        va="center", fontsize=7, color="white" if math.isinf(v) else "black")
    if charged is not None and not charged.empty:
        lo, hi = charged["premium_pct"].min(), charged["premium_pct"].max()
        ax.axvspan(max(lo, floor), max(hi, floor * 1.5), color="#bbbbbb", alpha=0.5,
                   label="premium charged (same provider, price file)")
    ax.set_xscale("log")
    ax.set_xlim(floor, top)
    ax.set_yticks(range(len(order)), order, fontsize=8)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.legend(loc="upper right", fontsize=7, framealpha=0.9, frameon=True)



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
        ax.set_ylabel(f"cheapest offer ({unit}, log scale)")
        ax.set_xticks(range(len(names)), [_short_label(n) for n in names], fontsize=7.5)
        ax.set_title("training jobs" if kind == "train" else "serving targets", fontsize=10)
        ax.grid(axis="x", visible=False)
    axes[0].legend(loc="upper left", fontsize=7.5)
    axes[0].figure.subplots_adjust(bottom=0.2, wspace=0.35)



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
                             for f in table["factor"]], fontsize=7.5)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right", fontsize=7)



def fmt(value: Any, spec: str = ".1f", unit: str = "", none: str = "n/a") -> str:
    """A number as prose text: ``format(value, spec)`` with ``unit`` appended; ``none`` for a missing
    value (None, NaN) and "unbounded" for infinity. For glued text that must read right with any
    price file, including one that lacks the offers a number needs."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return none
    if isinstance(value, float) and math.isinf(value):
        return "unbounded"
    return f"{format(value, spec)}{unit}"


# ------------------------------------------------------------------ tables


def best_by_class(workload_ids: Iterable[str] | None = None, table: PriceTable | None = None, cal: Calibration | None = None,
                  pricing: Iterable[str] | None = None) -> pd.DataFrame:
    """Per workload and interconnect class, the cheapest feasible offer (optionally of some pricing types only)."""
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
    """Per group (default: GPU and interconnect class; any columns of :func:`offers`, e.g.
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


def job_summary(workload_ids: Iterable[str] | None = None, table: PriceTable | None = None, cal: Calibration | None = None) -> pd.DataFrame:
    """Per workload: feasible offers, the cheapest offer with its cost, time and layout, and the most
    expensive feasible cost (the spread a buyer can lose by choosing blind)."""
    table = prices.resolve(table)
    rows = []
    for wid in (list(workload_ids) if workload_ids is not None else list(workloads.workloads_table())):
        costs = cost.offer_costs(wid, table, cal=cal)
        ok = costs[costs["feasible"]].sort_values("rank")
        row = {"workload": wid, "feasible_offers": len(ok), "offers": len(costs), "cheapest_offer": None,
               "cheapest_gpu": None, "cheapest_class": None, "layout": None, "time_h": math.nan,
               "cost_usd": math.nan, "max_cost_usd": math.nan, "cost_unit": workloads.workload(wid).cost_unit}
        if not ok.empty:
            top = ok.iloc[0]
            row.update(cheapest_offer=int(top["offer"]), cheapest_gpu=top["gpu"],
                       cheapest_class=top["interconnect_class"], layout=top["layout"], time_h=float(top["time_h"]),
                       cost_usd=float(top["cost_usd"]), max_cost_usd=float(ok["cost_usd"].max()))
        rows.append(row)
    return pd.DataFrame(rows)


def market_table(currency: str = "CNY", workload_ids: Iterable[str] = (), table: PriceTable | None = None, cal: Calibration | None = None
                 ) -> pd.DataFrame:
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


# ------------------------------------------------------------------ figures
