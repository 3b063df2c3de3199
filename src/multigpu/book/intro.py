"""The introduction's answer: five computed lines and the decision table (:mod:`multigpu.evidence.answer`).

The introduction is an executed page: the notebook calls :func:`facts` and :func:`show_decision_table` with the
build's price table, so that its summary and table follow the model and the prices like every chapter.

Both editions from one execution (:mod:`multigpu.book.lang`): every text fact is there in English and, as
``<name>_zh``, in Chinese, and the decision table is shown once per language (:func:`decision_frame` builds its
cells in the current language: the workloads' ``title_zh``, the verdicts and confidences translated). The five
lines are built here from the decision table's numbers with :func:`multigpu.book.lang._`; in English they are
exactly :func:`multigpu.evidence.answer.summary`'s (tests/test_answer.py checks it).
"""

from __future__ import annotations

import math
import pandas as pd

from multigpu.book import glue, lang, tables, vocabulary
from multigpu.book.glue import Facts
from multigpu.book.lang import N_, _
from multigpu.comm.calibration import Calibration
from multigpu.evidence import answer, guide
from multigpu.market import workloads
from multigpu.market.prices import PriceTable

#: Column headers of the decision table as the reader sees them (English; the Chinese are their messages).
#: The decision table's columns, the verdict first after the workload (so a phone shows it without scrolling).
LABELS = {"title": N_("Workload"), "verdict": N_("Verdict"), "break_even": N_("Break-even premium (%)"),
          "charged": N_("Premium charged (%)"), "confidence": N_("Confidence"),
          "sides": N_("Model error, NVSwitch / PCIe side (%)"), "chapter": N_("Where the work is shown")}
#: The chapter titles the table links to, by page.
PAGES = {"chapters/03-communication-bottlenecks": N_("Chapter 3"), "chapters/04-cost-benefit": N_("Chapter 4")}
#: The verdicts of :data:`multigpu.evidence.answer.VERDICTS`, as messages.
VERDICT_WORDS = (N_("NVLink-class cheaper"), N_("PCIe cheaper"), N_("too close to call"), N_("PCIe cannot run it"),
                 N_("neither runs it"), N_("no pair to price"))
#: :data:`multigpu.evidence.answer.RULE` as the page states it (a sentence; tests/test_answer.py checks that it
#: is the rule's own words).
RULE = N_("The verdict is \"NVLink-class cheaper\" when the premium charged is below the break-even premium by "
          "more than the model's out-of-sample error, \"PCIe cheaper\" when it is above by more than that error, "
          "and \"too close to call\" in between.")


def decision(table: PriceTable, cal: Calibration | None = None) -> pd.DataFrame:
    """:func:`multigpu.evidence.answer.decision_table` for the build's price table."""
    return answer.decision_table(table, cal)


def _premium(value: float) -> str:
    """A premium (%) rounded to whole per cent, in the current language: "unbounded" for inf, "—" for NaN."""
    if math.isinf(value):
        return _("unbounded")
    return "—" if math.isnan(value) else f"{answer.shown(value):.0f}"


def _title(workload_id: str) -> str:
    """A workload's title in the current language (data/cost_workloads.csv: ``title``, or ``title_zh``)."""
    w = workloads.workload(workload_id)
    return w.title if lang.current() == "en" else (w.title_zh or w.title)


def confidence_text(text: str) -> str:
    """A confidence of :func:`multigpu.evidence.answer.confidence` in the current language ("—" as it is)."""
    return text if text == "—" else glue.say(text)


def _sides(nvswitch_pct: float, pcie_pct: float) -> str:
    """Both sides' held-out error (%) as the table shows them, "8 / 35"; "—" for a side with no held-out run."""
    return " / ".join("—" if math.isnan(v) else f"{answer.shown(v):.0f}" for v in (nvswitch_pct, pcie_pct))


