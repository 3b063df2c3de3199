"""Checks of the article's cost claims (C24, C26) with the price table they are given; chapter 4.

Both checks run the cost model (:mod:`multigpu.market.cost`,
:mod:`multigpu.market.premium`) on the book's named workloads and the offers
of the :class:`~multigpu.evidence.claims.Inputs`' price table, so their
verdicts and numbers follow the prices: another file can give another verdict,
and the explanation says which numbers it rests on.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.evidence.claims import (
    Inputs,
    Verdict,
    caveat,
    claim,
    conclusion,
    fact,
    judge,
    needs,
)
from multigpu.market import cost, premium, prices, workloads
from multigpu.market.prices import PriceTable

CHAPTER = "book/chapters/04-cost-benefit"
#: The article's size line (C26): "models under 10B parameters".
SIZE_LINE_B = 10.0


def price_spread_pct(table: PriceTable) -> float:
    """How far prices of one GPU and pricing type spread in ``table``: the median over (GPU, pricing) groups
    of two or more offers of (dearest - cheapest) / median price per GPU-hour, %; 0 when no group has two."""
    offers = cost.offers(table)
    spreads = [(g.max() - g.min()) / g.median() for _, g in
               offers.groupby(["gpu", "pricing"])["price_per_gpu_hour_usd"] if len(g) > 1]
    return 100 * float(pd.Series(spreads).median()) if spreads else 0.0


def _price_confidence(quantity: str, value: float, threshold: float, table: PriceTable) -> str:
    """Robust when ``value`` (a share or a size, %) is further from ``threshold`` than the file's own price spread."""
    spread = price_spread_pct(table)
    gap = 100 * abs(value / threshold - 1) if threshold else math.inf
    where = f"{quantity} {value:.3g} against {threshold:g}"
    if gap > spread:
        return f"robust: {where} is {gap:.0f} % away, beyond the {spread:.0f} % spread of one GPU's prices in the file"
    return f"sensitive to prices: {where} is within the {spread:.0f} % spread of one GPU's prices in the file"


def _pct(value: float) -> str:
    return "unbounded (PCIe misses the floor)" if math.isinf(value) else f"{value:.1f} %"


def premium_cases(table: PriceTable | None = None, cal: Calibration | None = None) -> dict[str, Any]:
    """The NVLink-class offers that charge more per GPU-hour than their PCIe-only reference, over every
    workload, and in how many of them the NVLink offer is still cheaper per job.

    Same-provider references are used when the price file has any (``basis``
    says which). Returns ``rows`` (the :func:`multigpu.market.premium.break_even` rows
    kept), ``cases`` and ``cheaper`` (counts), ``share_pct`` (%), and the same split
    by ``train`` and ``serve``.
    """
    frames = [f for f in (premium.break_even(w, table, cal=cal) for w in workloads.workloads_table()) if not f.empty]
    rows = (pd.concat(frames, ignore_index=True) if frames
            else pd.DataFrame(columns=list(premium.BREAK_EVEN_COLUMNS)))
    rows = rows[rows["charged_premium_pct"] > 0]
    same = rows[(rows["reference_provider"] == rows["provider"]) & (rows["reference_pricing"] == rows["pricing"])]
    basis = "same-provider pairs" if not same.empty else "pairs with the cheapest comparable PCIe offer"
    rows = same if not same.empty else rows
    kinds = rows["workload"].map(lambda w: workloads.workload(w).kind)
    out: dict[str, Any] = {"rows": rows, "basis": basis, "cases": len(rows),
                           "cheaper": int(rows["nvlink_cheaper"].sum())}
    out["share_pct"] = 100 * out["cheaper"] / out["cases"] if out["cases"] else math.nan
    for kind in ("train", "serve"):
        part = rows[kinds == kind]
        out[f"{kind}_cases"] = len(part)
        out[f"{kind}_cheaper"] = int(part["nvlink_cheaper"].sum())
        out[f"{kind}_share_pct"] = 100 * out[f"{kind}_cheaper"] / len(part) if len(part) else math.nan
    return out


