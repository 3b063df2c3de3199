"""The health check of ``validate`` (issue 44): each size inside the model's interval, slower or faster; a strict
check that fails only when large messages are consistently slower; its false alarms on held-out published runs."""

import json

import numpy as np
import pytest

from multigpu.cli import main
from multigpu.evidence import health, intervals

LOG = "tests/data/nccl/a100_allreduce.log"
LARGE = np.array([2.0**26, 2.0**27, 2.0**28, 2.0**29, 2.0**30])


def _checks(factor: np.ndarray, nodes: int = 1) -> list[health.Check]:
    predicted = np.full(len(LARGE), 1000.0)
    return health.check(LARGE, predicted * factor, predicted, nodes)


def test_a_size_is_inside_slower_or_faster_by_its_regime_s_interval():
    band = intervals.band(intervals.Regime("large", "within a node"))
    checks = _checks(np.array([1.0, band.high * 1.01, band.low * 0.99, band.high * 0.99, band.low * 1.01]))
    assert [c.status for c in checks] == ["inside", "slower", "faster", "inside", "inside"]
    assert (checks[0].low_us, checks[0].high_us) == pytest.approx(band.around(1000.0))


@pytest.mark.parametrize("slow, fails", [(0, False), (1, False), (2, False), (3, True), (5, True)])
def test_the_strict_check_fails_only_on_several_slow_large_sizes(slow, fails):
    """One or two slow sizes are noise a rerun often removes; three, and more than half, are a slow cluster."""
    high = intervals.band(intervals.Regime("large", "across nodes")).high
    factor = np.array([high * 1.1] * slow + [1.0] * (len(LARGE) - slow))
    checks = _checks(factor, nodes=2)
    assert health.slow_large(checks) == (slow, len(LARGE)) and health.fails(checks) is fails
    assert ("consistently slower" in str(health.summary(checks))) is fails


def test_small_sizes_alone_never_fail_the_strict_check():
    small = np.array([1024.0, 4096.0, 65536.0, 1048576.0])
    checks = health.check(small, np.full(4, 1e6), np.full(4, 10.0), 1)
    assert all(c.status == "slower" for c in checks) and not health.fails(checks)
    assert str(health.summary(checks)).endswith("no large message in the log")


#: The first count (2026-12-05), the rule fixed before it: of the held-out sweeps with a large message, 2 of 36
#: (5.6 %) fail the strict check, just over the 5 % goal: the p5 EKS run that another p5 run of the same inputs
#: beats by 2.36x at 128 MiB, and ABCI's SHARP run. Held to it: a change that adds a false alarm is seen.
FIRST_FALSE_ALARMS = (2, 36)


def test_false_alarms_on_held_out_published_runs_are_as_first_counted():
    failed, total = health.false_alarms()
    assert total == FIRST_FALSE_ALARMS[1] and failed <= FIRST_FALSE_ALARMS[0]


def _log(path, times_us: list[float]) -> str:
    """An nccl-tests all-reduce log of 8 A100s on one node with the sizes of :data:`LARGE` and these times."""
    head = open(LOG, encoding="utf-8").read().split("           8             2")[0]
    rows = []
    for nbytes, time in zip(LARGE.astype(int), times_us):
        algbw = nbytes / time / 1e3
        busbw = algbw * 2 * 7 / 8
        cells = f"{time:.2f} {algbw:.2f} {busbw:.2f} 0"
        rows.append(f"{nbytes:>12d} {nbytes // 4:>13d}     float     sum      -1 {cells} {cells}")
    path.write_text(head + "\n".join(rows) + "\n# Out of bounds values : 0 OK\n", encoding="utf-8")
    return str(path)


def test_validate_reports_health_and_strict_exits_1_on_a_slow_cluster(tmp_path, capsys):
    """A log that measures what the model predicts passes ``--strict``; the same log 3x slower at every large
    size fails it with status 1 (its output printed all the same), and passes without ``--strict``."""
    first = _log(tmp_path / "first.log", [1000.0] * len(LARGE))
    assert main(["validate", "--system", "dgx-a100", "--nccl-tests", first, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {"expected_low_us", "expected_high_us", "expected"} <= set(rows[0])
    predicted = [r["predicted_time_us"] for r in rows]
    healthy = _log(tmp_path / "healthy.log", predicted)
    assert main(["validate", "--system", "dgx-a100", "--nccl-tests", healthy, "--strict"]) == 0
    assert "health: 5 of 5 sizes inside the model's 90 % interval" in capsys.readouterr().out
    slow = _log(tmp_path / "slow.log", [3 * t for t in predicted])
    assert main(["validate", "--system", "dgx-a100", "--nccl-tests", slow, "--strict"]) == 1
    assert "large messages are consistently slower than expected (5 of 5)" in capsys.readouterr().out
    assert main(["validate", "--system", "dgx-a100", "--nccl-tests", slow]) == 0
