"""Appendix, model validation: its figure, its tables' print form and the values its prose cites.

The comparisons come from :mod:`multigpu.evidence.validation` (the model against every measurement it
can reproduce); this module lays them out for the page:

- :func:`plot_predicted_vs_measured` draws them, :func:`figure_predicted_vs_measured` is the appendix's
  figure in the house style;
- :func:`fixed_batch_table` is NVIDIA's Table 3 beside ours, with units in the column names;
- :func:`sweep_table`, :func:`sweep_summary_table`, :func:`fitted_constants_table` and
  :func:`figure_holdout_sweeps` show the published sweeps, held-out ones first;
- the ``*_facts`` functions return the values one section of the prose cites, by glue name
  (:data:`multigpu.book.glue.Facts`), and :func:`facts` all of them: the notebook glues them with one
  call, ``glue_all(app_validation.facts(cal))``.

Errors are ``predicted / measured - 1`` in percent (``_pct``, ``e_<ref>``); ``_rows``, ``_within`` and
``n_`` values are row counts; ``_ref`` values and ``small_systems`` are text. Nothing here depends on a
price file.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from multigpu.book import plotting
from multigpu.book.glue import Facts, plain
from multigpu.comm import calibration, collectives
from multigpu.comm.calibration import Calibration
from multigpu.evidence import (
    bottlenecks,
    runs,
    serving,
    sweepfit,
    sweeps,
    validation,
    wiring,
)


def _scatter(ax, part: pd.DataFrame, style: int, label: str) -> None:
    color, marker = plotting.COLORS[style % 8], plotting.MARKERS[style % 8]
    for filled in (True, False):
        rows = part[(part["set"] == "fitted on") == filled]
        if len(rows):
            ax.scatter(rows["measured"], rows["predicted"], marker=marker, s=36, linewidths=1.2,
                       facecolors=color if filled else "none", edgecolors=color,
                       label=f"{label}, {'fitted on' if filled else 'not fitted on'}")


def _diagonal(ax, lo: float, hi: float) -> None:
    line = np.array([lo, hi])
    ax.plot(line, line, color="#444444", linewidth=1, linestyle="-", marker="")
    for factor in (0.9, 1.1):
        ax.plot(line, factor * line, color="#888888", linewidth=0.8, linestyle="--", marker="")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)


def plot_predicted_vs_measured(axes, table: pd.DataFrame | None = None, label_above_pct: float = 10.0) -> None:
    """Two panels of :func:`~multigpu.evidence.validation.comparisons`, predicted against measured on log axes,
    with y = x (solid) and +-10 % (dashed): bandwidths (collectives and copies, GB/s) on the left, training
    iterations (s) on the right. Filled markers: a constant was fitted on the row; hollow: not. Rows off by
    more than ``label_above_pct`` (%) are labelled with their ref."""
    table = validation.comparisons() if table is None else table
    left, right = axes
    bw = table[table["kind"] != "training"]
    groups = (("collectives, reference set", (bw["kind"] == "collective") & (bw["set"] != "out of sample")),
              ("copies, reference set", bw["kind"] == "copy"),
              ("collectives, out of sample", bw["set"] == "out of sample"))
    for style, (label, mask) in enumerate(groups):
        _scatter(left, bw[mask], style, label)
    train = table[table["kind"] == "training"]
    _scatter(right, train, 3, "training runs")
    for ax, part in ((left, bw), (right, train)):
        values = np.concatenate([part["measured"].to_numpy(), part["predicted"].to_numpy()])
        _diagonal(ax, values.min() / 1.6, values.max() * 1.6)
        far = part[part["error_pct"].abs() > label_above_pct].sort_values("measured")
        for j, row in enumerate(far.itertuples()):
            ax.annotate(row.ref, (row.measured, row.predicted), textcoords="offset points",
                        xytext=(6, -11 if j % 2 else 5), fontsize=plotting.SMALL_PT)
        ax.legend(fontsize=plotting.SMALL_PT, loc="lower right")
    left.set_title("collectives and copies", fontsize=10)
    right.set_title("training iterations (DGX A100 nodes)", fontsize=10)
    left.set_xlabel("measured (GB/s, log scale)")
    left.set_ylabel("predicted (GB/s, log scale)")
    right.set_xlabel("measured (s per iteration, log scale)")
    right.set_ylabel("predicted (s per iteration, log scale)")


def figure_predicted_vs_measured(table: pd.DataFrame) -> Figure:
    """The model against every measurement it can reproduce: predicted against measured, bandwidths (GB/s)
    and training iterations (s), from :func:`multigpu.evidence.validation.comparisons` (``table``)."""
    fig, axes = plotting.figure(
        "The model against every measurement it can reproduce", "measured", "predicted",
        source="multigpu.evidence.validation.comparisons: measurements.compare and out_of_sample "
               "(data/measurements.csv and published collectives), bottlenecks.training_validation "
               "(Megatron-LM, Korthikanti et al. 2022)",
        nrows=2, figsize=(6.8, 8.8))
    plot_predicted_vs_measured(axes, table)
    within = int((table["error_pct"].abs() <= 10).sum())
    return plotting.set_alt(fig, f"Two scatter plots, log-log, of {len(table)} comparisons, predicted against "
                                 "measured: bandwidths of collectives and copies (GB/s), and training iterations "
                                 f"(s); errors {plotting.span(table['error_pct'], '%')}, {within} of {len(table)} "
                                 "within 10 %.")


def fixed_batch_table(fixed: pd.DataFrame) -> pd.DataFrame:
    """:func:`multigpu.evidence.bottlenecks.compare_fixed_batch` for print: throughput columns renamed to
    ``<source>_tokens_per_s_per_gpu`` (the ``_x`` ratios keep their names), indexed by ``batch``, rounded
    to 2 decimals."""
    named = fixed.rename(columns=lambda c: c if c == "batch" or c.endswith("_x") else f"{c}_tokens_per_s_per_gpu")
    return named.set_index("batch").round(2)


# ----------------------------------------------------------------------------- published sweeps


def sweep_comparison(cal: Calibration | None = None) -> pd.DataFrame:
    """Every point of the held-out and fit sweeps against the model (:func:`multigpu.evidence.sweeps.compare`);
    the sealed sweeps stay unread."""
    return sweeps.compare(("holdout", "fit"), cal)


def sweep_summary_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """Median and worst |error| (%) by split, held-out first, and size class (from 64 MiB: large)."""
    summary = sweeps.summary(comparison)
    summary["split"] = pd.Categorical(summary["split"], ["holdout", "fit"], ordered=True)
    summary = summary.sort_values(["split", "size_class"])
    out = summary.assign(median_abs_error_pct=100 * summary["median_abs_error"],
                         worst_abs_error_pct=100 * summary["worst_abs_error"])
    return out[["split", "size_class", "points", "median_abs_error_pct", "worst_abs_error_pct"]].round(1)


def sweep_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """One row per compared sweep, held-out first: what it measured and the model's median |error| (%) on its
    small and large messages (empty where it has none)."""
    data = comparison.assign(abs_error_pct=100 * comparison["rel_error"].abs())
    errors = data.pivot_table(index="sweep", columns="size_class", values="abs_error_pct", aggfunc="median")
    rows = data.groupby("sweep").agg(split=("split", "first"), system=("system", "first"), op=("op", "first"),
                                     gpus=("gpus", "first"), nodes=("nodes", "first"),
                                     algorithm=("algorithm", "first"), points=("bytes", "size"))
    for size_class in ("small", "large"):
        rows[f"median_abs_error_{size_class}_pct"] = errors.get(size_class)
    rows["split"] = pd.Categorical(rows["split"], ["holdout", "fit"], ordered=True)
    return rows.sort_values(["split", "sweep"]).round(1)


def fitted_constants_table(cal: Calibration | None = None) -> pd.DataFrame:
    """The constants fitted on the fit sweeps (:data:`multigpu.evidence.sweepfit.FITTED`): value, unit and the
    fit sweeps that move them."""
    cal = calibration.resolve(cal)
    rows = []
    for parameter in sweepfit.FITTED:
        constant = cal.constant(*parameter.ident)
        rows.append({"constant": f"{constant.name}/{constant.key}", "value": constant.value, "unit": constant.unit,
                     "fit_sweeps": len(constant.fitted_sweeps), "fitted_on": ", ".join(constant.fitted_sweeps)})
    return pd.DataFrame(rows).set_index("constant")


def figure_holdout_sweeps(comparison: pd.DataFrame, cal: Calibration | None = None) -> Figure:
    """Each held-out sweep: measured busbw (markers) and the model's (line) against message size, log axes."""
    held = comparison[comparison["split"] == "holdout"]
    names = sorted(held["sweep"].unique())
    ncols = 2
    nrows = -(-len(names) // ncols)
    fig, axes = plotting.figure(
        "Held-out sweeps: the model against measurements it never saw", "message size (bytes, log scale)",
        "busbw (GB/s, log scale)", ncols=ncols, nrows=nrows, figsize=(6.8, 0.9 + 2.7 * nrows),
        source="data/sweeps.csv (published nccl-tests, rccl-tests and torch.distributed sweeps, split by a "
               "hash of their id before any comparison); multigpu.evidence.sweeps.compare")
    for ax, name in zip(axes, names):
        part = held[held["sweep"] == name].sort_values("bytes")
        ax.scatter(part["bytes"], part["measured"], s=14, color=plotting.COLORS[0], label="measured")
        ax.plot(part["bytes"], part["predicted"], color=plotting.COLORS[1], marker="", label="model")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"{name}\n{part['system'].iloc[0]}, {part['gpus'].iloc[0]} GPUs, {part['nodes'].iloc[0]} "
                     f"node(s)", fontsize=plotting.SMALL_PT + 0.5)
        ax.tick_params(labelsize=plotting.SMALL_PT)
    for ax in list(axes)[len(names):]:
        ax.set_visible(False)
    axes[0].legend(fontsize=plotting.SMALL_PT, loc="upper left")
    errors = 100 * held["rel_error"].abs()
    return plotting.set_alt(fig, f"{len(names)} log-log panels, one per held-out sweep: measured busbw (points) "
                                 f"and the model's (line) against message size; median error "
                                 f"{errors.median():.1f} %, worst {errors.max():.0f} %.")


