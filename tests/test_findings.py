"""Findings (multigpu.common.findings): evidence returns a message and typed values; the CLI renders English, the
book each edition from its catalogs, and both show the same values."""

from __future__ import annotations

import pytest
from editions import NUMBER

from multigpu.book import calculator, glue, lang, vocabulary
from multigpu.common.findings import Finding, Items, Name, Number, Numbers, Sentence, Word, msg, say
from multigpu.evidence import answer, claims, guide
from multigpu.market import cost, prices, recommend, search


def test_a_finding_renders_its_typed_values_in_any_language():
    inner = Finding.of(msg("{n} links"), n=18)
    finding = Finding.of(msg("{gpu}: {rate} GB/s over {links}; years {years}"), gpu="h100-sxm",
                         rate=Number(450.0, ".1f"), links=inner, years=Numbers((2022, 2024)))
    assert str(finding) == "h100-sxm: 450.0 GB/s over 18 links; years 2022, 2024"
    french = {"{gpu}: {rate} GB/s over {links}; years {years}": "{gpu} : {rate} Go/s sur {links} ; années {years}",
              "{n} links": "{n} liens"}
    assert finding.render(french.__getitem__) == "h100-sxm : 450.0 Go/s sur 18 liens ; années 2022, 2024"
    assert finding.value("rate") == Number(450.0, ".1f")
    assert dict(finding.leaves()) == {"gpu": "h100-sxm", "rate": Number(450.0, ".1f"), "n": 18,
                                      "years": Numbers((2022, 2024))}


def test_words_and_lists_take_the_languages_own_words_and_separator():
    finding = Finding.of(msg("cheaper at {types} prices"), types=Items((Word("spot"), Word("reserved"))))
    assert str(finding) == "cheaper at spot, reserved prices"
    zh = {"cheaper at {types} prices": "在{types}价格下更便宜", "spot": "竞价", "reserved": "预留", ", ": "、"}
    assert finding.render(zh.__getitem__) == "在竞价、预留价格下更便宜"


def _findings() -> list[tuple[str, Finding, str]]:
    """Every finding the claim checks give (claim id, finding, the test's English text)."""
    return [(v.id, t.finding, t.text) for v in claims.check_all() for t in getattr(v.rule, "tests", ())
            if t.finding is not None]


def test_every_check_states_each_test_as_a_finding():
    checked = claims.check_all()
    assert len(checked) >= 25
    for verdict in checked:
        tests = getattr(verdict.rule, "tests", ())
        assert tests and all(t.finding is not None for t in tests), verdict.id


def test_where_pcie_decode_outlasts_compute_is_a_finding():
    from multigpu.evidence.claims import bottlenecks

    assert str(bottlenecks.pcie8_finding({"pcie8": {"first_batch": 16}})) == "from batch 16 on"
    rendered = lang.per_language(lambda: glue.render(bottlenecks.pcie8_finding({"pcie8": {"first_batch": 16}})))
    assert "16" in rendered["zh"] and rendered["zh"] != rendered["en"]


#: Texts of the evidence that are fixed, not computed: a message the book translates as it is.
FIXED = {"—", "no pair", "no market"}


def _sentences() -> list[tuple[str, Sentence]]:
    """Every text the evidence gives as a sentence that the book shows (where it comes from, the sentence): the
    claims' model values, explanations and confidences, the decision table's confidences, the introduction's
    lines, the guide's size lines, the price stamp and the reasons an offer cannot run a workload."""
    table = prices.default_table()
    checked = claims.check_all()
    found = [(f"{v.id} {field}", getattr(v, field)) for v in checked for field in ("model_value", "confidence")
             if isinstance(getattr(v, field), str)]
    decided = answer.decision_table(table)
    lines = guide.training_size_lines(table)
    found += [(f"decision {w}", c) for w, c in zip(decided["workload"], decided["confidence"])]
    found += [(f"answer line {i}", Sentence(f)) for i, f in enumerate(answer.summary(decided, lines), start=1)]
    found += [("bottom line", Sentence(answer.bottom_line(decided)))]
    found += [(f"size line {p}", t) for p, t in zip(lines["pricing"], lines["text"])]
    found += [("size lines", guide.lines_phrase(lines)), ("price stamp", table.stamp_markdown()),
              ("price source", table.source_label()), ("no network", cost.no_network_reason(64, 8))]
    found += [(f"offer {i}", label) for i, label in enumerate(cost.offers(table)["label"].head(5))]
    hours = calculator.gpu_hours()
    found += [(f"reason {w} {s}", r) for w, s, r in zip(hours["workload"], hours["system"], hours["reason"]) if r]
    found += _recommender_reasons(table)
    assert [w for w, s in found if s not in FIXED and not isinstance(s, Sentence)] == []
    # the explanations the Chinese edition shows (the rest are English only, the tests standing in for them)
    return found + [(f"{v.id} explanation", v.explanation) for v in checked if isinstance(v.explanation, Sentence)]


