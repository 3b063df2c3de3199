"""The lab "Check a rented cluster in 20 minutes" (``book/appendix/cluster-check.ipynb``): what the model expects
of a node and of two, a published log read with ``validate``'s health check and diagnosis, and the exercises'
numbers.

Every number of the page comes from here: the expected bus bandwidths and their 90 % intervals
(:mod:`multigpu.evidence.intervals`), the worked example's sizes against their intervals
(:mod:`multigpu.evidence.health`) and its diagnosis (:mod:`multigpu.evidence.diagnosis`), and the least time a
run with one process per node takes (the calibration's ``harness_launch_us``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from multigpu.book import glue, tables
from multigpu.book.glue import Facts
from multigpu.book.lang import N_, _
from multigpu.comm import calibration, collectives
from multigpu.common.numtext import range_text
from multigpu.common.units import GiB, MiB, format_size
from multigpu.evidence import diagnosis, health, intervals, sweeps
from multigpu.hardware import catalog

#: The instance the lab's tables are for, and the sizes they show (bytes).
SYSTEM = "hgx-h100"
SIZES = (1 * MiB, 16 * MiB, 256 * MiB, 1 * GiB, 8 * GiB)
#: (GPUs, nodes) of the two runs the lab asks for.
RUNS = ((8, 1), (16, 2))
#: The worked example: a published all-gather on one HGX H100 node, run as one process driving the 8 GPUs.
EXAMPLE = "h100-8-ag-ring-together"
#: The size of the first exercise's measurement (bytes), on two nodes.
EXERCISE_BYTES = 1 * GiB

TABLE_HEADERS = (N_("Message size"), N_("One node, 8 GPUs: bus bandwidth (GB/s)"),
                 N_("Two nodes, 16 GPUs: bus bandwidth (GB/s)"), N_("Measured time (us)"),
                 N_("Expected time (us)"), N_("Against the interval"), N_("inside"), N_("slower"), N_("faster"))


def busbw_band(system: str, gpus: int, nodes: int, nbytes: float) -> tuple[float, float, float]:
    """The model's all-reduce bus bandwidth (GB/s) at ``nbytes`` on ``gpus`` GPUs over ``nodes`` nodes of
    ``system``, with its 90 % interval: (busbw, low, high)."""
    busbw = float(collectives.evaluate("allreduce", system, gpus, [nbytes], nodes=nodes)["busbw_GBps"][0])
    low, high = intervals.band(intervals.regime(nbytes, nodes)).inverted(busbw)
    return busbw, low, high


def expected_table(system: str = SYSTEM) -> pd.DataFrame:
    """One row per size of :data:`SIZES`: the expected all-reduce bus bandwidth of each run of :data:`RUNS`,
    "x (lo–hi)" GB/s."""
    rows = []
    for nbytes in SIZES:
        row = {"Message size": format_size(nbytes)}
        for (gpus, nodes), column in zip(RUNS, TABLE_HEADERS[1:3]):
            row[column] = range_text(*busbw_band(system, gpus, nodes, nbytes))
        rows.append(row)
    return pd.DataFrame(rows)


def show_expected() -> None:
    """:func:`expected_table`, one table per edition."""
    tables.show_table(expected_table(), key=["Message size"], csv_name="cluster-check-1", editions=True)


def _example() -> tuple[sweeps.Sweep, np.ndarray, np.ndarray, diagnosis.Setup]:
    """The worked example's sweep, sizes (bytes) and measured times (us), and the setup a renter expects."""
    sweep = next(s for s in sweeps.sweeps() if s.sweep == EXAMPLE)
    points = sweeps.points()
    part = points[points["sweep"] == EXAMPLE]
    setup = diagnosis.Setup(sweep.system, sweep.op, sweep.gpus, sweep.nodes)
    return sweep, part["bytes"].to_numpy(dtype=float), sweeps.measured_times_us(sweep, part), setup


