"""The book's two appendices of trust: the article's claims, checked; and the model, against measurements.

Nothing here models anything. The claims come from :func:`multigpu.claims.check_all`; the
collective comparisons from :func:`multigpu.calibration.compare` and
:func:`multigpu.calibration.out_of_sample`; the training comparisons from
:func:`multigpu.bottlenecks.training_validation`. This module lays them out as tables (column
names carry their units), condenses them and draws them.

Claims check (``book/appendix/claims-check``):

- :func:`claims_table`, :func:`verdict_counts`, :func:`verdicts_by_chapter`,
  :func:`plot_verdicts_by_chapter`, :func:`chapter_titles`, :func:`claim_markdown`,
  :func:`not_checkable_problems`.

Model validation (``book/appendix/validation``):

- :func:`comparisons`: every model-against-measurement comparison, one row each, with the set it
  belongs to (``fitted on``, ``held out``, ``out of sample``) and its kind (collective, copy,
  training); :func:`reference_table`, :func:`out_of_sample_table` and :func:`training_table`
  are views of it;
- :func:`coverage`: every ``measured`` row of ``data/measurements.csv`` and how (or why not) it is
  compared;
- :func:`error_summary`: median and worst error by regime; :func:`misses`: the rows off by more
  than a threshold;
- :func:`plot_predicted_vs_measured`: predicted against measured, log axes, +-10 % lines;
- :func:`vendor_statements`: vendor-presented rows beside the model (not validation).

The error of a row is ``predicted / measured - 1``, in percent. For bandwidths (GB/s) a positive
error means the model is faster than the measurement; for iteration times (s) it means the model
is slower.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from multigpu import bottlenecks, calibration, claims, plotting
from multigpu.units import MiB

# ----------------------------------------------------------------------------- claims check

#: Fill and hatch of each verdict in :func:`plot_verdicts_by_chapter` (grey-scale: light = holds).
VERDICT_STYLE: dict[str, tuple[str, str]] = {
    "holds": ("#ffffff", ""),
    "holds-with-caveat": ("#d9d9d9", "///"),
    "misleading": ("#969696", "..."),
    "wrong": ("#404040", "xxx"),
    "not-checkable": ("#f0f0f0", "\\\\\\"),
}
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>$|{}])")


def claims_table(verdicts: Sequence[claims.Verdict] | None = None) -> pd.DataFrame:
    """One row per checked claim: the article's words and value beside the model's.

    Columns: ``id``, ``claim_en``, ``claim_zh`` (the quote, from ``data/claims.csv``),
    ``seed_value`` (the article's value, as text), ``model_value`` and ``unit`` (the model's or
    catalogue's value), ``verdict``, ``explanation``, ``chapter`` (the docname of the chapter
    that shows the work). ``verdicts`` defaults to :func:`multigpu.claims.check_all`.
    """
    verdicts = claims.check_all() if verdicts is None else verdicts
    seed = claims.seed_claims()
    rows = [{"id": v.id, "claim_en": seed[v.id]["claim_en"], "claim_zh": seed[v.id]["claim_zh"],
             "seed_value": v.seed_value, "model_value": v.model_value, "unit": v.unit, "verdict": v.verdict,
             "explanation": v.explanation, "chapter": v.chapter} for v in verdicts]
    return pd.DataFrame(rows, columns=["id", "claim_en", "claim_zh", "seed_value", "model_value", "unit",
                                       "verdict", "explanation", "chapter"])


def verdict_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Claims per verdict, in the order of :data:`multigpu.claims.VERDICTS` (zeros included).

    Columns: ``verdict``, ``claims`` (count), ``share_pct``.
    """
    counts = table["verdict"].value_counts()
    frame = pd.DataFrame({"verdict": list(claims.VERDICTS),
                          "claims": [int(counts.get(v, 0)) for v in claims.VERDICTS]})
    frame["share_pct"] = 100 * frame["claims"] / max(len(table), 1)
    return frame