#: a held-out sweep's small messages count as too fast (slow) in the model beyond this median relative error
SIDE = 0.25


#: fit sweeps whose model curve is drawn with NCCL's choice of algorithm and protocol at every size
PROTOCOL_SWEEPS = ("h200-8-ar-torch-mleng", "rtx4090-4-ar-nccltests-kalavai", "h100-32-4n-ar-ib-ncclt309",
                   "mi300x-16-2n-ar-roce-rccltests")


def figure_protocol_switches(cal: Calibration | None = None, names: tuple[str, ...] = PROTOCOL_SWEEPS) -> Figure:
    """Measured busbw of some fit sweeps (markers) and the model's (line), the line split where the model
    switches algorithm or protocol (LL, LL128, Simple; ring, tree, NVLS), each piece labelled."""
    cal = calibration.resolve(cal)
    by_name = {s.sweep: s for s in sweeps.sweeps()}
    data = sweeps.points()
    fig, axes = plotting.figure(
        "Where the model switches protocol and algorithm, against measured sweeps",
        "message size (bytes, log scale)", "busbw (GB/s, log scale)", ncols=2, nrows=2, figsize=(6.8, 7.8),
        source="data/sweeps.csv (fit sweeps); multigpu.comm.collectives.evaluate (the model's choice at each size)")
    for ax, name in zip(axes, names):
        sweep = by_name[name]
        part = data[data["sweep"] == name].sort_values("bytes")
        factor = collectives.busbw_factor(sweep.op, sweep.gpus)
        measured = part["busbw_GBps"].fillna(part["bytes"] / part["time_us"] / 1e3 * factor)
        ax.scatter(part["bytes"], measured, s=14, color="#444444", label="measured", zorder=3)
        sizes = 2.0 ** np.arange(np.log2(part["bytes"].min()), np.log2(part["bytes"].max()) + 0.01, 0.25)
        chosen = collectives.evaluate(sweep.op, sweep.system, sweep.gpus, sizes, nodes=sweep.nodes, cal=cal)
        busbw = sizes / (chosen["time_us"] + cal.harness_overhead_us(sweep.harness)) / 1e3 * factor
        labels = [f"{a} {p}" for a, p in zip(chosen["algorithm"], chosen["protocol"])]
        start = 0
        for style, end in enumerate([*np.flatnonzero(np.array(labels[1:]) != np.array(labels[:-1])) + 1, len(labels)]):
            piece = slice(max(start - 1, 0), end)
            ax.plot(sizes[piece], busbw[piece], color=plotting.COLORS[style % 8], marker="",
                    linestyle=plotting.LINESTYLES[style % len(plotting.LINESTYLES)], label=f"model: {labels[start]}")
            start = end
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"{name}\n{sweep.system}, {sweep.gpus} GPUs, {sweep.nodes} node(s)",
                     fontsize=plotting.SMALL_PT + 0.5)
        ax.tick_params(labelsize=plotting.SMALL_PT)
        ax.legend(fontsize=plotting.SMALL_PT, loc="upper left")
    return plotting.set_alt(fig, f"{len(names)} log-log panels, one per fit sweep ({', '.join(names)}): measured "
                                 "busbw (points) against message size, and the model's line, split and labelled "
                                 "where it switches algorithm or protocol.")


