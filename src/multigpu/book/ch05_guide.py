"""Chapter 5 (selection guide): its worked examples, its tables, the data its figures draw and the facts its
prose cites (the figures are :mod:`multigpu.book.ch05_figures`).

The guide itself (classes, picks, size lines, price flips) is
:mod:`multigpu.evidence.guide`; the recommender is :mod:`multigpu.market.recommend`.
Every number or sentence the chapter's Markdown cites is built here, by one
``*_facts`` function per section, from the price table the notebook passes
down (``inputs.price_table()``), the calibration (None: the shipped one) and
the guide's :func:`~multigpu.evidence.guide.decisions`, which the notebook
computes once and hands to every table, figure and facts function. The
notebook glues each dict with :func:`multigpu.book.glue.glue_all`. Nothing here
reads the environment.

Both editions from one execution (:mod:`multigpu.book.lang`): each text fact is there in English and, as
``<name>_zh``, in Chinese (:func:`multigpu.book.glue.per_language`); the tables' Chinese headers and label
cells are the messages of :data:`TABLE_HEADERS` and :data:`CLASS_WORDS` and the like. The guide's own texts
(size lines, claim tests and accounts) are findings, rendered from the catalogs (:func:`multigpu.book.glue.say`).

Units: model sizes in billions of parameters (``_B``); training costs in USD
per job, serving costs in USD per hour or per million output tokens; times in
hours (``_h``) or days; tokens per step in units of 2**20 tokens (``_M``);
shares in per cent (``_pct``).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from multigpu.book import claim_values, glue, lang, tables
from multigpu.book.glue import Facts
from multigpu.book.lang import N_, _
from multigpu.book.money import fx_sentence, local_bounds, money_columns, price
from multigpu.book.vocabulary import short_gpu_name
from multigpu.comm.calibration import Calibration
from multigpu.common.numtext import ESTIMATE
from multigpu.compute import models
from multigpu.evidence import guide
from multigpu.evidence.claims import Verdict
from multigpu.evidence.claims import cost as cost_claims
from multigpu.market import cost, recommend, search
from multigpu.market.prices import PriceTable

#: The chapter's worked training example (the notebook's ``recommend --train`` call): model, training tokens,
#: the most GPUs an option may rent, the deadline (hours) and the number of options the CLI shows.
TRAIN_EXAMPLE = {"model": "llama3.1-8b", "tokens": 1.6e11, "max_gpus": 64, "deadline_h": 720.0, "top": 8}
#: The chapter's worked serving example (the notebook's ``recommend --serve`` call): model, tokens per second
#: per user, queries per second.
SERVE_EXAMPLE = {"model": "llama3.1-70b", "tokens_per_s_per_user": 30.0, "requests_per_s": 10.0}
#: The training jobs of the cost-against-time figure, by the glue name of their sentence.
PARETO_MODELS = {"front_8b": "llama3.1-8b", "front_70b": "llama3.1-70b"}
#: Exercise 2: the tighter deadline (hours) of the training example.
TIGHT_DEADLINE_H = 7 * 24
#: Exercise 3: the higher serving floor (tokens per second per user).
FAST_FLOOR = 50.0


# ------------------------------------------------------------------ the chapter's words, as messages

#: The guide's classes (:data:`multigpu.evidence.guide.CLASSES` and "none feasible"), the recommender's
#: interconnect classes (:data:`multigpu.market.cost.CLASS_BY_TOPOLOGY`) and the side that is cheaper
#: (:func:`multigpu.evidence.guide.flip_scales`): label words of the figures, tables and sentences.
CLASS_WORDS = (N_("PCIe"), N_("NVLink bridge"), N_("GPU mesh node"), N_("NVSwitch node"), N_("multi-node / NVL72"),
               N_("none feasible"), N_("NVSwitch"), N_("GPU mesh"), N_("PCIe only"), N_("NVLink class"))
#: The pricing types of :data:`multigpu.market.prices.PRICING`.
PRICING_WORDS = (N_("on-demand"), N_("spot"), N_("reserved"), N_("community"))
#: The workloads' titles (:data:`multigpu.evidence.guide.KIND_TITLES`), their short names on the matrix's axis
#: and their cost units (:func:`multigpu.evidence.guide.cost_unit`).
KIND_WORDS = (N_("training"), N_("real-time serving"), N_("train"), N_("serve"), N_("USD per job"),
              N_("USD per 1M output tokens"))
#: The words after a count (singular, plural), and the unit of a ratio in alt text.
COUNT_WORDS = {"option": (N_("option"), N_("options")), "instance": (N_("instance"), N_("instances"))}

#: The headers of the chapter's tables (:func:`multigpu.book.tables.header` of their columns), as messages.
TABLE_HEADERS = (
    N_("Model"), N_("Parameters (billions)"), N_("Cheapest class"), N_("GPU"), N_("Instances x GPUs"),
    N_("Layout"), N_("Time (days)"), N_("Cost (USD per job)"), N_("Cost (USD per 1M tokens)"),
    N_("NVLink / PCIe cost"), N_("Workload"), N_("Cheaper"), N_("NVLink pick"), N_("PCIe price x to flip"),
    N_("PCIe price x"), N_("ID"), N_("Verdict"), N_("Seed value"), N_("Model value"), N_("Unit"), N_("Confidence"),
)
#: The tables' columns whose cells are words to translate (classes, workloads, verdicts; the rest is data).
LABEL_COLUMNS = claim_values.label_columns("cheapest class", "workload", "cheaper", "nvlink_pick", "verdict")


def word(text: str | None) -> str:
    """A class, pricing type or workload word in the current language (:func:`multigpu.book.lang.label`);
    a missing one (None) as "—"."""
    return "—" if text is None or (isinstance(text, float) and pd.isna(text)) else lang.label(text)


def count_word(n: Any, noun: str) -> str:
    """The word after a count ``n`` in the current language: ``noun`` of :data:`COUNT_WORDS`, singular or plural."""
    singular, plural = COUNT_WORDS[noun]
    return lang.label(singular if n == 1 else plural)


# ------------------------------------------------------------------ the evidence's texts, in the current language


def line_text(text: str) -> str:
    """A size line of :func:`multigpu.evidence.guide.thresholds` (its ``text``) in the current language."""
    return glue.say(text)


def lines_phrase(limits: pd.DataFrame) -> str:
    """:func:`multigpu.evidence.guide.lines_phrase` in the current language: each distinct size line of
    ``limits`` (one kind of workload) once, with the pricing types it holds for."""
    return glue.say(guide.lines_phrase(limits))


#: The claims table's fixed texts (C26 and C27): the article's values, the model's and the units.
CLAIM_TABLE_TEXTS = (
    N_("under 10B and short: PCIe; larger or long: NVLink"),
    N_("data parallelism is insensitive to latency; tensor parallelism needs bandwidth and low latency: NVLink"),
    N_("no market"),
    N_("billion parameters"),
    N_("billion parameters (training size line per pricing type)"),
    N_("% longer step (Llama 3.1 8B training on 8 GPUs; Llama 3.1 70B decode, batch 1), 8x A100 PCIe"),
)


def test_text(text: str) -> str:
    """An explanation or claims-table text of C26 or C27 in the current language."""
    return glue.say(text)


def tests_markdown(verdict: Verdict) -> str:
    """What decided ``verdict`` as Markdown sentences in the current language
    (:func:`multigpu.book.glue.tests_markdown`: each test's finding rendered from the catalogs)."""
    return glue.tests_markdown(verdict)


# ------------------------------------------------------------------ the price file, named


def source(table: PriceTable) -> str:
    """The figures' source line for a price table, in the current language: its file name and the first 12 hex
    digits of its SHA-256 (English: :meth:`multigpu.market.prices.PriceTable.source_label`)."""
    return glue.say(table.source_label())


def price_stamp(table: PriceTable) -> str:
    """The sentence that names the price file (Markdown), in the current language: English
    :meth:`multigpu.market.prices.PriceTable.stamp_markdown` (name, hash, offers, dates, FX rates); Chinese the
    same facts with the one rate every CNY amount of the page is converted at (:func:`multigpu.book.money.
    fx_sentence`), as chapter 4 states it."""
    if lang.current() == "en":
        return table.stamp_markdown()
    stamp = table.stamp()
    return _("Prices: `{name}` (sha256 {sha}), {offers} offers observed {first} to {last}. Amounts in CNY are {fx}.",
             name=stamp["name"], sha=stamp["sha256_12"], offers=stamp["offers"], first=stamp["observed_from"],
             last=stamp["observed_to"], fx=fx_sentence(table))


# ------------------------------------------------------------------ the figures' data (ch05_figures draws them)


def class_cost_frames(table: PriceTable, pricing: str, model_ids: tuple[str, ...] | None = None,
                      cal: Calibration | None = None) -> dict[str, pd.DataFrame]:
    """:func:`multigpu.evidence.guide.class_costs` of training (USD per job) and real-time serving (USD per
    million output tokens) at ``pricing`` prices for ``model_ids`` (default :data:`multigpu.evidence.guide.MODELS`),
    keyed by kind: what :func:`multigpu.book.ch05_figures.figure_class_costs` draws."""
    model_ids = guide.MODELS if model_ids is None else model_ids
    return {kind: guide.class_costs(model_ids, kind, pricing, table, cal=cal) for kind in ("train", "serve")}


def pareto_options(table: PriceTable, pricing: str, cal: Calibration | None = None) -> dict[str, pd.DataFrame]:
    """The guide's training options (:func:`multigpu.evidence.guide.options`; USD per job, hours) of each
    model of :data:`PARETO_MODELS` at ``pricing`` prices, keyed by model id."""
    frames = {}
    for model_id in PARETO_MODELS.values():
        frame = guide.options(model_id, "train", table, cal=cal)
        frames[model_id] = frame[frame["pricing"] == pricing]
    return frames


# ------------------------------------------------------------------ tables, in both editions


def show_editions(make: Callable[[], pd.DataFrame], **kw: Any) -> None:
    """Display a table whose cells are built in the current language (``make()``, called once per language:
    :func:`multigpu.book.tables.table_html` of it with ``kw``), one per edition, as one output."""
    from IPython.display import HTML, display

    display(HTML(lang.editions_html(lang.per_language(lambda: tables.table_html(make(), **kw)))))


def money_table_html(frame: pd.DataFrame, table: PriceTable, *, key: Sequence[str], **kw: Any) -> str:
    """``frame`` in both editions with its money in each edition's currency: the Chinese table with a CNY column
    before each USD one (:func:`multigpu.book.money.money_columns`, at the page's declared rate), and each value
    with its prediction interval beside it as "x (lo–hi)" (:func:`multigpu.book.money.local_bounds`, under a
    caption that says so; the CSV keeps every number); ``kw`` as :func:`multigpu.book.tables.table_html` takes
    them (``key`` is shown first)."""
    flat = frame.reset_index()
    ranged = tables.ranged_columns(flat)
    bounds = {f"{c}_{end}" for c in ranged for end in ("lo", "hi")}

    def page() -> str:
        shown_frame, shown = money_columns(flat, [c for c in flat.columns if c not in key and c not in bounds], table)
        for column in ranged:
            shown_frame = local_bounds(shown_frame, column, table)
        caption = lang.label(tables.RANGES_CAPTION) if ranged else None
        return tables.table_html(shown_frame, key=key, columns=shown, label_columns=LABEL_COLUMNS, caption=caption,
                                 ranges=bool(ranged), **kw)

    return lang.editions_html(lang.per_language(page))


def show_money_table(frame: pd.DataFrame, table: PriceTable, *, key: Sequence[str], **kw: Any) -> None:
    """Display :func:`money_table_html` of the same arguments."""
    from IPython.display import HTML, display

    display(HTML(money_table_html(frame, table, key=key, **kw)))


def claims_frame(verdicts: Mapping[str, Verdict]) -> pd.DataFrame:
    """The claims table of ``verdicts``: ``id``, ``verdict``, ``seed_value``, ``model_value``, ``unit`` (as the
    checks write them; :data:`LABEL_COLUMNS` translates them) and ``confidence`` (in the current language,
    :func:`test_text`)."""
    rows = []
    for v in verdicts.values():
        rows.append({"id": v.id, "verdict": v.verdict, "seed_value": v.seed_value, "model_value": v.model_value,
                     "unit": v.unit, "confidence": test_text(v.confidence)})
    return pd.DataFrame(rows, columns=["id", "verdict", "seed_value", "model_value", "unit", "confidence"])


# ------------------------------------------------------------------ facts for the prose, one function per section


def intro_facts(table: PriceTable) -> Facts:
    """The chapter's opening and method facts: the price stamp (Markdown, both languages), the guide's model
    sizes (billion parameters), its settings (tokens per parameter, deadline in days, GPU limit, tie in per cent,
    the serving query in tokens, tokens per second per user and queries per second) and the recommender's
    defaults (GPU limit; tokens per step in units of 2**20 tokens, by model size in billion parameters)."""
    (small_B, small_t), (mid_B, mid_t), (_big, large_t) = recommend.TOKENS_PER_STEP
    return {
        **glue.per_language(lambda: {"price_stamp": price_stamp(table)}),
        "smallest_B": models.model(guide.MODELS[0]).params_total / 1e9,
        "largest_B": models.model(guide.MODELS[-1]).params_total / 1e9,
        "n_models": len(guide.MODELS),
        "n_classes": len(guide.CLASSES),
        "tokens_per_param": guide.TOKENS_PER_PARAM,
        "deadline_days": guide.DEADLINE_DAYS,
        "guide_max_gpus": guide.MAX_GPUS,
        "tie_pct": guide.TIE_PCT,
        "serve_rate": guide.SERVE["tokens_per_s_per_user"],
        "serve_load": guide.SERVE["requests_per_s"],
        "serve_in": guide.SERVE["input_tokens"],
        "serve_out": guide.SERVE["output_tokens"],
        "default_max_gpus": recommend.DEFAULT_MAX_GPUS,
        "tps_small_B": small_B / 1e9,
        "tps_mid_B": mid_B / 1e9,
        "tps_small_M": small_t / 2**20,
        "tps_mid_M": mid_t / 2**20,
        "tps_large_M": large_t / 2**20,
    }


#: The recommender's columns the Chinese edition shows for a ranking, by kind (a CNY column goes before each USD
#: one, :func:`multigpu.book.money.money_columns`), and their headers as messages.
RANKED = {"train": ["rank", "provider", "instance", "gpu", "instances", "gpus", "layout", "time_h", "cost_usd",
                    "reason"],
          "serve": ["rank", "provider", "instance", "gpu", "instances", "gpus", "layout", "capacity_tokens_per_s",
                    "cost_per_hour_usd", "cost_per_million_tokens_usd", "reason"]}
#: The guide tables' CNY columns (:func:`show_money_table`), as their headers read.
GUIDE_MONEY_HEADERS = (N_("Cost (CNY per job)"), N_("Cost (CNY per 1M tokens)"))
RANKED_HEADERS = (N_("Rank"), N_("Instances"), N_("Reason"), N_("Capacity (tokens/s)"), N_("Cost per hour (USD)"),
                  N_("Cost per hour (CNY)"), N_("Cost per million tokens (USD)"),
                  N_("Cost per million tokens (CNY)"))


def ranking_html(printed: str, options: pd.DataFrame, table: PriceTable, top: int, csv_name: str) -> str:
    """The recommender's answer in both editions: English, what ``python -m multigpu recommend`` printed
    (``printed``, the command's own output); Chinese, the ``top`` first options of ``options`` as a table, money
    in CNY first, each reason rendered from its finding."""
    english = f'<pre class="mg-cli">{html.escape(printed)}</pre>'
    kind = "train" if "cost_usd" in options else "serve"
    with lang.using("zh"):
        frame = options.head(top)
        frame = frame.assign(reason=[glue.say(r) if isinstance(r, str) and r else "" for r in frame["reason"]])
        frame, shown = money_columns(frame, RANKED[kind], table)
        chinese = tables.table_html(frame, key=["rank"], columns=shown, csv_name=csv_name,
                                    estimates=[c for c in shown if c in ("time_h", "capacity_tokens_per_s")
                                               or c.startswith("cost_")])
    return lang.editions_html({"en": english, "zh": chinese})


def training_example(table: PriceTable, pricing: str, cal: Calibration | None = None,
                     deadline_h: float | None = None) -> pd.DataFrame:
    """The recommender's ranked options (:func:`multigpu.market.recommend.train`: hours, USD per job) for
    :data:`TRAIN_EXAMPLE` on the ``pricing`` offers of ``table``; ``deadline_h`` (hours) replaces its deadline."""
    ex = TRAIN_EXAMPLE
    return recommend.train(ex["model"], ex["tokens"], table.of_pricing(pricing), max_gpus=int(ex["max_gpus"]),
                           deadline_h=ex["deadline_h"] if deadline_h is None else deadline_h, cal=cal)


def _instances(top: Mapping[str, Any]) -> dict[str, Any]:
    """The fields every pick sentence names: instances (and the word after the count), GPUs per instance, the
    GPU and its interconnect class in the current language."""
    return {"n": top["instances"], "instance_word": count_word(top["instances"], "instance"),
            "per": top["gpus_per_instance"], "gpu": short_gpu_name(top["gpu"]), "cls": word(top["interconnect_class"])}


def _training_pick(top: Mapping[str, Any] | None, table: PriceTable) -> str:
    """The training example's pick as a Markdown phrase in the current language (days, USD per job, exposed
    communication in per cent of the step)."""
    if top is None:
        return _("no option meets the deadline")
    return _("{n} {instance_word} of {per} {gpu} GPUs ({cls}) with layout `{layout}`: {days:.1f} days and "
             "{cost}, with exposed communication {comm:.0f} % of the step", **_instances(top),
             layout=top["layout"], days=top["time_h"] / 24, cost=price(top["cost_usd"], table, ESTIMATE),
             comm=top["exposed_comm_pct"])


def training_example_facts(ex: pd.DataFrame, table: PriceTable) -> Facts:
    """Facts of the training example (:func:`training_example`): its tokens (billions), deadline (days), GPU
    limit, the options shown, counted and split (feasible, late, cannot run), the layouts timed, and in both
    languages the pick (``ex_best``: days, USD per job, exposed communication in per cent of the step) and
    ``ex_front`` (:func:`front_sentence`), as Markdown."""
    top, front = recommend.best(ex), recommend.pareto(ex)
    return {
        "ex_tokens_B": ex.attrs["tokens"] / 1e9,
        "ex_days": ex.attrs["deadline_h"] / 24,
        "ex_max_gpus": int(ex.attrs["max_gpus"]),
        "ex_top": int(TRAIN_EXAMPLE["top"]),
        "ex_options": len(ex),
        "ex_offers": int(ex.attrs["offers"]),
        "ex_layouts": int(ex.attrs["evaluated"]),
        "ex_feasible": int(ex["feasible"].sum()),
        "ex_late": int((~ex["feasible"] & ex["cost_usd"].notna()).sum()),
        "ex_cannot": int(ex["cost_usd"].isna().sum()),
        **glue.per_language(lambda: {"ex_best": _training_pick(top, table),
                                     "ex_front": front_sentence(front, table)}),
    }


def front_sentence(front: pd.DataFrame, table: PriceTable) -> str:
    """What the Pareto front of cost against time says, as a Markdown sentence in the current language: how many
    options sit on it and whether time can be bought (the fastest over the cheapest cost), in words that fit
    the numbers."""
    front = front[front["feasible"]] if "feasible" in front else front
    if front.empty:
        return _("No option meets the deadline, so there is no front to read.")
    fast, cheap = front.sort_values("time_h", kind="stable").iloc[0], front["cost_usd"].min()
    values = {"n": len(front), "hours": fast["time_h"], "cost": price(fast["cost_usd"], table, ESTIMATE),
              "ratio": fast["cost_usd"] / cheap}
    if len(front) == 1:
        return _("Of the feasible options, only one sits on the Pareto front of cost against time: the cheapest, "
                 "{hours:.1f} hours for {cost}, is also the fastest, so time costs nothing extra here.",
                 **values)
    if values["ratio"] < 1.005:
        return _("Of the feasible options, {n} sit on the Pareto front of cost against time; the fastest, "
                 "{hours:.1f} hours for {cost}, costs no more than the cheapest, so time costs nothing "
                 "extra here.", **values)
    return _("Of the feasible options, {n} sit on the Pareto front of cost against time; the fastest takes "
             "{hours:.1f} hours for {cost}, {ratio:.2f} times the cheapest cost: that is the price of time "
             "here.", **values)


def serving_example(table: PriceTable, pricing: str, cal: Calibration | None = None) -> pd.DataFrame:
    """The recommender's ranked options (:func:`multigpu.market.recommend.serve`: USD per hour and per million
    output tokens) for :data:`SERVE_EXAMPLE` on the ``pricing`` offers of ``table``."""
    ex = SERVE_EXAMPLE
    return recommend.serve(ex["model"], ex["tokens_per_s_per_user"], ex["requests_per_s"],
                           table.of_pricing(pricing), cal=cal)


def _serving_pick(top: Mapping[str, Any] | None, table: PriceTable) -> str:
    """The serving example's pick as a Markdown phrase in the current language."""
    if top is None:
        return _("no offer can carry the load at the floor")
    return _("{n} {instance_word} of {per} {gpu} GPUs ({cls}), each replica on `{layout}`, for {hour} per "
             "hour or {million} per million output tokens; the instances are loaded to {load:.0f} %",
             **_instances(top), layout=top["layout"], hour=price(top["cost_per_hour_usd"], table, ",.2f"),
             million=price(top["cost_per_million_tokens_usd"], table, ESTIMATE), load=top["load_pct"])


def serving_example_facts(sv: pd.DataFrame, table: PriceTable) -> Facts:
    """Facts of the serving example (:func:`serving_example`): the pick as a Markdown sentence in both languages
    (instances, layout, USD per hour, USD per million output tokens, load in per cent) and the counts of offers
    that cannot serve, that are too slow for the floor, and of those the PCIe-only ones."""
    top = recommend.best(sv)
    cannot = sv[sv["cost_per_hour_usd"].isna()]
    slow = cannot[cannot["reason"].map(search.reason_kind) == "too slow"]
    return {**glue.per_language(lambda: {"sv_best": _serving_pick(top, table)}), "sv_cannot": len(cannot),
            "sv_slow": len(slow), "sv_slow_pcie": int((slow["interconnect_class"] == cost.PCIE_CLASS).sum())}


def _lines(limits: pd.DataFrame, kind: str) -> str:
    return lines_phrase(limits[limits["kind"] == kind])


def _guide_texts(decided: pd.DataFrame, pricing: str) -> Facts:
    """:func:`guide_facts`' texts in the current language."""
    limits = guide.thresholds(decided)
    ref_limits = limits[limits["pricing"] == pricing].set_index("kind")["text"]
    serve = decided[decided["kind"] == "serve"]
    train = decided[decided["kind"] == "train"]
    pcie_serve = serve[serve["guide_class"] == "PCIe"]
    blocked = serve[serve["pcie_reason"].isin(["too slow", "does not fit"])]
    slow_n = int((blocked["pcie_reason"] == "too slow").sum())
    multi = train[(train["pricing"] == pricing) & (train["guide_class"] == "multi-node / NVL72")]
    none_train = train[train["guide_class"] == "none feasible"]
    nothing = guide.NO_LINE
    return {
        "ref": word(pricing),
        "in_short": _("For training, {train}. For real-time serving, {serve}.", train=_lines(limits, "train"),
                      serve=_lines(limits, "serve")),
        "train_lines": _lines(limits, "train"),
        "serve_lines": _lines(limits, "serve"),
        "ref_train_line": line_text(ref_limits.get("train", nothing)),
        "ref_serve_line": line_text(ref_limits.get("serve", nothing)),
        "pcie_serve_sentence": _("PCIe picks serve models up to {size:.1f}B, with tensor parallelism of at most "
                                 "tp{tp}.", size=pcie_serve["params_B"].max(), tp=int(pcie_serve["tp"].max()))
        if len(pcie_serve) else _("at these prices no serving pick is a PCIe box."),
        "pcie_blocked_sentence": _("from {size:.1f}B up no PCIe option can serve at all, too slow for the floor in "
                                   "{slow} of those {n} cases and too small in the rest.",
                                   size=blocked["params_B"].min(), slow=slow_n, n=len(blocked)) if len(blocked)
        else _("even so, some PCIe option stays feasible at every size here."),
        "train_multi_sentence": _("From {size:.1f}B up the pick spans several NVLink nodes: one node is too small "
                                  "or too slow for the deadline.", size=multi["params_B"].min()) if len(multi) else "",
        "none_train_sentence": _("No option meets the deadline for {cases}: the job needs more GPUs than the guide "
                                 "allows, or more time.", cases=_(", ").join(
                                     _("`{model}` at {pricing} prices", model=m, pricing=word(p))
                                     for m, p in zip(none_train["model"], none_train["pricing"])))
        if len(none_train) else "",
    }


def guide_facts(decided: pd.DataFrame, pricing: str) -> Facts:
    """Facts of the decision guide (:func:`multigpu.evidence.guide.decisions`), as Markdown in both languages:
    the reference pricing type, the size line of each workload at every pricing type and at ``pricing``, and
    the sentences on PCIe serving picks (largest model in billion parameters, tensor-parallel degree), the sizes
    from which no PCIe option can serve, the multi-node training picks and the jobs no option can train in time."""
    return glue.per_language(lambda: _guide_texts(decided, pricing))


def front_text(front: pd.DataFrame, table: PriceTable) -> str:
    """A Pareto front (:func:`multigpu.market.recommend.pareto` of guide options) in one Markdown phrase in the
    current language: its size, its cheapest option (USD per job, days, class, GPUs), its fastest (hours, times
    the cheapest cost, class, GPUs) and the classes on it; a front of one option, that option alone."""
    if front.empty:
        return _("no option runs")
    cheap, quick = front.iloc[0], front.sort_values("time_h", kind="stable").iloc[0]
    if len(front) == 1:  # the cheapest is the fastest: nothing runs "from" it "to" anything
        return _("one option on the front: {cost} in {days:,.1f} days ({cls}, {gpus} GPUs)",
                 cost=price(cheap["cost_usd"], table, ESTIMATE), days=cheap["time_h"] / 24,
                 cls=word(cheap["guide_class"]), gpus=int(cheap["gpus"]))
    classes = sorted(set(front["guide_class"]))
    return _("{n} {option_word} on the front, from {cost} in {days:,.1f} days ({cls}, {gpus} GPUs) to "
             "{hours:,.1f} hours for {ratio:.1f} times the cost ({quick_cls}, {quick_gpus} GPUs); classes on the "
             "front: {classes}", n=len(front), option_word=count_word(len(front), "option"),
             cost=price(cheap["cost_usd"], table, ESTIMATE), days=cheap["time_h"] / 24,
             cls=word(cheap["guide_class"]),
             gpus=int(cheap["gpus"]), hours=quick["time_h"], ratio=quick["cost_usd"] / cheap["cost_usd"],
             quick_cls=word(quick["guide_class"]), quick_gpus=int(quick["gpus"]),
             classes=_(", ").join(word(c) for c in classes))


def front_facts(frames: Mapping[str, pd.DataFrame], table: PriceTable) -> Facts:
    """The Pareto front of each job of :func:`pareto_options` as a Markdown phrase (:func:`front_text`) in
    both languages, under the glue names of :data:`PARETO_MODELS`."""
    fronts = {name: recommend.pareto(frames[model_id]) for name, model_id in PARETO_MODELS.items()}
    return glue.per_language(lambda: {name: front_text(front, table) for name, front in fronts.items()})


def flip_demo(decided: pd.DataFrame, table: PriceTable, pricing: str,
              cal: Calibration | None = None) -> pd.DataFrame | None:
    """The guide's pick for the closest flip case of ``pricing`` (:func:`multigpu.evidence.guide.flip_case`)
    with every PCIe price x 1, just above and just below the flip factor
    (:func:`multigpu.evidence.guide.flip_demo`; costs in USD per job or per million output tokens); None if
    no case can flip."""
    case = guide.flip_case(decided, pricing)
    if case is None:
        return None
    return guide.flip_demo(case["model"], case["kind"], pricing, case["pcie_price_scale_to_flip"], table=table,
                           cal=cal)


def _flip_texts(case: Mapping[str, Any] | None, pricing: str) -> Facts:
    """:func:`flip_facts`' texts in the current language."""
    if case is None:
        return {
            "flip_sentence": _("No case at these prices has an NVLink-class pick with a feasible PCIe option to flip "
                               "to, so there is nothing to demonstrate."),
            "flip_sentence_short": _("no case at these prices can flip"),
            "ex1_question": _("Take any case of the guide with both a PCIe and an NVLink-class option. By how much "
                              "must every PCIe price change for the two to cost the same?"),
            "ex1_answer": _("By the ratio of the two costs: every cost is GPU-hours x price, and the GPU-hours do not "
                            "depend on the price. This price file has no case to compute it on."),
        }
    scale = case["pcie_price_scale_to_flip"]
    # the exercise divides the two costs as it prints them, so its factor is theirs, at the precision they carry
    shown_scale = float(f"{case['nvlink_cost']:.2f}") / float(f"{case['pcie_cost']:.2f}")
    values = {"title": word(guide.KIND_TITLES[case["kind"]]), "model": case["model"], "scale": scale,
              "cut": 100 * (1 - scale), "pricing": word(pricing), "nvlink": case["nvlink_cost"],
              "pcie": case["pcie_cost"], "unit": word(guide.cost_unit(case["kind"])), "shown_scale": shown_scale,
              "shown_cut": 100 * (1 - shown_scale)}
    return {
        "flip_sentence": _("The closest case is {title} of `{model}`: PCIe prices must fall to {scale:.3f} times their "
                           "level, a cut of {cut:.1f} %. Rerunning the guide with every PCIe price scaled shows the "
                           "pick holding just above that factor and flipping just below it:", **values),
        "flip_sentence_short": _("here a PCIe price cut of {cut:.1f} % flips the closest case", **values),
        "ex1_question": _("For {title} of `{model}` at {pricing} prices, the cheapest NVLink-class option costs "
                          "{nvlink:,.2f} and the cheapest PCIe option {pcie:,.2f} ({unit}). By how much must every "
                          "PCIe price fall for the PCIe option to be the cheaper one, and why does nothing else in the "
                          "search change?", **values),
        "ex1_answer": _("To {nvlink:,.2f} / {pcie:,.2f} = {shown_scale:.2f} times their level, a cut of about "
                        "{shown_cut:.0f} %. A price "
                        "enters the cost only as a factor: the layouts, step times and instance counts that the search "
                        "finds do not depend on it, so scaling every PCIe price scales every PCIe cost by the same "
                        "factor and leaves the NVLink-class costs alone. The table in the section on prices reruns the "
                        "guide just above and just below the factor and shows the flip.", **values),
    }


def flip_facts(decided: pd.DataFrame, pricing: str) -> Facts:
    """Facts of the section on prices and of exercise 1, as Markdown in both languages: the closest flip case
    of ``pricing`` (:func:`multigpu.evidence.guide.flip_case`): the PCIe price factor that flips it and the cut
    in per cent, and the exercise's question and answer with the two costs (USD per job or per million output
    tokens)."""
    case = guide.flip_case(decided, pricing)
    return glue.per_language(lambda: _flip_texts(case, pricing))


def _claims_texts(verdicts: Mapping[str, Verdict], decided: pd.DataFrame) -> Facts:
    """:func:`claims_facts`' texts in the current language."""
    facts: Facts = {}
    for claim_id in ("C26", "C27"):
        facts[f"{claim_id.lower()}_verdict"] = f"**{lang.label(verdicts[claim_id].verdict)}**"
        facts[f"{claim_id.lower()}_tests"] = tests_markdown(verdicts[claim_id])
        facts[f"{claim_id.lower()}_explanation"] = test_text(verdicts[claim_id].explanation)
    line = cost_claims.SIZE_LINE_B
    limits = guide.thresholds(decided)
    inside = limits[[b is not None and not pd.isna(b) and b < line <= t
                     for b, t in zip(limits["below_B"], limits["threshold_B"])]]
    facts["c26_where"] = _("That is {serve_in} of {serve_n} pricing types for real-time serving and {train_in} of "
                           "{train_n} for training.", serve_in=int((inside["kind"] == "serve").sum()),
                           serve_n=int((limits["kind"] == "serve").sum()),
                           train_in=int((inside["kind"] == "train").sum()),
                           train_n=int((limits["kind"] == "train").sum()))
    facts["line_inside_list"] = _(", ").join(
        _("{kind} at {pricing} prices", kind=word(guide.KIND_TITLES[k]), pricing=word(p))
        for k, p in zip(inside["kind"], inside["pricing"])) or _("none of them")
    train_picks = decided[(decided["kind"] == "train") & (decided["guide_class"] != "none feasible")]
    pcie_train = train_picks[train_picks["guide_class"] == "PCIe"]
    nvl_train = train_picks[train_picks["guide_class"] != "PCIe"]
    train_parts = []
    if len(pcie_train):
        train_parts.append(_("the PCIe picks for training use tensor parallelism of at most tp{tp}, with up to "
                             "{comm:.0f} % of the step in exposed communication, and leave the rest of the scale-out "
                             "to data and pipeline parallelism", tp=int(pcie_train["tp"].max()),
                             comm=pcie_train["exposed_comm_pct"].max()))
    if len(nvl_train):
        train_parts.append(_("the NVLink-class picks use up to tp{tp}", tp=int(nvl_train["tp"].max())))
    facts["c27_train"] = (_("{parts}.", parts=_("; ").join(train_parts)) if train_parts
                          else _("no training option is feasible here."))
    serve = decided[decided["kind"] == "serve"]
    pcie_serve = serve[serve["guide_class"] == "PCIe"]
    blocked = serve[serve["pcie_reason"].isin(["too slow", "does not fit"])]
    serve_parts = []
    if len(pcie_serve):
        serve_parts.append(_("the PCIe picks use at most tp{tp}", tp=int(pcie_serve["tp"].max())))
    if len(blocked):
        serve_parts.append(_("from {size:.1f}B up no PCIe option can serve at the floor at all",
                             size=blocked["params_B"].min()))
    facts["c27_serve"] = (_("For serving, {parts}.", parts=_(", and ").join(serve_parts)) if serve_parts
                          else _("For serving, no size separates the two at these prices."))
    return facts


def claims_facts(verdicts: Mapping[str, Verdict], decided: pd.DataFrame) -> Facts:
    """Facts of the section on claims C26 and C27, as Markdown in both languages unless numbers: each verdict
    (bold), what decided it and its explanation; the article's size line (billion parameters), how many of the
    guide's size brackets (workload x pricing type) hold it and which; and the tensor-parallel degrees and
    exposed communication (per cent of the step) of the guide's PCIe and NVLink-class picks."""
    limits = guide.thresholds(decided)
    inside = sum(b is not None and not pd.isna(b) and b < cost_claims.SIZE_LINE_B <= t
                 for b, t in zip(limits["below_B"], limits["threshold_B"]))
    return {**glue.per_language(lambda: _claims_texts(verdicts, decided)), "size_line_B": cost_claims.SIZE_LINE_B,
            "line_inside": int(inside), "line_cases": len(limits)}


def _deadline_answer(ex: pd.DataFrame, tight: pd.DataFrame, tight_h: float, table: PriceTable) -> str:
    """Exercise 2's answer in the current language (Markdown)."""
    loose_top, tight_top = recommend.best(ex), recommend.best(tight)
    if tight_top is None or loose_top is None:
        return _("No option meets a {days:.0f}-day deadline within {gpus} GPUs at these prices: the job needs more "
                 "GPUs (raise `--max-gpus`) or more time.", days=tight_h / 24, gpus=tight.attrs["max_gpus"])
    same = (tight_top["offer"], tight_top["instances"]) == (loose_top["offer"], loose_top["instances"])
    missed = int(((ex["time_h"] > tight_h) & ex["feasible"]).sum())
    values = dict(**_instances(tight_top), layout=tight_top["layout"], days=tight_top["time_h"] / 24,
                  cost=price(tight_top["cost_usd"], table, ESTIMATE), old=ex.attrs["deadline_h"] / 24)
    if same:  # the deadline does not bind: no ratio of a cost to itself
        first = _("The cheapest option is still {n} x {per} {gpu} ({cls}, `{layout}`): {days:.1f} days for "
                  "{cost}, the {old:.0f}-day pick, which already met the tighter deadline. ", **values)
        second = (_("The tighter deadline removes {missed} options that took longer, none of them cheaper. ",
                    missed=missed) if missed else "")
    else:
        first = _("The cheapest option is now {n} x {per} {gpu} ({cls}, `{layout}`): {days:.1f} days for "
                  "{cost}, {ratio:.2f} times the {old:.0f}-day pick's cost. ",
                  ratio=tight_top["cost_usd"] / loose_top["cost_usd"], **values)
        second = _("{missed} of the options that met the longer deadline miss the shorter one, among them the earlier "
                   "pick, so the ranking moves to faster, dearer ones. ", missed=missed)
    return first + second + _("A deadline can only remove options, never make one cheaper: the cost of meeting it "
                              "is the gap between the two picks.")


def deadline_exercise_facts(ex: pd.DataFrame, table: PriceTable, pricing: str,
                            cal: Calibration | None = None, tight_h: float = TIGHT_DEADLINE_H) -> Facts:
    """Exercise 2: the training example (``ex``, :func:`training_example` of ``table`` at ``pricing``) rerun
    with a deadline of ``tight_h`` hours: the deadline in days and hours, and the answer as Markdown in both
    languages (the new pick's days and USD per job, its cost over the earlier pick's, and how many options the
    tighter deadline removes)."""
    tight = training_example(table, pricing, cal=cal, deadline_h=tight_h)
    return {"ex2_days": tight_h / 24, "ex2_hours": tight_h,
            **glue.per_language(lambda: {"ex2_answer": _deadline_answer(ex, tight, tight_h, table)})}


def _floor_why(before: pd.DataFrame, after: pd.DataFrame, changed: bool) -> str:
    """Exercise 3's explanation in the current language, from the size line before and after (rows of
    :func:`multigpu.evidence.guide.thresholds`): which way the line moved, if at all, and why."""
    old = before["threshold_B"].iloc[0] if len(before) else None
    new = after["threshold_B"].iloc[0] if len(after) else None
    reason = _("A higher floor leaves a smaller batch per replica and a shorter time per token, so the fixed cost of "
               "each token's all-reduces weighs more, and a model that met the floor on PCIe may now need GPUs "
               "joined by NVLink.")
    if old is not None and new is not None and new < old:
        return _("The line moves towards smaller models. {reason}", reason=reason)
    if old is not None and new is not None and new > old:
        return _("The line moves towards larger models: here the faster floor removes NVLink options above it "
                 "rather than PCIe options below it.")
    if changed:
        return _("The line stays where it was: the models at its edge keep their classes, and the change is at the "
                 "top, where the largest models lose options that no longer meet the floor. {reason}", reason=reason)
    return _("Nothing moves at these prices: every model keeps its class. {reason}", reason=reason)


def floor_exercise_facts(decided: pd.DataFrame, table: PriceTable, pricing: str, cal: Calibration | None = None,
                         floor: float = FAST_FLOOR) -> Facts:
    """Exercise 3: the guide's serving decisions for the models of ``decided`` rerun with a floor of ``floor``
    tokens per second per user: the floor, and in both languages the size line at ``pricing`` prices before
    and after (Markdown phrases, billion parameters) and the models whose class changes."""
    model_ids = tuple(dict.fromkeys(decided["model"]))
    faster = guide.decisions(table, model_ids, kinds=("serve",), serve={"tokens_per_s_per_user": floor}, cal=cal)
    limits = guide.thresholds(decided)
    line_30 = limits[(limits["kind"] == "serve") & (limits["pricing"] == pricing)]["text"]
    after = guide.thresholds(faster)
    after = after[after["pricing"] == pricing]
    line_50 = after["text"]
    moved = faster[faster["pricing"] == pricing].set_index("model")["guide_class"]
    before = decided[(decided["kind"] == "serve") & (decided["pricing"] == pricing)].set_index("model")["guide_class"]
    changed = [m for m in moved.index if moved[m] != before.get(m)]
    nothing = guide.NO_LINE

    def texts() -> Facts:
        return {
            "ex3_why": _floor_why(limits[(limits["kind"] == "serve") & (limits["pricing"] == pricing)], after,
                                  bool(changed)),
            "ex3_line_30": line_text(line_30.iloc[0] if len(line_30) else nothing),
            "ex3_line_50": line_text(line_50.iloc[0] if len(line_50) else nothing),
            "ex3_changed": _(", ").join(_("`{model}` ({before} to {after})", model=m, before=word(before.get(m)),
                                          after=word(moved[m])) for m in changed) if changed
            else _("none of the models"),
        }

    return {"ex3_floor": floor, **glue.per_language(texts)}