def example_table() -> pd.DataFrame:
    """The worked example, size by size: measured time, the expected time with its 90 % interval, and where the
    measurement falls (:data:`multigpu.evidence.health.STATUSES`)."""
    _, sizes, measured, setup = _example()
    expected = diagnosis.times_us(setup, sizes)
    checks = health.check(sizes, measured, expected, setup.nodes)
    return pd.DataFrame({"Message size": [format_size(s) for s in sizes], "Measured time (us)": measured,
                         "Expected time (us)": [range_text(e, c.low_us, c.high_us) for e, c in zip(expected, checks)],
                         "Against the interval": [c.status for c in checks]})


def show_example() -> None:
    """:func:`example_table`, one table per edition."""
    tables.show_table(example_table(), key=["Message size"], csv_name="cluster-check-2", editions=True,
                      digits={"Measured time (us)": 1}, label_columns=["Against the interval"])


def floor_facts() -> Facts:
    """One process driving a node's 8 GPUs: ``lab_launch_us`` (one kernel launch, us), ``lab_floor_us`` (8 of
    them: the least time per collective) and ``lab_floor_size`` (the smallest size of a power of two from which the
    model's one-node all-reduce takes longer than that floor: below it, such a run measures the launches)."""
    cal = calibration.resolve(None)
    launch = cal.harness_launch_floor_us("nccl-tests", 1)
    floor = cal.harness_launch_floor_us("nccl-tests", 8)
    sizes = 2.0 ** np.arange(3, 34)
    times = collectives.time_us("allreduce", SYSTEM, 8, sizes)
    return {"lab_launch_us": launch, "lab_floor_us": floor,
            "lab_floor_size": format_size(float(sizes[np.argmax(times > floor)]))}


def exercise_facts() -> Facts:
    """The first exercise: on two nodes at :data:`EXERCISE_BYTES`, the interval's ends ``lab_ex_lo`` and
    ``lab_ex_hi`` and the model's ``lab_ex_busbw`` (GB/s), and a measurement of half the lower end,
    ``lab_ex_measured`` (GB/s, whole), with ``lab_ex_size``; ``lab_strict_sizes``, the slow large sizes
    ``--strict`` needs, and ``lab_large``, the least size the health check counts as large."""
    busbw, low, high = busbw_band(SYSTEM, *RUNS[1], EXERCISE_BYTES)
    return {"lab_ex_size": format_size(EXERCISE_BYTES), "lab_ex_busbw": busbw, "lab_ex_lo": low, "lab_ex_hi": high,
            "lab_ex_measured": float(round(low / 2)), "lab_strict_sizes": health.STRICT_SIZES,
            "lab_large": format_size(sweeps.LARGE_BYTES)}


def example_facts() -> Facts:
    """The worked example: ``lab_example_sizes``, ``lab_example_slower`` (sizes slower than their interval) and
    ``lab_example_slower_large`` (of them, large), ``lab_example_largest`` (its largest size),
    ``lab_example_system`` (the system's name), and in each language ``lab_example_link`` (a link to its source)
    and ``lab_example_health`` and ``lab_example_diagnosis``, the health and diagnosis lines ``validate``
    prints."""
    sweep, sizes, measured, setup = _example()
    checks = health.check(sizes, measured, diagnosis.times_us(setup, sizes), setup.nodes)
    found = diagnosis.diagnose(setup, sizes, measured)
    url = sweep.source.split()[0]
    out: Facts = {"lab_example_sizes": len(sizes), "lab_example_slower": sum(c.status == "slower" for c in checks),
                  "lab_example_slower_large": sum(c.status == "slower" and c.bytes >= sweeps.LARGE_BYTES
                                                  for c in checks),
                  "lab_example_largest": format_size(float(sizes.max())),
                  "lab_example_system": catalog.system(SYSTEM).name}
    def text() -> Facts:
        return {"lab_example_health": glue.say(health.summary(checks)),
                "lab_example_diagnosis": glue.say(diagnosis.finding(found)),
                "lab_example_link": "[{}]({})".format(_("A published log"), url)}

    return out | glue.per_language(text)


def facts() -> Facts:
    """Every value the lab's prose cites."""
    return {**floor_facts(), **exercise_facts(), **example_facts(), "lab_level": 100 * intervals.LEVEL,
            "lab_variants": len(diagnosis.VARIANTS)}