def sweep_facts(comparison: pd.DataFrame, cal: Calibration | None = None) -> Facts:
    """The published sweeps (``comparison``: :func:`sweep_comparison`).

    Counts: ``sw_n_<split>`` (sweeps per split), ``sw_n_unmodelled``, ``sw_pts_<split>`` (compared points);
    errors (%): ``sw_<split>_<size>_median`` and ``..._worst`` for split ``holdout``/``fit`` and size
    ``large``/``small``; text: ``sw_hold_worst`` (the held-out sweep with the largest median error),
    ``sw_small_fast`` and ``sw_small_slow`` (held-out sweeps whose small messages the model makes faster or
    slower than measured by more than :data:`SIDE`, at the median);
    constants: ``sw_fitted`` (how many were fitted on the sweeps), ``ramp_exponent``, ``ramp_full_MiB`` (the
    size at which an 8-GPU node reaches its full bandwidth, MiB), ``latency_scale`` (measured NCCL latencies
    over the tuner's, x), ``harness_us`` (torch.distributed's cost per call, us).
    """
    cal = calibration.resolve(cal)
    summary = sweeps.summary(comparison).set_index(["split", "size_class"])
    index = pd.DataFrame([{"split": s.split, "reason": s.reason} for s in sweeps.sweeps()])
    out: dict[str, object] = {f"sw_n_{split}": int((index["split"] == split).sum()) for split in sweeps.SPLITS}
    out["sw_n_unmodelled"] = int((index["reason"] != "").sum())
    for split, short in (("holdout", "hold"), ("fit", "fit")):
        out[f"sw_pts_{short}"] = int((comparison["split"] == split).sum())
        for size in ("large", "small"):
            out[f"sw_{short}_{size}_median"] = 100 * summary.loc[(split, size), "median_abs_error"]
            out[f"sw_{short}_{size}_worst"] = 100 * summary.loc[(split, size), "worst_abs_error"]
    per_sweep = sweep_table(comparison)
    held = per_sweep[per_sweep["split"] == "holdout"]
    out["sw_hold_worst"] = f"`{held[['median_abs_error_small_pct', 'median_abs_error_large_pct']].max(axis=1).idxmax()}`"
    small = comparison[(comparison["split"] == "holdout") & (comparison["size_class"] == "small")]
    signed = small.groupby("sweep")["rel_error"].median()
    for name, side in (("sw_small_fast", signed > SIDE), ("sw_small_slow", signed < -SIDE)):
        out[name] = ", ".join(f"`{sweep}`" for sweep in signed[side].index) or "none"
    out.update({"sw_fitted": len(sweepfit.FITTED), "ramp_exponent": cal.value("bandwidth_ramp", "exponent"),
                "ramp_full_MiB": 8 * cal.value("bandwidth_ramp", "bytes_per_rank") / 2**20,
                "latency_scale": cal.latency_scale("hopper"),
                "harness_us": cal.value("harness_overhead_us", "torch")})
    return _values(out)