@claim("C24")
def c24(inputs: Inputs) -> Verdict:
    stamp = inputs.table.stamp()
    r = premium_cases(inputs.table, inputs.cal)
    seed = "NVLink instances: higher hourly price, often lower total job cost"
    pairs = needs("the price file has NVLink-class offers that charge more per GPU-hour than a PCIe-only offer "
                  f"of a comparable GPU and run one of the book's workloads ({r['cases']} such pairs)", r["cases"] > 0)
    if not pairs.passed:
        verdict, rule = judge(pairs)
        return Verdict("C24", verdict, seed, "no pair", "% of NVLink/PCIe pairs x workloads",
                       f"The price file {stamp['name']} (sha256 {stamp['sha256_12']}) has no NVLink-class offer that "
                       f"charges more per GPU-hour than a PCIe-only offer of a comparable GPU and can run one of the "
                       f"book's workloads, so the claim cannot be checked with it.", CHAPTER, rule,
                       "price-based: no comparable pair in this file")
    train, serve = r["train_share_pct"], r["serve_share_pct"]
    shares = [s for s in (train, serve) if not math.isnan(s)]
    kinds = [k for k in ("train", "serve") if not math.isnan(r[f"{k}_share_pct"])]
    verdict, rule = judge(
        pairs,
        fact(f"NVLink-class offers charging more per GPU-hour are sometimes cheaper per job ({r['cheaper']} of {r['cases']})", r["cheaper"] > 0),
        conclusion("often: in at least half of the pairs of some kind of workload ("
                   + ", ".join(f"{k} {r[f'{k}_share_pct']:.0f} %" for k in kinds) + ")",
                   any(s >= 50 for s in shares)),
        *[caveat(f"not for {k} ({r[f'{k}_share_pct']:.0f} %)", r[f"{k}_share_pct"] < 50) for k in kinds])
    rows = r["rows"]
    by_workload = rows.groupby("workload", sort=False).agg(
        be=("break_even_premium_pct", "median"), lo=("charged_premium_pct", "min"),
        hi=("charged_premium_pct", "max"), n=("offer", "size"), k=("nvlink_cheaper", "sum"))
    detail = "; ".join(f"{w}: break-even {_pct(x.be)} against {x.lo:.1f}-{x.hi:.1f} % charged, cheaper in "
                       f"{int(x.k)} of {int(x.n)}" for w, x in by_workload.iterrows())

    def part(kind: str) -> str:
        n = r[f"{kind}_cases"]
        return "no case" if not n else f"{r[f'{kind}_cheaper']} of {n} ({r[f'{kind}_share_pct']:.0f} %)"

    return Verdict(
        "C24", verdict, seed, round(r["share_pct"], 1), "% of NVLink/PCIe pairs x workloads cheaper per job",
        f"With {stamp['name']} (sha256 {stamp['sha256_12']}), over the book's workloads and the "
        f"{r['basis']} in which the NVLink-class offer charges more per GPU-hour than a PCIe-only offer of a "
        f"comparable GPU, the NVLink offer is cheaper per job (or per million tokens) in {r['cheaper']} of "
        f"{r['cases']} cases ({r['share_pct']:.0f} %): training {part('train')}, serving {part('serve')}. "
        f"It is cheaper exactly when the premium charged is below the break-even premium, the PCIe offer's "
        f"GPU-hours over the NVLink offer's, minus one: {detail}. Where tensor parallelism sits on the critical "
        f"path (serving a large model at a per-user speed floor) the break-even premium is large or infinite "
        f"(the PCIe box cannot meet the floor); where data parallelism hides its communication behind the "
        f"backward pass (training on one node) it is a few per cent, below what providers charge.",
        CHAPTER, rule, _price_confidence("the largest share of cheaper pairs (%)", max(shares) if shares else 0.0,
                                         50.0, inputs.table))


def size_threshold(table: PriceTable | None = None, cal: Calibration | None = None) -> dict[str, Any]:
    """For each pricing type, the cheapest NVLink-class against the cheapest PCIe-only offer (any GPU)
    per training job, by model size. Returns ``markets``: {pricing: {"rows": frame, "pcie_cheaper_B": [...],
    "nvlink_cheaper_B": [...], "threshold_B": smallest size from which NVLink is cheaper at every larger
    size (None: never), "below_B": the largest size below it, "line_holds": PCIe cheaper below
    :data:`SIZE_LINE_B` and NVLink at or above it}}."""
    table = prices.resolve(table)
    train_ids = [w for w, spec in workloads.workloads_table().items() if spec.kind == "train"]
    markets: dict[str, Any] = {}
    for pricing in [p for p in prices.PRICING if p in set(table.offers["pricing"])]:
        rows = premium.nvlink_vs_pcie(train_ids, table, pricing=[pricing], cal=cal)
        both = rows[rows["cheaper"].isin(["NVLink", "PCIe"])]
        if both.empty:
            continue
        nvlink_wins = rows["cheaper"].isin(["NVLink", "NVLink (only)"])
        sizes = rows["params_B"].tolist()
        threshold = None
        for i in range(len(rows)):
            if nvlink_wins.iloc[i:].all() and rows["cheaper"].iloc[i:].ne("n/a").any():
                threshold = sizes[i]
                break
        below = [s for s in sizes if threshold is not None and s < threshold]
        small, large = both[both["params_B"] < SIZE_LINE_B], both[both["params_B"] >= SIZE_LINE_B]
        holds = (not small.empty and not large.empty and (small["cheaper"] == "PCIe").all()
                 and (large["cheaper"] == "NVLink").all())
        markets[pricing] = {"rows": rows, "threshold_B": threshold, "below_B": max(below) if below else None,
                            "pcie_cheaper_B": both[both["cheaper"] == "PCIe"]["params_B"].tolist(),
                            "nvlink_cheaper_B": both[both["cheaper"] == "NVLink"]["params_B"].tolist(),
                            "line_holds": bool(holds)}
    return {"markets": markets}


