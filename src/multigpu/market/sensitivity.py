"""How the cost comparison of two offers moves with price, efficiency and utilisation: a tornado table."""

from __future__ import annotations

import math

import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.common.errors import InputError
from multigpu.market.cost import WorkloadPlan, offers, plan
from multigpu.market.premium import REFERENCE_KINDS, break_even
from multigpu.market.prices import PriceTable
from multigpu.market.workloads import Workload, workload

#: Sensitivity defaults: a +-20 % swing, and utilisation down to 70 % of rented time.
SWING = 0.2
UTILISATION_LOW = 0.7


def default_pair(workload_id: str, table: PriceTable | None = None, cal: Calibration | None = None) -> tuple[int, int] | None:
    """The (NVLink offer, PCIe offer) pair the book's sensitivity uses for a workload: from
    :func:`break_even`, a same-provider pair if any, on-demand first, then the cheapest NVLink offer.
    None if there is no pair."""
    be = break_even(workload_id, table, cal=cal)
    if be.empty:
        return None
    be = be.assign(_kind=be["reference"].map(REFERENCE_KINDS.index), _od=be["pricing"] != "on-demand")
    top = be.sort_values(["_kind", "_od", "cost_usd", "offer"], kind="stable").iloc[0]
    return int(top["offer"]), int(top["reference_offer"])


def _side(w: Workload, listed: pd.DataFrame, index: int, cal: Calibration | None) -> tuple[WorkloadPlan, int, float]:
    """One offer of a pair (row ``index`` of ``listed``) as the cost of ``w`` needs it: its plan, the GPU-hours
    billed per hour of the job (whole instances for training; one GPU-hour per GPU-hour when serving) and its
    price per GPU-hour (USD). InputError for an unknown offer or one that cannot run ``w``."""
    if index not in set(listed["offer"]):
        raise InputError(f"no offer {index} in the price file (offers are numbered 0-{len(listed) - 1})")
    o = listed[listed["offer"] == index].iloc[0]
    p = plan(w.id, o["system"], int(o["gpus_per_instance"]), cal)
    if not p.feasible:
        raise InputError(f"offer {index} ({o['label']}) cannot run '{w.id}': {p.reason}")
    per_instance = int(o["gpus_per_instance"])
    billed_per_hour = (math.ceil(w.gpus / per_instance) * per_instance) if w.kind == "train" else 1
    return p, billed_per_hour, float(o["price_per_gpu_hour_usd"])


def sensitivity(workload_id: str, nvlink_offer: int | None = None, pcie_offer: int | None = None,
                table: PriceTable | None = None, cal: Calibration | None = None, swing: float = SWING,
                utilisation_low: float = UTILISATION_LOW) -> pd.DataFrame:
    """How the NVLink-over-PCIe cost ratio of one pair of offers moves: a tornado-ready table.

    Offers are row numbers of the price file (``offer`` of :func:`offer_costs`; default :func:`default_pair`). One
    row per factor, varied alone from its low to its high setting, the others at base (price as filed, the model's
    efficiency, full utilisation):

    - the price of each offer, x (1 - ``swing``) and x (1 + ``swing``);
    - compute efficiency (both offers): achievable compute and memory rate x (1 -/+ ``swing``), i.e.
      non-communication time divided by it;
    - communication bandwidth (both offers): achieved bandwidth x (1 -/+ ``swing``);
    - utilisation of each offer, from ``utilisation_low`` to 1.

    Columns: ``factor``, ``low`` and ``high`` (the settings, as multipliers or fractions), ``ratio_low`` and
    ``ratio_high`` (NVLink cost / PCIe cost; below 1 the NVLink offer is cheaper), ``ratio_base``, the two offers'
    costs at each end, and ``spread`` (|ratio_high - ratio_low|); sorted by spread, the widest first. Serving
    re-picks the batch at each setting; training keeps the chosen layout (a first-order estimate)."""
    if nvlink_offer is None or pcie_offer is None:
        pair = default_pair(workload_id, table, cal=cal)
        if pair is None:
            raise InputError(f"no NVLink-class offer with a comparable PCIe-only offer runs '{workload_id}' "
                             f"in this price file")
        nvlink_offer, pcie_offer = pair
    w = workload(workload_id)
    listed = offers(table)
    sides = {side: _side(w, listed, index, cal) for side, index in (("nvlink", nvlink_offer), ("pcie", pcie_offer))}

    def cost(side: str, price: float = 1.0, compute: float = 1.0, comm: float = 1.0, util: float = 1.0) -> float:
        p, billed, usd = sides[side]
        return p.time_h(compute, comm) * billed * usd * price / util

    def both(**kw_by_side: dict[str, float]) -> tuple[float, float]:
        return cost("nvlink", **kw_by_side.get("nvlink", {})), cost("pcie", **kw_by_side.get("pcie", {}))

    lo, hi = 1 - swing, 1 + swing
    factors = [
        ("price of the NVLink offer", lo, hi, lambda v: both(nvlink={"price": v})),
        ("price of the PCIe offer", lo, hi, lambda v: both(pcie={"price": v})),
        ("compute efficiency (both)", lo, hi, lambda v: both(nvlink={"compute": v}, pcie={"compute": v})),
        ("communication bandwidth (both)", lo, hi, lambda v: both(nvlink={"comm": v}, pcie={"comm": v})),
        ("utilisation of the NVLink offer", utilisation_low, 1.0, lambda v: both(nvlink={"util": v})),
        ("utilisation of the PCIe offer", utilisation_low, 1.0, lambda v: both(pcie={"util": v})),
    ]
    base_nv, base_pc = both()
    rows = []
    for name, low, high, f in factors:
        (nv_lo, pc_lo), (nv_hi, pc_hi) = f(low), f(high)
        rows.append({"factor": name, "low": low, "high": high, "ratio_low": nv_lo / pc_lo,
                     "ratio_high": nv_hi / pc_hi, "ratio_base": base_nv / base_pc,
                     "nvlink_cost_low_usd": nv_lo, "nvlink_cost_high_usd": nv_hi,
                     "pcie_cost_low_usd": pc_lo, "pcie_cost_high_usd": pc_hi,
                     "spread": abs(nv_hi / pc_hi - nv_lo / pc_lo)})
    out = pd.DataFrame(rows).sort_values("spread", ascending=False, kind="stable").reset_index(drop=True)
    out.attrs.update(workload=w.id, nvlink_offer=nvlink_offer, pcie_offer=pcie_offer, cost_unit=w.cost_unit)
    return out