# ----------------------------------------------------------------------------- published training and serving runs

_SPLIT_ORDER = ["holdout", "fit"]


def training_runs_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """:func:`multigpu.evidence.runs.compare` for print, held-out runs first: layout, measured and predicted
    seconds per step, and the error of the step time (%)."""
    table = comparison.assign(split=pd.Categorical(comparison["split"], _SPLIT_ORDER, ordered=True),
                              error_pct=100 * comparison["rel_error"])
    table = table.sort_values(["split", "id"])
    return table[["id", "split", "gpu", "dtype", "gpus", "layout", "measured_step_s", "predicted_step_s",
                  "error_pct"]].set_index("id").round(2)


def serving_runs_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """:func:`multigpu.evidence.serving.compare` for print, held-out rows first: metric, measured, predicted
    (seconds, or tokens/s per GPU) and the error (%)."""
    table = comparison.assign(split=pd.Categorical(comparison["split"], _SPLIT_ORDER, ordered=True),
                              error_pct=100 * comparison["rel_error"])
    table = table.sort_values(["split", "metric", "id"])
    return table[["id", "split", "metric", "model_id", "system_id", "tp", "batch", "dtype", "measured", "predicted",
                  "unit", "error_pct"]].set_index("id").round(3)


def runs_facts(training: pd.DataFrame, served: pd.DataFrame) -> Facts:
    """Published runs against the model. Training (``training``: :func:`multigpu.evidence.runs.compare`):
    ``tr_<split>_n``, ``tr_<split>_median``, ``tr_<split>_worst`` (%), ``tr_not`` (fit and held-out runs the
    model cannot express), ``tr_sealed``; serving (``served``: :func:`multigpu.evidence.serving.compare`):
    ``sv_<split>_<metric>_n``/``_median`` (%) for throughput, ttft and tpot, ``sv_mlperf`` (MLPerf rows
    compared), ``sv_not``, ``sv_sealed``."""
    out: dict[str, object] = {}
    for split in _SPLIT_ORDER:
        errors = training.loc[training["split"] == split, "rel_error"].abs()
        out.update({f"tr_{split}_n": len(errors), f"tr_{split}_median": 100 * float(errors.median()),
                    f"tr_{split}_worst": 100 * float(errors.max())})
        for metric in ("throughput", "ttft", "tpot"):
            part = served[(served["split"] == split) & (served["metric"] == metric)]["rel_error"].abs()
            out[f"sv_{split}_{metric}_n"] = len(part)
            out[f"sv_{split}_{metric}_median"] = 100 * float(part.median()) if len(part) else float("nan")
    out.update({"tr_not": len(runs.not_modelled()), "tr_sealed": sum(r.split == "sealed" for r in runs.runs()),
                "sv_mlperf": int((served["kind"] == "mlperf").sum()), "sv_not": len(serving.not_modelled()),
                "sv_sealed": len(serving.load(("sealed",)))})
    return _values(out)


