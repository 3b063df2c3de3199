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
from multigpu.common.findings import (
    Finding,
    Items,
    Name,
    Number,
    Sentence,
    Value,
    Word,
    msg,
    say,
)
from multigpu.compute import models
from multigpu.evidence import guide
from multigpu.evidence.claims.rules import (
    Inputs,
    Verdict,
    caveat,
    claim,
    conclusion,
    fact,
    judge,
    needs,
)
from multigpu.market import cost, premium, workloads
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


def _price_confidence(quantity: Value, value: float, threshold: float, table: PriceTable) -> Sentence:
    """Robust when ``value`` (of ``quantity``: a share or a cost ratio) is further from ``threshold`` than the
    file's own price spread (%)."""
    spread = price_spread_pct(table)
    gap = 100 * abs(value / threshold - 1) if threshold else math.inf
    where = {"quantity": quantity, "n_value": Number(value, ".3g"), "n_threshold": Number(threshold),
             "n_spread": Number(spread, ".0f")}
    if gap > spread:
        return say(msg("robust: {quantity} {n_value} against {n_threshold} is {n_gap} % away, beyond the {n_spread} % "
                       "spread of one GPU's prices in the file"), n_gap=Number(gap, ".0f"), **where)
    return say(msg("sensitive to prices: {quantity} {n_value} against {n_threshold} is within the {n_spread} % spread "
                   "of one GPU's prices in the file"), **where)


def _span_of_workloads(break_even: pd.Series) -> Finding:
    """The break-even premiums (%, by workload id) as one clause: their range with the workload at each end
    (named by its title), and how many are unbounded; the per-workload numbers are chapter 4's table."""
    finite = break_even[~break_even.isin([math.inf])].dropna()
    unbounded = int(break_even.isin([math.inf]).sum())
    if finite.empty:
        return Finding.of(msg("it is unbounded for all {n} workloads"), n=len(break_even))
    low, high = finite.idxmin(), finite.idxmax()
    span = Finding.of(msg("across the {n} workloads it runs from {low} % for “{low_name}” to {high} % for "
                          "“{high_name}”"), n=len(break_even), low=Number(finite[low], ".1f"),
                      low_name=Name(workloads.workload(low).title), high=Number(finite[high], ".1f"),
                      high_name=Name(workloads.workload(high).title))
    if not unbounded:
        return Finding.of(msg("{span}; chapter 4's tables give each workload"), span=span)
    return Finding.of(msg("{span}, and is unbounded for {n_inf}, where the PCIe box misses the serving floor; "
                          "chapter 4's tables give each workload"), span=span, n_inf=unbounded)


