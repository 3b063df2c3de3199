"""The book's answer up front: per named workload, is an NVLink-class instance worth its premium?

The introduction opens with :func:`decision_table` and :func:`summary`, both computed from the model and the
active price file, so that the answer changes when either does.

For each workload of ``data/cost_workloads.csv`` the table compares the NVLink-class system and the PCIe
system with comparable GPUs that the price file rents from the same provider under the same pricing type
(:func:`pair`; the A100 SXM NVSwitch board against the A100 PCIe server in the packaged file):

- **break-even premium** (%): how much more per GPU-hour the NVLink-class instance may cost and still cost no
  more per job (:func:`multigpu.market.premium.interconnect_value`): the PCIe system's GPU-hours over the
  NVLink system's, minus one; unbounded when the PCIe system cannot run the workload at all;
- **premium charged** (%): the median over the file's same-provider, same-pricing-type pairs of those two
  systems (:func:`multigpu.market.premium.charged_premiums`); missing when the file has none;
- **verdict**, by :data:`RULE`: the NVLink-class instance is cheaper when the premium charged lies below the
  break-even premium by more than the model's out-of-sample error on the ratio the verdict rests on
  (:attr:`multigpu.evidence.pcieside.SideErrors.band_pct`),
  PCIe is cheaper when it lies above by more than that error, and the call is too close in between;
- **confidence**: whether every pair of the file, not only the median, gives the same verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.common.findings import Finding, Items, Name, Number, Word, and_list, msg, say
from multigpu.compute import models
from multigpu.evidence import guide, pcieside
from multigpu.hardware import catalog
from multigpu.market import cost, premium, prices, workloads
from multigpu.market.prices import PriceTable

#: The comparison used when the price file rents no NVLink/PCIe pair of one GPU family from one provider.
DEFAULT_PAIR = ("dgx-a100", "pcie-a100-8")
#: The decision rule, in words, as the introduction states it.
RULE = ("the verdict is \"NVLink-class cheaper\" when the premium charged is below the break-even premium by more "
        "than the model's out-of-sample error, \"PCIe cheaper\" when it is above by more than that error, and \"too "
        "close to call\" in between")
VERDICTS = ("NVLink-class cheaper", "PCIe cheaper", "too close to call", "PCIe cannot run it", "neither runs it",
            "no pair to price")
#: The chapter that shows the work, by workload kind.
CHAPTER = {"train": "chapters/04-cost-benefit", "serve": "chapters/03-communication-bottlenecks"}
BAND = {"train": msg("training"), "serve": msg("serving")}


@dataclass(frozen=True)
class Pair:
    """The NVLink-class and PCIe systems the table compares, and the premiums the file charges for the first
    over the second (per cent, one per same-provider, same-pricing-type pair of offers)."""

    nvlink_system: str
    pcie_system: str
    charged_pct: tuple[float, ...]

    @property
    def median_pct(self) -> float:
        """The median premium charged (%), NaN without a pair."""
        return float(pd.Series(self.charged_pct).median()) if self.charged_pct else math.nan


def pair(table: PriceTable) -> Pair:
    """The system pair the file prices most often (same provider, same pricing type, NVSwitch against
    PCIe-only), with its charged premiums; :data:`DEFAULT_PAIR` without charges when the file has none."""
    charged = premium.charged_premiums(table)
    charged = charged[charged["interconnect_class"] == "NVSwitch"]
    if charged.empty:
        return Pair(*DEFAULT_PAIR, ())
    system = cost.offers(table).set_index("offer")["system"]
    charged = charged.assign(nvlink_system=system.loc[charged["nvlink_offer"]].to_numpy(),
                             pcie_system=system.loc[charged["pcie_offer"]].to_numpy())
    counts = charged.groupby(["nvlink_system", "pcie_system"], sort=True).size()
    best = counts[counts == counts.max()].index[0]
    mine = charged[(charged["nvlink_system"] == best[0]) & (charged["pcie_system"] == best[1])]
    return Pair(best[0], best[1], tuple(float(x) for x in mine["premium_pct"]))


def shown(pct: float) -> float:
    """A premium or an error band (%) as the book shows it and decides on it: whole per cent, halves rounded up
    (as the calculator's script rounds); inf and NaN as they are. A verdict never rests on a difference the table
    does not show, and two rows that show the same numbers get the same verdict."""
    return pct if not math.isfinite(pct) else float(math.floor(pct + 0.5))


def verdict(break_even_pct: float, charged_pct: float, band_pct: float) -> str:
    """:data:`RULE` for one workload, on the numbers as shown (:func:`shown`): compare 1 + charged with
    (1 + break-even) x (1 -/+ band)."""
    break_even_pct, charged_pct, band_pct = shown(break_even_pct), shown(charged_pct), shown(band_pct)
    if math.isinf(break_even_pct):
        return "PCIe cannot run it"
    if math.isnan(break_even_pct):
        return "neither runs it"
    if math.isnan(charged_pct):
        return "no pair to price"
    worth, asked = 1 + break_even_pct / 100, 1 + charged_pct / 100
    if asked < worth * (1 - band_pct / 100):
        return "NVLink-class cheaper"
    if asked > worth * (1 + band_pct / 100):
        return "PCIe cheaper"
    return "too close to call"


def confidence(break_even_pct: float, charges: tuple[float, ...], band_pct: float) -> str:
    """Whether each pair's own premium gives the median's verdict: "robust" (all do), else "sensitive to the
    offer", with how many differ and the premium at which the verdict flips (the break-even premium); a
    :class:`~multigpu.common.findings.Sentence` ("—" without a pair)."""
    if math.isinf(break_even_pct):
        return say(msg("robust: no premium makes the PCIe system meet the target"))
    if math.isnan(break_even_pct):
        return say(msg("robust: the NVLink system cannot run it either (chapter 4 says why)"))
    if not charges:
        return "—"
    median = float(pd.Series(charges).median())
    own = [verdict(break_even_pct, c, band_pct) for c in charges]
    differ = sum(v != verdict(break_even_pct, median, band_pct) for v in own)
    if not differ:
        return say(msg("robust: all {n} pairs agree"), n=len(charges))
    return say(msg("sensitive to the offer: {differ} of {n} pairs differ; the answer flips at a premium of "
                   "{premium} %"), differ=differ, n=len(charges), premium=Number(shown(break_even_pct), ".0f"))


def decision_table(table: PriceTable | None = None, cal: Calibration | None = None) -> pd.DataFrame:
    """One row per named workload: ``workload``, ``title``, ``kind``, ``nvlink_system``, ``pcie_system``,
    ``break_even_premium_pct`` (inf: the PCIe system cannot run it), ``charged_premium_pct`` (median; NaN:
    no pair in the file), ``charged_pairs``, ``error_band_pct`` (the model's out-of-sample error for the
    kind that a verdict is weighed against, :attr:`multigpu.evidence.pcieside.SideErrors.band_pct`),
    ``nvswitch_error_pct`` and ``pcie_error_pct`` (each side's own held-out error, %, NaN where none is held
    out), ``verdict`` (:data:`VERDICTS`), ``confidence`` and ``chapter`` (the page that shows the work)."""
    table = prices.resolve(table)
    chosen = pair(table)
    value = premium.interconnect_value(chosen.nvlink_system, chosen.pcie_system, cal=cal)
    sides = pcieside.verdict_errors()
    rows = []
    for r in value.to_dict("records"):
        w = workloads.workload(r["workload"])
        errs = sides[BAND[w.kind]]
        band = errs.band_pct
        be = float(r["break_even_premium_pct"])
        rows.append({"workload": w.id, "title": w.title, "kind": w.kind, "nvlink_system": chosen.nvlink_system,
                     "pcie_system": chosen.pcie_system, "break_even_premium_pct": be,
                     "charged_premium_pct": chosen.median_pct, "charged_pairs": len(chosen.charged_pct),
                     "error_band_pct": band, "nvswitch_error_pct": errs.nvswitch_pct,
                     "pcie_error_pct": errs.pcie_pct, "verdict": verdict(be, chosen.median_pct, band),
                     "confidence": confidence(be, chosen.charged_pct, band), "chapter": CHAPTER[w.kind]})
    return pd.DataFrame(rows)


#: The training stacks the stack comparison sets side by side (:func:`stack_effect`): those with kernels of
#: their own (``data/stack_efficiency.csv``).
COMPARED_STACKS = ("megatron", "nemo", "pytorch-fsdp")


def stack_effect(table: PriceTable | None = None, cal: Calibration | None = None) -> pd.DataFrame:
    """How the training stack moves each training workload's answer, on the decision table's pair of systems:
    one row per workload and stack of :data:`COMPARED_STACKS`: ``workload``, ``stack``, ``pcie_layout`` (the
    fastest layout on the PCIe server under that stack), ``break_even_premium_pct`` and ``verdict`` (against
    the premium charged and the error band, as :func:`decision_table` weighs them)."""
    table = prices.resolve(table)
    chosen = pair(table)
    band = pcieside.verdict_errors()[BAND["train"]].band_pct
    ids = [w for w in workloads.workloads_table() if workloads.workload(w).kind == "train"]
    rows = []
    for stack in COMPARED_STACKS:
        value = premium.interconnect_value(chosen.nvlink_system, chosen.pcie_system, ids, cal=cal, stack=stack)
        for r in value.to_dict("records"):
            be = float(r["break_even_premium_pct"])
            rows.append({"workload": r["workload"], "stack": stack, "pcie_layout": r["pcie_layout"],
                         "break_even_premium_pct": be, "verdict": verdict(be, chosen.median_pct, band)})
    return pd.DataFrame(rows)


#: What a workload does, as the bottom line names it: (kind, training method) -> activity.
ACTIVITY = {("train", "pretrain"): msg("pre-training"), ("train", "full"): msg("fine-tuning"),
            ("train", "lora"): msg("fine-tuning"), ("serve", "pretrain"): msg("serving")}
#: The bottom line's parts, in order, and the verdicts each gathers.
BOTTOM_PARTS = ((msg("**rent the NVSwitch board** for {what}"), ("NVLink-class cheaper", "PCIe cannot run it")),
                (msg("**rent the PCIe server** for {what}"), ("PCIe cheaper",)),
                (msg("**too close to call** for {what}"), ("too close to call",)),
                (msg("**neither runs** {what}"), ("neither runs it",)))


def _activities(frame: pd.DataFrame) -> Finding:
    """The workloads of ``frame`` as a reader names them: each activity with the models it covers, e.g.
    "serving Llama 3.1 70B and Mixtral 8x7B, and fine-tuning Llama 3.1 70B"."""
    groups: dict[str, list[str]] = {}
    for workload_id in frame["workload"]:
        w = workloads.workload(workload_id)
        activity = ACTIVITY[(w.kind, w.method if w.kind == "train" else "pretrain")]
        name = models.model(w.model).name
        if name not in groups.setdefault(activity, []):
            groups[activity].append(name)
    found = tuple(Finding.of(msg("{activity} {models}"), activity=Word(activity), models=and_list(tuple(names)))
                  for activity, names in groups.items())
    if len(found) == 1:
        return found[0]
    return Finding.of(msg("{first}, and {last}"), first=Items(found[:-1], msg(", ")), last=found[-1])


def bottom_line(decided: pd.DataFrame) -> Finding:
    """The book's answer in one sentence, from :func:`decision_table`: at the premium the file's providers charge,
    which system to rent for which workloads (the wiring effect: the same GPU on two wirings), each workload named
    by what it does and its model."""
    first = decided.iloc[0]
    names = {"nvlink": _name(first["nvlink_system"]), "pcie": _name(first["pcie_system"])}
    parts = tuple(Finding.of(message, what=_activities(decided[decided["verdict"].isin(verdicts)]))
                  for message, verdicts in BOTTOM_PARTS if decided["verdict"].isin(verdicts).any())
    if not first["charged_pairs"]:
        return Finding.of(msg("The price file charges no premium for the {nvlink} over the {pcie}, so no verdict is "
                              "priced; chapter 4's calculator takes your own prices."), **names)
    return Finding.of(msg("At the {pct:.0f} % more per GPU-hour that these providers charge for the {nvlink} than "
                          "for the {pcie}, the same GPU wired two ways: {parts}."), pct=shown(float(first["charged_premium_pct"])),
                      parts=Items(parts, msg("; ")), **names)


def summary(decided: pd.DataFrame, size_lines: pd.DataFrame) -> list[Finding]:
    """The introduction's five lines (Markdown findings) from :func:`decision_table` and the guide's training
    size lines (:func:`multigpu.evidence.guide.training_size_lines`): :func:`summary_findings` with the size
    line (:func:`size_line`) fourth."""
    train, serve, charged, error = summary_findings(decided)
    return [train, serve, charged, size_line(size_lines), error]


def summary_findings(decided: pd.DataFrame) -> list[Finding]:
    """The introduction's lines on training, on serving, on the premium charged and on how sure the verdicts are,
    as findings (:mod:`multigpu.common.findings`), from :func:`decision_table`."""
    first = decided.iloc[0]
    train, serve = decided[decided["kind"] == "train"], decided[decided["kind"] == "serve"]
    return [_line_kind(train, "train"), _line_kind(serve, "serve"), _line_charged(first), _line_error(decided)]


def _count(frame: pd.DataFrame) -> Items:
    counts = frame["verdict"].value_counts()
    return Items(tuple(Finding.of(msg("{verdict} for {n}"), verdict=Word(v), n=int(counts[v]))
                       for v in VERDICTS if v in counts))


def _span(values: pd.Series) -> Finding:
    values = values.dropna()  # workloads neither system runs have no premium
    finite = values[~values.isin([math.inf])]
    if not len(finite):
        return Finding.of(msg("unbounded"))
    span = Finding.of(msg("{low:.0f} to {high:.0f} %"), low=shown(float(finite.min())), high=shown(float(finite.max())))
    if len(finite) < len(values):
        return Finding.of(msg("{span}{unbounded}"), span=span,
                          unbounded=Finding.of(msg(" (unbounded where PCIe cannot run it)")))
    return span


#: The summary's line per workload kind: (lead, what the break-even premium is compared with).
KIND_LINES = {"train": (msg("Training"), msg("the NVLink-class board is worth {span} more per GPU-hour than the PCIe "
                                             "server")),
              "serve": (msg("Serving at a per-user speed floor"), msg("it is worth {span}"))}


def _line_kind(frame: pd.DataFrame, kind: str) -> Finding:
    """The summary's line for one workload kind: the span of break-even premiums and the verdicts' counts."""
    lead, body = KIND_LINES[kind]
    if frame.empty:
        return Finding.of(msg("**{lead}:** no named workload."), lead=Word(lead))
    return Finding.of(msg("**{lead}:** {body} ({n} workloads; {counts})."), lead=Word(lead),
                      body=Finding.of(body, span=_span(frame["break_even_premium_pct"])), n=len(frame),
                      counts=_count(frame))


def _line_charged(row: Any) -> Finding:
    names = {"nvlink": _name(row["nvlink_system"]), "pcie": _name(row["pcie_system"])}
    if not row["charged_pairs"]:
        return Finding.of(msg("**Premium charged:** the price file has no same-provider pair of {nvlink} and {pcie} "
                              "offers, so no verdict can be priced."), **names)
    return Finding.of(msg("**Premium charged:** a median {pct:.0f} % over {pairs} same-provider, same-pricing-type "
                          "pairs of {nvlink} and {pcie} offers."), pct=shown(float(row["charged_premium_pct"])),
                      pairs=int(row["charged_pairs"]), **names)


def _name(system_id: str) -> Name:
    return Name(catalog.system(system_id).name)


def size_line(lines: pd.DataFrame) -> Finding:
    """The summary's line on the guide's training size lines."""
    if lines.empty:
        return Finding.of(msg("The price file has no comparable offers to draw it from."))
    return Finding.of(msg("For training, by model size: {lines}."), lines=guide.lines_phrase(lines).value)


def _line_error(decided: pd.DataFrame) -> Finding:
    """The summary's line on how sure the verdicts are: the band each kind's verdicts are weighed against, and
    what it rests on (:func:`sides_finding`)."""
    kinds = decided.drop_duplicates("kind")["kind"]
    errs = pcieside.verdict_errors()
    parts = Items(tuple(Finding.of(msg("{pct:.0f} % for {band}"), pct=shown(errs[BAND[k]].band_pct),
                                   band=Word(BAND[k])) for k in kinds), msg(" and "))
    sides = Items(tuple(sides_finding(errs[BAND[k]]) for k in kinds), msg(" "))
    return Finding.of(msg("**How sure:** a verdict is called only when the premiums differ by more than the model's "
                          "median error on published results it was not fitted on: {parts}. {sides}"),
                      parts=parts, sides=sides)


#: What a kind's band rests on (:attr:`multigpu.evidence.pcieside.SideErrors.basis`), as the summary says it.
BASIS = {"ratio": msg("the band is the error of the ratio itself"),
         "nvswitch": msg("fewer than {least} held-out pairs score the ratio yet, so the band is the NVSwitch side's "
                         "error")}


def sides_finding(errs: pcieside.SideErrors) -> Finding:
    """One sentence on a kind's held-out errors: each side's (median |error|, runs), the ratio's (pairs) where
    pairs are measured, and what the band rests on."""
    values = {"band": Word(errs.kind), "nv": shown(errs.nvswitch_pct), "nv_n": errs.nvswitch_points,
              "basis": Finding.of(BASIS[errs.basis], least=pcieside.MIN_PAIRS)}
    if not errs.pcie_points:
        return Finding.of(msg("In {band}, the NVSwitch side misses by {nv:.0f} % ({nv_n} runs); {basis}."), **values)
    values.update(pc=shown(errs.pcie_pct), pc_n=errs.pcie_points)
    if not errs.ratio_pairs:
        return Finding.of(msg("In {band}, the NVSwitch side misses by {nv:.0f} % ({nv_n} runs) and the PCIe side by "
                              "{pc:.0f} % ({pc_n} runs); {basis}."), **values)
    return Finding.of(msg("In {band}, the NVSwitch side misses by {nv:.0f} % ({nv_n} runs), the PCIe side by "
                          "{pc:.0f} % ({pc_n} runs) and the ratio of the two by {ratio:.0f} % ({pairs} pairs); "
                          "{basis}."), ratio=shown(errs.ratio_pct), pairs=errs.ratio_pairs, **values)