# ----------------------------------------------------------------------------- the prose's values

#: The system most reference rows come from, named in the prose.
H200 = "hgx-h200"
#: The comparisons the prose discusses one by one: their errors are glued as ``e_<ref>`` (``#10`` -> ``e_10``).
DISCUSSED = ("#9", "#10", "#11", "#63", "#65", "#66", "#67", "O2", "O6", "O7", "O9", "O10", "O11", "O12", "O13", "K4",
             "K6", "K8", "K9")
#: Rows of data/measurements.csv whose busbw miss the prose also states as a time gap (``gap<id>``, us).
GAP_ROWS = (10, 11)
#: The prose lists the comparisons off by more than this (%).
MISS_PCT = 10.0


def _values(pairs: dict[str, object]) -> Facts:
    """``pairs`` with every numpy scalar made a plain Python number."""
    return {name: plain(value) for name, value in pairs.items()}


def coverage_facts(table: pd.DataFrame, cal: Calibration | None = None) -> Facts:
    """What is compared, and what is not (``table``: :func:`multigpu.evidence.validation.comparisons`).

    Row counts: ``cov_rows`` (measured rows of the reference file), ``cov_yes`` (compared with the model),
    ``cov_collective``, ``cov_copy``, ``cov_training``, ``cov_no`` (by how); ``ref_rows``, ``ref_systems``
    and ``ref_h200`` (collective and copy rows of the reference file, their systems, those of the HGX
    H200); ``train_k22`` (Korthikanti et al.'s runs); text: ``harness_rows`` (what the harness overhead was
    fitted on: "rows #8 and #9", or the fit sweeps by id).
    """
    coverage = validation.coverage()
    compared = coverage["compared"].value_counts()
    reference = validation.reference_table(table)
    training = validation.training_table(table)
    harness = calibration.resolve(cal).constant("harness_overhead_us", "torch")
    return _values({
        "cov_rows": len(coverage), "cov_yes": int((coverage["compared"] != "no").sum()),
        **{f"cov_{kind}": int(compared.get(kind, 0)) for kind in (*validation.KINDS, "no")},
        "harness_rows": _fitted_on(harness),
        "ref_rows": len(reference), "ref_systems": reference["system"].nunique(),
        "ref_h200": int((reference["system"] == H200).sum()),
        "train_k22": int(training["source"].str.startswith(bottlenecks.K22_SOURCE).sum())})


