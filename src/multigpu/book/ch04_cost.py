"""Chapter 4 (cost-benefit): its tables, figures and the facts its prose cites, in both editions' languages.

Tables and figures draw on :mod:`multigpu.market.cost`, :mod:`multigpu.market.premium`
and :mod:`multigpu.market.sensitivity`. Every number or sentence the chapter's
Markdown cites is built here, by one ``*_facts`` function per section, from the
price table the notebook passes down (``inputs.price_table()``) and the
calibration (None: the shipped one); the notebook glues each dict with
:func:`multigpu.book.glue.glue_all`. Nothing here reads the environment.

Both editions from one execution (:mod:`multigpu.book.lang`): each figure function draws in the current
language (the notebook shows both with ``plotting.show_both``), each ``*_html`` table function makes its table
in the current language (:func:`show_tables` shows both), and every text fact is there in English and, as
``<name>_zh``, in Chinese. The Chinese edition states money in CNY first with USD alongside ("¥69.3（$10.3）",
a CNY column before each USD column, CNY axes), converted by the price table's dated FX table
(:meth:`multigpu.market.prices.PriceTable.from_usd`); the English edition keeps USD only.

Units: prices in USD per GPU-hour unless a column says otherwise (:func:`market_table`
also gives them in the offer's currency; ``_cny`` facts and columns are CNY); training costs in USD per job,
serving costs in USD per million output tokens; premiums in per cent (``_pct``); times in
hours (``_h``) or days; ratios and factors dimensionless.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pandas as pd

from multigpu.book import claim_values, glue, lang, tables, vocabulary
from multigpu.book.glue import Facts
from multigpu.book.lang import N_, _
from multigpu.book.money import (  # noqa: F401  (money as the notebook and tests name it)
    DOLLAR,
    LOCAL_CURRENCY,
    fmt,
    fx_sentence,
    in_currency,
    local_name,
    money,
    local_bounds,
    money_columns,
    price,
    price_source,
)
from multigpu.comm.calibration import Calibration
from multigpu.common.numtext import ESTIMATE
from multigpu.compute import efficiency, models
from multigpu.evidence import answer, claims, guide
from multigpu.evidence.claims import cost as cost_claims
from multigpu.evidence.cost import (  # noqa: F401  (the chapter's analysis, as the notebook and tests name it)
    EXERCISE_ON_DEMAND_USD,
    EXERCISE_PCIE_USD,
    EXERCISE_SPOT_USD,
    MARKET_FACTORS,
    SERVE_8B,
    SERVE_70B,
    SERVE_70B_2K,
    TORNADO_PREFERRED,
    TRAIN_8B,
    TRAIN_70B,
    VALUE_PAIRS,
    best_by_class,
    interconnect_values,
    job_summary,
    landscape,
    landscape_summary,
    market_table,
    size_table,
    tornado_workload,
    tornados,
)
from multigpu.market import cost, history, premium, prices, workloads
from multigpu.market.prices import PriceTable


# ------------------------------------------------------------------ the words of the market, as messages
# Values of a fixed vocabulary (not data such as model or provider names) that the tables and sentences show:
# translated with lang.label in the Chinese edition (a value missing here fails the notebook there).

#: Pricing types, interconnect classes, kinds of provider and of workload, the tornado's inputs.
VOCABULARY = (
    N_("on-demand"), N_("spot"), N_("reserved"), N_("community"),
    N_("NVSwitch"), N_("NVLink bridge"), N_("PCIe only"),
    N_("GPU cloud"), N_("hyperscaler"), N_("marketplace"), N_("China IDC lessor"), N_("other"),
    N_("train"), N_("serve"), N_("training"), N_("serving"),
    N_("price of the NVLink offer"), N_("price of the PCIe offer"), N_("utilisation of the NVLink offer"),
    N_("utilisation of the PCIe offer"), N_("compute efficiency (both)"), N_("communication bandwidth (both)"),
    N_("GPU-hours per job"), N_("GPU-hours per 1M output tokens"),
    N_("% of NVLink/PCIe pairs x workloads cheaper per job"), N_("% of NVLink/PCIe pairs x workloads"),
    N_("billion parameters (training size line per pricing type)"), N_("billion parameters"),
    N_("same-provider pairs"), N_("pairs with the cheapest comparable PCIe offer"),
    N_("unbounded (PCIe misses the floor)"),
)
#: The models the stack comparison calls small: up to Qwen2.5 14B, the largest that one node trains without
#: tensor parallelism in the book's workloads.
SMALL_PARAMS = 15e9
#: The introduction's verdicts (:data:`multigpu.evidence.answer.VERDICTS`), as messages.
ANSWER_VERDICTS = (N_("NVLink-class cheaper"), N_("PCIe cheaper"), N_("too close to call"), N_("PCIe cannot run it"),
                   N_("neither runs it"), N_("no pair to price"))
#: The training methods of ``data/cost_workloads.csv`` (a LoRA method keeps its rank: "lora r16").
METHODS = {"pretrain": N_("pretrain"), "full": N_("full fine-tuning")}


def word(text: str) -> str:
    """A word of :data:`VOCABULARY` (or a verdict) in the current language."""
    return lang.label(text)


def offer_name(label: str) -> str:
    """An offer's label ("Provider: instance (pricing)", :func:`multigpu.market.cost.offer_label`) in the
    current language: provider and instance as they are, the pricing type translated."""
    return glue.say(label)


def _joined(items: Iterable[str]) -> str:
    """Items of a list in the current language ("a, b" / "a、b")."""
    return _(", ").join(items)


# ------------------------------------------------------------------ tables


# ------------------------------------------------------------------ the tables in both editions
# Each *_html function makes one of the page's tables in the current language (tables.table_html); the notebook
# shows both editions with show_tables(make, ...). In Chinese a CNY column comes before each USD column.

#: Columns whose cells are words of :data:`VOCABULARY` (or verdicts), translated in Chinese; the rest is data.
LABEL_COLUMNS = claim_values.label_columns("kind", "pricing", "interconnect_class", "cheapest_class",
                                           "provider_type", "factor", "verdict", "stack")
#: The headers of the chapter's tables (:func:`multigpu.book.tables.header` of their columns), as messages:
#: the Chinese edition's headers (a header missing here fails the notebook, not just the catalog check).
TABLE_HEADERS = (
    N_("Workload"), N_("Kind"), N_("Model"), N_("Parameters (billions)"), N_("Method"), N_("GPUs per job"),
    N_("Tokens (billions)"), N_("Seq or in/out tokens"), N_("Floor (tokens/s per user)"), N_("GPU name"), N_("GPU"),
    N_("Interconnect class"), N_("Offers"), N_("Min (CNY per GPU-hour)"), N_("Min (USD per GPU-hour)"),
    N_("Median (CNY per GPU-hour)"), N_("Median (USD per GPU-hour)"), N_("Max (CNY per GPU-hour)"),
    N_("Max (USD per GPU-hour)"), N_("Observed from"), N_("Observed to"), N_("Observed"), N_("Provider type"),
    N_("Provider"), N_("Pricing"), N_("Instance"), N_("NVLink instance"), N_("PCIe instance"),
    N_("NVLink (CNY per GPU-hour)"), N_("NVLink (USD per GPU-hour)"), N_("PCIe (CNY per GPU-hour)"),
    N_("PCIe (USD per GPU-hour)"), N_("Premium (%)"), N_("NVLink system"), N_("PCIe system"), N_("NVLink layout"),
    N_("PCIe layout"), N_("NVLink GPU-hours"), N_("PCIe GPU-hours"), N_("Break-even premium (%)"), N_("Unit"),
    N_("Cheapest"), N_("Cheapest class"), N_("Layout"), N_("Time (h)"), N_("Cost (CNY)"), N_("Cost (USD)"),
    N_("Max cost (CNY)"), N_("Max cost (USD)"), N_("Cost unit"), N_("Feasible offers"),
    N_("On-demand: NVLink / PCIe cost"), N_("Spot: NVLink / PCIe cost"), N_("Reserved: NVLink / PCIe cost"),
    N_("Community: NVLink / PCIe cost"), N_("Price (CNY per GPU-hour)"), N_("Price (USD per GPU-hour)"),
    N_("train-llama3.1-8b (CNY per job)"), N_("serve-llama3.1-70b-30tps (CNY per 1M tokens)"), N_("Factor"),
    N_("Low"), N_("High"), N_("Ratio low"), N_("Ratio base"), N_("Ratio high"), N_("ID"), N_("Verdict"),
    N_("Seed value"), N_("Model value"), N_("Confidence"), N_("Stack"),
)
#: A cost's unit (:func:`job_summary`'s ``cost_unit``) in the Chinese table, whose headers name the currencies.
COST_UNITS = {"USD per job": N_("per job"), "USD per 1M output tokens": N_("per 1M output tokens")}


def show_tables(make: Callable[..., str], *args: Any, **kw: Any) -> None:
    """Display ``make(*args, **kw)`` (a ``*_html`` function of this module) in every language of the book as one
    output (:func:`multigpu.book.lang.editions_html`)."""
    from IPython.display import HTML, display

    display(HTML(lang.editions_html(lang.per_language(lambda: make(*args, **kw)))))


def _html(frame: pd.DataFrame, **kw: Any) -> str:
    """:func:`multigpu.book.tables.table_html` with the chapter's :data:`LABEL_COLUMNS` translated and each
    workload named by its title in the current language, never by its id."""
    if "workload" in frame.columns:
        frame = frame.assign(workload=[vocabulary.workload_title(w) for w in frame["workload"]])
    return tables.table_html(frame, label_columns=LABEL_COLUMNS, **kw)


def _method(method: Any) -> Any:
    """A training method of ``data/cost_workloads.csv`` in the current language (LoRA keeps its rank)."""
    if not isinstance(method, str) or lang.current() == "en":
        return method
    if method.startswith("lora"):
        return "LoRA" + method[len("lora"):]
    return word(METHODS[method]) if method in METHODS else method


def workloads_html() -> str:
    """The book's workloads (:func:`multigpu.market.workloads.workload_frame`), methods in the current language."""
    frame = workloads.workload_frame()
    frame = frame.assign(method=frame["method"].map(_method))
    return _html(frame, key=["workload"], csv_name="ch4-workloads",
                 digits={"params_B": 1, "tokens_B": 0, "floor_tokens_per_s_per_user": 0})


