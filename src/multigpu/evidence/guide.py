"""The selection guide of chapter 5: which interconnect class is cheapest, by model size and workload.

For every model of :data:`MODELS` (1B to 405B parameters) the guide runs the
recommender (:mod:`multigpu.market.recommend`) on two workloads with a given price
table (None: the packaged one):

- **training**: :data:`TOKENS_PER_PARAM` tokens per parameter (Chinchilla's
  compute-optimal budget), to finish within :data:`DEADLINE_DAYS` days on at
  most :data:`MAX_GPUS` GPUs;
- **real-time serving**: :data:`SERVE` (the NVIDIA blog's 8K-in / 256-out
  query at 30 tokens/s per user, 10 queries per second).

Each option gets a *guide class* (:func:`guide_class`), the interconnect a
buyer chooses between: PCIe, NVLink-bridged pairs, one NVSwitch (or NVLink
mesh) node, or NVLink domains joined over a scale-out network (several nodes,
or one rack-scale NVL72 domain). :func:`decisions` picks, per model, workload
and pricing type, the cheapest feasible option (the smallest within
:data:`TIE_PCT` % of the cheapest, since a job on fewer instances at the same
cost is the better buy) and records the cheapest option of the other side
(PCIe or NVLink-class) for comparison; :func:`thresholds` finds the model
size from which an NVLink class wins at every larger size (the article's C26
asks whether it is 10B); :func:`flip_scales` gives the price scale at which
the choice would flip. The chapter's figures and prose are drawn from these
by :mod:`multigpu.book.ch05_guide`.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.common.findings import Finding, Items, Number, Sentence, Word, and_list, msg
from multigpu.compute import models
from multigpu.evidence import intervals
from multigpu.hardware import catalog
from multigpu.market import cost, prices, recommend, search
from multigpu.market.prices import PriceTable

#: Models of the guide, smallest first (ids of data/models.csv).
MODELS = ("llama3.2-1b", "llama3.2-3b", "llama3.1-8b", "qwen2.5-14b", "llama3.1-70b", "gpt3-175b", "llama3.1-405b")
#: Training tokens per parameter: the compute-optimal budget of Chinchilla (Hoffmann et al. 2022).
TOKENS_PER_PARAM = 20
#: A training job must finish within this many days (about a quarter).
DEADLINE_DAYS = 90
#: The most GPUs a training option may rent (2,048 8-GPU nodes, the scale of Llama 3 405B's pre-training).
MAX_GPUS = 16384
#: The serving target: the NVIDIA blog's query and per-user floor, at 10 queries per second.
SERVE = {"tokens_per_s_per_user": 30.0, "requests_per_s": 10.0, "input_tokens": 8192, "output_tokens": 256}
#: Options within this many per cent of the cheapest count as tied; the one with the fewest GPUs is chosen.
TIE_PCT = 1.0
#: Guide classes, from the least to the most interconnect.
CLASSES = ("PCIe", "NVLink bridge", "GPU mesh node", "NVSwitch node", "multi-node / NVL72")
NVLINK_GUIDE_CLASSES = CLASSES[1:]
KIND_TITLES = {"train": "training", "serve": "real-time serving"}
#: Unit-bearing column names of a cost in the chapter's tables.
COST_LABEL = {"train": "cost_usd_per_job", "serve": "cost_usd_per_1M_tokens"}


def guide_class(row: Any) -> str:
    """The guide class of an option (a row of :func:`multigpu.market.recommend.train` or ``serve``).

    PCIe-only boxes are "PCIe" however many of them the job rents (they talk over the scale-out network
    too, but have no NVLink to choose); NVLink-bridged boxes are "NVLink bridge"; one instance of at most 8
    GPUs is an "NVSwitch node" or a "GPU mesh node" (point-to-point NVLink or Infinity Fabric: the system's
    class in :func:`multigpu.market.cost.interconnect_class`, as chapter 4 labels it), and a training option
    renting several (joined by InfiniBand or Ethernet), or an NVLink domain larger than 8 GPUs, is "multi-node /
    NVL72". A serving option's instances are replicas that never talk to each other (each copy of the model runs
    inside one instance), so renting several keeps the class of one.
    """
    cls = row["interconnect_class"]
    if cls == cost.PCIE_CLASS:
        return "PCIe"
    if cls == "NVLink bridge":
        return "NVLink bridge"
    instances = row["instances"]
    serving = "tpot_ms" in row
    multi = not serving and instances is not None and not _isna(instances) and int(instances) > 1
    if multi or catalog.system(row["system"]).gpus_per_node > 8:
        return "multi-node / NVL72"
    return f"{cls} node"


def _isna(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def training_tokens(model_id: str) -> float:
    """:data:`TOKENS_PER_PARAM` x the model's parameters."""
    return TOKENS_PER_PARAM * models.model(model_id).params_total


