"""Chapter 5 (selection guide): its figures, its worked examples and the facts its prose cites.

The guide itself (classes, picks, size lines, price flips) is
:mod:`multigpu.evidence.guide`; the recommender is :mod:`multigpu.market.recommend`.
Every number or sentence the chapter's Markdown cites is built here, by one
``*_facts`` function per section, from the price table the notebook passes
down (``inputs.price_table()``), the calibration (None: the shipped one) and
the guide's :func:`~multigpu.evidence.guide.decisions`, which the notebook
computes once and hands to every table, figure and facts function. The
notebook glues each dict with :func:`multigpu.book.glue.glue_all`. Nothing here
reads the environment.

Units: model sizes in billions of parameters (``_B``); training costs in USD
per job, serving costs in USD per hour or per million output tokens; times in
hours (``_h``) or days; tokens per step in units of 2**20 tokens (``_M``);
shares in per cent (``_pct``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from multigpu.book import plotting
from multigpu.book.glue import Facts, verdict_facts
from multigpu.comm.calibration import Calibration
from multigpu.compute import models
from multigpu.evidence import guide
from multigpu.evidence.claims import Verdict
from multigpu.evidence.claims import cost as cost_claims
from multigpu.hardware import catalog
from multigpu.market import cost, recommend
from multigpu.market.prices import PriceTable

#: Fill colour and hatch of each guide class: lightness differs, so the classes read in grey-scale print.
CLASS_STYLE = {"PCIe": ("#FFFFFF", ""), "NVLink bridge": ("#E69F00", "///"), "GPU mesh node": ("#CC79A7", "xx"),
               "NVSwitch node": ("#56B4E9", "..."),
               "multi-node / NVL72": ("#0072B2", "xxx"), "none feasible": ("#BBBBBB", "")}
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


def _short_gpu(gpu_id: str) -> str:
    """A GPU's name without vendor, brand and memory size: 'H100 SXM5', 'RTX 4090', 'A100 PCIe'."""
    words = catalog.gpu(gpu_id).name.replace("GeForce ", "").replace("NVIDIA ", "").split(" (")[0].split()
    return " ".join(w for w in words if not w.upper().endswith("GB")) or gpu_id



def plot_decision_matrix(ax: Any, table: pd.DataFrame) -> None:
    """The decision matrix: model size (rows) x workload and pricing type (columns); each cell is filled with a
    light tint of its guide class and names it (first line: the class's short name), then the GPU and the
    number of instances, in black or white, whichever contrasts more; no hatching behind text."""
    from matplotlib.patches import Patch, Rectangle

    columns = list(dict.fromkeys(zip(table["kind"], table["pricing"])))
    model_ids = list(dict.fromkeys(table.sort_values("params_B", kind="stable")["model"]))
    cells = table.set_index(["model", "kind", "pricing"])
    # each class: a light Okabe-Ito tint (black text reads on all) and the short name its cells start with
    fills = {"PCIe": ("#ffffff", "PCIe"), "NVLink bridge": (plotting.tint(plotting.COLORS[1], 0.35), "bridge"),
             "GPU mesh node": (plotting.tint(plotting.COLORS[4], 0.4), "mesh"),
             "NVSwitch node": (plotting.tint(plotting.COLORS[5], 0.4), "NVSwitch"),
             "multi-node / NVL72": (plotting.tint(plotting.COLORS[2], 0.45), "multi-node"),
             "none feasible": ("#dddddd", "none")}
    for j, (kind, pricing) in enumerate(columns):
        for i, model_id in enumerate(model_ids):
            row = cells.loc[(model_id, kind, pricing)]
            cls = row["guide_class"]
            ax.add_patch(Rectangle((j, i), 1, 1, facecolor=fills[cls][0], edgecolor="#777777", linewidth=0.8))
            label = fills[cls][1]
            if cls != "none feasible":
                label += f"\n{_short_gpu(row['gpu'])}\nx{int(row['instances'])}"
            ax.text(j + 0.5, i + 0.5, label, ha="center", va="center", fontsize=plotting.SMALL_PT,
                    linespacing=1.15, color=plotting.text_color_on(fills[cls][0]))
    ax.set_xlim(0, len(columns))
    ax.set_ylim(len(model_ids), 0)
    ax.set_xticks([j + 0.5 for j in range(len(columns))],
                  [f"{'train' if k == 'train' else 'serve'}\n{p}" for k, p in columns], fontsize=plotting.SMALL_PT)
    names = [models.model(m).name.split(" (")[0] for m in model_ids]
    ax.set_yticks([i + 0.5 for i in range(len(model_ids))], ["\n".join(n.rsplit(" ", 1)) for n in names],
                  fontsize=plotting.SMALL_PT + 1)
    ax.grid(False)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    kinds = [k for k, _ in columns]
    if "train" in kinds and "serve" in kinds:
        ax.axvline(kinds.index("serve"), color="black", linewidth=2.0)
    present = [c for c in (*guide.CLASSES, "none feasible") if c in set(table["guide_class"])]
    handles = [Patch(facecolor=fills[c][0], edgecolor="#777777",
                     label=c if fills[c][1] == c else f"{fills[c][1]}: {c}") for c in present]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.01), ncols=3, fontsize=plotting.SMALL_PT + 0.5,
              title="cheapest class (first line of each cell)", title_fontsize=plotting.SMALL_PT + 0.5)