def landscape_html(table: PriceTable, by: tuple[str, ...] = ("gpu_name", "interconnect_class"),
                   csv_name: str = "ch4-price-landscape") -> str:
    """:func:`landscape_summary` by ``by``: lowest, median and highest price per GPU-hour (Chinese: CNY, then USD)."""
    frame = landscape_summary(table, by=by)
    frame, shown = money_columns(frame, [c for c in frame.columns if c not in by], table)
    return _html(frame, key=list(by), columns=shown, csv_name=csv_name, digits={"offers": 0})


def charged_html(table: PriceTable) -> str:
    """The premiums charged by one provider under one pricing type (:func:`multigpu.market.premium.
    charged_premiums`): both prices per GPU-hour (Chinese: CNY, then USD) and the premium (%)."""
    frame, shown = money_columns(premium.charged_premiums(table),
                                 ["nvlink_instance", "interconnect_class", "pcie_instance", "nvlink_usd_per_gpu_hour",
                                  "pcie_usd_per_gpu_hour", "premium_pct"], table)
    return _html(frame, key=["provider", "pricing"], columns=shown, csv_name="ch4-premium-charged",
                 digits={"premium_pct": 1})


def break_even_html(value: pd.DataFrame) -> str:
    """The break-even table (:func:`interconnect_values`, model only): layouts, GPU-hours (model estimates, to
    3 significant figures), premium (%)."""
    return _html(value, key=["workload"], estimates=["nvlink_gpu_hours", "pcie_gpu_hours"], columns=["nvlink_system", "pcie_system", "nvlink_layout", "pcie_layout",
                                                   "nvlink_gpu_hours", "pcie_gpu_hours", "break_even_premium_pct",
                                                   "unit"],
                 csv_name="ch4-break-even", digits={"break_even_premium_pct": 1})