def options(model_id: str, kind: str, table: PriceTable | None = None, serve: dict[str, Any] | None = None,
            cal: Calibration | None = None, tokens_scale: float = 1.0) -> pd.DataFrame:
    """The recommender's ranked options for the guide's workload of ``kind`` (train or serve), with a
    ``guide_class`` column and each feasible option's 90 % prediction interval
    (:func:`multigpu.evidence.intervals.option_bounds`); ``serve`` overrides entries of :data:`SERVE`;
    ``tokens_scale`` multiplies the training tokens (a shorter or longer job under the same deadline)."""
    if kind == "train":
        out = recommend.train(model_id, tokens_scale * training_tokens(model_id), table, max_gpus=MAX_GPUS,
                              deadline_h=DEADLINE_DAYS * 24, cal=cal)
    elif kind == "serve":
        target = dict(SERVE, **(serve or {}))
        out = recommend.serve(model_id, target["tokens_per_s_per_user"], target["requests_per_s"], table,
                              input_tokens=target["input_tokens"], output_tokens=target["output_tokens"],
                              max_gpus=MAX_GPUS, cal=cal)
    else:
        raise ValueError(f"kind '{kind}': expected train or serve")
    out = intervals.option_bounds(out)
    attrs = dict(out.attrs)
    out = out.assign(guide_class=[guide_class(r) for r in out.to_dict("records")])
    out.attrs.update(attrs)
    return out


def cost_column(kind: str) -> str:
    """The column a workload's options are costed in: USD per job, or USD per million output tokens."""
    return "cost_usd" if kind == "train" else "cost_per_million_tokens_usd"


def cost_unit(kind: str) -> str:
    """The unit of :func:`cost_column` for ``kind`` (train or serve), as the chapter writes it."""
    return "USD per job" if kind == "train" else "USD per 1M output tokens"


def choose(frame: pd.DataFrame, kind: str) -> dict[str, Any] | None:
    """The guide's pick among feasible options: the fewest GPUs within :data:`TIE_PCT` % of the cheapest
    (then the cheapest, then the rank). None if no option is feasible."""
    ok = frame[frame["feasible"]]
    if ok.empty:
        return None
    column = cost_column(kind)
    floor = ok[column].min()
    tied = ok[ok[column] <= floor * (1 + TIE_PCT / 100)]
    return tied.sort_values(["gpus", column, "rank"], kind="stable").iloc[0].to_dict()


def pricing_types(table: PriceTable | None = None) -> list[str]:
    """The pricing types of the price file, in the order of :data:`multigpu.market.prices.PRICING`."""
    present = set(cost.offers(table)["pricing"])
    return [p for p in prices.PRICING if p in present]


DECISION_COLUMNS = ("model", "params_B", "kind", "pricing", "guide_class", "provider", "instance", "gpu",
                    "instances", "gpus", "layout", "tp", "exposed_comm_pct", "time_h", "time_h_lo", "time_h_hi",
                    "cost", "cost_lo", "cost_hi", "cost_unit",
                    "pcie_cost", "nvlink_cost", "nvlink_class", "nvlink_over_pcie", "feasible_options",
                    "pcie_reason")


