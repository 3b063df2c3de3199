"""Claim verdicts are computed by one ladder over stated tests (issue: computed verdicts): for each check that
states its rule, changing one input — a catalogue row or a calibration value — flips the verdict."""

from __future__ import annotations

import dataclasses

import pytest

from multigpu.comm import calibration
from multigpu.evidence import claims
from multigpu.evidence.claims import caveat, conclusion, fact, judge
from multigpu.hardware import catalog, wiring


def test_the_ladder_orders_facts_conclusions_and_caveats():
    assert judge(fact("a", True), conclusion("b", True))[0] == "holds"
    assert judge(fact("a", True), caveat("c", True))[0] == "holds-with-caveat"
    assert judge(fact("a", True), conclusion("b", False), caveat("c", True))[0] == "misleading"
    # a wrong fact is never softened by a caveat
    verdict, rule = judge(fact("a", False), conclusion("b", True), caveat("c", True))
    assert verdict == "wrong" and "fact: a (fails)" in rule and "caveat: c (applies)" in rule


@pytest.fixture
def catalogue(monkeypatch):
    """Serve a catalogue with some rows changed: ``change(kind, id, **fields)`` for kind link, gpu or system."""
    tables = {"link": catalog.links(), "gpu": catalog.gpus(), "system": catalog.systems()}

    def change(kind: str, row_id: str, **fields):
        tables[kind][row_id] = dataclasses.replace(tables[kind][row_id], **fields)
        monkeypatch.setattr(catalog, "_links", lambda: tables["link"])
        monkeypatch.setattr(catalog, "_gpus", lambda: tables["gpu"])
        monkeypatch.setattr(catalog, "_systems", lambda: tables["system"])
        wiring.for_system.cache_clear()

    yield change
    monkeypatch.undo()
    wiring.for_system.cache_clear()


def _flips(claim_id: str, before: str, after: str, inputs: claims.Inputs | None = None) -> None:
    assert claims.check(claim_id, inputs).verdict == after, claim_id
    assert before != after


@pytest.mark.parametrize("claim_id, kind, row, fields, after", [
    ("C01", "link", "nvlink1", {"year": 2017}, "wrong"),
    ("C02", "link", "nvlink6", {"per_gpu_GBps_per_dir": 3600.0}, "wrong"),
    ("C07", "system", "vr-nvl72", {"gpus_per_node": 36}, "wrong"),
    ("C20", "gpu", "rubin", {"fp4_peak_TFLOPS": 100000.0}, "wrong"),
])
def test_one_catalogue_row_flips_the_verdict(catalogue, claim_id, kind, row, fields, after):
    before = claims.check(claim_id).verdict
    catalogue(kind, row, **fields)
    _flips(claim_id, before, after)


def test_c04_holds_with_a_caveat_once_nvlink_is_yearly(catalogue):
    assert claims.check("C04").verdict == "misleading"  # 2022, 2024, 2026: one generation every 2 years
    catalogue("link", "nvlink5", year=2023)
    catalogue("link", "nvlink6", year=2024)
    assert claims.check("C04").verdict == "holds-with-caveat"  # yearly; the figures still add both directions


def test_c05_the_gpu_count_is_the_wrong_fact(catalogue):
    assert claims.check("C05").verdict == "wrong"
    first = claims.check("C05").rule
    assert "its first system joined 8 GPUs (catalogue: 16) (fails)" in first
    system = next(s for s in catalog.systems().values() if s.nvswitch == "nvswitch1" and s.year == 2018)
    catalogue("system", system.id, gpus_per_node=8)
    assert claims.check("C05").verdict == "holds-with-caveat"  # 300 GB/s still adds both directions


def test_c08_and_c10_judge_one_misconception_alike(catalogue):
    assert claims.check("C08").verdict == claims.check("C10").verdict == "misleading"
    catalogue("system", "vr-nvl72", gpus_per_node=2)  # a rack of two: the one peer gets the whole port
    assert claims.check("C08").verdict == "holds"