def stack_html(table: PriceTable, cal: Calibration | None = None) -> str:
    """:func:`multigpu.evidence.answer.stack_effect`: each training workload under each compared stack, with the
    PCIe server's layout, the break-even premium (%) and the verdict."""
    frame = answer.stack_effect(table, cal)
    frame = frame.assign(stack=[vocabulary.TRAINING_STACK_NAMES[s] for s in frame["stack"]])
    return _html(frame, key=["workload", "stack"], csv_name="ch4-stacks", digits={"break_even_premium_pct": 0})


def stack_facts(table: PriceTable, cal: Calibration | None = None) -> Facts:
    """How the training stack moves the answer (:func:`multigpu.evidence.answer.stack_effect`): ``st_n``
    (training workloads), ``st_nv_<stack>`` (those NVLink-class cheaper under each compared stack), ``st_same``
    (those whose verdict is the same under every compared stack), ``st_70b_<stack>`` (the 70B pre-training job's
    break-even premium, %), ``st_small_max`` (the largest spread between stacks of the break-even premium of a job
    of a model of at most ``st_small_b`` billion parameters, :data:`SMALL_PARAMS`, points), ``st_fsdp_runs`` (the
    fit-split runs FSDP's kernels rest on). ``<stack>`` is the
    stack's name with ``_`` for ``-`` (``pytorch_fsdp``)."""
    frame = answer.stack_effect(table, cal)
    wide = frame.pivot(index="workload", columns="stack")
    verdicts, premiums = wide["verdict"], wide["break_even_premium_pct"]
    stacks = list(answer.COMPARED_STACKS)
    small = [w for w in premiums.index if models.model(workloads.workload(w).model).params_total <= SMALL_PARAMS]
    spread = premiums.loc[small, stacks].max(axis=1) - premiums.loc[small, stacks].min(axis=1)
    out: dict[str, object] = {"st_n": len(wide), "st_same": int((verdicts[stacks].nunique(axis=1) == 1).sum()),
                              "st_small_max": float(spread.max()), "st_small_b": SMALL_PARAMS / 1e9}
    out["st_fsdp_runs"] = efficiency.stack_rows()[("pytorch-fsdp", "share")].fit_runs
    for stack in stacks:
        key = stack.replace("-", "_")
        out[f"st_nv_{key}"] = int((verdicts[stack] == "NVLink-class cheaper").sum())
        out[f"st_70b_{key}"] = float(premiums.loc[TRAIN_70B, stack])
    return out


def job_summary_html(table: PriceTable, cal: Calibration | None = None) -> str:
    """:func:`job_summary` per workload and pricing type: the cheapest offer and its cost, the dearest feasible
    cost (Chinese: CNY, then USD, the unit column saying per what)."""
    frame = job_summary(table=table, cal=cal)
    if lang.current() != "en":
        frame = frame.assign(cheapest=[offer_name(c) if isinstance(c, str) else c for c in frame["cheapest"]],
                             cost_unit=[word(COST_UNITS.get(u, u)) for u in frame["cost_unit"]])
    frame, shown = money_columns(frame, ["cheapest", "cheapest_class", "layout", "time_h", "cost_usd", "max_cost_usd",
                                         "cost_unit", "feasible_offers", "offers"], table)
    frame = local_bounds(frame, "cost_usd", table)
    return _html(frame, key=["workload", "pricing"], columns=shown, csv_name="ch4-job-summary",
                 ranges=["cost_usd", local_name("cost_usd")],
                 caption=_("Each cost is the cheapest offer's, with its 90 % prediction interval in brackets."),
                 digits={"feasible_offers": 0, "offers": 0},
                 estimates=[c for c in shown if c == "time_h" or c.startswith(("cost_", "max_cost_"))])


def size_html(table: PriceTable, cal: Calibration | None = None) -> str:
    """:func:`size_table`: per model, the NVLink / PCIe cost ratio per pricing type (headers translated)."""
    frame = size_table(table, cal)
    return _html(frame, key=["model"], csv_name="ch4-size-by-model", digits={"params_B": 1})


#: The workloads whose cost the China-market table shows (the columns' headers are messages).
MARKET_WORKLOADS = (TRAIN_8B, SERVE_70B)


def market_html(table: PriceTable, cal: Calibration | None = None) -> str:
    """:func:`market_table` in CNY for :data:`MARKET_WORKLOADS` (prices as quoted, in CNY then USD)."""
    return _html(market_table(LOCAL_CURRENCY, MARKET_WORKLOADS, table, cal), key=["provider", "instance"],
                 csv_name="ch4-china-market")