def _stamp(table: PriceTable) -> dict[str, str]:
    """The price file's name and hash as an explanation cites them (``file``, ``sha``)."""
    stamp = table.stamp()
    return {"file": stamp["name"], "sha": stamp["sha256_12"]}


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
    basis = msg("same-provider pairs") if not same.empty else msg("pairs with the cheapest comparable PCIe offer")
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
    r = premium_cases(inputs.table, inputs.cal)
    seed = "NVLink instances: higher hourly price, often lower total job cost"
    pairs = needs(Finding.of(msg("the price file has NVLink-class offers that charge more per GPU-hour than a PCIe-only "
                                 "offer of a comparable GPU and run one of the book's workloads ({n} such pairs)"),
                             n=r["cases"]), r["cases"] > 0)
    if not pairs.passed:
        verdict, rule = judge(pairs)
        return Verdict(id="C24", verdict=verdict, seed_value=seed, model_value="no pair",
                       unit="% of NVLink/PCIe pairs x workloads",
                       explanation=say(msg("The price file {file} (sha256 {sha}) has no NVLink-class offer that charges more per "
                               "GPU-hour than a PCIe-only offer of a comparable GPU and can run one of the book's "
                               "workloads, so the claim cannot be checked with it."), **_stamp(inputs.table)),
                       chapter=CHAPTER, rule=rule, confidence=say(msg("price-based: no comparable pair in this file")))
    train, serve = r["train_share_pct"], r["serve_share_pct"]
    shares = [s for s in (train, serve) if not math.isnan(s)]
    kinds = [k for k in ("train", "serve") if not math.isnan(r[f"{k}_share_pct"])]
    verdict, rule = judge(
        pairs,
        fact(Finding.of(msg("NVLink-class offers charging more per GPU-hour are sometimes cheaper per job "
                            "({n_cheaper} of {n_cases})"), n_cheaper=r["cheaper"], n_cases=r["cases"]),
             r["cheaper"] > 0),
        conclusion(Finding.of(msg("often: in at least half of the pairs of some kind of workload ({shares})"),
                              shares=Items(tuple(_share(k, r[f"{k}_share_pct"]) for k in kinds))),
                   any(s >= 50 for s in shares)),
        *[caveat(Finding.of(msg("not for {kind} ({n_share} %)"), kind=Word(k),
                            n_share=Number(r[f"{k}_share_pct"], ".0f")), r[f"{k}_share_pct"] < 50) for k in kinds])
    rows = r["rows"]
    by_workload = rows.groupby("workload", sort=False).agg(
        be=("break_even_premium_pct", "median"), lo=("charged_premium_pct", "min"),
        hi=("charged_premium_pct", "max"), n=("offer", "size"), k=("nvlink_cheaper", "sum"))
    detail = _span_of_workloads(by_workload["be"])

    def part(kind: str) -> Finding:
        n = r[f"{kind}_cases"]
        return Finding.of(msg("no case")) if not n else Finding.of(
            msg("{n_cheaper} of {n_cases} ({n_share} %)"), n_cheaper=r[f"{kind}_cheaper"], n_cases=n,
            n_share=Number(r[f"{kind}_share_pct"], ".0f"))

    return Verdict(
        id="C24", verdict=verdict, seed_value=seed, model_value=round(r["share_pct"], 1),
        unit="% of NVLink/PCIe pairs x workloads cheaper per job",
        explanation=say(msg("With {file} (sha256 {sha}), over the book's workloads and the {basis} in which the NVLink-class offer "
                "charges more per GPU-hour than a PCIe-only offer of a comparable GPU, the NVLink offer is cheaper per "
                "job (or per million tokens) in {n_cheaper} of {n_cases} cases ({n_share} %): training {train}, "
                "serving {serve}. It is cheaper exactly when the premium charged is below the break-even premium, the "
                "PCIe offer's GPU-hours over the NVLink offer's, minus one: {detail}. Where tensor parallelism sits on "
                "the critical path (serving a large model at a per-user speed floor) the break-even premium is large "
                "or infinite (the PCIe box cannot meet the floor); where data parallelism hides its communication "
                "behind the backward pass (training on one node) it is a few per cent, below what providers charge."),
            basis=Word(r["basis"]), n_cheaper=r["cheaper"], n_cases=r["cases"], n_share=Number(r["share_pct"], ".0f"),
            train=part("train"), serve=part("serve"), detail=detail, **_stamp(inputs.table)),
        chapter=CHAPTER, rule=rule, confidence=_price_confidence(Word(msg("the largest share of cheaper pairs (%)")),
                                         max(shares) if shares else 0.0, 50.0, inputs.table))


#: How much shorter and longer than the guide's budget the C26 length test makes the job near the size line.
LENGTH_SCALES = (0.1, 10.0)


def _line_text(row: Any) -> str:
    """A size line of :func:`multigpu.evidence.guide.thresholds` as a short value: "8.0-14.8", "<= 1.2", "none"."""
    if row["threshold_B"] is None or pd.isna(row["threshold_B"]):
        return "none"
    if row["below_B"] is None or pd.isna(row["below_B"]):
        return f"<= {row['threshold_B']:.1f}"
    return f"{row['below_B']:.1f}-{row['threshold_B']:.1f}"


def _size_line(pricing: str, row: Any) -> Finding:
    """One pricing type's size line: "on-demand: 8.0-14.8" (the line "none" is a word, the rest data)."""
    line = _line_text(row)
    return Finding.of(msg("{pricing}: {line}"), pricing=Word(pricing), line=Word(line) if line == "none" else line)