def _where(market: dict[str, Any]) -> str:
    if market["threshold_B"] is None:
        return "PCIe stays cheaper up to the largest model"
    if market["below_B"] is None:
        return f"NVLink is cheaper from the smallest model ({market['threshold_B']:.1f}B) up"
    return f"the line falls between {market['below_B']:.1f}B and {market['threshold_B']:.1f}B"


@claim("C26")
def c26(inputs: Inputs) -> Verdict:
    stamp = inputs.table.stamp()
    t = size_threshold(inputs.table, inputs.cal)["markets"]
    seed = "under 10B and short: PCIe; larger or long: NVLink"
    market = needs(f"a pricing type with both an NVLink-class and a PCIe-only offer that run the book's training "
                   f"jobs ({len(t)} in the file)", bool(t))
    if not market.passed:
        verdict, rule = judge(market)
        return Verdict("C26", verdict, seed, "no market", "billion parameters",
                       f"The price file {stamp['name']} (sha256 {stamp['sha256_12']}) has no pricing type with both "
                       f"an NVLink-class and a PCIe-only offer that can run the book's training jobs.", CHAPTER, rule,
                       "price-based: no comparable market in this file")
    holds = [p for p, m in t.items() if m["line_holds"]]
    verdict, rule = judge(
        market,
        fact("PCIe is cheaper per training job under 10B and NVLink from there up, for some pricing type ("
             + ", ".join(f"{p}: {'yes' if m['line_holds'] else 'no'}" for p, m in t.items()) + ")", bool(holds)),
        caveat("not for every pricing type", len(holds) < len(t)))
    lines = "; ".join(f"{p}: {_where(m)}" for p, m in t.items())
    like = premium.break_even_summary([w for w, s in workloads.workloads_table().items() if s.kind == "train"],
                                      inputs.table, cal=inputs.cal)
    like = like[~like["break_even_premium_pct"].isin([math.inf])]
    if like.empty:
        like_text = "The price file has no comparable pair of GPUs to separate the interconnect from the GPU."
    else:
        same = like.dropna(subset=["charged_same_provider_pct_min"])
        lo, hi, who = ((same["charged_same_provider_pct_min"].min(), same["charged_same_provider_pct_max"].max(),
                        "by the same provider") if not same.empty
                       else (like["charged_pct_min"].min(), like["charged_pct_max"].max(), "between such offers"))
        like_text = (f"Like for like (the same GPU family, NVLink-class against PCIe-only), the interconnect alone "
                     f"is worth a break-even premium of {like['break_even_premium_pct'].min():.1f} to "
                     f"{like['break_even_premium_pct'].max():.1f} % on the training jobs, against "
                     f"{lo:.1f} to {hi:.1f} % charged {who}: the size line, where there is one, comes mostly "
                     f"from which GPUs are "
                     f"sold with which interconnect, and from memory (larger models do not fit the small PCIe "
                     f"cards without heavy recomputation or pipelining).")
    value = "; ".join(f"{p}: " + ("none" if m["threshold_B"] is None else
                                  (f"<= {m['threshold_B']:.1f}" if m["below_B"] is None
                                   else f"{m['below_B']:.1f}-{m['threshold_B']:.1f}")) for p, m in t.items())
    return Verdict(
        "C26", verdict, seed, value, "billion parameters (size line per pricing type)",
        f"With {stamp['name']} (sha256 {stamp['sha256_12']}), comparing per training job the cheapest NVLink-class "
        f"offer with the cheapest PCIe-only offer of the same pricing type: {lines}. The article's line "
        f"(PCIe cheaper under {SIZE_LINE_B:g}B, NVLink from there up) holds for {len(holds)} of the {len(t)} "
        f"pricing types{' (' + ', '.join(holds) + ')' if holds else ''}. {like_text} The second half of the "
        f"claim does not follow from cost per job: every cost in the model is proportional to the training "
        f"tokens, so a longer job multiplies both offers' costs alike and never changes which is cheaper; "
        f"length matters through wall-clock time and reservations, not through the ranking.",
        CHAPTER, rule, f"price-based: one GPU's prices of one pricing type spread by "
                       f"{price_spread_pct(inputs.table):.0f} % in this file")


def size_table(table: PriceTable | None = None, cal: Calibration | None = None) -> pd.DataFrame:
    """The training jobs by model size: per pricing type, the cheapest NVLink-class offer's cost per job
    over the cheapest PCIe-only offer's (below 1: NVLink cheaper; empty where one class has no feasible
    offer), one column per pricing type, ``params_B`` first."""
    markets = size_threshold(table, cal)["markets"]
    frames = [m["rows"].assign(pricing=p) for p, m in markets.items()]
    if not frames:
        return pd.DataFrame(columns=["workload", "params_B"])
    rows = pd.concat(frames, ignore_index=True)
    table = rows.pivot(index=["workload", "params_B"], columns="pricing", values="nvlink_over_pcie")
    table = table[list(markets)].reset_index().sort_values("params_B", kind="stable").reset_index(drop=True)
    table.columns.name = None
    return table.rename(columns={p: f"{p}: NVLink / PCIe cost" for p in markets})