def tornado_html(index: int, workload_id: str, tornado: pd.DataFrame) -> str:
    """One tornado chart's numbers (:func:`multigpu.market.sensitivity.sensitivity`; ``index`` counts from 0)."""
    return _html(tornado, key=["factor"], columns=["low", "high", "ratio_low", "ratio_base", "ratio_high"], digits=3,
                 csv_name=f"ch4-tornado-{index + 1}",
                 caption=_("Sensitivity of {workload}", workload=vocabulary.workload_title(workload_id)))


def cost_verdicts(table: PriceTable, cal: Calibration | None = None) -> list[claims.Verdict]:
    """The article's cost claims C24 and C26 checked with ``table`` (:mod:`multigpu.evidence.claims.cost`)."""
    return [claims.check(claim_id, claims.Inputs(cal=cal, prices=table)) for claim_id in ("C24", "C26")]


def claims_html(verdicts: Iterable[claims.Verdict]) -> str:
    """The cost claims' table: verdict, the article's value, the model's, unit and confidence, each in the
    current language (:mod:`multigpu.book.claim_values`; the confidence rendered from its finding)."""
    frame = pd.DataFrame([v.to_dict() for v in verdicts])
    frame = frame.assign(confidence=[glue.say(c) for c in frame["confidence"]])
    return _html(frame, key=["id"], columns=["verdict", "seed_value", "model_value", "unit", "confidence"],
                 csv_name="ch4-cost-claims")


# ------------------------------------------------------------------ facts for the prose
# Each function computes its section's numbers once, then its text in every language (glue.per_language:
# ``name`` English, ``name_zh`` Chinese). Money in Chinese text is CNY first, USD alongside (money()).


def price_facts(table: PriceTable) -> Facts:
    """The price file the page uses: ``price_stamp`` (Markdown sentence; in Chinese with the rate every CNY
    amount of the page is converted at, :func:`fx_sentence`), ``n_offers``, ``n_providers``, ``n_gpus``
    (counts), ``observed_from`` and ``observed_to`` (ISO dates, text, the same in both editions)."""
    stamp = table.stamp()

    def text() -> Facts:
        if lang.current() == "en":
            return {"price_stamp": table.stamp_markdown()}
        return {"price_stamp": _("Prices: `{name}` (sha256 {sha}), {offers} offers observed {first} to {last}. Amounts "
                                 "in CNY are {fx}.", name=stamp["name"], sha=stamp["sha256_12"], offers=stamp["offers"],
                                 first=stamp["observed_from"], last=stamp["observed_to"], fx=fx_sentence(table))}

    return glue.per_language(text) | {
        "n_offers": int(stamp["offers"]), "n_providers": int(table.offers["provider"].nunique()),
        "n_gpus": int(table.offers["gpu"].nunique()), "observed_from": stamp["observed_from"],
        "observed_to": stamp["observed_to"]}


def intro_facts(table: PriceTable, cal: Calibration | None = None) -> Facts:
    """The chapter's opening: :func:`price_facts` and ``in_short``, its answer in two sentences (the training and
    serving lines of the introduction's decision table and the premium charged: the first three of
    :func:`multigpu.evidence.answer.summary_findings`, in each language); and the selection guide's training job
    that the size table uses (``guide_tokens_per_param``, ``guide_deadline_days``)."""
    lines = answer.summary_findings(answer.decision_table(table, cal))[:3]
    in_short = glue.per_language(lambda: {"in_short": _("{training} {serving} {charged}", **dict(zip(
        ("training", "serving", "charged"), (glue.render(line) for line in lines))))})
    return price_facts(table) | in_short | {"guide_tokens_per_param": guide.TOKENS_PER_PARAM,
                                            "guide_deadline_days": guide.DEADLINE_DAYS}


def landscape_facts(table: PriceTable) -> Facts:
    """The price landscape: the lowest and highest price per GPU-hour as prose text, ``cheapest_price`` and
    ``dearest_price`` (:func:`price`: "USD 0.19"; Chinese CNY first) with their GPU (``cheapest_gpu``, ``dearest_gpu``) and
    the cheapest one's ``cheapest_pricing`` (text, with ``_zh``); the GPU and interconnect class whose offers span the widest price range (``spread_gpu``,
    text, with ``_zh``), that range as a factor (``spread_x``, highest / lowest price) and its number of offers
    (``spread_offers``)."""
    land = landscape(table)
    lo = land.loc[land["price_per_gpu_hour_usd"].idxmin()]
    hi = land.loc[land["price_per_gpu_hour_usd"].idxmax()]
    summary = landscape_summary(table)
    spread = summary.assign(x=summary["max_usd_per_gpu_hour"] / summary["min_usd_per_gpu_hour"]).sort_values(
        "x", ascending=False, kind="stable").iloc[0]
    out: Facts = {"cheapest_gpu": str(lo["gpu_name"]), "dearest_gpu": str(hi["gpu_name"]),
                  "spread_x": float(spread["x"]), "spread_offers": int(spread["offers"])}
    return out | glue.per_language(lambda: {
        "cheapest_price": price(float(lo["price_per_gpu_hour_usd"]), table),
        "dearest_price": price(float(hi["price_per_gpu_hour_usd"]), table),
        "cheapest_pricing": word(str(lo["pricing"])),
        "spread_gpu": _("{gpu} ({interconnect})", gpu=spread["gpu_name"],
                        interconnect=word(spread["interconnect_class"]))})