def plot_class_costs(ax: Any, frame: pd.DataFrame) -> None:
    """Against model size (log scale): each guide class's cheapest option over the cheapest option of any
    class (1 = the cheapest class), one line per class, from :func:`class_costs`; the smaller classes are
    drawn on top, so that a tie at 1 shows them."""
    floor = frame.groupby("model")["cost"].transform("min")
    frame = frame.assign(relative=frame["cost"] / floor)
    for i, cls in enumerate(guide.CLASSES):
        part = frame[frame["guide_class"] == cls].sort_values("params_B", kind="stable")
        if part.empty:
            continue
        ax.plot(part["params_B"], part["relative"], label=cls, color=plotting.COLORS[i * 2 % len(plotting.COLORS)],
                linestyle=plotting.LINESTYLES[i], marker=plotting.MARKERS[i], zorder=5 - i)
    ax.axhline(1.0, color="#444444", linewidth=0.8)
    ax.set_xscale("log")
    ax.legend(fontsize=8)



def plot_pareto(ax: Any, frame: pd.DataFrame, title: str, deadline_h: float | None = None,
                legend: bool = True) -> None:
    """Every option that runs, cost per job against hours (log-log), one marker per guide class; the Pareto
    front (:func:`multigpu.market.recommend.pareto`) as a step line; the deadline as a dashed line. A frame
    with no option that runs gives an empty panel that says so."""
    ran = frame.dropna(subset=["cost_usd", "time_h"])
    if ran.empty:
        ax.text(0.5, 0.5, "no option runs", transform=ax.transAxes, ha="center", va="center", fontsize=9)
        ax.set_title(title, fontsize=9)
        return
    for i, cls in enumerate(guide.CLASSES):
        part = ran[ran["guide_class"] == cls]
        if part.empty:
            continue
        color = plotting.COLORS[i * 2 % len(plotting.COLORS)]
        ax.scatter(part["time_h"], part["cost_usd"], s=14, marker=plotting.MARKERS[i], facecolors="none",
                   edgecolors=color, linewidths=0.9, label=cls)
    front = recommend.pareto(ran).sort_values("time_h", kind="stable")
    ax.step(front["time_h"], front["cost_usd"], where="post", color="black", linewidth=1.2, label="Pareto front")
    if deadline_h is not None:
        ax.axvline(deadline_h, color="#444444", linestyle="--", linewidth=1.0, label="deadline")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(title, fontsize=9)
    if legend:
        ax.legend(fontsize=plotting.SMALL_PT, loc="center left", bbox_to_anchor=(1.02, 0.5))


# ------------------------------------------------------------------ figures of the chapter


