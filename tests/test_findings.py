"""Findings (multigpu.common.findings): evidence returns a message and typed values; the CLI renders English, the
book each edition from its catalogs, and both show the same values."""

from __future__ import annotations

import pytest

from multigpu.book import glue, lang
from multigpu.common.findings import Finding, Number, Numbers, msg
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


def _findings() -> list[tuple[str, Finding, str]]:
    """Every finding the claim checks give (claim id, finding, the test's English text)."""
    return [(v.id, t.finding, t.text) for v in claims.check_all() for t in getattr(v.rule, "tests", ())
            if t.finding is not None]


#: The checks that still give English text only (chapter 4's cost claims), which the book renders in Chinese
#: through its chapter's templates until they are converted; every other check states each test as a finding.
NOT_YET = ("C24", "C26")


def test_every_other_check_states_each_test_as_a_finding():
    checked = claims.check_all()
    assert len(checked) >= 25
    for verdict in checked:
        tests = getattr(verdict.rule, "tests", ())
        if verdict.id not in NOT_YET:
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
        assert str(value) in rendered["en"] and str(value) in rendered["zh"], (claim_id, name, value)