def _recommender_reasons(table: prices.PriceTable) -> list[tuple[str, Sentence]]:
    """One reason of each kind the recommender gives (rank head, where the comm goes, limits missed, cannot
    run), training and serving, ranked by cost and by time."""
    frames = [recommend.train("llama3.1-8b", 1e11, table, max_gpus=16, deadline_h=30, budget_usd=2000),
              recommend.serve("llama3.1-8b", 30, 50, table, max_gpus=4, budget_usd_per_hour=20),
              recommend.serve("llama3.1-8b", 30, 5, table, rank_by="time")]
    found: dict[str, tuple[str, Sentence]] = {}
    for n, frame in enumerate(frames):
        for rank_, reason in zip(frame["rank"], frame["reason"]):
            shape = NUMBER.sub("#", str(reason))  # one of each sentence shape
            found.setdefault(shape, (f"recommend {n} #{rank_}", reason))
    return list(found.values())


@pytest.mark.parametrize("claim_id, finding, text", [*_findings(), *((w, s, str(s)) for w, s in _sentences())],
                         ids=lambda x: x if isinstance(x, str) and len(x) < 40 else "")
def test_every_finding_renders_in_both_editions_with_the_same_values(claim_id, finding, text):
    """English is the finding's own text; Chinese comes from the catalogs (a missing translation is a
    LookupError); every value is shown, and shown alike, in both."""
    rendered = lang.per_language(lambda: glue.say(finding))
    assert rendered["en"] == text
    assert rendered["zh"] != rendered["en"]  # translated, not English passed through
    for name, value in finding.leaves():
        if isinstance(value, Name):  # a name from the data: each edition's where the data give one
            assert value.text in rendered["en"], (claim_id, name)
            assert vocabulary.data_names("zh").get(value.text, value.text) in rendered["zh"], (claim_id, name)
        elif isinstance(value, Word):  # a word of the vocabulary: each edition's own
            assert value.text in rendered["en"] and lang.label(value.text, "zh") in rendered["zh"], (claim_id, name)
        elif not isinstance(value, float):  # a plain float is shown by its message's format spec
            assert str(value) in rendered["en"] and str(value) in rendered["zh"], (claim_id, name, value)
    assert sorted(NUMBER.findall(rendered["en"])) == sorted(NUMBER.findall(rendered["zh"])), claim_id


def test_a_reason_s_kind_is_read_from_its_message_not_its_words():
    slow = say(search.TOO_SLOW_DECODE, n_fastest=Number(12.5, ".1f"), n_floor=Number(30))
    big = say(search.TOO_BIG_SERVING, n_gpus=8, n_memory=Number(80, ".0f"), n_tp=8)
    assert search.reason_kind(slow) == "too slow" and search.reason_kind(big) == "does not fit"
    assert search.reason_kind(recommend._cannot_run(slow)) == "too slow"  # inside "cannot run: ..."
    assert search.reason_kind("too slow: written by hand") is None and search.reason_kind("") is None


def test_no_sentence_says_zero_of_a_number_that_is_not_zero():
    """Issue 43: a non-zero number that a fixed-point spec would print as 0 ("0.0 ms") is shown to two significant
    figures, in a message's own spec and in a :class:`Number`; an exact zero reads "0" and other specs are
    untouched."""
    from multigpu.common.numtext import number_text

    sentence = Finding.of(msg("{a:.1f} ms, {b:.0f} %, {c:.1f}, {d:,.2f}"), a=0.031, b=0.3, c=0.0, d=1234.5)
    assert str(sentence) == "0.031 ms, 0.3 %, 0, 1,234.50"
    assert str(Number(0.0042, ".2f")) == "0.0042" and str(Number(-0.04, ".1f")) == "-0.04"
    assert str(Numbers((0.001, 2.0), ".1f")) == "0.001, 2.0"
    assert number_text(0.031, ".3g") == "0.031" and number_text(float("nan"), ".1f") == "nan"