def source(table: PriceTable) -> str:
    """The figures' source line for a price table: its file name and the first 12 hex digits of its SHA-256."""
    return table.source_label()


def figure_decision_matrix(decided: pd.DataFrame, table: PriceTable) -> Figure:
    """The decision matrix (:func:`plot_decision_matrix`) of :func:`multigpu.evidence.guide.decisions` on
    ``table``, with the chapter's title and source line."""
    fig, ax = plotting.figure(
        "Cheapest interconnect class by model, workload and pricing type", "workload and pricing type", "model",
        source=f"{source(table)}; multigpu.evidence.guide.decisions (cell: GPU and instances rented)",
        figsize=(6.8, 6.4))
    plot_decision_matrix(ax, decided)
    counts = decided["guide_class"].value_counts()
    classes = ", ".join(f"{c} {counts[c]}" for c in (*guide.CLASSES, "none feasible") if c in counts)
    return plotting.set_alt(fig, f"Grid of {decided['model'].nunique()} models (rows) by "
                                 f"{len(set(zip(decided['kind'], decided['pricing'])))} workload and pricing "
                                 f"columns; each cell names the cheapest interconnect class, the GPU and how many "
                                 f"are rented. Cells per class: {classes}.")


def figure_class_costs(table: PriceTable, pricing: str, model_ids: tuple[str, ...] | None = None,
                       cal: Calibration | None = None) -> Figure:
    """Training (USD per job) and real-time serving (USD per million output tokens) side by side: each guide
    class's cheapest option at ``pricing`` prices over the cheapest of all, against model size (billion
    parameters), for ``model_ids`` (default :data:`multigpu.evidence.guide.MODELS`)."""
    model_ids = guide.MODELS if model_ids is None else model_ids
    fig, axes = plotting.figure(
        "Cheapest option of each class, relative to the cheapest overall", "model size (billion parameters, log scale)",
        "cost / cheapest option's cost", nrows=2, figsize=(6.8, 7.4),
        source=f"{source(table)}, {pricing} offers; multigpu.evidence.guide.class_costs")
    worst, sizes = [], []
    for ax, kind in zip(axes, ("train", "serve")):
        frame = guide.class_costs(model_ids, kind, pricing, table, cal=cal)
        plot_class_costs(ax, frame)
        ax.set_title(f"{guide.KIND_TITLES[kind]} ({guide.cost_unit(kind)})", fontsize=10)
        relative = frame["cost"] / frame.groupby("model")["cost"].transform("min")
        worst.append(f"{guide.KIND_TITLES[kind]} up to {plotting.span([relative.max()], 'times')}")
        sizes += list(frame["params_B"])
    return plotting.set_alt(fig, "Two line charts: each interconnect class's cheapest option over the cheapest "
                                 f"overall against model size ({plotting.span(sizes, 'billion')} "
                                 f"parameters), 1 being the cheapest; {'; '.join(worst)}.")


def pareto_options(table: PriceTable, pricing: str, cal: Calibration | None = None) -> dict[str, pd.DataFrame]:
    """The guide's training options (:func:`multigpu.evidence.guide.options`; USD per job, hours) of each
    model of :data:`PARETO_MODELS` at ``pricing`` prices, keyed by model id."""
    frames = {}
    for model_id in PARETO_MODELS.values():
        frame = guide.options(model_id, "train", table, cal=cal)
        frames[model_id] = frame[frame["pricing"] == pricing]
    return frames