def charged_facts(table: PriceTable) -> Facts:
    """The premium charged for NVSwitch over PCIe, the one the decision table weighs (:func:`multigpu.evidence.
    answer.pair`: same provider, same pricing type, the system pair the file prices most often; % per
    GPU-hour, whole per cent as the table shows them): ``charged_sentence`` (how many pairs, lowest, highest
    and median premium) and ``charged_range`` (lowest to highest), both text."""
    chosen = answer.pair(table)
    if not chosen.charged_pct:
        return glue.per_language(lambda: {
            "charged_sentence": _("The file has no such pair, so it does not say what the faster interconnect is "
                                  "charged; the break-even premiums below do not need it, since they come from the "
                                  "model alone."),
            "charged_range": _("this file has no such pair")})
    lo, hi = (answer.shown(f(chosen.charged_pct)) for f in (min, max))
    mid, n = answer.shown(chosen.median_pct), len(chosen.charged_pct)

    def text() -> Facts:
        names = {"nvlink": vocabulary.system_name(chosen.nvlink_system),
                 "pcie": vocabulary.system_name(chosen.pcie_system)}
        return {"charged_sentence": _("Of these, {count} pair {nvlink} offers with {pcie} offers, the comparison "
                                      "the book's answer weighs: premiums from {low:.0f} % to {high:.0f} %, median "
                                      "{median:.0f} %. That is the number to beat.", count=n, low=lo, high=hi,
                                      median=mid, **names),
                "charged_range": _("{low:.0f} % to {high:.0f} %, median {median:.0f} %, in this file", low=lo,
                                   high=hi, median=mid)}

    return glue.per_language(text)


def break_even_facts(table: PriceTable, cal: Calibration | None = None) -> Facts:
    """What the interconnect is worth (:func:`interconnect_values`, model only; premiums in % per GPU-hour):
    ``be_train_min`` / ``be_train_max`` (one-node training on the A100 pair), ``be_train_70b``,
    ``be_serve_8b``, ``be_mesh_max`` (NVSwitch over the H200 mesh, any workload), numbers; as text
    ``be_serve_70b_2k`` ("359 %" or "unbounded"), ``serve_70b_8k`` (the premium, or why PCIe cannot serve),
    the layouts ``train_layout_8b``, ``train_layout_70b`` (the same in both editions), ``serve_layout_8b``, and
    ``be_vs_charged``: the workloads whose break-even premium exceeds every premium ``table`` charges."""
    value = interconnect_values(cal)
    a100 = value[value["nvlink_system"] == VALUE_PAIRS[0][0]].set_index("workload")
    one_node = [w for w in a100.index if workloads.workload(w).kind == "train" and workloads.workload(w).gpus <= 8]
    train = a100.loc[one_node, "break_even_premium_pct"]
    be_8k = float(a100.loc[SERVE_70B, "break_even_premium_pct"])
    be_2k = float(a100.loc[SERVE_70B_2K, "break_even_premium_pct"])
    out: Facts = {
        "be_train_min": float(train.min()), "be_train_max": float(train.max()),
        "be_train_70b": float(a100.loc[TRAIN_70B, "break_even_premium_pct"]),
        "be_serve_8b": float(a100.loc[SERVE_8B, "break_even_premium_pct"]),
        "train_layout_8b": str(a100.loc[TRAIN_8B, "nvlink_layout"]),
        "train_layout_70b": str(a100.loc[TRAIN_70B, "nvlink_layout"]),
        "be_mesh_max": float(value[value["nvlink_system"] == VALUE_PAIRS[1][0]]["break_even_premium_pct"].max()),
    }
    charged = premium.charged_premiums(table)
    top = None if charged.empty else float(charged["premium_pct"].max())
    above = [] if top is None else [w for w, v in zip(a100.index, a100["break_even_premium_pct"]) if v > top]

    def text() -> Facts:
        if top is None:
            vs = _("the price file has no same-provider pair to compare them with")
        else:
            vs = _("the break-even premium exceeds every premium charged for {workloads}",
                   workloads=_joined(f"`{w}`" for w in above) if above else _("none of the workloads"))
        return {
            "be_serve_70b_2k": fmt(be_2k, ".0f", " %"),
            "serve_70b_8k": (_("the break-even premium is {premium:.0f} %", premium=be_8k) if not math.isinf(be_8k)
                             # the model's reason is English: the Chinese says what it means, chapter 3 says why
                             else _("the PCIe box cannot meet the floor at all ({reason})",
                                    reason=a100.loc[SERVE_70B, "pcie_reason"]) if lang.current() == "en"
                             else _("the PCIe box cannot meet the floor at all")),
            "serve_layout_8b": _("{nvlink} on the NVSwitch board, {pcie} on PCIe",
                                 nvlink=a100.loc[SERVE_8B, "nvlink_layout"], pcie=a100.loc[SERVE_8B, "pcie_layout"]),
            "be_vs_charged": vs}

    return out | glue.per_language(text)