def decisions(table: PriceTable | None = None, models: tuple[str, ...] = MODELS,
              kinds: tuple[str, ...] = ("train", "serve"), serve: dict[str, Any] | None = None,
              cal: Calibration | None = None) -> pd.DataFrame:
    """Per model, workload kind and pricing type of the price file: the guide's pick (:func:`choose`) and
    the cheapest feasible PCIe and NVLink-class options' costs (``nvlink_over_pcie`` below 1: NVLink cheaper;
    NaN where one side has no feasible option). Columns :data:`DECISION_COLUMNS`; ``time_h`` (the job's
    hours) and ``exposed_comm_pct`` are for training only; ``serve`` overrides entries of :data:`SERVE`."""
    table = prices.resolve(table)
    rows = []
    for kind in kinds:
        for model_id in models:
            frame = options(model_id, kind, table, serve, cal=cal)
            for pricing in pricing_types(table):
                part = frame[frame["pricing"] == pricing]
                rows.append(_decision_row(model_id, kind, pricing, part))
    return pd.DataFrame(rows, columns=list(DECISION_COLUMNS))


def _decision_row(model_id: str, kind: str, pricing: str, part: pd.DataFrame) -> dict[str, Any]:
    column = cost_column(kind)
    pick = choose(part, kind)
    ok = part[part["feasible"]].sort_values([column, "rank"], kind="stable")
    pcie = ok[ok["guide_class"] == "PCIe"]
    nvl = ok[ok["guide_class"] != "PCIe"]
    row = {"model": model_id, "params_B": models.model(model_id).params_total / 1e9, "kind": kind,
           "pricing": pricing, "guide_class": "none feasible", "provider": None, "instance": None, "gpu": None,
           "instances": None, "gpus": None, "layout": None, "tp": None, "exposed_comm_pct": math.nan,
           "time_h": math.nan, "time_h_lo": math.nan, "time_h_hi": math.nan, "cost": math.nan, "cost_lo": math.nan,
           "cost_hi": math.nan,
           "cost_unit": cost_unit(kind), "pcie_cost": float(pcie[column].iloc[0]) if len(pcie) else math.nan,
           "nvlink_cost": float(nvl[column].iloc[0]) if len(nvl) else math.nan,
           "nvlink_class": choose(nvl, kind)["guide_class"] if len(nvl) else None, "feasible_options": len(ok),
           "pcie_reason": _pcie_reason(part, kind)}
    row["nvlink_over_pcie"] = row["nvlink_cost"] / row["pcie_cost"]
    if pick is not None:
        row.update(guide_class=pick["guide_class"], provider=pick["provider"], instance=pick["instance"],
                   gpu=pick["gpu"], instances=int(pick["instances"]), gpus=int(pick["gpus"]), layout=pick["layout"],
                   tp=int(pick["tp"]),
                   exposed_comm_pct=float(pick["exposed_comm_pct"]) if kind == "train" else math.nan,
                   cost=float(pick[column]), cost_lo=float(pick[f"{column}_lo"]), cost_hi=float(pick[f"{column}_hi"]))
        if kind == "train":
            row.update({f"time_h{end}": float(pick[f"time_h{end}"]) for end in ("", "_lo", "_hi")})
    return row


def _pcie_reason(part: pd.DataFrame, kind: str) -> str | None:
    """Why no PCIe option of ``part`` is feasible: "misses a limit" (one runs, past the deadline or the GPU
    limit), else "too slow" or "does not fit"; None if one is feasible or the part has no PCIe offer."""
    pcie = part[part["guide_class"] == "PCIe"]
    if pcie.empty or pcie["feasible"].any():
        return None
    if pcie[cost_column(kind)].notna().any():
        return "misses a limit"
    kinds = {search.reason_kind(reason) for reason in pcie["reason"]}
    for key in ("too slow", "does not fit"):
        if key in kinds:
            return key
    return "cannot run"


def training_size_lines(table: PriceTable | None = None, cal: Calibration | None = None) -> pd.DataFrame:
    """:func:`thresholds` of the guide's training decisions: per pricing type, the model size from which an
    NVLink class is the cheapest way to train. Chapters 4 and 5 and claim C26 all read this one answer."""
    return thresholds(decisions(table, kinds=("train",), cal=cal))


