"""The starting article's claims (C01-C27), each checked by the model or the catalogue.

A check is a function of :class:`Inputs` (the calibration and the price table it judges with), marked with
:func:`claim`, that returns a :class:`Verdict` whose values are computed, never typed; what checks are built from
is :mod:`multigpu.evidence.claims.rules`. Checks live in one module per chapter, each listing its own
(``CHECKS``): :mod:`~multigpu.evidence.claims.generations`, :mod:`~multigpu.evidence.claims.topology`,
:mod:`~multigpu.evidence.claims.bottlenecks` and :mod:`~multigpu.evidence.claims.cost`. :data:`CHECKS` is all of
them by claim id; :func:`check` runs one, :func:`check_all` every one, in id order.
"""

from __future__ import annotations

from multigpu.common.errors import InputError
from multigpu.evidence.claims import bottlenecks, cost, generations, topology
from multigpu.evidence.claims.rules import (
    BAND_NAMES,
    CLAIMS_CSV,
    LADDER,
    OUTCOME,
    PRIMARY_DOMAINS,
    TOLERANCE,
    VERDICTS,
    Check,
    ClaimRow,
    Inputs,
    Rule,
    Test,
    Verdict,
    bands,
    caveat,
    claim,
    conclusion,
    fact,
    judge,
    margin,
    needs,
    seed_claims,
    sourced,
    tests_markdown,
)

__all__ = ["BAND_NAMES", "CHECKS", "CLAIMS_CSV", "LADDER", "OUTCOME", "PRIMARY_DOMAINS", "TOLERANCE", "VERDICTS",
           "Check", "ClaimRow", "Inputs", "Rule", "Test", "Verdict", "bands", "caveat", "check", "check_all", "claim",
           "conclusion", "fact", "judge", "margin", "needs", "seed_claims", "sourced", "tests_markdown"]

#: Every check, by claim id, from the chapters' modules' own lists.
CHECKS: dict[str, Check] = {func.claim_id: func for module in (generations, topology, bottlenecks, cost)
                            for func in module.CHECKS}


def check(claim_id: str, inputs: Inputs | None = None) -> Verdict:
    """Run the check of one claim with ``inputs`` (default: shipped calibration, packaged prices);
    InputError for an unknown or unchecked id."""
    if claim_id not in CHECKS:
        raise InputError(f"no check for claim '{claim_id}'; checked: {', '.join(sorted(CHECKS))}")
    return CHECKS[claim_id](inputs or Inputs())


def check_all(inputs: Inputs | None = None) -> list[Verdict]:
    """Every check, in claim-id order, with ``inputs``."""
    return [CHECKS[claim_id](inputs or Inputs()) for claim_id in sorted(CHECKS)]