def decision_frame(decided: pd.DataFrame) -> pd.DataFrame:
    """The decision table as the introduction shows it, in the current language: one row per workload, premiums
    rounded to whole per cent ("unbounded" where the PCIe system cannot run the workload, "—" where the file
    prices no pair), the model's held-out error on each side the verdict compares, and the page that shows the
    work (``chapter``, its title, and ``href``, its address relative to the intro)."""
    return pd.DataFrame({"title": decided["workload"].map(_title),
                         "verdict": decided["verdict"].map(lang.label),
                         "break_even": decided["break_even_premium_pct"].map(_premium),
                         "charged": decided["charged_premium_pct"].map(_premium),
                         "confidence": decided["confidence"].map(confidence_text),
                         "sides": [_sides(n, p) for n, p in
                                   zip(decided["nvswitch_error_pct"], decided["pcie_error_pct"])],
                         "chapter": decided["chapter"].map(lambda page: lang.label(PAGES[page]) if page in PAGES
                                                           else page),
                         "href": decided["chapter"] + ".html"})


def decision_table_html(decided: pd.DataFrame) -> str:
    """The decision table in both editions as one HTML output (:func:`multigpu.book.lang.editions_html`): the
    English table has the id ``decision-table``, the Chinese ``decision-table-zh``."""
    def one() -> str:
        own_id = "decision-table" if lang.current() == "en" else f"decision-table-{lang.current()}"
        return tables.table_html(decision_frame(decided), key=["title"], columns=list(LABELS), labels=LABELS,
                                 links={"chapter": "href"}, csv_name="decision-table", table_id=own_id)

    return lang.editions_html(lang.per_language(one))


def show_decision_table(decided: pd.DataFrame) -> None:
    """Display :func:`decision_table_html` in the notebook."""
    from IPython.display import HTML, display

    display(HTML(decision_table_html(decided)))


# ------------------------------------------------------------------ the five lines, in the current language




def summary(decided: pd.DataFrame, size_lines: pd.DataFrame) -> list[str]:
    """The introduction's five lines as Markdown in the current language: :func:`multigpu.evidence.answer.summary`
    rendered from the catalogs."""
    return [glue.render(f) for f in answer.summary(decided, size_lines)]


def _texts(decided: pd.DataFrame, size_lines: pd.DataFrame, table: PriceTable) -> Facts:
    """:func:`facts` in the current language."""
    first = decided.iloc[0]
    out: Facts = {f"answer_{i}": line for i, line in enumerate(summary(decided, size_lines), start=1)}
    out["bottom_line"] = glue.render(answer.bottom_line(decided))
    out.update(rule=lang.label(RULE), nvlink_name=vocabulary.system_name(first["nvlink_system"]),
               pcie_name=vocabulary.system_name(first["pcie_system"]), price_stamp=glue.say(table.stamp_markdown()),
               no_pair_note=("" if first["charged_pairs"] else
                             _("The price file rents no such pair from one provider, so the premium charged is shown "
                               "as — and no verdict is priced.")))
    return out


def facts(decided: pd.DataFrame, table: PriceTable, cal: Calibration | None = None,
          size_lines: pd.DataFrame | None = None) -> Facts:
    """The introduction's prose values, Markdown, each in English and, as ``<name>_zh``, in Chinese:
    ``bottom_line`` (:func:`multigpu.evidence.answer.bottom_line`), ``answer_1`` .. ``answer_5``
    (:func:`summary`; the fourth is the market's size line, shown apart from the wiring's), ``rule`` (the decision rule in words), ``nvlink_name`` and
    ``pcie_name`` (the compared systems, named in the current language:
    :func:`multigpu.book.vocabulary.system_name`), ``price_stamp`` (the price file), and ``no_pair_note`` (a
    sentence when the file prices no pair, else empty). ``size_lines``: the guide's training size lines if
    already computed (default: :func:`multigpu.evidence.guide.training_size_lines`)."""
    size_lines = guide.training_size_lines(table, cal) if size_lines is None else size_lines
    return glue.per_language(lambda: _texts(decided, size_lines, table))