def test_c09_and_c25_follow_their_catalogue_rows(catalogue):
    assert claims.check("C09").verdict == "holds-with-caveat"
    catalogue("gpu", catalog.system("hgx-h200").gpu, nvlink_GBps_per_dir=900.0)  # 1800 GB/s both ways
    assert claims.check("C09").verdict == "wrong"
    assert claims.check("C25").verdict == "holds-with-caveat"
    for system in [s for s in catalog.systems().values() if s.nic == "infiniband-hdr"]:
        catalogue("system", system.id, nic="infiniband-ndr")
    assert claims.check("C25").verdict == "wrong"


@pytest.mark.parametrize("claim_id, values, after", [
    ("C06", {("nvls_efficiency", "hopper"): 0.3}, "misleading"),  # NVLS would then lose to the ring
    ("C15", {("hop_latency_us", "nvlink.ring.ll"): 0.01}, "wrong"),  # hardly any per-hop latency: no growth
])
def test_one_calibration_value_flips_the_verdict(claim_id, values, after):
    before = claims.check(claim_id).verdict
    _flips(claim_id, before, after, claims.Inputs(cal=calibration.default().replace(values)))


def test_c19_flips_when_a_synchronisation_costs_ten_times_more():
    sync = calibration.default().value("custom_latency_us", "sync")
    slow = claims.Inputs(cal=calibration.default().replace({("custom_latency_us", "sync"): 10 * sync}))
    assert claims.check("C19").verdict == "holds-with-caveat" and claims.check("C19", slow).verdict == "misleading"


def test_checks_that_state_a_rule_also_state_a_confidence():
    for verdict in claims.check_all():
        if verdict.rule:
            assert verdict.confidence, verdict.id
            assert verdict.confidence.startswith(("catalogue fact", "robust", "sensitive", "counted", "arithmetic",
                                                  "price-based", "the facts are")), verdict.id
    assert all(v.rule for v in claims.check_all())  # every check states the tests it judged by


def test_the_glossary_agrees_with_the_verdicts():
    """The glossary's NVSwitch entry does not repeat the misconception C08 and C10 refute."""
    from pathlib import Path

    glossary = (Path(__file__).resolve().parents[1] / "book" / "appendix" / "glossary.md").read_text()
    entry = glossary[glossary.index("\nNVSwitch\n"):].split("\n\n")[0]
    if claims.check("C10").verdict in ("misleading", "wrong"):
        assert "shares its own port" in entry and "every other at its full" not in entry


def test_price_claims_are_not_checkable_without_the_inputs_they_need():
    """C24 and C26 need offers to compare: the same ladder gives not-checkable when a price file lacks them
    (tests/data/prices/good.csv has no NVLink-class offer dearer than a comparable PCIe one)."""
    from pathlib import Path

    from multigpu.market import prices

    good = prices.load_table(Path(__file__).parent / "data" / "prices" / "good.csv")
    packaged, small = claims.check("C24"), claims.check("C24", claims.Inputs(prices=good))
    assert packaged.verdict != "not-checkable" and "(present)" in packaged.rule
    assert small.verdict == "not-checkable" and "(missing)" in small.rule
    assert judge(claims.needs("x", False), fact("y", True))[0] == "not-checkable"


def test_the_prose_of_a_verdict_comes_from_its_tests():
    """The chapters state no judgement of their own: ``tests_markdown`` lists what held, what failed and which
    caveats applied, from the same tests the verdict was judged on; a flipped test flips the sentence."""
    tests = (fact("the year is 2018", True), fact("8 GPUs", False), caveat("both directions", True))
    verdict, rule = judge(*tests)
    other = {"id": "CXX", "seed_value": "s", "model_value": "m", "unit": "u", "explanation": "e", "chapter": "ch"}
    v = claims.Verdict(verdict=verdict, rule=rule, **other)
    assert verdict == "wrong" and rule.tests == tests
    assert claims.tests_markdown(v) == "*Holds:* the year is 2018. *Fails:* 8 GPUs. *Caveat:* both directions."
    held, held_rule = judge(fact("the year is 2018", True), fact("8 GPUs", True))
    flipped = claims.Verdict(verdict=held, rule=held_rule, **other)
    assert claims.tests_markdown(flipped) == "*Holds:* the year is 2018; 8 GPUs."
    import pickle
    assert pickle.loads(pickle.dumps(rule)).tests == tests and str(pickle.loads(pickle.dumps(rule))) == str(rule)
