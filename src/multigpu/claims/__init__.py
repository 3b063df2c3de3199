"""The starting article's claims (C01-C27), each checked by the model or the catalogue.

A check is a function registered with :func:`claim`; it returns a
:class:`Verdict` whose values are computed, never typed. Checks live in one
module per chapter (``hardware``, ...); :func:`check` runs one, :func:`check_all`
every registered one, in id order.
"""

from __future__ import annotations

import csv
import importlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from multigpu.errors import InputError

CLAIMS_CSV = Path(__file__).resolve().parents[1] / "data" / "claims.csv"
VERDICTS = ("holds", "holds-with-caveat", "misleading", "wrong", "not-checkable")
#: Modules holding checks, one per chapter; imported on first use.
CHECK_MODULES = ["multigpu.claims.hardware", "multigpu.claims.cost", "multigpu.claims.topology", "multigpu.claims.workloads"]

_CHECKS: dict[str, Callable[[], "Verdict"]] = {}


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


@cache
def seed_claims() -> dict[str, dict[str, str]]:
    """The article's claims by id (columns of ``data/claims.csv``)."""
    with CLAIMS_CSV.open(encoding="utf-8", newline="") as handle:
        return {row["id"]: row for row in csv.DictReader(handle)}


def claim(claim_id: str) -> Callable[[Callable[[], Verdict]], Callable[[], Verdict]]:
    """Register a check for ``claim_id`` (decorator)."""
    if claim_id not in seed_claims():
        raise ValueError(f"no claim {claim_id} in {CLAIMS_CSV.name}")

    def register(func: Callable[[], Verdict]) -> Callable[[], Verdict]:
        _CHECKS[claim_id] = func
        return func

    return register


def _load_checks() -> None:
    for module in CHECK_MODULES:
        importlib.import_module(module)


def check(claim_id: str) -> Verdict:
    """Run the check of one claim; InputError for an unknown or unchecked id."""
    _load_checks()
    if claim_id not in _CHECKS:
        raise InputError(f"no check for claim '{claim_id}'; checked: {', '.join(sorted(_CHECKS))}")
    return _CHECKS[claim_id]()


def check_all() -> list[Verdict]:
    """Every registered check, in claim-id order."""
    _load_checks()
    return [_CHECKS[claim_id]() for claim_id in sorted(_CHECKS)]