def _fitted_on(constant: calibration.Constant) -> str:
    """What a constant was fitted on, in words: "rows #8 and #9" or "the fit sweeps `a` and `b`"."""
    if constant.fitted_ids:
        return "rows " + " and ".join(f"#{i}" for i in constant.fitted_ids)
    return "the fit sweeps " + " and ".join(f"`{s}`" for s in constant.fitted_sweeps)


def summary_facts(table: pd.DataFrame) -> Facts:
    """Error statistics by regime (``table``: :func:`multigpu.evidence.validation.comparisons`).

    For each key of :data:`multigpu.evidence.validation.REGIMES`: ``<key>_rows`` and ``<key>_within``
    (rows, and rows within +-10 %), ``<key>_median`` and ``<key>_worst`` (median and worst absolute error,
    %), ``<key>_bias`` (signed median error, %), ``<key>_worst_ref`` (the worst row's ref, text),
    ``<key>_direction`` ("fast" if the model's signed median is above the measurements, else "slow").
    """
    summary = validation.error_summary(table).set_index("regime")
    out: dict[str, object] = {}
    for key, regime in validation.REGIMES.items():
        if regime not in summary.index:  # a regime with no rows
            continue
        row = summary.loc[regime]
        out.update({f"{key}_rows": int(row["rows"]), f"{key}_median": float(row["median_abs_error_pct"]),
                    f"{key}_direction": "fast" if row["median_error_pct"] > 0 else "slow",
                    f"{key}_worst": float(row["worst_abs_error_pct"]), f"{key}_worst_ref": row["worst_ref"],
                    f"{key}_within": int(row["within_10pct"]), f"{key}_bias": float(row["median_error_pct"])})
    return _values(out)


def out_of_sample_facts(table: pd.DataFrame) -> Facts:
    """The out-of-sample collectives (``table``: :func:`multigpu.evidence.validation.comparisons`):
    ``oos_coll_rows`` (checks), ``oos_coll_within`` (within their tolerance), ``oos_coll_known`` (with a
    documented cause of a miss); counts."""
    oos = validation.out_of_sample_table(table)
    return _values({"oos_coll_rows": len(oos), "oos_coll_within": int(oos["within_tolerance"].sum()),
                    "oos_coll_known": int((oos["known_miss"] != "").sum())})


