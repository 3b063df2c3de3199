"""The starting article's claims (C01-C27), each checked by the model or the catalogue.

A check is a function of :class:`Inputs` (the calibration and the price table
it judges with) registered with :func:`claim`; it returns a :class:`Verdict`
whose values are computed, never typed. Checks live in one module per chapter
(``hardware``, ...); :func:`check` runs one, :func:`check_all` every
registered one, in id order.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Annotated

from pydantic import Field

from multigpu.comm import calibration
from multigpu.comm.calibration import Calibration
from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR, Text
from multigpu.common.errors import InputError
from multigpu.market import prices
from multigpu.market.prices import PriceTable

CLAIMS_CSV = DATA_DIR / "claims.csv"
VERDICTS = ("holds", "holds-with-caveat", "misleading", "wrong", "not-checkable")
#: Modules holding checks, one per chapter; imported on first use.
CHECK_MODULES = ["multigpu.evidence.claims.hardware", "multigpu.evidence.claims.cost", "multigpu.evidence.claims.topology", "multigpu.evidence.claims.workloads"]

_CHECKS: dict[str, Callable[[Inputs], Verdict]] = {}


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


@dataclass(frozen=True)
class Verdict:
    """The outcome of checking one claim.

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

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"{self.id}: verdict '{self.verdict}' is not one of {VERDICTS}")

    def to_dict(self) -> dict:
        return asdict(self)


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


def claim(claim_id: str) -> Callable[[Callable[[Inputs], Verdict]], Callable[[Inputs], Verdict]]:
    """Register a check for ``claim_id`` (decorator)."""
    if claim_id not in seed_claims():
        raise ValueError(f"no claim {claim_id} in {CLAIMS_CSV.name}")

    def register(func: Callable[[Inputs], Verdict]) -> Callable[[Inputs], Verdict]:
        _CHECKS[claim_id] = func
        return func

    return register


def _load_checks() -> None:
    for module in CHECK_MODULES:
        importlib.import_module(module)


def check(claim_id: str, inputs: Inputs | None = None) -> Verdict:
    """Run the check of one claim with ``inputs`` (default: shipped calibration, packaged prices);
    InputError for an unknown or unchecked id."""
    _load_checks()
    if claim_id not in _CHECKS:
        raise InputError(f"no check for claim '{claim_id}'; checked: {', '.join(sorted(_CHECKS))}")
    return _CHECKS[claim_id](inputs or Inputs())


def check_all(inputs: Inputs | None = None) -> list[Verdict]:
    """Every registered check, in claim-id order, with ``inputs``."""
    _load_checks()
    return [_CHECKS[claim_id](inputs or Inputs()) for claim_id in sorted(_CHECKS)]