def figure_pareto(frames: Mapping[str, pd.DataFrame], table: PriceTable, pricing: str) -> Figure:
    """Cost (USD per job) against time (hours) of every training option of :func:`pareto_options`, one panel
    per model, with the Pareto front and the guide's deadline."""
    fig, axes = plotting.figure(
        "Cost against time of every training option", "job time (hours, log scale)",
        "cost (USD per job, log scale)", nrows=len(frames), figsize=(6.8, 0.8 + 3.4 * len(frames)),
        source=f"{source(table)}, {pricing} offers; multigpu.market.recommend.train and pareto")
    words = []
    for i, (ax, (model_id, frame)) in enumerate(zip(axes if len(frames) > 1 else [axes], frames.items())):
        plot_pareto(ax, frame, models.model(model_id).name, guide.DEADLINE_DAYS * 24, legend=i == len(frames) - 1)
        ran = frame.dropna(subset=["cost_usd", "time_h"])
        words.append(f"{models.model(model_id).name}: {len(ran)} options, "
                     f"{plotting.span(ran['time_h'], 'hours')}, {plotting.span(ran['cost_usd'], 'USD')}"
                     if len(ran) else f"{models.model(model_id).name}: no option runs")
    return plotting.set_alt(fig, "Scatter plots, log-log, one per model: cost per training job against job time "
                                 f"with the Pareto front and the deadline. {'; '.join(words)}.")


# ------------------------------------------------------------------ facts for the prose, one function per section


def _plural(n: Any, word: str) -> str:
    return f"{word}{'s' if n != 1 else ''}"


