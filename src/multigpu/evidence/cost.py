"""Chapter 4's analysis (cost-benefit): the price landscape, the cheapest offer by interconnect class, the jobs'
costs, the offers in one currency, the break-even table of the model alone, and the tornado charts' inputs.

Each function returns a table of numbers and ids from the price table it is given (None: the packaged one) and
the calibration (None: the shipped one); the book's chapter page (:mod:`multigpu.book.ch04_cost`) and the
``report`` export render them, the page in both languages.

Units: prices in USD per GPU-hour unless a column says otherwise (:func:`market_table` also gives them in the
offer's currency); training costs in USD per job, serving costs in USD per million output tokens (``cost_unit``
says which); times in hours (``_h``); premiums in per cent (``_pct``); ratios dimensionless.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.evidence import guide, intervals
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
    wall-clock hours (serving: GPU-hours per million output tokens). ``cost_usd_lo`` and ``cost_usd_hi`` bracket
    the cheapest cost with its 90 % prediction interval (:func:`multigpu.evidence.intervals.cost_bounds`).
    Offers of different pricing types are never compared with each other."""
    table = prices.resolve(table)
    labels = cost.offers(table).set_index("offer")["label"]
    types = [pricing] if pricing is not None else guide.pricing_types(table)
    rows: list[dict] = []
    tops: list[tuple[int, pd.Series, str]] = []  # (row, the cheapest offer's cost row, workload kind)
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
                tops.append((len(rows), top, workloads.workload(wid).kind))
            rows.append(row)
    out = pd.DataFrame(rows).assign(cost_usd_lo=math.nan, cost_usd_hi=math.nan)
    if tops:
        bounds = intervals.cost_bounds(pd.DataFrame([t for _, t, _ in tops]), [k for _, _, k in tops])
        at = [i for i, _, _ in tops]
        out.loc[at, "cost_usd_lo"] = bounds["cost_usd_lo"].to_numpy()
        out.loc[at, "cost_usd_hi"] = bounds["cost_usd_hi"].to_numpy()
    return out


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
