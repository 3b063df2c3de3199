"""What the faster interconnect is worth against what it is charged: break-even and charged premiums.

An NVLink-class offer is compared with a PCIe-only offer of a comparable GPU
(:func:`comparable`): the *break-even price*, at which both cost the same per
job, is the PCIe offer's price x the ratio of their GPU-hours, and the
*break-even premium* is how much more per GPU-hour that allows
(:func:`break_even`); :func:`charged_premiums` is what the price table
actually charges. :func:`interconnect_value` gives the break-even premium of
one catalogue system over another from the model alone (no prices).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.compute.layout import DEFAULT_TRAINING_STACK
from multigpu.hardware import catalog
from multigpu.market import prices
from multigpu.market.cost import NVLINK_CLASSES, PCIE_CLASS, offer_costs, offers, plan
from multigpu.market.prices import PriceTable
from multigpu.market.workloads import workload, workloads_table

#: Two GPUs are comparable when vendor and architecture match and their memory differs by at most this factor.
COMPARABLE_MEMORY_RATIO = 1.25


def comparable(gpu_a: str, gpu_b: str) -> bool:
    """Whether two catalogue GPUs are comparable: same vendor and architecture, memory within
    :data:`COMPARABLE_MEMORY_RATIO` (A100 SXM 80GB and A100 PCIe 80GB are; B200 and RTX 5090 are not)."""
    a, b = catalog.gpu(gpu_a), catalog.gpu(gpu_b)
    ratio = max(a.memory_GB, b.memory_GB) / min(a.memory_GB, b.memory_GB)
    return a.vendor == b.vendor and a.arch == b.arch and ratio <= COMPARABLE_MEMORY_RATIO


def charged_premiums(table: PriceTable | None = None, cal: Calibration | None = None) -> pd.DataFrame:
    """The NVLink-class over PCIe-only premium actually charged: same provider, same pricing type,
    comparable GPUs (:func:`comparable`). One row per pair; ``premium_pct`` = (NVLink price /
    PCIe price - 1) x 100, per GPU-hour. Empty (with the columns) if the file has no such pair."""
    t = offers(table)
    rows = []
    for nv in t[t["interconnect_class"].isin(NVLINK_CLASSES)].to_dict("records"):
        for pc in t[t["interconnect_class"] == PCIE_CLASS].to_dict("records"):
            same = nv["provider"] == pc["provider"] and nv["pricing"] == pc["pricing"]
            if not same or not comparable(nv["gpu"], pc["gpu"]):
                continue
            rows.append({"provider": nv["provider"], "pricing": nv["pricing"], "nvlink_offer": nv["offer"],
                         "nvlink_instance": nv["instance"], "nvlink_gpu": nv["gpu"],
                         "interconnect_class": nv["interconnect_class"], "pcie_offer": pc["offer"],
                         "pcie_instance": pc["instance"], "pcie_gpu": pc["gpu"],
                         "nvlink_usd_per_gpu_hour": nv["price_per_gpu_hour_usd"],
                         "pcie_usd_per_gpu_hour": pc["price_per_gpu_hour_usd"],
                         "premium_usd_per_gpu_hour": nv["price_per_gpu_hour_usd"] - pc["price_per_gpu_hour_usd"],
                         "premium_pct": 100 * (nv["price_per_gpu_hour_usd"] / pc["price_per_gpu_hour_usd"] - 1)})
    return pd.DataFrame(rows, columns=["provider", "pricing", "nvlink_offer", "nvlink_instance", "nvlink_gpu",
                                       "interconnect_class", "pcie_offer", "pcie_instance", "pcie_gpu",
                                       "nvlink_usd_per_gpu_hour", "pcie_usd_per_gpu_hour",
                                       "premium_usd_per_gpu_hour", "premium_pct"])


BREAK_EVEN_COLUMNS = (
    "workload", "offer", "provider", "instance", "gpu", "interconnect_class", "system", "pricing",
    "price_per_gpu_hour_usd", "reference", "reference_offer", "reference_provider", "reference_instance",
    "reference_gpu", "reference_system", "reference_pricing", "reference_price_per_gpu_hour_usd", "gpu_hours",
    "reference_gpu_hours", "gpu_hour_ratio", "break_even_price_per_gpu_hour_usd", "break_even_premium_pct",
    "break_even_premium_usd", "charged_premium_pct", "charged_premium_usd", "cost_usd", "reference_cost_usd",
    "nvlink_cheaper", "saving_pct", "cost_unit")
#: How the PCIe reference of an NVLink offer was found, best first.
REFERENCE_KINDS = ("same provider", "cheapest comparable, same pricing", "cheapest comparable",
                   "no comparable PCIe offer can run it")


def _reference(nv: dict, comparable_all: pd.DataFrame) -> tuple[str, pd.Series]:
    """The PCIe-only offer an NVLink offer ``nv`` is compared with, among the comparable ones, and its kind
    (:data:`REFERENCE_KINDS`): the cheapest per job of the same provider and pricing type, else of the same
    pricing type, else of any; when none can run the workload, the lowest-priced one (the last kind)."""
    candidates = comparable_all[comparable_all["feasible"]]
    if candidates.empty:  # PCIe cannot run it at all: any premium is worth paying
        pool = comparable_all[(comparable_all["provider"] == nv["provider"])
                              & (comparable_all["pricing"] == nv["pricing"])]
        ref = (pool if not pool.empty else comparable_all).sort_values(
            ["price_per_gpu_hour_usd", "offer"], kind="stable").iloc[0]
        return REFERENCE_KINDS[-1], ref
    same = candidates[(candidates["provider"] == nv["provider"]) & (candidates["pricing"] == nv["pricing"])]
    same_pricing = candidates[candidates["pricing"] == nv["pricing"]]
    kind, pool = next((k, p) for k, p in zip(REFERENCE_KINDS, (same, same_pricing, candidates)) if not p.empty)
    return kind, pool.sort_values(["cost_usd", "offer"], kind="stable").iloc[0]


def break_even(workload_id: str, table: PriceTable | None = None, utilisation: float = 1.0,
               cal: Calibration | None = None) -> pd.DataFrame:
    """Break-even premium of every feasible NVLink-class offer over a comparable PCIe-only offer.

    The reference is a feasible PCIe-only offer of a comparable GPU: the same
    provider and pricing type if there is one (``reference`` = "same
    provider"), else the cheapest per job of the same pricing type, else the
    cheapest of any. When comparable PCIe-only offers exist but none can run
    the workload (too slow for the floor, or too small), the reference is the
    lowest-priced of them and the break-even price, premium and GPU-hour ratio
    are infinite (``reference`` says so). The break-even price per GPU-hour is the one at which the
    NVLink offer's cost per job equals the reference's:
    ``reference_cost_usd x utilisation / gpu_hours``, i.e. the reference price
    x ``gpu_hour_ratio`` (reference GPU-hours / NVLink GPU-hours).
    ``break_even_premium_pct`` is how much above the reference price that is;
    ``charged_premium_pct`` what the price file charges; the NVLink offer is
    cheaper per job exactly when the charged premium is below the break-even
    one. Empty (with the columns) when no pair exists.
    """
    costs = offer_costs(workload_id, table, utilisation, cal=cal)
    nvl = costs[costs["feasible"] & costs["interconnect_class"].isin(NVLINK_CLASSES)]
    pcie_all = costs[costs["interconnect_class"] == PCIE_CLASS]
    rows = []
    for nv in nvl.to_dict("records"):
        comparable_all = pcie_all[[comparable(nv["gpu"], g) for g in pcie_all["gpu"]]]
        if comparable_all.empty:
            continue
        kind, ref = _reference(nv, comparable_all)
        p_ref, p_nv = ref["price_per_gpu_hour_usd"], nv["price_per_gpu_hour_usd"]
        if kind == REFERENCE_KINDS[-1]:
            be_price, ratio, cheaper, saving = math.inf, math.inf, True, math.nan
        else:
            be_price = ref["cost_usd"] * utilisation / nv["gpu_hours"]
            ratio = ref["gpu_hours"] / nv["gpu_hours"]
            cheaper, saving = bool(nv["cost_usd"] < ref["cost_usd"]), 100 * (1 - nv["cost_usd"] / ref["cost_usd"])
        rows.append({
            "workload": workload_id, "offer": nv["offer"], "provider": nv["provider"], "instance": nv["instance"],
            "gpu": nv["gpu"], "interconnect_class": nv["interconnect_class"], "system": nv["system"],
            "pricing": nv["pricing"], "price_per_gpu_hour_usd": p_nv, "reference": kind,
            "reference_offer": int(ref["offer"]), "reference_provider": ref["provider"],
            "reference_instance": ref["instance"], "reference_gpu": ref["gpu"], "reference_system": ref["system"],
            "reference_pricing": ref["pricing"], "reference_price_per_gpu_hour_usd": p_ref,
            "gpu_hours": nv["gpu_hours"], "reference_gpu_hours": ref["gpu_hours"], "gpu_hour_ratio": ratio,
            "break_even_price_per_gpu_hour_usd": be_price,
            "break_even_premium_pct": 100 * (be_price / p_ref - 1), "break_even_premium_usd": be_price - p_ref,
            "charged_premium_pct": 100 * (p_nv / p_ref - 1), "charged_premium_usd": p_nv - p_ref,
            "cost_usd": nv["cost_usd"], "reference_cost_usd": ref["cost_usd"], "nvlink_cheaper": cheaper,
            "saving_pct": saving, "cost_unit": nv["cost_unit"]})
    return pd.DataFrame(rows, columns=list(BREAK_EVEN_COLUMNS))


def interconnect_value(nvlink_system: str = "dgx-a100", pcie_system: str = "pcie-a100-8",
                       workload_ids: Iterable[str] | None = None, gpus_per_instance: int = 8,
                       cal: Calibration | None = None, stack: str = DEFAULT_TRAINING_STACK) -> pd.DataFrame:
    """What the interconnect alone is worth, from the model only (no prices): per workload, the
    GPU-hours per job (serving: per million output tokens) of two systems with comparable GPUs, their
    ratio, and the break-even premium it allows, ``100 x (ratio - 1)`` %: an NVLink instance may charge
    that much more per GPU-hour than the PCIe one and still cost the same per job. Infinite when the
    PCIe system cannot run the workload (``pcie_reason`` says why). ``stack``: the training stack training
    jobs run (:data:`multigpu.compute.layout.TRAINING_STACKS`)."""
    rows = []
    for wid in (list(workload_ids) if workload_ids is not None else list(workloads_table())):
        w = workload(wid)
        hours = {}
        for side, system in (("nvlink", nvlink_system), ("pcie", pcie_system)):
            p = plan(wid, system, gpus_per_instance, cal, stack)
            gpu_hours = p.time_h() * (w.gpus if w.kind == "train" else 1) if p.feasible else math.nan
            hours[side] = (p, gpu_hours)
        (nv, nv_h), (pc, pc_h) = hours["nvlink"], hours["pcie"]
        if not nv.feasible:
            ratio = math.nan
        elif not pc.feasible:
            ratio = math.inf
        else:
            ratio = pc_h / nv_h
        rows.append({"workload": wid, "kind": w.kind, "nvlink_system": nvlink_system, "pcie_system": pcie_system,
                     "nvlink_layout": nv.layout, "pcie_layout": pc.layout, "nvlink_gpu_hours": nv_h,
                     "pcie_gpu_hours": pc_h, "gpu_hour_ratio": ratio,
                     "break_even_premium_pct": 100 * (ratio - 1), "pcie_reason": pc.reason,
                     "unit": "GPU-hours per job" if w.kind == "train" else "GPU-hours per 1M output tokens"})
    return pd.DataFrame(rows)


def break_even_summary(workload_ids: Iterable[str] | None = None, table: PriceTable | None = None, cal: Calibration | None = None) -> pd.DataFrame:
    """Per workload and pair of systems (NVLink-class vs PCIe-only, comparable GPUs): the break-even
    premium (%, the GPU-hour ratio - 1) against the premiums charged by the same provider and, where
    none, against the cheapest comparable offer; with how many NVLink offers are cheaper per job."""
    table = prices.resolve(table)
    rows = []
    for wid in (list(workload_ids) if workload_ids is not None else list(workloads_table())):
        be = break_even(wid, table, cal=cal)
        for (system, ref_system), g in be.groupby(["system", "reference_system"], sort=False):
            same = g[g["reference"] == REFERENCE_KINDS[0]]["charged_premium_pct"]
            rows.append({
                "workload": wid, "nvlink_system": system, "nvlink_class": g["interconnect_class"].iloc[0],
                "nvlink_gpu": g["gpu"].iloc[0], "pcie_system": ref_system, "pcie_gpu": g["reference_gpu"].iloc[0],
                "break_even_premium_pct": float(g["break_even_premium_pct"].median()),
                "charged_same_provider_pct_min": float(same.min()) if len(same) else math.nan,
                "charged_same_provider_pct_max": float(same.max()) if len(same) else math.nan,
                "charged_pct_min": float(g["charged_premium_pct"].min()),
                "charged_pct_max": float(g["charged_premium_pct"].max()),
                "nvlink_offers": len(g), "nvlink_cheaper": int(g["nvlink_cheaper"].sum())})
    return pd.DataFrame(rows, columns=["workload", "nvlink_system", "nvlink_class", "nvlink_gpu", "pcie_system",
                                       "pcie_gpu", "break_even_premium_pct", "charged_same_provider_pct_min",
                                       "charged_same_provider_pct_max", "charged_pct_min", "charged_pct_max",
                                       "nvlink_offers", "nvlink_cheaper"])


def nvlink_vs_pcie(workload_ids: Iterable[str] | None = None, table: PriceTable | None = None, cal: Calibration | None = None,
                   pricing: Iterable[str] | None = ("on-demand",)) -> pd.DataFrame:
    """Per workload, the cheapest feasible NVLink-class offer against the cheapest feasible PCIe-only
    offer of any GPU (of the given pricing types; None: all): costs, their ratio and which is cheaper.
    ``params_B`` sorts the workloads by model size (the article's C26 asks at which size NVLink wins)."""
    table = prices.resolve(table)
    rows = []
    for wid in (list(workload_ids) if workload_ids is not None else list(workloads_table())):
        w = workload(wid)
        costs = offer_costs(wid, table, cal=cal)
        if pricing is not None:
            costs = costs[costs["pricing"].isin(list(pricing))]
        costs = costs[costs["feasible"]].sort_values(["cost_usd", "offer"], kind="stable")
        nv = costs[costs["interconnect_class"].isin(NVLINK_CLASSES)]
        pc = costs[costs["interconnect_class"] == PCIE_CLASS]
        row = {"workload": wid, "kind": w.kind, "params_B": w.params / 1e9, "nvlink_offer": None,
               "nvlink_gpu": None, "nvlink_cost_usd": math.nan, "pcie_offer": None, "pcie_gpu": None,
               "pcie_cost_usd": math.nan, "nvlink_over_pcie": math.nan, "cheaper": "n/a", "cost_unit": w.cost_unit}
        if not nv.empty:
            row.update(nvlink_offer=int(nv.iloc[0]["offer"]), nvlink_gpu=nv.iloc[0]["gpu"],
                       nvlink_cost_usd=float(nv.iloc[0]["cost_usd"]))
        if not pc.empty:
            row.update(pcie_offer=int(pc.iloc[0]["offer"]), pcie_gpu=pc.iloc[0]["gpu"],
                       pcie_cost_usd=float(pc.iloc[0]["cost_usd"]))
        if not nv.empty and not pc.empty:
            ratio = row["nvlink_cost_usd"] / row["pcie_cost_usd"]
            row.update(nvlink_over_pcie=ratio, cheaper="NVLink" if ratio < 1 else "PCIe")
        elif not nv.empty or not pc.empty:
            row["cheaper"] = "NVLink (only)" if not nv.empty else "PCIe (only)"
        rows.append(row)
    return pd.DataFrame(rows).sort_values(["kind", "params_B", "workload"], kind="stable").reset_index(drop=True)