def _for_types(test: Finding, types: list[str]) -> Finding:
    """A test stated for some pricing type, with the types it holds for in brackets; as it is when it holds for
    none (the test then fails, and says so, with no empty list)."""
    return Finding.of(msg("{test} ({types})"), test=test, types=_pricing_types(types)) if types else test


def _pricing_types(types: list[str]) -> Items | Word:
    """Pricing types as a list of words, or the word "none"."""
    return Items(tuple(Word(t) for t in types)) if types else Word("none")


def _share(kind: str, share_pct: float) -> Finding:
    """C24's share of cheaper pairs for one kind of workload: "train 42 %"."""
    return Finding.of(msg("{kind} {share} %"), kind=Word(kind), share=Number(share_pct, ".0f"))


def _brackets(row: Any, size_B: float) -> bool:
    """Whether a size line falls around ``size_B``: PCIe at the largest size under it, NVLink from the next."""
    return (row["below_B"] is not None and not pd.isna(row["below_B"]) and row["threshold_B"] is not None
            and not pd.isna(row["threshold_B"]) and row["below_B"] < size_B <= row["threshold_B"])


def _length_flips(picks: pd.DataFrame) -> list[str]:
    """Pricing types at which the shortest job's pick is PCIe and the longest one's an NVLink class."""
    short, long = picks["tokens_scale"].min(), picks["tokens_scale"].max()
    flips = []
    for pricing, part in picks.groupby("pricing", sort=False):
        first = part[part["tokens_scale"] == short]["guide_class"].iloc[0]
        last = part[part["tokens_scale"] == long]["guide_class"].iloc[0]
        if first == "PCIe" and last in guide.NVLINK_GUIDE_CLASSES:
            flips.append(pricing)
    return flips


def length_test(table: PriceTable | None = None, cal: Calibration | None = None) -> tuple[str, pd.DataFrame, list[str]]:
    """C26's "short: PCIe, long: NVLink": the guide's model nearest the article's size line, its training picks
    at :data:`LENGTH_SCALES` x its token budget (:func:`multigpu.evidence.guide.length_picks`), and the pricing
    types at which the short job's pick is PCIe and the long one's an NVLink class."""
    near = min(guide.MODELS, key=lambda m: abs(models.model(m).params_total / 1e9 - SIZE_LINE_B))
    picks = guide.length_picks(near, LENGTH_SCALES, table, cal)
    return near, picks, _length_flips(picks)