def length_picks(model_id: str, scales: tuple[float, ...], table: PriceTable | None = None,
                 cal: Calibration | None = None) -> pd.DataFrame:
    """The guide's training pick for ``model_id`` at each multiple of its token budget (``scales``), per
    pricing type: columns ``tokens_scale``, ``pricing``, ``guide_class``, ``nvlink_over_pcie``."""
    table = prices.resolve(table)
    rows = []
    for scale in scales:
        frame = options(model_id, "train", table, cal=cal, tokens_scale=scale)
        for pricing in pricing_types(table):
            row = _decision_row(model_id, "train", pricing, frame[frame["pricing"] == pricing])
            rows.append({"tokens_scale": scale, "pricing": pricing, "guide_class": row["guide_class"],
                         "nvlink_over_pcie": row["nvlink_over_pcie"]})
    return pd.DataFrame(rows, columns=["tokens_scale", "pricing", "guide_class", "nvlink_over_pcie"])


def size_table(decided: pd.DataFrame, kind: str = "train") -> pd.DataFrame:
    """Per model of ``decided`` (:func:`decisions`) and pricing type: the cheapest NVLink-class option's cost
    over the cheapest PCIe option's (below 1: NVLink cheaper; empty where a side has no feasible option),
    one column per pricing type, ``params_B`` first."""
    part = decided[decided["kind"] == kind]
    if part.empty:
        return pd.DataFrame(columns=["model", "params_B"])
    order = list(dict.fromkeys(part["pricing"]))
    wide = part.pivot(index=["model", "params_B"], columns="pricing", values="nvlink_over_pcie")[order]
    wide = wide.reset_index().sort_values("params_B", kind="stable").reset_index(drop=True)
    wide.columns.name = None
    return wide.rename(columns={p: f"{p}: NVLink / PCIe cost" for p in order})


def thresholds(table: pd.DataFrame) -> pd.DataFrame:
    """Per workload kind and pricing type of :func:`decisions`: the smallest model size (``threshold_B``)
    from which the pick is an NVLink class at every larger size (None: PCIe wins at the largest size, or
    nothing is feasible there), ``below_B`` the largest size under it, and ``text``, a phrase for prose."""
    rows = []
    for (kind, pricing), part in table.groupby(["kind", "pricing"], sort=False):
        part = part.sort_values("params_B", kind="stable")
        decided = part[part["guide_class"] != "none feasible"]
        nvlink = decided["guide_class"].isin(NVLINK_GUIDE_CLASSES).tolist()
        sizes = decided["params_B"].tolist()
        threshold = None
        for i in range(len(sizes)):
            if all(nvlink[i:]):
                threshold = sizes[i]
                break
        below = [s for s in sizes if threshold is not None and s < threshold]
        below_B = max(below) if below else None
        rows.append({"kind": kind, "pricing": pricing, "threshold_B": threshold, "below_B": below_B,
                     "models_decided": len(sizes), "text": Sentence(_line(sizes, threshold, below_B))})
    return pd.DataFrame(rows, columns=["kind", "pricing", "threshold_B", "below_B", "models_decided", "text"])


#: The size line where no model has a feasible option.
NO_LINE = Sentence(Finding.of(msg("no model has a feasible option")))


def _line(sizes: list[float], threshold: float | None, below_B: float | None) -> Finding:
    """One size line of :func:`thresholds` as a finding (sizes in billions of parameters)."""
    if not sizes:
        return NO_LINE.value
    if threshold is None:
        return Finding.of(msg("PCIe is still the pick at {size}B, the largest size with a feasible option"),
                          size=Number(sizes[-1], ".1f"))
    if below_B is None:
        return Finding.of(msg("an NVLink class is the pick from the smallest model ({size}B) up"),
                          size=Number(threshold, ".1f"))
    return Finding.of(msg("the line falls between {below}B and {threshold}B"), below=Number(below_B, ".1f"),
                      threshold=Number(threshold, ".1f"))