def weakness_facts(table: pd.DataFrame, cal: Calibration | None = None) -> Facts:
    """Where the model is weak, and why (``table``: :func:`multigpu.evidence.validation.comparisons`).

    ``e_<ref>`` (error of each comparison of :data:`DISCUSSED`, %); ``gap<id>`` (measured minus predicted
    time of each row of :data:`GAP_ROWS`, us); calibration constants: ``nvls_latency`` (NVLS latency per
    hop, us), ``bounce_pct`` (host-staged PCIe rate, % of the link's), ``sm_default_pct`` (default NVLink
    SM efficiency, %); counts: ``n_weak`` (comparisons off by more than :data:`MISS_PCT`), ``n_small``
    (small-message collectives), ``mlperf_rows`` (MLPerf time-to-train rows); text: ``small_systems`` (the
    systems of the small-message rows).
    """
    cal = calibration.resolve(cal)
    errors = table.set_index("ref")["error_pct"]
    small = table[(table["kind"] == "collective") & (table["size_class"] == "small")]
    coverage = validation.coverage()
    out: dict[str, object] = {f"e_{ref.strip('#').lower()}": float(errors.loc[ref]) for ref in DISCUSSED}
    out.update({f"gap{row_id}": wiring.time_gap_us(row_id, cal)["gap_us"] for row_id in GAP_ROWS})
    out.update({
        "nvls_latency": cal.value("hop_latency_us", "nvlink.nvls.simple"),
        "bounce_pct": 100 * cal.value("bounce", "rate_factor"),
        "sm_default_pct": 100 * cal.value("sm_efficiency", "nvlink.default"),
        "n_weak": len(validation.misses(table, above_pct=MISS_PCT)), "n_small": len(small),
        "small_systems": ", ".join(sorted(small["system"].unique())),
        "mlperf_rows": int(coverage["note"].str.startswith("time-to-train").sum())})
    return _values(out)


def vendor_facts(cal: Calibration | None = None) -> Facts:
    """Vendor-modelled and vendor-presented rows beside the model.

    NVIDIA's Table 3 (Llama 3.1 70B, H200, TP=2): ``nv_benefit_1``, ``nv_benefit_32`` (NVIDIA's switch over
    mesh throughput at batch 1 and 32, x), ``our_benefit_1``, ``our_benefit_32`` (ours at FP8, x),
    ``bf16_lo``/``bf16_hi`` and ``fp8_lo``/``fp8_hi`` (range of NVIDIA's throughput over ours, x); the
    conference slides: ``v<id>`` (the model against each vendor row, %).
    """
    f = bottlenecks.compare_fixed_batch(cal=cal).set_index("batch")
    out: dict[str, object] = {
        "nv_benefit_1": float(f["nvidia_benefit_x"].iloc[0]), "nv_benefit_32": float(f.loc[32, "nvidia_benefit_x"]),
        "our_benefit_32": float(f.loc[32, "fp8_benefit_x"]), "our_benefit_1": float(f["fp8_benefit_x"].iloc[0])}
    for dtype in ("bf16", "fp8"):  # NVIDIA / ours, mesh and switch, as in chapter 3
        both = pd.concat([f["nvidia_mesh"] / f[f"{dtype}_mesh"], f["nvidia_switch"] / f[f"{dtype}_switch"]])
        out[f"{dtype}_lo"], out[f"{dtype}_hi"] = float(both.min()), float(both.max())
    vendor = validation.vendor_statements(cal)
    out.update({f"v{int(i)}": float(d) for i, d in zip(vendor["id"], vendor["difference_pct"])})
    return _values(out)


def facts(cal: Calibration | None = None) -> Facts:
    """Every value the appendix's prose cites, by glue name (the union of the ``*_facts`` functions; units
    as they state), with calibration ``cal`` (None: the shipped one)."""
    table = validation.comparisons(cal)
    return {**coverage_facts(table, cal), **summary_facts(table), **out_of_sample_facts(table),
            **weakness_facts(table, cal), **vendor_facts(cal), **sweep_facts(sweep_comparison(cal), cal),
            **runs_facts(runs.compare(cal=cal), serving.compare(cal=cal))}
