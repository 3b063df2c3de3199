"""A health check for a rented cluster: is each size of an nccl-tests log inside the interval the model expects?

Each size's measured time is set against the model's 90 % prediction interval for its regime
(:mod:`multigpu.evidence.intervals`): ``inside``, ``slower`` than the interval (the cluster underdelivers) or
``faster`` (the model is too cautious there). A log fails the strict check (:func:`fails`) when its large messages,
the sizes that show what the links and NICs carry, are consistently slower: at least :data:`STRICT_SIZES` of them,
and more than half, since one slow size is noise a rerun often removes.

How often the rule cries wolf is measured on the held-out published sweeps, each read as a healthy log
(:func:`false_alarms`): published runs are the best evidence of what a healthy cluster of each kind delivers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from multigpu.common.findings import Finding, msg
from multigpu.evidence import intervals, sweeps

#: Large sizes slower than their interval that make the strict check fail (with more than half of them).
STRICT_SIZES = 3
STATUSES = ("inside", "slower", "faster")


@dataclass(frozen=True)
class Check:
    """One size of a log against the model: its interval of the time (us) and where the measurement falls."""

    bytes: int
    low_us: float
    high_us: float
    status: str  #: one of :data:`STATUSES`


def check(sizes: np.ndarray, measured_us: np.ndarray, predicted_us: np.ndarray, nodes: int,
          level: float = intervals.LEVEL, residuals=None) -> list[Check]:
    """Each size (bytes) of a log with its measured and predicted time (us) on ``nodes`` nodes, against the
    interval of its regime at ``level``."""
    data = intervals.residuals() if residuals is None else residuals
    out = []
    for nbytes, measured, predicted in zip(sizes, measured_us, predicted_us):
        low, high = intervals.band(intervals.regime(nbytes, nodes), level, data).around(float(predicted))
        out.append(Check(int(nbytes), low, high, status(measured, low, high)))
    return out


def status(measured: float, low: float, high: float) -> str:
    """Where a measurement falls against its interval [low, high] (:data:`STATUSES`)."""
    return "slower" if measured > high else "faster" if measured < low else "inside"


def slow_large(checks: list[Check]) -> tuple[int, int]:
    """(large sizes slower than their interval, large sizes in all)."""
    large = [c for c in checks if c.bytes >= sweeps.LARGE_BYTES]
    return sum(c.status == "slower" for c in large), len(large)


def fails(checks: list[Check]) -> bool:
    """Whether large messages are consistently slower than the model expects: at least :data:`STRICT_SIZES`
    large sizes, and more than half of them, slower than their interval."""
    slow, large = slow_large(checks)
    return slow >= STRICT_SIZES and slow > large / 2


def summary(checks: list[Check], level: float = intervals.LEVEL) -> Finding:
    """One line for the whole log: how many sizes fall inside, below and above the interval, and the verdict."""
    counts = {s: sum(c.status == s for c in checks) for s in STATUSES}
    slow, large = slow_large(checks)
    verdict = (msg("large messages are consistently slower than expected ({slow} of {large})") if fails(checks)
               else msg("large messages are as expected") if large else msg("no large message in the log"))
    return Finding.of(msg("{inside} of {n} sizes inside the model's {level} % interval, {slower} slower, "
                          "{faster} faster: {verdict}"), n=len(checks), level=round(100 * level),
                      **counts, verdict=Finding.of(verdict, slow=slow, large=large))


def false_alarms(level: float = intervals.LEVEL, split: str = "holdout") -> tuple[int, int]:
    """(held-out sweeps the strict check fails, held-out sweeps with a large message), each sweep read as a
    healthy cluster's log."""
    points, data = intervals.held_out(split), intervals.residuals()
    bands = {(size, family): intervals.band(intervals.Regime(size, family), level, data)
             for size in intervals.SIZES for family in intervals.FAMILIES}
    failed = total = 0
    for _, part in points.groupby("sweep"):
        checks = [Check(int(r.bytes), math.nan, math.nan,
                        status(r.log_ratio, math.log(bands[(r.size, r.family)].low),
                               math.log(bands[(r.size, r.family)].high))) for r in part.itertuples()]
        if slow_large(checks)[1]:
            total += 1
            failed += fails(checks)
    return failed, total