def lines_phrase(limits: pd.DataFrame) -> Sentence:
    """Size lines of :func:`thresholds` (one kind of workload) as one phrase, each distinct line once with the
    pricing types it holds for: "at on-demand and spot prices an NVLink class is the pick ...; at reserved
    prices the line falls between 70.6B and 174.6B"."""
    groups: dict[str, tuple[Finding, list[str]]] = {}
    for pricing, text in zip(limits["pricing"], limits["text"]):
        groups.setdefault(text, (text.value, []))[1].append(pricing)
    return Sentence(Items(tuple(
        Finding.of(msg("at {types} prices {text}"), types=and_list(tuple(Word(p) for p in types)), text=line)
        for line, types in groups.values()), msg("; ")))


def flip_scales(table: pd.DataFrame) -> pd.DataFrame:
    """Where both sides are feasible: the factor by which every PCIe-class price must be multiplied for the
    cheapest PCIe option to cost what the cheapest NVLink-class option costs (below 1 where NVLink wins:
    how far PCIe prices must fall; above 1 where PCIe wins: how far they may rise). Costs are linear in
    price, so this is the NVLink / PCIe cost ratio; a PCIe price cut of ``(1 - scale) x 100`` % flips it."""
    both = table.dropna(subset=["nvlink_over_pcie"])
    out = both[["model", "params_B", "kind", "pricing", "pcie_cost", "nvlink_cost", "nvlink_class",
                "nvlink_over_pcie"]].rename(columns={"nvlink_over_pcie": "pcie_price_scale_to_flip"})
    out = out.assign(cheaper=["NVLink class" if s < 1 else "PCIe" for s in out["pcie_price_scale_to_flip"]])
    return out.reset_index(drop=True)


def scale_prices(table: PriceTable | None = None, factor: float = 1.0,
                 classes: tuple[str, ...] = (cost.PCIE_CLASS,)) -> PriceTable:
    """The price table with the prices of every offer of the given interconnect classes (as
    :func:`multigpu.market.cost.interconnect_class` names them) multiplied by ``factor``."""
    table = prices.resolve(table)
    systems = {s for s in table.offers["system"] if cost.interconnect_class(s) in classes}
    return table.scaled(factor, frozenset(systems))


def class_costs(model_ids: tuple[str, ...], kind: str, pricing: str, table: PriceTable | None = None,
                cal: Calibration | None = None) -> pd.DataFrame:
    """Per model, the cheapest feasible option of each guide class under one pricing type: model, params_B,
    guide_class, cost, gpu, instances (only classes with a feasible option)."""
    rows = []
    column = cost_column(kind)
    for model_id in model_ids:
        frame = options(model_id, kind, table, cal=cal)
        ok = frame[frame["feasible"] & (frame["pricing"] == pricing)].sort_values([column, "rank"], kind="stable")
        for cls, part in ok.groupby("guide_class", sort=False):
            top = part.iloc[0]
            rows.append({"model": model_id, "params_B": models.model(model_id).params_total / 1e9,
                         "guide_class": cls, "cost": float(top[column]), "gpu": top["gpu"],
                         "instances": int(top["instances"])})
    return pd.DataFrame(rows, columns=["model", "params_B", "guide_class", "cost", "gpu", "instances"])


# ------------------------------------------------------------------ tables for the chapter


def reference_pricing(table: PriceTable | None = None) -> str:
    """The pricing type the chapter's single-market tables use: on-demand if the file has it, else its first."""
    types = pricing_types(table)
    return "on-demand" if "on-demand" in types else types[0]


def cheapest(frame: pd.DataFrame, kind: str, pricing: str | None = None) -> dict[str, Any] | None:
    """The cheapest feasible option (exactly, no tie rule) of ``frame``, optionally of one pricing type."""
    ok = frame[frame["feasible"]]
    if pricing is not None:
        ok = ok[ok["pricing"] == pricing]
    if ok.empty:
        return None
    return ok.sort_values([cost_column(kind), "rank"], kind="stable").iloc[0].to_dict()


