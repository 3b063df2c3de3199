"""What changes between two price files: offers added, removed and repriced, and what that does to the
book's picks, break-even premiums and price-dependent verdicts (``python -m multigpu prices diff OLD NEW``).

Offers are matched by their identity (:data:`multigpu.market.prices.OFFER_KEY`: provider, instance,
pricing, region, currency). A pick is the cheapest feasible offer of a named workload; a break-even premium
is the median over an NVLink-class system's offers of what it may charge over its comparable PCIe-only
reference (:func:`multigpu.market.premium.break_even_summary`); the verdicts are those of the claims whose
checks read prices (C24, C26).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.evidence import claims
from multigpu.market import cost, premium, workloads
from multigpu.market.prices import OFFER_KEY, PriceTable

#: Claims whose checks read prices.
PRICE_CLAIMS = ("C24", "C26")


@dataclass(frozen=True)
class Change:
    """One difference: its ``section`` (offers, picks, break-even, verdicts), what changed (``item``), the old
    and new values as text, and the relative change in % where both are numbers (else None)."""

    section: str
    change: str  #: added, removed, repriced, changed
    item: str
    old: str
    new: str
    change_pct: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _key(row: dict[str, Any]) -> tuple:
    return tuple("" if row.get(c) is None or (isinstance(row.get(c), float) and math.isnan(row[c])) else row[c]
                 for c in OFFER_KEY)


def _label(key: tuple) -> str:
    provider, instance, pricing, region, currency = key
    return f"{provider}: {instance} ({pricing}{', ' + region if region else ''}, {currency})"


def _pct(old: float, new: float) -> float | None:
    return 100 * (new / old - 1) if old and math.isfinite(old) and math.isfinite(new) else None


def offer_changes(old: PriceTable, new: PriceTable) -> list[Change]:
    """Offers added, removed and repriced (price per instance-hour in the offer's currency)."""
    before = {_key(r): r for r in old.offers.to_dict("records")}
    after = {_key(r): r for r in new.offers.to_dict("records")}
    out = []
    for key in after.keys() - before.keys():
        out.append(Change("offers", "added", _label(key), "", f"{after[key]['price_per_hour']:g} per hour"))
    for key in before.keys() - after.keys():
        out.append(Change("offers", "removed", _label(key), f"{before[key]['price_per_hour']:g} per hour", ""))
    for key in before.keys() & after.keys():
        a, b = before[key]["price_per_hour"], after[key]["price_per_hour"]
        if a != b:
            out.append(Change("offers", "repriced", _label(key), f"{a:g} per hour", f"{b:g} per hour", _pct(a, b)))
    order = {"added": 0, "removed": 1, "repriced": 2}
    return sorted(out, key=lambda c: (order[c.change], c.item))


def _picks(table: PriceTable, cal: Calibration | None) -> dict[str, tuple[str, float]]:
    """Per workload, the cheapest feasible offer's label and its cost (USD per job or per 1M tokens)."""
    picks = {}
    for wid in workloads.workloads_table():
        costs = cost.offer_costs(wid, table, cal=cal)
        ok = costs[costs["feasible"]].sort_values("rank")
        picks[wid] = (("none feasible", math.nan) if ok.empty else
                      (cost.offer_label(ok.iloc[0]), float(ok.iloc[0]["cost_usd"])))
    return picks


def pick_changes(old: PriceTable, new: PriceTable, cal: Calibration | None = None) -> list[Change]:
    """Workloads whose cheapest offer or its cost changes."""
    a, b = _picks(old, cal), _picks(new, cal)
    out = []
    for wid in a:
        (label_a, usd_a), (label_b, usd_b) = a[wid], b[wid]
        same_cost = math.isclose(usd_a, usd_b, rel_tol=1e-12) or (math.isnan(usd_a) and math.isnan(usd_b))
        if label_a != label_b or not same_cost:
            unit = workloads.workload(wid).cost_unit
            out.append(Change("picks", "changed", wid, f"{label_a}, {usd_a:,.2f} {unit}",
                              f"{label_b}, {usd_b:,.2f} {unit}", _pct(usd_a, usd_b)))
    return out


def _premiums(table: PriceTable, cal: Calibration | None) -> pd.DataFrame:
    frame = premium.break_even_summary(None, table, cal=cal)
    return frame.set_index(["workload", "nvlink_system", "pcie_system"])["break_even_premium_pct"]


def premium_changes(old: PriceTable, new: PriceTable, cal: Calibration | None = None) -> list[Change]:
    """Break-even premiums (%) that appear, disappear or move, per workload and pair of systems."""
    a, b = _premiums(old, cal), _premiums(new, cal)
    out = []
    for key in sorted(set(a.index) | set(b.index)):
        va, vb = a.get(key, math.nan), b.get(key, math.nan)
        if (math.isnan(va) and math.isnan(vb)) or va == vb:
            continue
        text = lambda v: "" if math.isnan(v) else ("unbounded" if math.isinf(v) else f"{v:.1f} %")  # noqa: E731
        out.append(Change("break-even", "changed", f"{key[0]}: {key[1]} over {key[2]}", text(va), text(vb),
                          None if math.isnan(va) or math.isnan(vb) else _pct(va, vb)))
    return out


def verdict_changes(old: PriceTable, new: PriceTable, cal: Calibration | None = None) -> list[Change]:
    """The price-dependent claims whose verdict or value changes."""
    out = []
    for claim_id in PRICE_CLAIMS:
        a = claims.check(claim_id, claims.Inputs(cal=cal, prices=old))
        b = claims.check(claim_id, claims.Inputs(cal=cal, prices=new))
        if (a.verdict, a.model_value) != (b.verdict, b.model_value):
            out.append(Change("verdicts", "changed", f"{claim_id} ({a.unit})", f"{a.verdict}: {a.model_value}",
                              f"{b.verdict}: {b.model_value}"))
    return out


def diff(old: PriceTable, new: PriceTable, cal: Calibration | None = None) -> list[Change]:
    """Every change, offers first, then picks, break-even premiums and verdicts."""
    return (offer_changes(old, new) + pick_changes(old, new, cal) + premium_changes(old, new, cal)
            + verdict_changes(old, new, cal))
