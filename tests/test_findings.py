"""Findings (multigpu.common.findings): evidence returns a message and typed values; the CLI renders English, the
book each edition from its catalogs, and both show the same values."""

from __future__ import annotations

import pytest

from multigpu.book import glue, lang
from multigpu.common.findings import Finding, Items, Number, Numbers, Word, msg
from multigpu.evidence import claims


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
    from multigpu.evidence.claims import workloads

    assert str(workloads.pcie8_finding({"pcie8": {"first_batch": 16}})) == "from batch 16 on"
    rendered = lang.per_language(lambda: glue.render(workloads.pcie8_finding({"pcie8": {"first_batch": 16}})))
    assert "16" in rendered["zh"] and rendered["zh"] != rendered["en"]


@pytest.mark.parametrize("claim_id, finding, text", _findings(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_finding_renders_in_both_editions_with_the_same_values(claim_id, finding, text):
    """English is the test's own text; Chinese comes from the catalogs (a missing translation is a LookupError);
    every value is shown, and shown alike, in both."""
    rendered = lang.per_language(lambda: glue.render(finding))
    assert rendered["en"] == text
    assert rendered["zh"] != rendered["en"]  # translated, not English passed through
    for name, value in finding.leaves():
        if isinstance(value, Word):  # a word of the vocabulary: each edition's own
            assert value.text in rendered["en"] and lang.label(value.text, "zh") in rendered["zh"], (claim_id, name)
        else:
            assert str(value) in rendered["en"] and str(value) in rendered["zh"], (claim_id, name, value)