def summary(table: pd.DataFrame, pricing: str, kind: str) -> pd.DataFrame:
    """The decisions of one pricing type and workload kind as the chapter shows them: model, size, the
    pick's class, GPU, instances x GPUs, layout, days (training), cost (USD per job, or per million output
    tokens), each with its 90 % prediction interval (``<column>_lo``, ``<column>_hi``), and the cheapest NVLink-class
    option's cost over the cheapest PCIe option's."""
    part = table[(table["pricing"] == pricing) & (table["kind"] == kind)]
    rows = []
    for r in part.to_dict("records"):
        picked = r["guide_class"] != "none feasible"
        row = {"model": r["model"], "params_B": round(r["params_B"], 1), "cheapest class": r["guide_class"],
               "gpu": r["gpu"] if picked else "",
               "instances x GPUs": f"{int(r['instances'])} x {int(r['gpus']) // int(r['instances'])}" if picked else "",
               "layout": r["layout"] if picked else ""}
        if kind == "train":
            for end in ("", "_lo", "_hi"):
                row[f"time_days{end}"] = r[f"time_h{end}"] / 24 if picked else math.nan
        for end in ("", "_lo", "_hi"):
            value = r[f"cost{end}"]
            row[f"{COST_LABEL[kind]}{end}"] = (float(round(value)) if kind == "train" else round(value, 2)) \
                if picked else math.nan
        row["NVLink / PCIe cost"] = round(r["nvlink_over_pcie"], 2)
        rows.append(row)
    return pd.DataFrame(rows).set_index("model")


def _round_cost(value: float) -> float:
    if math.isnan(value):
        return value
    return round(value, 2) if value < 100 else float(round(value))


def flip_table(table: pd.DataFrame, pricing: str) -> pd.DataFrame:
    """:func:`flip_scales` of one pricing type as the chapter shows it, indexed by model: size, workload, the
    cheaper side and the PCIe price multiplier at which the two sides cost the same."""
    flips = flip_scales(table)
    flips = flips[flips["pricing"] == pricing]
    out = flips.assign(workload=flips["kind"].map(KIND_TITLES), params_B=flips["params_B"].round(1),
                       nvlink_pick=flips["nvlink_class"])
    out = out.rename(columns={"pcie_price_scale_to_flip": "PCIe price x to flip"}).set_index("model")
    return out[["params_B", "workload", "cheaper", "nvlink_pick", "PCIe price x to flip"]].round(3)


def flip_case(table: pd.DataFrame, pricing: str) -> dict[str, Any] | None:
    """The case of one pricing type where an NVLink class wins by the smallest margin with a feasible PCIe
    option to flip to (the ratio closest to 1 from below); None if there is none."""
    flips = flip_scales(table)
    flips = flips[(flips["pricing"] == pricing) & (flips["pcie_price_scale_to_flip"] < 1)]
    if flips.empty:
        return None
    return flips.sort_values(["pcie_price_scale_to_flip", "params_B"], ascending=[False, True],
                             kind="stable").iloc[0].to_dict()


def flip_demo(model_id: str, kind: str, pricing: str, scale: float, margin: float = 0.02,
              table: PriceTable | None = None, cal: Calibration | None = None) -> pd.DataFrame:
    """The guide's pick (:func:`choose`) for one case with every PCIe price x 1, x ``scale`` (1 + ``margin``)
    and x ``scale`` (1 - ``margin``): with ``scale`` from :func:`flip_scales` and ``margin`` above
    :data:`TIE_PCT`, the pick stays on the NVLink side at the first two and flips to PCIe at the third
    (costs are linear in price)."""
    rows = []
    for factor in (1.0, scale * (1 + margin), scale * (1 - margin)):
        frame = options(model_id, kind, scale_prices(table, factor), cal=cal)
        top = choose(frame[frame["pricing"] == pricing], kind)
        rows.append({"PCIe price x": round(factor, 3), "cheapest class": top["guide_class"], "gpu": top["gpu"],
                     "instances x GPUs": f"{int(top['instances'])} x {int(top['gpus_per_instance'])}",
                     COST_LABEL[kind]: _round_cost(float(top[cost_column(kind)]))})
    return pd.DataFrame(rows).set_index("PCIe price x")