def job_facts(table: PriceTable, cal: Calibration | None = None) -> Facts:
    """Cost per job and per million tokens (:func:`job_summary`) at the reference pricing type
    (``job_pricing``, :func:`multigpu.evidence.guide.reference_pricing`), as text: ``cost_8b`` (USD per job, the
    8B pre-training job's cheapest offer; ``cost_8b_zh`` CNY, then USD), ``offer_8b`` (that offer by provider,
    instance and pricing type), ``time_8b_days`` (days), ``class_8b``, ``offer_70b_serve``, ``cost_70b_serve``
    (USD per million output tokens; ``_zh`` CNY, then USD), ``class_70b_serve`` ("n/a" where nothing can run it);
    as numbers: ``job_spread_min`` / ``job_spread_max`` (dearest over cheapest feasible offer of a workload, a
    factor), ``n_cases`` (workload-offer combinations) and ``n_infeasible`` (those that cannot run)."""
    pricing = guide.reference_pricing(table)
    jobs = job_summary(table=table, cal=cal, pricing=pricing).set_index("workload")
    spread = (jobs["max_cost_usd"] / jobs["cost_usd"]).dropna()
    every = cost.cost_table(table=table, cal=cal)
    train, serve = jobs.loc[TRAIN_8B], jobs.loc[SERVE_70B]

    def name(offer: Any) -> str:
        return offer_name(offer) if isinstance(offer, str) else fmt(offer, "s")

    def text() -> Facts:
        return {"job_pricing": word(pricing), "offer_8b": name(train["cheapest"]),
                "offer_70b_serve": name(serve["cheapest"]), "cost_8b": money(train["cost_usd"], table, ESTIMATE),
                "time_8b_days": fmt(train["time_h"] / 24, ".0f"),
                "class_8b": word(train["cheapest_class"]) if isinstance(train["cheapest_class"], str) else fmt(None),
                "cost_70b_serve": money(serve["cost_usd"], table, ESTIMATE),
                "class_70b_serve": (word(serve["cheapest_class"]) if isinstance(serve["cheapest_class"], str)
                                    else fmt(None))}

    return glue.per_language(text) | {
        "job_spread_min": float(spread.min()) if len(spread) else math.nan,
        "job_spread_max": float(spread.max()) if len(spread) else math.nan,
        "n_infeasible": int((~every["feasible"].astype(bool)).sum()), "n_cases": len(every)}


def market_sentence(table: PriceTable, currency: str = "CNY") -> str:
    """How many offers the price table quotes in ``currency``, the FX rate they are converted at (units of
    ``currency`` per USD, with its date; in Chinese the page states it once, :func:`price_facts`) and the lowest
    of them per GPU-hour, in ``currency`` (in Chinese with USD alongside), in the current language."""
    quoted = market_table(currency, (), table)
    if quoted.empty:
        return _("The file has no offer in {currency}.", currency=currency)
    rate = table.fx[currency]
    low = quoted.sort_values(f"price_{currency}_per_gpu_hour", kind="stable").iloc[0]
    types = quoted["pricing"].value_counts()
    kinds = _joined(_("{count} {pricing}", count=n, pricing=word(p)) for p, n in types.items())
    missing = [p for p in ("on-demand",) if p not in types]
    gap = (_(" None is {pricing}: the file has no dated {pricing} offer in {currency} to compare with, so the "
             "{currency} market is priced only under the other types.", pricing=word(missing[0]), currency=currency)
           if missing else "")
    offers = (_("{count} offers", count=len(quoted)) if len(quoted) != 1 else _("{count} offer", count=len(quoted)))
    price = low[f"price_{currency}_per_gpu_hour"]
    if lang.current() == "en":
        converted = _("converted at {rate:.4f} {currency} per USD (rate of {date})", rate=1 / rate.usd_per_unit,
                      currency=currency, date=rate.date.isoformat())
        lowest = f"{price:.2f} {currency}"
    else:  # the Chinese edition states the rate once, with the price file (price_facts)
        converted = _("converted at the rate stated with the price file above")
        local = as_quoted(price, currency)
        usd = DOLLAR + format(low["price_USD_per_gpu_hour"], ".2f")
        lowest = _("{local} ({usd})", local=local, usd=usd)
    return _("The file has {offers} in {currency} ({kinds}), {converted}; the lowest is {lowest} per GPU-hour ({gpu}, "
             "{pricing}).{gap}", offers=offers, currency=currency, kinds=kinds, converted=converted, lowest=lowest,
             gpu=vocabulary.short_gpu_name(low["gpu"]), pricing=word(low["pricing"]), gap=gap)


def as_quoted(amount: float, currency: str) -> str:
    """A price as its file quotes it, two decimals: '142.36 CNY', in the Chinese edition '¥142.36' for CNY."""
    return f"¥{amount:.2f}" if currency == LOCAL_CURRENCY and lang.current() != "en" else f"{amount:.2f} {currency}"


def market_facts(table: PriceTable) -> Facts:
    """The China market: ``cny_sentence`` (:func:`market_sentence` for CNY; prices in CNY per GPU-hour) and
    ``history_sentence`` (:func:`history_sentence` against the median premium charged in ``table``)."""
    today = answer.pair(table).median_pct
    pairs = history.past_premiums()
    return glue.per_language(lambda: {"cny_sentence": market_sentence(table, "CNY"),
                                      "history_sentence": history_sentence(pairs, today)})


