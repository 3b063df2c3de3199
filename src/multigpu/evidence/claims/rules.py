"""What every claim check is built from: its :class:`Inputs`, the :class:`Test` values it judges with, the one
ladder (:func:`judge`) that turns them into a :class:`Verdict`, the confidences it states and the article's claims
(:func:`seed_claims`). A check is marked with :func:`claim`; :mod:`multigpu.evidence.claims` lists the checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Annotated

from pydantic import Field

from multigpu.comm import calibration
from multigpu.comm.calibration import Calibration
from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR, Text
from multigpu.common.findings import Finding, Number, Sentence, Word, msg, say
from multigpu.market import prices
from multigpu.market.prices import PriceTable

CLAIMS_CSV = DATA_DIR / "claims.csv"
VERDICTS = ("holds", "holds-with-caveat", "misleading", "wrong", "not-checkable")
#: The one ladder every check applies (:func:`judge`), in words: the claims page prints it.
LADDER = ("wrong: a fact the claim states (a number, a date, a count) disagrees with the catalogue or the model; "
          "misleading: its facts hold but the conclusion it draws from them does not; holds-with-caveat: facts and "
          "conclusion hold only under a condition the claim leaves out (a direction convention, a precision, a "
          "scope); holds: facts and conclusion hold as stated; not-checkable: the inputs to check it are missing")


@dataclass(frozen=True)
class Inputs:
    """What the checks judge with besides the catalogue: a calibration and a price table
    (None: the shipped calibration, the packaged price file)."""

    cal: Calibration | None = None
    prices: PriceTable | None = None

    @property
    def calibration(self) -> Calibration:
        """The calibration (the shipped one if none was given)."""
        return calibration.resolve(self.cal)

    @property
    def table(self) -> PriceTable:
        """The price table (the packaged one if none was given)."""
        return prices.resolve(self.prices)


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """The outcome of checking one claim, built by name (``Verdict(id=..., verdict=..., ...)``).

    ``seed_value`` is what the article says (as text, with its unit);
    ``model_value`` is what the model or catalogue gives, in ``unit``.
    """

    id: str
    verdict: str
    seed_value: str
    model_value: float | str
    unit: str
    explanation: str
    chapter: str
    rule: str = ""  #: what was tested, in words: the claim's facts, its conclusion, the caveats that apply
    confidence: str = ""  #: how far the verdict can be trusted: the sourcing of a fact, or the model's margin

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"{self.id}: verdict '{self.verdict}' is not one of {VERDICTS}")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Test:
    """One computed test of a claim: a ``fact`` it states, the ``conclusion`` it draws, or a ``caveat`` (a
    condition the claim leaves out); ``passed`` for a fact or a conclusion means it holds, for a caveat that
    it applies. ``finding`` is the test as a message and typed values (:mod:`multigpu.common.findings`), which
    the book renders in each language; ``text`` the same in English."""

    kind: str
    text: str
    passed: bool
    finding: Finding


def _test(kind: str, what: str | Finding, passed: bool) -> Test:
    """A test of ``kind``; ``what`` a finding, or a message without values (a plain text)."""
    finding = what if isinstance(what, Finding) else Finding.of(what)
    return Test(kind, str(finding), bool(passed), finding)


def fact(what: str | Finding, passed: bool) -> Test:
    return _test("fact", what, passed)


def conclusion(what: str | Finding, passed: bool) -> Test:
    return _test("conclusion", what, passed)


def caveat(what: str | Finding, applies: bool) -> Test:
    return _test("caveat", what, applies)


def needs(what: str | Finding, present: bool) -> Test:
    """An input the check needs (a price file with comparable offers, say); without it: not-checkable."""
    return _test("input", what, present)


#: a stated figure agrees with the catalogue or the model within this fraction (rounding in the article)
TOLERANCE = 0.05


class Rule(str):
    """A verdict's rule in words (a plain string, as the JSON contract has it) that also keeps the
    :class:`Test` values it was written from (``tests``), for prose built from the same outcomes."""

    tests: tuple[Test, ...] = ()

    def __new__(cls, text: str, tests: tuple[Test, ...] = ()) -> Rule:
        rule = super().__new__(cls, text)
        rule.tests = tuple(tests)
        return rule

    def __reduce__(self) -> tuple:
        return (Rule, (str(self), self.tests))


#: How a test's outcome reads in a sentence, by kind and outcome.
OUTCOME = {("fact", True): "holds", ("fact", False): "fails", ("conclusion", True): "holds",
           ("conclusion", False): "fails", ("caveat", True): "applies", ("caveat", False): "does not apply",
           ("input", True): "present", ("input", False): "missing"}


def tests_markdown(verdict: Verdict) -> str:
    """What decided ``verdict``, as Markdown sentences built from its tests: what holds, what fails, which
    caveats apply and which inputs are missing (empty when the verdict keeps no tests)."""
    tests = getattr(verdict.rule, "tests", ())
    groups = (("Holds", [t for t in tests if t.kind in ("fact", "conclusion") and t.passed]),
              ("Fails", [t for t in tests if t.kind in ("fact", "conclusion") and not t.passed]),
              ("Caveat", [t for t in tests if t.kind == "caveat" and t.passed]),
              ("Missing", [t for t in tests if t.kind == "input" and not t.passed]))
    return " ".join(f"*{label}:* " + "; ".join(t.text for t in group) + "." for label, group in groups if group)


def judge(*tests: Test) -> tuple[str, str]:
    """The verdict of :data:`LADDER` over ``tests``, and the rule in words (each test and its outcome)."""
    facts = [t for t in tests if t.kind == "fact"]
    conclusions = [t for t in tests if t.kind == "conclusion"]
    caveats = [t for t in tests if t.kind == "caveat"]
    if not all(t.passed for t in tests if t.kind == "input"):
        verdict = "not-checkable"
    elif not all(t.passed for t in facts):
        verdict = "wrong"
    elif not all(t.passed for t in conclusions):
        verdict = "misleading"
    elif any(t.passed for t in caveats):
        verdict = "holds-with-caveat"
    else:
        verdict = "holds"
    rule = "; ".join(f"{t.kind}: {t.text} ({OUTCOME[(t.kind, t.passed)]})" for t in tests)
    return verdict, Rule(rule, tests)


def not_checkable_problems(verdicts: Sequence[Verdict]) -> list[str]:
    """Verdicts that break the rule for ``not-checkable``: it is given only where an input the check needs is
    missing (a failed :func:`needs` test among the verdict's tests, which says what is missing), and the model
    then has no number of its own to show. Returns one message per problem (empty if none)."""
    problems = []
    for v in verdicts:
        missing = [t for t in getattr(v.rule, "tests", ()) if t.kind == "input" and not t.passed]
        if v.verdict != "not-checkable":
            if missing:
                problems.append(f"{v.id}: {v.verdict}, but an input is missing: {missing[0].text}")
            continue
        if not missing:
            problems.append(f"{v.id}: not-checkable, but no test names a missing input")
        if isinstance(v.model_value, (int, float)) and not isinstance(v.model_value, bool):
            problems.append(f"{v.id}: not-checkable, but the model gives a number: {v.model_value!r}")
    return problems


#: Domains of primary sources (vendors, standards bodies) for a catalogue fact's confidence
PRIMARY_DOMAINS = ("nvidia.com", "amd.com", "intel.com", "pcisig.com", "infinibandta.org", "mellanox.com",
                   "developer.nvidia.com", "docs.nvidia.com", "broadcom.com")


def sourced(*sources: str) -> Sentence:
    """Confidence of a catalogue fact from its sources: "primary source" when every one cites a vendor or a
    standards body (:data:`PRIMARY_DOMAINS`), else "secondary sources only" or "partly secondary sources"."""
    primary = [any(domain in source for domain in PRIMARY_DOMAINS) for source in sources]
    if all(primary):
        return say(msg("catalogue fact, primary source"))
    if any(primary):
        return say(msg("catalogue fact, partly secondary sources"))
    return say(msg("catalogue fact, secondary sources only"))


#: The out-of-sample errors of :func:`bands`, by name, as a confidence states them.
BAND_NAMES = {"collective": msg("held-out sweeps' large-message error"),
              "training": msg("held-out training runs' error"), "serving": msg("held-out serving throughput error")}


def margin(quantity: str, value: float, threshold: float, band: str) -> Sentence:
    """Confidence of a model-based verdict that turns on ``value`` (of ``quantity``, a :func:`msg`) crossing
    ``threshold``: "robust" when the two are further apart than the model's out-of-sample error of kind ``band``
    (:func:`bands`, %), else "sensitive to" the quantity, with the value at which the verdict would flip."""
    band_pct = bands()[band]
    gap_pct = 100 * abs(value / threshold - 1) if threshold else float("inf")
    common = {"quantity": Word(quantity), "value": Number(value, ".3g"), "band": Word(BAND_NAMES[band]),
              "band_pct": Number(band_pct, ".0f")}
    if gap_pct > band_pct:
        away = (Finding.of(msg("{gap} % from {threshold}"), gap=Number(gap_pct, ".0f"), threshold=Number(threshold, ".3g"))
                if threshold else Finding.of(msg("not {threshold}"), threshold=Number(threshold)))
        return say(msg("robust: {quantity} {value} is {away}, beyond the {band} ({band_pct} %)"), away=away, **common)
    return say(msg("sensitive to {quantity}: {value} against {threshold}, within the {band} ({band_pct} %)"),
               threshold=Number(threshold, ".3g"), **common)


@cache
def bands() -> dict[str, float]:
    """The model's out-of-sample error (median |error|, %) that its verdicts are weighed against (the shipped
    calibration): ``collective`` (held-out sweeps, large messages), ``training`` (held-out runs, step time),
    ``serving`` (held-out throughput rows)."""
    from multigpu.evidence import (  # the validation data, loaded only when weighed
        runs,
        serving,
        sweeps,
    )

    swept = sweeps.summary(sweeps.compare(("holdout",))).set_index("size_class")
    trained = runs.compare(("holdout",))["rel_error"].abs()
    served = serving.compare(("holdout",))
    thrown = served[served["metric"] == "throughput"]["rel_error"].abs()
    return {"collective": 100 * float(swept.loc["large", "median_abs_error"]),
            "training": 100 * float(trained.median()), "serving": 100 * float(thrown.median())}


class ClaimRow(datafiles.Row):
    """Schema of ``data/claims.csv``: one claim of the article per row."""

    id: Annotated[str, Field(pattern=r"^C\d{2}$")]
    section: Text
    claim_en: Text
    claim_zh: Text
    what_to_check: Text
    source: Text

    NOUN = "claim"
    EXPECTED = {"id": "C and two digits, e.g. C01", "section": "the article's section, e.g. 1.1",
                "claim_en": "the claim in English", "claim_zh": "the claim as the article words it",
                "what_to_check": "what the check compares", "source": "where in the article the claim is"}


@cache
def seed_claims(path: Path = CLAIMS_CSV) -> dict[str, dict[str, str]]:
    """The article's claims by id (columns of ``data/claims.csv``, as text)."""
    rows = datafiles.read(path, ClaimRow, unique=("id",))
    return {row.id: {column: value or "" for column, value in row} for _, row in rows}


#: A check: the verdict on one claim with the given inputs.
Check = Callable[[Inputs], Verdict]


def claim(claim_id: str) -> Callable[[Check], Check]:
    """Mark a function as the check of ``claim_id`` (its ``claim_id`` attribute); ValueError for an id that is
    not in ``data/claims.csv``."""
    if claim_id not in seed_claims():
        raise ValueError(f"no claim {claim_id} in {CLAIMS_CSV.name}")

    def mark(func: Check) -> Check:
        func.claim_id = claim_id  # type: ignore[attr-defined]
        return func

    return mark