def chapter_titles(docnames: Iterable[str], root: str | Path) -> dict[str, str]:
    """The title (first ``# `` heading) of each chapter, by docname, read from the notebooks under ``root``."""
    import nbformat

    titles = {}
    for docname in dict.fromkeys(docnames):
        path = Path(root) / f"{docname}.ipynb"
        notebook = nbformat.read(path, as_version=4)
        heading = next((line[2:].strip() for cell in notebook.cells if cell.cell_type == "markdown"
                        for line in cell.source.splitlines() if line.startswith("# ")), None)
        if heading is None:
            raise ValueError(f"{path}: no '# ' title heading")
        titles[docname] = heading
    return titles


def verdicts_by_chapter(table: pd.DataFrame, titles: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Claims per chapter (rows, in docname order) and verdict (columns, every verdict), plus ``total``.

    The index is the chapter's title where ``titles`` gives one, else its docname.
    """
    frame = pd.crosstab(table["chapter"], table["verdict"]).reindex(columns=list(claims.VERDICTS), fill_value=0)
    frame = frame.sort_index()
    frame["total"] = frame.sum(axis=1)
    if titles:
        frame.index = [titles.get(doc, doc) for doc in frame.index]
    frame.index.name = "chapter"
    frame.columns.name = None
    return frame


def plot_verdicts_by_chapter(ax, frame: pd.DataFrame) -> None:
    """Stacked horizontal bars of :func:`verdicts_by_chapter`: claims per chapter, by verdict.

    Grey fills from light (holds) to dark (wrong), each with its own hatch, so that they read in
    grey-scale print; verdicts no claim has are left out of the legend.
    """
    y = -np.arange(len(frame))
    left = np.zeros(len(frame))
    for verdict in claims.VERDICTS:
        values = frame[verdict].to_numpy(dtype=float)
        if not values.any():
            continue
        color, hatch = VERDICT_STYLE[verdict]
        ax.barh(y, values, left=left, height=0.6, color=color, hatch=hatch, edgecolor="#222222", linewidth=0.6,
                label=verdict)
        for yi, x0, value in zip(y, left, values):
            if value:
                ax.text(x0 + value / 2, yi, f"{int(value)}", ha="center", va="center", fontsize=8,
                        color="#ffffff" if verdict == "wrong" else "#000000",
                        bbox={"boxstyle": "round,pad=0.15", "facecolor": color, "edgecolor": "none"})
        left = left + values
    ax.set_yticks(y, list(frame.index), fontsize=8)
    ax.grid(axis="y", visible=False)
    ax.set_xlim(0, max(left.max(), 1) * 1.05)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, title="verdict", title_fontsize=8)


def _md(text: object) -> str:
    """Text escaped for Markdown (no emphasis, links, HTML or maths by accident)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def format_value(value: float | str, unit: str) -> str:
    """A model value with its unit, as text: a number (up to 6 significant digits) followed by its unit;
    a text value (several numbers, each with its own unit) followed by ``(units: ...)``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return f"{value} (units: {unit})" if unit else str(value)
    text = str(int(value)) if float(value).is_integer() else f"{float(value):.6g}"
    return f"{text} {unit}".strip()


def claim_markdown(row: Mapping[str, object], chapter_title: str, link: str, level: int = 4) -> str:
    """One claim's section as Markdown: heading ``C05 · claim``, the Chinese quote, the article's and the
    model's value, the verdict, the explanation, and a link (``link``, relative to the page) to the chapter."""
    lines = [
        f"{'#' * level} {row['id']} · {_md(row['claim_en'])}",
        "",
        f"> {_md(row['claim_zh'])}",
        "",
        f"- **Article:** {_md(row['seed_value'])}",
        f"- **Model or catalogue:** {_md(format_value(row['model_value'], str(row['unit'])))}",
        f"- **Verdict:** **{row['verdict']}**",
        "",
        _md(row["explanation"]),
        "",
        f"The work is shown in [{_md(chapter_title)}]({link}).",
    ]
    return "\n".join(lines)


def not_checkable_problems(verdicts: Sequence[claims.Verdict]) -> list[str]:
    """Verdicts that break the rule for ``not-checkable``: used only where the claim has no number to
    check (no digit in the article's value, a model value that is not a number), and the explanation says
    why ("because" or "no number"). Returns one message per problem (empty if none)."""
    problems = []
    for v in verdicts:
        if v.verdict != "not-checkable":
            continue
        if re.search(r"\d", v.seed_value):
            problems.append(f"{v.id}: not-checkable, but the article's value has a number: {v.seed_value!r}")
        if isinstance(v.model_value, (int, float)) and not isinstance(v.model_value, bool):
            problems.append(f"{v.id}: not-checkable, but the model gives a number: {v.model_value!r}")
        if not re.search(r"\bbecause\b|\bno number\b", v.explanation):
            problems.append(f"{v.id}: not-checkable without saying why ('because' or 'no number')")
    return problems


# ----------------------------------------------------------------------------- model validation

#: The sets a comparison belongs to.
SETS = ("fitted on", "held out", "out of sample")
#: The kinds of comparison.
KINDS = ("collective", "copy", "training")
_COPY_METRICS = ("p2p_uni", "p2p_bidir", "h2d")
_WHAT = {"p2p_uni": "GPU-GPU copy, one way", "p2p_bidir": "GPU-GPU copy, both ways",
         "h2d": "host-to-GPU copy", "nic_rate": "all-to-all, per-GPU NIC rate"}
_OPS = {"allreduce": "all-reduce", "allgather": "all-gather", "reducescatter": "reduce-scatter",
        "alltoall": "all-to-all"}

#: Why a ``measured`` row of data/measurements.csv that is neither a collective nor a training run is not
#: compared with the model. Every such row needs an entry (the tests check it).
NOT_COMPARED: dict[int, str] = {
    **{i: "latency of DeepEP's low-latency dispatch / combine kernels (128 tokens, each sent straight to its "
          "experts' GPUs by RDMA writes from the GPU); the collective model has NCCL's algorithms and "
          "latencies, not this kernel's" for i in (68, 69, 70, 71)},
    72: "DeepEP V2 on an SM90 cluster described only as 'EP 8 x 2, 12 SMs': neither the NICs per GPU nor "
        "their rate are given, and the rate counts logical bytes, including tokens that stay in the node",
    96: "a ratio ('up to 35x') of parallel P2P throughput in a sorting benchmark between a DGX A100 and a "
        "PCIe 3.0 server that is not in the catalogue, with no transfer sizes or pattern in the file",
}


def _what(row: Mapping[str, object]) -> str:
    metric = str(row["metric"])
    if metric == "busbw":
        algorithm = row["algorithm"] or "auto"
        return f"{_OPS.get(str(row['op']), row['op'])} busbw ({algorithm})"
    return _WHAT.get(metric, metric)


def _kind(metric: str) -> str:
    return "copy" if metric in _COPY_METRICS else "collective"


def _row(**values) -> dict:
    values["error_pct"] = 100 * (values["predicted"] / values["measured"] - 1)
    return values


def comparisons() -> pd.DataFrame:
    """Every comparison of the model with a measurement, one row each.

    Sources: the ``measured`` rows of ``data/measurements.csv`` that the model reproduces
    (:func:`multigpu.calibration.compare`: collectives, copies, NIC rates), the published collectives
    outside that file (:func:`multigpu.calibration.out_of_sample`, refs ``O1``...), and the training runs
    (:func:`multigpu.bottlenecks.training_validation`: row 75 and Korthikanti et al.'s runs, refs ``K1``...).

    Columns: ``ref`` (``#<id>`` for a row of measurements.csv), ``set`` (``fitted on``: a constant was
    fitted on the row; ``held out``: in measurements.csv, not fitted on; ``out of sample``: published
    elsewhere, used in no fit), ``kind`` (collective, copy, training), ``what``, ``system``, ``gpus``,
    ``nodes``, ``size_MiB`` (message size; NaN for steady-state rates and training), ``size_class``
    (``large``: at least 64 MiB or a steady-state rate; ``small``; empty for training), ``unit``
    (``GB/s`` or ``s per iteration``), ``measured``, ``predicted``, ``error_pct`` (predicted / measured
    - 1, %), ``known_miss`` (the documented cause of an out-of-sample miss, else empty), ``source``.
    """
    rows = []
    for r in calibration.compare().itertuples():
        rows.append(_row(ref=f"#{r.id}", set="fitted on" if r.fitted else "held out", kind=_kind(r.metric),
                         what=_what(r._asdict()), system=r.system_id, gpus=int(r.gpus), nodes=int(r.nodes),
                         size_MiB=r.bytes / MiB, size_class=r.size_class, unit="GB/s", measured=float(r.measured),
                         predicted=float(r.predicted), known_miss="", source=r.source))
    for i, r in enumerate(calibration.out_of_sample().itertuples(), start=1):
        check = calibration.OUT_OF_SAMPLE[i - 1]
        nbytes = float(check["bytes"])
        rows.append(_row(ref=f"O{i}", set="out of sample", kind="collective", what=r.check, system=r.system_id,
                         gpus=int(check["gpus"]), nodes=int(check["nodes"]), size_MiB=nbytes / MiB,
                         size_class="large" if nbytes >= calibration.LARGE_BYTES else "small", unit="GB/s",
                         measured=float(r.measured), predicted=float(r.predicted), known_miss=r.known_miss,
                         source=r.source))
    k = 0
    for r in bottlenecks.training_validation().itertuples():
        in_file = "measurements.csv" in r.source
        if not in_file:
            k += 1
        ref = "#" + re.search(r"row (\d+)", r.source).group(1) if in_file else f"K{k}"
        row_set = "fitted on" if r.fitted else ("held out" if in_file else "out of sample")
        rows.append(_row(ref=ref, set=row_set, kind="training", what=f"{r.run} ({r.layout}, TP x PP x DP)",
                         system="dgx-a100", gpus=int(r.gpus), nodes=math.ceil(r.gpus / 8), size_MiB=math.nan,
                         size_class="", unit="s per iteration", measured=float(r.measured_s),
                         predicted=float(r.model_s), known_miss="", source=r.source))
    columns = ["ref", "set", "kind", "what", "system", "gpus", "nodes", "size_MiB", "size_class", "unit",
               "measured", "predicted", "error_pct", "known_miss", "source"]
    return pd.DataFrame(rows, columns=columns)


def _print(frame: pd.DataFrame, columns: Sequence[str], value_names: tuple[str, str]) -> pd.DataFrame:
    out = frame[list(columns)].rename(columns={"measured": value_names[0], "predicted": value_names[1]})
    return out.round({value_names[0]: 2, value_names[1]: 2, "error_pct": 1, "size_MiB": 3}).reset_index(drop=True)


def reference_table(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """The collectives and copies of ``data/measurements.csv`` against the model, for print (GB/s).

    Columns: ``ref``, ``set``, ``kind``, ``what``, ``system``, ``gpus``, ``nodes``, ``size_MiB``,
    ``measured_GBps``, ``predicted_GBps``, ``error_pct``.
    """
    table = comparisons() if table is None else table
    part = table[(table["unit"] == "GB/s") & (table["set"] != "out of sample")]
    return _print(part, ["ref", "set", "kind", "what", "system", "gpus", "nodes", "size_MiB", "measured",
                         "predicted", "error_pct"], ("measured_GBps", "predicted_GBps"))


def training_table(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """The training runs against the model, for print (seconds per iteration, DGX A100 nodes).

    Columns: ``ref``, ``set``, ``what``, ``gpus``, ``measured_s``, ``predicted_s``, ``error_pct``, ``source``.
    """
    table = comparisons() if table is None else table
    part = table[table["kind"] == "training"]
    return _print(part, ["ref", "set", "what", "gpus", "measured", "predicted", "error_pct", "source"],
                  ("measured_s", "predicted_s"))


def out_of_sample_table(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """The out-of-sample collectives (published outside the reference set, used in no fit), for print.

    Columns: ``ref``, ``check``, ``system``, ``variant`` (catalogue fields changed to the measured box's
    wiring), ``measured_GBps``, ``predicted_GBps``, ``error_pct``, ``tolerance_pct`` (what the package's
    tests accept), ``within_tolerance``, ``known_miss``.
    """
    table = comparisons() if table is None else table
    part = table[(table["set"] == "out of sample") & (table["kind"] != "training")].reset_index(drop=True)
    checks = [calibration.OUT_OF_SAMPLE[int(ref[1:]) - 1] for ref in part["ref"]]
    out = pd.DataFrame({
        "ref": part["ref"], "check": part["what"], "system": part["system"],
        "variant": [", ".join(f"{k}={v}" for k, v in c.get("variant", {}).items()) for c in checks],
        "measured_GBps": part["measured"], "predicted_GBps": part["predicted"], "error_pct": part["error_pct"],
        "tolerance_pct": [100 * c["tolerance"] for c in checks]})
    out["within_tolerance"] = out["error_pct"].abs() <= out["tolerance_pct"]
    out["known_miss"] = part["known_miss"]
    return out.round({"measured_GBps": 2, "predicted_GBps": 2, "error_pct": 1, "tolerance_pct": 0})


def coverage() -> pd.DataFrame:
    """Every ``measured`` row of ``data/measurements.csv`` and how the model is set beside it.

    Columns: ``id``, ``benchmark``, ``what`` (the file's ``collective_or_metric``), ``compared``
    (``collective``, ``copy``, ``training`` or ``no``), ``note`` (how the model reproduces the row, or why
    it cannot). Raises ``ValueError`` for a row that is neither compared nor explained.
    """
    frame = calibration.measurements()
    frame = frame[frame["kind"] == "measured"]
    training = bottlenecks.training_measurements().set_index("id")
    rows = []
    for _, row in frame.iterrows():
        i = int(row["id"])
        if row["metric"]:
            compared, note = _kind(row["metric"]), row["model_note"]
        elif i in training.index:
            compared = "training" if training.loc[i, "comparable"] else "no"
            note = training.loc[i, "why"]
        elif i in NOT_COMPARED:
            compared, note = "no", NOT_COMPARED[i]
        else:
            raise ValueError(f"measurement {i} is neither compared with the model nor explained in NOT_COMPARED")
        rows.append({"id": i, "benchmark": row["benchmark"], "what": row["collective_or_metric"],
                     "compared": compared, "note": note})
    return pd.DataFrame(rows)


def _regimes(table: pd.DataFrame) -> dict[str, pd.Series]:
    bandwidth = table["kind"] != "training"
    collective = table["kind"] == "collective"
    return {
        "all comparisons": table["ref"] == table["ref"],
        "fitted on (in sample)": table["set"] == "fitted on",
        "held out (reference set, not fitted)": table["set"] == "held out",
        "out of sample (published elsewhere)": table["set"] == "out of sample",
        "out of sample, documented misses left out": (table["set"] == "out of sample") & (table["known_miss"] == ""),
        "not fitted (held out + out of sample)": table["set"] != "fitted on",
        "collectives": collective,
        "collectives, large messages (>= 64 MiB) and NIC rates": collective & (table["size_class"] == "large"),
        "collectives, small messages (< 64 MiB)": collective & (table["size_class"] == "small"),
        "copies": table["kind"] == "copy",
        "training iterations": table["kind"] == "training",
        "bandwidths (collectives and copies)": bandwidth,
    }


def error_summary(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Error statistics of :func:`comparisons` by regime.

    Columns: ``regime``, ``rows``, ``median_abs_error_pct``, ``worst_abs_error_pct``, ``worst_ref``,
    ``median_error_pct`` (signed: the bias), ``within_10pct`` (rows within +-10 %).
    """
    table = comparisons() if table is None else table
    rows = []
    for regime, mask in _regimes(table).items():
        part = table[mask]
        if not len(part):
            continue
        errors = part["error_pct"].abs()
        rows.append({"regime": regime, "rows": len(part), "median_abs_error_pct": float(errors.median()),
                     "worst_abs_error_pct": float(errors.max()), "worst_ref": part.loc[errors.idxmax(), "ref"],
                     "median_error_pct": float(part["error_pct"].median()),
                     "within_10pct": int((errors <= 10).sum())})
    return pd.DataFrame(rows).round({"median_abs_error_pct": 1, "worst_abs_error_pct": 1, "median_error_pct": 1})


def misses(table: pd.DataFrame | None = None, above_pct: float = 10.0) -> pd.DataFrame:
    """The comparisons off by more than ``above_pct`` percent, worst first.

    Columns: ``ref``, ``set``, ``kind``, ``what``, ``unit``, ``measured``, ``predicted``, ``error_pct``,
    ``known_miss``.
    """
    table = comparisons() if table is None else table
    part = table[table["error_pct"].abs() > above_pct]
    part = part.reindex(part["error_pct"].abs().sort_values(ascending=False).index)
    return part[["ref", "set", "kind", "what", "unit", "measured", "predicted", "error_pct", "known_miss"]] \
        .round({"measured": 2, "predicted": 2, "error_pct": 1}).reset_index(drop=True)


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
    """Two panels of :func:`comparisons`, predicted against measured on log axes, with y = x (solid) and
    +-10 % (dashed): bandwidths (collectives and copies, GB/s) on the left, training iterations (s) on the
    right. Filled markers: a constant was fitted on the row; hollow: not. Rows off by more than
    ``label_above_pct`` are labelled with their ref."""
    table = comparisons() if table is None else table
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
                        xytext=(6, -11 if j % 2 else 5), fontsize=7.5)
        ax.legend(fontsize=7, loc="lower right")
    left.set_title("collectives and copies", fontsize=10)
    right.set_title("training iterations (DGX A100 nodes)", fontsize=10)
    left.set_xlabel("measured (GB/s, log scale)")
    left.set_ylabel("predicted (GB/s, log scale)")
    right.set_xlabel("measured (s per iteration, log scale)")
    right.set_ylabel("predicted (s per iteration, log scale)")


def vendor_statements() -> pd.DataFrame:
    """Vendor-presented rows of ``data/measurements.csv`` that the model can reproduce (conference slides),
    beside the model: shown apart, not counted as validation.

    Columns: ``id``, ``kind``, ``what``, ``system``, ``gpus``, ``vendor_GBps``, ``predicted_GBps``,
    ``difference_pct`` (predicted / vendor - 1), ``note`` (the file's ``model_note``).
    """
    kinds = tuple(k for k in calibration.measurements()["kind"].unique() if k != "measured")
    data = calibration.compare(kinds=kinds)
    notes = calibration.measurements().set_index("id")
    frame = pd.DataFrame({"id": data["id"], "kind": [notes.loc[i, "kind"] for i in data["id"]],
                          "what": data.apply(_what, axis=1), "system": data["system_id"], "gpus": data["gpus"],
                          "vendor_GBps": data["measured"], "predicted_GBps": data["predicted"],
                          "difference_pct": 100 * data["rel_error"],
                          "note": [notes.loc[i, "model_note"] for i in data["id"]]})
    return frame.round({"vendor_GBps": 1, "predicted_GBps": 1, "difference_pct": 1})