def history_sentence(pairs: list[history.PastPremium], today_pct: float) -> str:
    """The newest day's premium charged in the price history (:func:`multigpu.market.history.past_premiums`):
    its largest instances' list prices per instance-hour and premium (%), the other GPU counts' premiums, and
    ``today_pct``, the median premium charged in the price file (NaN: the file has no pair), in the current
    language."""
    if not pairs:
        return _("The price history holds no same-day pair of an NVLink and a PCIe instance.")
    newest = [p for p in pairs if (p.provider, p.observed) == (pairs[-1].provider, pairs[-1].observed)]
    top = max(newest, key=lambda p: p.gpus_per_instance)
    others = [p for p in newest if p is not top]
    rest = (_(", and {premiums} with {gpus} GPUs", premiums=_joined(f"{p.premium_pct:.1f} %" for p in others),
              gpus=_joined(str(p.gpus_per_instance) for p in others)) if others else "")
    versus = (_("the median premium charged in today's price file is {today:.0f} %", today=today_pct)
              if not math.isnan(today_pct) else _("today's price file has no pair to compare it with"))
    return _("{provider}'s {pricing} list of {date} asked {premium:.1f} % more for {gpus} {gpu} GPUs of {memory:.0f} "
             "GB wired by NVLink ({nv_instance}, {nv_price} per hour) than wired by PCIe ({pc_instance}, "
             "{pc_price}){rest}; {versus}.", provider=vocabulary.provider_name(top.provider), pricing=word(top.pricing),
             date=top.observed.isoformat(), premium=top.premium_pct, gpus=top.gpus_per_instance, gpu=top.gpu_name,
             memory=top.memory_GB_per_gpu, nv_instance=top.nvlink_instance,
             nv_price=as_quoted(top.nvlink_price_per_hour, top.currency), pc_instance=top.pcie_instance,
             pc_price=as_quoted(top.pcie_price_per_hour, top.currency), rest=rest, versus=versus)


def tornado_text(tornado: pd.DataFrame | None, table: PriceTable) -> str:
    """One tornado chart in words, in the current language: the pair of offers, the base NVLink / PCIe cost ratio
    (dimensionless; below 1 the NVLink offer is cheaper), the widest bar with its two ratios, and the inputs that
    flip the ranking within the ranges tried. ``table`` is the price table the tornado was computed from (for
    the offers' names)."""
    if tornado is None:
        return _("the price file has no NVLink / PCIe pair for it")
    labels = cost.offers(table).set_index("offer")["label"]
    nv, pc = labels.loc[tornado.attrs["nvlink_offer"]], labels.loc[tornado.attrs["pcie_offer"]]
    top = tornado.iloc[0]
    crosses = [f for f, a, b in zip(tornado["factor"], tornado["ratio_low"], tornado["ratio_high"])
               if min(a, b) < 1 < max(a, b)]
    flip = (_("; within the ranges tried, the ranking flips with the {factors}",
              factors=_(", the ").join(word(f) for f in crosses))
            if crosses else _("; no single input flips the ranking within the ranges tried"))
    return _("{nvlink} against {pcie}: the NVLink offer costs {base:.2f} times the PCIe one per job ({side}); the "
             "widest bar is the {factor} ({low:.2f} to {high:.2f}){flip}", nvlink=offer_name(nv), pcie=offer_name(pc),
             base=top["ratio_base"], side=_("cheaper") if top["ratio_base"] < 1 else _("dearer"),
             factor=word(top["factor"]), low=top["ratio_low"], high=top["ratio_high"], flip=flip)


def tornado_facts(table: PriceTable, cal: Calibration | None = None) -> Facts:
    """The tornado charts in words (:func:`tornados`): ``tornado_train`` and ``tornado_serve``
    (:func:`tornado_text`), and ``tornado_compare``: the widest spread (in the dimensionless cost ratio) of
    the market inputs (:data:`MARKET_FACTORS`) against that of the model's efficiency and bandwidth."""
    charts = [t for _kind, _workload, t in tornados(table, cal)]
    present = [t for t in charts if t is not None]
    market = model = math.nan
    if present:
        spreads = pd.concat(present)
        market = float(spreads[spreads["factor"].isin(MARKET_FACTORS)]["spread"].max())
        model = float(spreads[~spreads["factor"].isin(MARKET_FACTORS)]["spread"].max())

    def text() -> Facts:
        out: Facts = {"tornado_train": tornado_text(charts[0], table), "tornado_serve": tornado_text(charts[1], table)}
        if not present:
            out["tornado_compare"] = _("with no pair in the price file, there is nothing to compare")
            return out
        which = (_("the prices and how busy the instances will be decide more than the model's constants do")
                 if market > model else _("the model's constants decide as much as the prices do"))
        out["tornado_compare"] = _(
            "the price and utilisation bars span up to {market:.2f} in the ratio, the model's efficiency and "
            "bandwidth bars up to {model:.2f}: {which}", market=market, model=model, which=which)
        return out

    return glue.per_language(text)


def tests_markdown(verdict: claims.Verdict) -> str:
    """What decided ``verdict`` as Markdown in the current language (:func:`multigpu.book.glue.tests_markdown`:
    each test's finding rendered from the catalogs)."""
    return glue.tests_markdown(verdict)


def explanation(verdict: claims.Verdict) -> str:
    """A cost check's full account in the current language (English: the check's own)."""
    return glue.say(verdict.explanation)


def c24_summary(table: PriceTable, cal: Calibration | None = None) -> str:
    """C24 in one sentence, in the current language: over the book's workloads and the NVLink / PCIe pairs in
    which the NVLink-class offer charges more per GPU-hour (:func:`multigpu.evidence.claims.cost.premium_cases`),
    in how many cases (count and %) it is still cheaper per job, overall and for training and serving apart."""
    return _c24_summary(cost_claims.premium_cases(table, cal))


def _c24_summary(cases: Mapping[str, Any]) -> str:
    if not cases["cases"]:
        return _("The price file has no NVLink-class offer that charges more per GPU-hour than a comparable "
                 "PCIe-only offer, so there is no case to count.")
    return _("Over the book's workloads and the pairs in which the NVLink-class offer charges more per GPU-hour "
             "than its PCIe reference, it is cheaper per job in {cheaper} of {cases} cases ({share:.0f} %): {train} "
             "of the training cases and {serve} of the serving ones.", cheaper=cases["cheaper"], cases=cases["cases"],
             share=cases["share_pct"], train=fmt(cases["train_share_pct"], ".0f", " %"),
             serve=fmt(cases["serve_share_pct"], ".0f", " %"))