def intro_facts(table: PriceTable) -> Facts:
    """The chapter's opening and method facts: the price stamp (Markdown), the guide's model sizes (billion
    parameters), its settings (tokens per parameter, deadline in days, GPU limit, tie in per cent, the serving
    query in tokens, tokens per second per user and queries per second) and the recommender's defaults
    (GPU limit; tokens per step in units of 2**20 tokens, by model size in billion parameters)."""
    (small_B, small_t), (mid_B, mid_t), (_, large_t) = recommend.TOKENS_PER_STEP
    return {
        "price_stamp": table.stamp_markdown(),
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


def training_example(table: PriceTable, pricing: str, cal: Calibration | None = None,
                     deadline_h: float | None = None) -> pd.DataFrame:
    """The recommender's ranked options (:func:`multigpu.market.recommend.train`: hours, USD per job) for
    :data:`TRAIN_EXAMPLE` on the ``pricing`` offers of ``table``; ``deadline_h`` (hours) replaces its deadline."""
    ex = TRAIN_EXAMPLE
    return recommend.train(ex["model"], ex["tokens"], table.of_pricing(pricing), max_gpus=int(ex["max_gpus"]),
                           deadline_h=ex["deadline_h"] if deadline_h is None else deadline_h, cal=cal)


def training_example_facts(ex: pd.DataFrame) -> Facts:
    """Facts of the training example (:func:`training_example`): its tokens (billions), deadline (days), GPU
    limit, the options shown, counted and split (feasible, late, cannot run), the layouts timed, the pick
    (days, USD per job, exposed communication in per cent of the step) and ``ex_front`` (:func:`front_sentence`),
    the last two as Markdown sentences."""
    facts: Facts = {
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
    }
    top = recommend.best(ex)
    if top is None:
        facts["ex_best"] = "no option meets the deadline"
    else:
        facts["ex_best"] = (
            f"{top['instances']} {_plural(top['instances'], 'instance')} of {top['gpus_per_instance']} "
            f"{top['gpu']} GPUs ({top['interconnect_class']}) with layout `{top['layout']}`: "
            f"{top['time_h'] / 24:.1f} days and USD {top['cost_usd']:,.0f}, with exposed communication "
            f"{top['exposed_comm_pct']:.0f} % of the step")
    facts["ex_front"] = front_sentence(recommend.pareto(ex))
    return facts


def front_sentence(front: pd.DataFrame) -> str:
    """What the Pareto front of cost against time says, as a Markdown sentence: how many options sit on it and
    whether time can be bought (the fastest over the cheapest cost), in words that fit the numbers."""
    front = front[front["feasible"]] if "feasible" in front else front
    if front.empty:
        return "No option meets the deadline, so there is no front to read."
    fast, cheap = front.sort_values("time_h", kind="stable").iloc[0], front["cost_usd"].min()
    ratio = fast["cost_usd"] / cheap
    if len(front) == 1:
        return (f"Of the feasible options, only one sits on the Pareto front of cost against time: the cheapest, "
                f"{fast['time_h']:.1f} hours for USD {fast['cost_usd']:,.0f}, is also the fastest, so time costs "
                f"nothing extra here.")
    if ratio < 1.005:
        return (f"Of the feasible options, {len(front)} sit on the Pareto front of "
                f"cost against time; the fastest, {fast['time_h']:.1f} hours for USD {fast['cost_usd']:,.0f}, costs "
                f"no more than the cheapest, so time costs nothing extra here.")
    return (f"Of the feasible options, {len(front)} sit on the Pareto front of cost against time; the fastest takes "
            f"{fast['time_h']:.1f} hours for USD {fast['cost_usd']:,.0f}, {ratio:.2f} times the cheapest cost: that "
            f"is the price of time here.")


def serving_example(table: PriceTable, pricing: str, cal: Calibration | None = None) -> pd.DataFrame:
    """The recommender's ranked options (:func:`multigpu.market.recommend.serve`: USD per hour and per million
    output tokens) for :data:`SERVE_EXAMPLE` on the ``pricing`` offers of ``table``."""
    ex = SERVE_EXAMPLE
    return recommend.serve(ex["model"], ex["tokens_per_s_per_user"], ex["requests_per_s"],
                           table.of_pricing(pricing), cal=cal)


def serving_example_facts(sv: pd.DataFrame) -> Facts:
    """Facts of the serving example (:func:`serving_example`): the pick as a Markdown sentence (instances,
    layout, USD per hour, USD per million output tokens, load in per cent) and the counts of offers that
    cannot serve, that are too slow for the floor, and of those the PCIe-only ones."""
    top = recommend.best(sv)
    if top is None:
        best = "no offer can carry the load at the floor"
    else:
        best = (f"{top['instances']} {_plural(top['instances'], 'instance')} of {top['gpus_per_instance']} "
                f"{top['gpu']} GPUs ({top['interconnect_class']}), each replica on `{top['layout']}`, for USD "
                f"{top['cost_per_hour_usd']:,.2f} per hour or USD {top['cost_per_million_tokens_usd']:.2f} per "
                f"million output tokens; the instances are loaded to {top['load_pct']:.0f} %")
    cannot = sv[sv["cost_per_hour_usd"].isna()]
    slow = cannot[cannot["reason"].str.contains("too slow")]
    return {"sv_best": best, "sv_cannot": len(cannot), "sv_slow": len(slow),
            "sv_slow_pcie": int((slow["interconnect_class"] == cost.PCIE_CLASS).sum())}


def _lines(limits: pd.DataFrame, kind: str) -> str:
    return guide.lines_phrase(limits[limits["kind"] == kind])


def guide_facts(decided: pd.DataFrame, pricing: str) -> Facts:
    """Facts of the decision guide (:func:`multigpu.evidence.guide.decisions`), as Markdown: the reference
    pricing type, the size line of each workload at every pricing type and at ``pricing``, and the sentences
    on PCIe serving picks (largest model in billion parameters, tensor-parallel degree), the sizes from which
    no PCIe option can serve, the multi-node training picks and the jobs no option can train in time."""
    limits = guide.thresholds(decided)
    ref_limits = limits[limits["pricing"] == pricing].set_index("kind")["text"]
    serve = decided[decided["kind"] == "serve"]
    train = decided[decided["kind"] == "train"]
    pcie_serve = serve[serve["guide_class"] == "PCIe"]
    blocked = serve[serve["pcie_reason"].isin(["too slow", "does not fit"])]
    slow_n = int((blocked["pcie_reason"] == "too slow").sum())
    multi = train[(train["pricing"] == pricing) & (train["guide_class"] == "multi-node / NVL72")]
    none_train = train[train["guide_class"] == "none feasible"]
    return {
        "ref": pricing,
        "in_short": f"For training, {_lines(limits, 'train')}. For real-time serving, {_lines(limits, 'serve')}.",
        "train_lines": _lines(limits, "train"),
        "serve_lines": _lines(limits, "serve"),
        "ref_train_line": ref_limits.get("train", "no model has a feasible option"),
        "ref_serve_line": ref_limits.get("serve", "no model has a feasible option"),
        "pcie_serve_sentence": (f"PCIe picks serve models up to {pcie_serve['params_B'].max():.1f}B, with tensor "
                                f"parallelism of at most tp{int(pcie_serve['tp'].max())}.") if len(pcie_serve)
        else "at these prices no serving pick is a PCIe box.",
        "pcie_blocked_sentence": (f"from {blocked['params_B'].min():.1f}B up no PCIe option can serve at all, too "
                                  f"slow for the floor in {slow_n} of those {len(blocked)} cases and too small in "
                                  f"the rest.") if len(blocked)
        else "even so, some PCIe option stays feasible at every size here.",
        "train_multi_sentence": (f"From {multi['params_B'].min():.1f}B up the pick spans several NVLink nodes: one "
                                 f"node is too small or too slow for the deadline.") if len(multi) else "",
        "none_train_sentence": ("No option meets the deadline for " + ", ".join(
            f"`{m}` at {p} prices" for m, p in zip(none_train["model"], none_train["pricing"]))
            + ": the job needs more GPUs than the guide allows, or more time.") if len(none_train) else "",
    }


def front_text(front: pd.DataFrame) -> str:
    """A Pareto front (:func:`multigpu.market.recommend.pareto` of guide options) in one Markdown phrase: its
    size, its cheapest option (USD per job, days, class, GPUs), its fastest (hours, times the cheapest cost,
    class, GPUs) and the classes on it."""
    if front.empty:
        return "no option runs"
    cheap, quick = front.iloc[0], front.sort_values("time_h", kind="stable").iloc[0]
    classes = sorted(set(front["guide_class"]))
    return (f"{len(front)} {_plural(len(front), 'option')} on the front, from USD {cheap['cost_usd']:,.0f} in "
            f"{cheap['time_h'] / 24:,.1f} days ({cheap['guide_class']}, {int(cheap['gpus'])} GPUs) to "
            f"{quick['time_h']:,.1f} hours for {quick['cost_usd'] / cheap['cost_usd']:.1f} times the cost "
            f"({quick['guide_class']}, {int(quick['gpus'])} GPUs); classes on the front: {', '.join(classes)}")


def front_facts(frames: Mapping[str, pd.DataFrame]) -> Facts:
    """The Pareto front of each job of :func:`pareto_options` as a Markdown phrase (:func:`front_text`), under
    the glue names of :data:`PARETO_MODELS`."""
    return {name: front_text(recommend.pareto(frames[model_id])) for name, model_id in PARETO_MODELS.items()}


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


def flip_facts(decided: pd.DataFrame, pricing: str) -> Facts:
    """Facts of the section on prices and of exercise 1, as Markdown: the closest flip case of ``pricing``
    (:func:`multigpu.evidence.guide.flip_case`): the PCIe price factor that flips it and the cut in per cent,
    and the exercise's question and answer with the two costs (USD per job or per million output tokens)."""
    case = guide.flip_case(decided, pricing)
    if case is None:
        return {
            "flip_sentence": "No case at these prices has an NVLink-class pick with a feasible PCIe option to flip "
                             "to, so there is nothing to demonstrate.",
            "flip_sentence_short": "no case at these prices can flip",
            "ex1_question": "Take any case of the guide with both a PCIe and an NVLink-class option. By how much "
                            "must every PCIe price change for the two to cost the same?",
            "ex1_answer": "By the ratio of the two costs: every cost is GPU-hours x price, and the GPU-hours do not "
                          "depend on the price. This price file has no case to compute it on.",
        }
    scale, title = case["pcie_price_scale_to_flip"], guide.KIND_TITLES[case["kind"]]
    cut = 100 * (1 - scale)
    return {
        "flip_sentence": f"The closest case is {title} of `{case['model']}`: PCIe prices must fall to {scale:.3f} "
                         f"times their level, a cut of {cut:.1f} %. Rerunning the guide with every PCIe price "
                         f"scaled shows the pick holding just above that factor and flipping just below it:",
        "flip_sentence_short": f"here a PCIe price cut of {cut:.1f} % flips the closest case",
        "ex1_question": f"For {title} of `{case['model']}` at {pricing} prices, the cheapest NVLink-class option "
                        f"costs {case['nvlink_cost']:,.2f} and the cheapest PCIe option {case['pcie_cost']:,.2f} "
                        f"({guide.cost_unit(case['kind'])}). By how much must every PCIe price fall for the PCIe "
                        f"option to be the cheaper one, and why does nothing else in the search change?",
        "ex1_answer": f"To {case['nvlink_cost']:,.2f} / {case['pcie_cost']:,.2f} = {scale:.3f} times their level, "
                      f"a cut of {cut:.1f} %. A price enters the cost only as a factor: the layouts, step times and "
                      f"instance counts that the search finds do not depend on it, so scaling every PCIe price "
                      f"scales every PCIe cost by the same factor and leaves the NVLink-class costs alone. The table "
                      f"in the section on prices reruns the guide just above and just below the factor and shows "
                      f"the flip.",
    }


def claims_facts(verdicts: Mapping[str, Verdict], decided: pd.DataFrame) -> Facts:
    """Facts of the section on claims C26 and C27, as Markdown unless numbers: each verdict (bold) and its
    explanation; the article's size line (billion parameters), how many of the guide's size brackets (workload
    x pricing type) hold it and which; and the tensor-parallel degrees and exposed communication (per cent of
    the step) of the guide's PCIe and NVLink-class picks."""
    facts: Facts = {}
    for claim_id in ("C26", "C27"):
        facts.update(verdict_facts({claim_id: verdicts[claim_id]}))
        facts[f"{claim_id.lower()}_explanation"] = verdicts[claim_id].explanation
    line = cost_claims.SIZE_LINE_B
    limits = guide.thresholds(decided)
    inside = limits[[b is not None and not pd.isna(b) and b < line <= t
                     for b, t in zip(limits["below_B"], limits["threshold_B"])]]
    in_serve, in_train = int((inside["kind"] == "serve").sum()), int((inside["kind"] == "train").sum())
    n_serve, n_train = int((limits["kind"] == "serve").sum()), int((limits["kind"] == "train").sum())
    facts.update({
        "size_line_B": line,
        "line_inside": len(inside),
        "line_cases": len(limits),
        "c26_where": f"That is {in_serve} of {n_serve} pricing types for real-time serving and {in_train} of "
                     f"{n_train} for training.",
        "line_inside_list": ", ".join(f"{guide.KIND_TITLES[k]} at {p} prices"
                                      for k, p in zip(inside["kind"], inside["pricing"])) or "none of them",
    })
    train_picks = decided[(decided["kind"] == "train") & (decided["guide_class"] != "none feasible")]
    pcie_train = train_picks[train_picks["guide_class"] == "PCIe"]
    nvl_train = train_picks[train_picks["guide_class"] != "PCIe"]
    train_parts = []
    if len(pcie_train):
        train_parts.append(f"the PCIe picks for training use tensor parallelism of at most "
                           f"tp{int(pcie_train['tp'].max())}, with up to {pcie_train['exposed_comm_pct'].max():.0f} "
                           f"% of the step in exposed communication, and leave the rest of the scale-out to data and "
                           f"pipeline parallelism")
    if len(nvl_train):
        train_parts.append(f"the NVLink-class picks use up to tp{int(nvl_train['tp'].max())}")
    facts["c27_train"] = ("; ".join(train_parts) + ".") if train_parts else "no training option is feasible here."
    serve = decided[decided["kind"] == "serve"]
    pcie_serve = serve[serve["guide_class"] == "PCIe"]
    blocked = serve[serve["pcie_reason"].isin(["too slow", "does not fit"])]
    serve_parts = []
    if len(pcie_serve):
        serve_parts.append(f"the PCIe picks use at most tp{int(pcie_serve['tp'].max())}")
    if len(blocked):
        serve_parts.append(f"from {blocked['params_B'].min():.1f}B up no PCIe option can serve at the floor at all")
    facts["c27_serve"] = (("For serving, " + ", and ".join(serve_parts) + ".") if serve_parts
                          else "For serving, no size separates the two at these prices.")
    return facts


def deadline_exercise_facts(ex: pd.DataFrame, table: PriceTable, pricing: str,
                            cal: Calibration | None = None, tight_h: float = TIGHT_DEADLINE_H) -> Facts:
    """Exercise 2: the training example (``ex``, :func:`training_example` of ``table`` at ``pricing``) rerun
    with a deadline of ``tight_h`` hours: the deadline in days and hours, and the answer as Markdown (the new
    pick's days and USD per job, its cost over the earlier pick's, and how many options the tighter deadline
    removes)."""
    tight = training_example(table, pricing, cal=cal, deadline_h=tight_h)
    loose_top, tight_top = recommend.best(ex), recommend.best(tight)
    facts: Facts = {"ex2_days": tight_h / 24, "ex2_hours": tight_h}
    if tight_top is None or loose_top is None:
        facts["ex2_answer"] = (f"No option meets a {tight_h / 24:.0f}-day deadline within {tight.attrs['max_gpus']} "
                               f"GPUs at these prices: the job needs more GPUs (raise `--max-gpus`) or more time.")
        return facts
    same = (tight_top["offer"], tight_top["instances"]) == (loose_top["offer"], loose_top["instances"])
    missed = int(((ex["time_h"] > tight_h) & ex["feasible"]).sum())
    facts["ex2_answer"] = (
        f"The cheapest option is now {tight_top['instances']} x {tight_top['gpus_per_instance']} "
        f"{tight_top['gpu']} ({tight_top['interconnect_class']}, `{tight_top['layout']}`): "
        f"{tight_top['time_h'] / 24:.1f} days for USD {tight_top['cost_usd']:,.0f}, "
        f"{tight_top['cost_usd'] / loose_top['cost_usd']:.2f} times the {ex.attrs['deadline_h'] / 24:.0f}-day "
        f"pick's cost. "
        + ("It is the same option as before: it already met the tighter deadline. " if same else
           f"{missed} of the options that met the longer deadline miss the shorter one, among them the earlier "
           f"pick, so the ranking moves to faster, dearer ones. ")
        + "A deadline can only remove options, never make one cheaper: the cost of meeting it is the gap between "
          "the two picks.")
    return facts


def floor_exercise_facts(decided: pd.DataFrame, table: PriceTable, pricing: str, cal: Calibration | None = None,
                         floor: float = FAST_FLOOR) -> Facts:
    """Exercise 3: the guide's serving decisions for the models of ``decided`` rerun with a floor of ``floor``
    tokens per second per user: the floor, the size line at ``pricing`` prices before and after (Markdown
    phrases, billion parameters) and the models whose class changes."""
    model_ids = tuple(dict.fromkeys(decided["model"]))
    faster = guide.decisions(table, model_ids, kinds=("serve",), serve={"tokens_per_s_per_user": floor}, cal=cal)
    limits = guide.thresholds(decided)
    line_30 = limits[(limits["kind"] == "serve") & (limits["pricing"] == pricing)]["text"]
    line_50 = guide.thresholds(faster)
    line_50 = line_50[line_50["pricing"] == pricing]["text"]
    moved = faster[faster["pricing"] == pricing].set_index("model")["guide_class"]
    before = decided[(decided["kind"] == "serve") & (decided["pricing"] == pricing)].set_index("model")["guide_class"]
    changed = [m for m in moved.index if moved[m] != before.get(m)]
    return {
        "ex3_floor": floor,
        "ex3_line_30": line_30.iloc[0] if len(line_30) else "no model has a feasible option",
        "ex3_line_50": line_50.iloc[0] if len(line_50) else "no model has a feasible option",
        "ex3_changed": ", ".join(f"`{m}` ({before.get(m)} to {moved[m]})" for m in changed) if changed
        else "none of the models",
    }
