"""The appendix "Predictions on record" (``book/appendix/predictions.ipynb``): the model's dated predictions for
configurations no measurement covers yet, and how they score once measurements arrive
(:mod:`multigpu.evidence.predictions`)."""

from __future__ import annotations

import math

import pandas as pd

from multigpu.book import glue, lang, tables, vocabulary
from multigpu.book.glue import Facts
from multigpu.book.lang import N_, _
from multigpu.common.numtext import range_text, significant
from multigpu.common.units import format_size
from multigpu.compute import models
from multigpu.evidence import intervals, predictions

TABLE_HEADERS = (N_("System"), N_("What is predicted"), N_("Predicted (90 % interval)"), N_("Recorded"),
                 N_("Measured"))


def _what(row: pd.Series) -> str:
    """The prediction in words, in the current language."""
    config = predictions.configuration(row["config"])
    job = dict(config.job)
    if row["kind"] == "collective":
        return _("all-reduce bus bandwidth (GB/s), {gpus} GPUs, {size}", gpus=int(row["gpus"]),
                 size=format_size(float(row["bytes"])))
    model = models.model(str(job["model_id"])).name
    if row["kind"] == "training":
        return _("training step time (s), {model} in {dtype}, {gpus} GPUs, global batch {batch} of {seq} tokens",
                 model=model, dtype=str(job["dtype"]).upper(), gpus=int(row["gpus"]), batch=job["global_batch"],
                 seq=job["seq"])
    return _("output tokens per second per GPU, {model} in {dtype}, tensor parallel {tp}, {batch} requests",
             model=model, dtype=str(job["dtype"]).upper(), tp=job["tp"], batch=job["batch"])


def record_table(scored: pd.DataFrame) -> pd.DataFrame:
    """The record in the current language, one row per prediction (``scored``: :func:`multigpu.evidence.
    predictions.scored`)."""
    return pd.DataFrame({
        "System": [vocabulary.system_name(s) for s in scored["system_id"]],
        "What is predicted": [_what(row) for _, row in scored.iterrows()],
        "Predicted (90 % interval)": [range_text(p, lo, hi) for p, lo, hi in
                                      zip(scored["predicted"], scored["low"], scored["high"])],
        "Recorded": scored["recorded"],
        "Measured": ["—" if math.isnan(m) else significant(m) for m in scored["measured"]]})


def show_record(scored: pd.DataFrame) -> None:
    """:func:`record_table`, one table per edition."""
    from IPython.display import HTML, display

    def one() -> str:
        return tables.table_html(record_table(scored), key=["System"], csv_name="predictions-1")

    display(HTML(lang.editions_html(lang.per_language(one))))


def facts(scored: pd.DataFrame) -> Facts:
    """``pr_level``, ``pr_rows`` (predictions), ``pr_configs`` (configurations), ``pr_systems_n``,
    ``pr_recorded`` (the first date), ``pr_scored`` and ``pr_inside`` (predictions with a measurement, and of them
    inside their interval), and in each language ``pr_systems`` (their names) and ``pr_scored_text`` (a
    sentence on what is scored)."""
    measured = scored.dropna(subset=["measured"])
    systems = list(dict.fromkeys(scored["system_id"]))
    out: Facts = {"pr_level": 100 * intervals.LEVEL, "pr_rows": len(scored), "pr_configs": scored["config"].nunique(),
                  "pr_systems_n": len(systems), "pr_recorded": str(scored["recorded"].min()),
                  "pr_scored": len(measured), "pr_inside": int(measured["inside"].sum())}

    def text() -> Facts:
        names = [vocabulary.system_name(s) for s in systems]
        joined = _("{first} and {last}", first=_(", ").join(names[:-1]), last=names[-1]) if len(names) > 1 else names[0]
        sentence = (_("None of the {n} predictions has a measurement yet.", n=len(scored)) if measured.empty else
                    _("{scored} of the {n} predictions have a measurement; {inside} of them fall inside their "
                      "interval.", scored=len(measured), n=len(scored), inside=int(measured["inside"].sum())))
        return {"pr_systems": joined, "pr_scored_text": sentence}

    return out | glue.per_language(text)