def claims_facts(table: PriceTable, cal: Calibration | None = None) -> Facts:
    """The article's cost claims checked with ``table``: ``c24_verdict`` and ``c26_verdict`` (bold Markdown),
    ``c24_tests`` and ``c26_tests`` (what decided them), ``c24_explanation`` and ``c26_explanation`` (the
    checks' accounts, with the price file's name and hash), ``c24_summary`` (:func:`c24_summary`; counts and
    %) and ``length_takeaway``; each with its Chinese as ``<name>_zh``."""
    checked = dict(zip(("C24", "C26"), cost_verdicts(table, cal)))
    cases = cost_claims.premium_cases(table, cal)
    length = cost_claims.length_test(table, cal)

    def text() -> Facts:
        out: Facts = {}
        for claim_id, verdict in checked.items():
            out[f"{claim_id.lower()}_verdict"] = f"**{lang.label(verdict.verdict)}**"
            out[f"{claim_id.lower()}_tests"] = tests_markdown(verdict)
            out[f"{claim_id.lower()}_explanation"] = explanation(verdict)
        out["c24_summary"] = _c24_summary(cases)
        out["length_takeaway"] = _length_takeaway(*length)
        return out

    return glue.per_language(text)


def length_takeaway(table: PriceTable, cal: Calibration | None = None) -> str:
    """Whether job length moves the pick, from C26's length test, in the current language: a sentence with the
    model, the token multiples tried and the pricing types at which the pick moves from PCIe to an NVLink class."""
    return _length_takeaway(*cost_claims.length_test(table, cal))


def _length_takeaway(near: str, picks: pd.DataFrame, flips: list[str]) -> str:
    short, long = cost_claims.LENGTH_SCALES[0], cost_claims.LENGTH_SCALES[-1]
    n = picks["pricing"].nunique()
    moved = (_("moves the pick from PCIe to an NVLink class at {types} prices ({count} of {total} pricing types)",
               types=_joined(word(f) for f in flips), count=len(flips), total=n) if flips else
             _("moves the pick between PCIe and an NVLink class at none of the {total} pricing types of this file",
               total=n))
    return _("Cost per job is proportional to the job's tokens while its layout stays; training {model} on {short:g}x "
             "instead of {long:g}x its token budget (the guide's deadline applies) {moved}.",
             model=models.model(near).name, short=short,
             long=long, moved=moved)


def exercise_facts(cal: Calibration | None = None, table: PriceTable | None = None) -> Facts:
    """The exercises' numbers. Break-even (70B pre-training, A100 NVSwitch against A100 PCIe nodes):
    ``ex1_hn`` and ``ex1_hp`` (GPU-hours per job), ``ex1_price`` (the assumed PCIe price, USD per GPU-hour),
    ``ex1_pct`` (break-even premium, %). Utilisation:
    ``ex2_od`` and ``ex2_spot`` (assumed prices, USD per GPU-hour) and ``ex2_u`` (the break-even utilisation,
    %). Job length (8B pre-training on one A100 NVSwitch node): ``ex3_tokens_B`` (billion tokens),
    ``ex3_days`` and ``ex3_days_2x`` (days, as given and with twice the tokens). The prices as prose text
    (:func:`price`; Chinese CNY first by ``table``'s FX table, None: the packaged one): ``ex1_pcie_price``,
    ``ex1_break_even_price`` (the break-even price), ``ex2_od_price``, ``ex2_spot_price``. No offer of a price file is used."""
    ex = premium.interconnect_value(*VALUE_PAIRS[0], [TRAIN_70B], cal=cal).iloc[0]
    plan8 = cost.plan(TRAIN_8B, VALUE_PAIRS[0][0], 8, cal)
    days = plan8.time_h() / 24
    out: Facts = {"ex1_price": EXERCISE_PCIE_USD, "ex1_hn": float(ex["nvlink_gpu_hours"]),
                  "ex1_hp": float(ex["pcie_gpu_hours"]), "ex1_pct": float(ex["break_even_premium_pct"]),
                  "ex2_od": EXERCISE_ON_DEMAND_USD, "ex2_spot": EXERCISE_SPOT_USD,
                  "ex2_u": 100 * EXERCISE_SPOT_USD / EXERCISE_ON_DEMAND_USD,
                  "ex3_tokens_B": workloads.workload(TRAIN_8B).tokens / 1e9, "ex3_days": days, "ex3_days_2x": 2 * days}
    table = prices.resolve(table)
    break_even = EXERCISE_PCIE_USD * out["ex1_hp"] / out["ex1_hn"]  # USD per GPU-hour
    return out | glue.per_language(lambda: {
        "ex1_pcie_price": price(out["ex1_price"], table), "ex1_break_even_price": price(break_even, table),
        "ex2_od_price": price(out["ex2_od"], table), "ex2_spot_price": price(out["ex2_spot"], table)})


def facts(table: PriceTable, cal: Calibration | None = None) -> Facts:
    """Every fact the chapter's prose cites (the union of the section functions above), by glue name: numbers
    once, text in English and, as ``<name>_zh``, in Chinese (dates, GPU names and layouts once, for both)."""
    return {**intro_facts(table, cal), **landscape_facts(table), **charged_facts(table), **break_even_facts(table, cal),
            **stack_facts(table, cal), **job_facts(table, cal), **market_facts(table), **tornado_facts(table, cal),
            **claims_facts(table, cal), **exercise_facts(cal, table)}