@claim("C26")
def c26(inputs: Inputs) -> Verdict:
    seed = "under 10B and short: PCIe; larger or long: NVLink"
    decided = guide.decisions(inputs.table, kinds=("train",), cal=inputs.cal)
    both = decided.dropna(subset=["nvlink_over_pcie"])
    market = needs(Finding.of(msg("a pricing type in which some model can be trained on both a PCIe and an "
                                  "NVLink-class option ({n} in the file)"), n=both["pricing"].nunique()),
                   not both.empty)
    if not market.passed:
        verdict, rule = judge(market)
        return Verdict(id="C26", verdict=verdict, seed_value=seed, model_value="no market", unit="billion parameters",
                       explanation=say(msg("The price file {file} (sha256 {sha}) has no pricing type in which the guide's training "
                               "jobs run on both a PCIe and an NVLink-class option."), **_stamp(inputs.table)),
                       chapter=CHAPTER, rule=rule,
                       confidence=say(msg("price-based: no comparable market in this file")))
    lines = guide.thresholds(decided)
    lines = lines[lines["pricing"].isin(set(both["pricing"]))]
    has_line = [p for p, b in zip(lines["pricing"], lines["below_B"]) if b is not None and not pd.isna(b)]
    at_10 = [r["pricing"] for r in lines.to_dict("records") if _brackets(r, SIZE_LINE_B)]
    near, _, flips = length_test(inputs.table, inputs.cal)
    verdict, rule = judge(
        market,
        fact(Finding.of(msg("for some pricing type PCIe is the cheapest way to train the smaller models and an "
                            "NVLink class the larger ones ({lines})"),
                        lines=Items(tuple(_size_line(p, r) for p, r in zip(lines["pricing"], lines.to_dict("records"))))),
             bool(has_line)),
        conclusion(_for_types(Finding.of(msg("the line falls at {size}B for some pricing type"),
                                         size=Number(SIZE_LINE_B)), at_10), bool(at_10)),
        conclusion(_for_types(Finding.of(msg("job length moves the pick: training {model} on {short}x its token "
                                             "budget goes to PCIe and on {long}x to an NVLink class, for some "
                                             "pricing type"),
                                         model=models.model(near).name, short=Number(LENGTH_SCALES[0]),
                                         long=Number(LENGTH_SCALES[-1])),
                              flips), bool(flips)),
        caveat(Finding.of(msg("not for every pricing type")), len(at_10) < len(lines)))
    records = lines.to_dict("records")
    value = Sentence(Items(tuple(_size_line(p, r) for p, r in zip(lines["pricing"], records)), msg("; ")))
    fragile = both.loc[(both["nvlink_over_pcie"] - 1).abs().idxmin()]
    return Verdict(
        id="C26", verdict=verdict, seed_value=seed, model_value=value,
        unit="billion parameters (training size line per pricing type)",
        explanation=_c26_account(inputs.table, lines, at_10, near, flips), chapter=CHAPTER, rule=rule,
        confidence=_price_confidence(Finding.of(msg("NVLink / PCIe cost for {model} at {pricing} prices"), model=fragile["model"],
                                     pricing=Word(fragile["pricing"])),
                          float(fragile["nvlink_over_pcie"]), 1.0, inputs.table))


def _c26_account(table: PriceTable, lines: pd.DataFrame, at_10: list[str], near: str, flips: list[str]) -> Sentence:
    """C26's explanation: each pricing type's size line, the types whose line brackets the article's, and the
    length test."""
    values = {"n_tokens": guide.TOKENS_PER_PARAM, "n_days": guide.DEADLINE_DAYS, "size": Number(SIZE_LINE_B),
              "n_inside": len(at_10), "n_types": len(lines), "model": models.model(near).name,
              "short": Number(LENGTH_SCALES[0]), "long": Number(LENGTH_SCALES[-1]), "n_flips": len(flips),
              **_stamp(table),
              "lines": Items(tuple(Finding.of(msg("{pricing}: {line}"), pricing=Word(p), line=t.value)
                                   for p, t in zip(lines["pricing"], lines["text"])), msg("; "))}
    if at_10:
        return say(msg("With {file} (sha256 {sha}), the selection guide's training jobs ({n_tokens} tokens per "
                       "parameter, within {n_days} days) per pricing type: {lines}. The article's line at {size}B "
                       "falls inside that bracket for {n_inside} of the {n_types} pricing types ({types}). Job "
                       "length: training {model} on {short}x and on {long}x its token budget, the pick moves from "
                       "PCIe to an NVLink class for {n_flips} of the pricing types; cost is proportional to the "
                       "tokens while the layout stays, so a longer job changes the pick only where the deadline "
                       "forces more GPUs."), types=Items(tuple(Word(p) for p in at_10)), **values)
    return say(msg("With {file} (sha256 {sha}), the selection guide's training jobs ({n_tokens} tokens per "
                   "parameter, within {n_days} days) per pricing type: {lines}. The article's line at {size}B falls "
                   "inside that bracket for {n_inside} of the {n_types} pricing types. Job length: training {model} "
                   "on {short}x and on {long}x its token budget, the pick moves from PCIe to an NVLink class for "
                   "{n_flips} of the pricing types; cost is proportional to the tokens while the layout stays, so a "
                   "longer job changes the pick only where the deadline forces more GPUs."), **values)


def size_lines(table: PriceTable | None = None, cal: Calibration | None = None) -> pd.DataFrame:
    """The training size lines C26 is judged on (:func:`multigpu.evidence.guide.training_size_lines`)."""
    return guide.training_size_lines(table, cal)


#: This chapter's checks.
CHECKS = (c24, c26)
