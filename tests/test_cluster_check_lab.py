"""The lab "Check a rented cluster in 20 minutes" (issue 44, deliverable 6): its table of what to expect, its worked
example and its exercises' solutions, checked against the numbers they quote."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from multigpu.book import app_cluster_check as lab
from multigpu.comm import calibration, collectives
from multigpu.common.numtext import range_text
from multigpu.common.units import parse_size
from multigpu.evidence import intervals

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "book" / "appendix" / "cluster-check.ipynb"
_GLUE = re.compile(r"\{glue:(?:text|md)\}`([^`:]+)")


@pytest.fixture(scope="module")
def facts():
    return lab.facts()


def test_every_glued_name_of_the_page_is_a_fact(facts):
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    cited = {name for c in cells if c["cell_type"] == "markdown" for name in _GLUE.findall("".join(c["source"]))}
    missing = {n for n in cited if n not in facts and n.removesuffix("_zh") not in facts}
    assert cited and not missing


def test_an_interval_is_printed_as_a_value_and_its_ends_with_an_en_dash():
    assert range_text(501.1, 322.17, 614.4) == "501 (322–614)"
    assert range_text(0.01234, 0.0056, 0.02) == "0.0123 (0.00560–0.0200)"


def test_the_expected_table_brackets_the_model_s_bus_bandwidth():
    """Each cell is the model's all-reduce busbw inside its 90 % interval, as ``collective --interval 0.9`` gives
    it."""
    table = lab.expected_table()
    assert list(table["Message size"]) == ["1MiB", "16MiB", "256MiB", "1GiB", "8GiB"]
    for row in table.itertuples(index=False):
        for (gpus, nodes), cell in zip(lab.RUNS, row[1:]):
            value, low, high = (float(x.replace(",", "")) for x in re.findall(r"[\d,.]+", cell))
            model = collectives.evaluate("allreduce", lab.SYSTEM, gpus, [parse_size(row[0])], nodes=nodes)
            assert value == pytest.approx(float(model["busbw_GBps"][0]), rel=5e-3) and low < value < high


def test_the_first_exercise_s_measurement_is_slower_than_its_interval(facts):
    """lab-ex-band: half the interval's lower end is below it, so the size's time is above its interval."""
    band = intervals.band(intervals.regime(lab.EXERCISE_BYTES, 2))
    assert (facts["lab_ex_lo"], facts["lab_ex_hi"]) == pytest.approx(band.inverted(facts["lab_ex_busbw"]))
    assert facts["lab_ex_measured"] < facts["lab_ex_lo"] < facts["lab_ex_busbw"] < facts["lab_ex_hi"]


def test_the_second_exercise_s_floor_is_eight_launches(facts):
    """lab-ex-launch: 8 x one launch, and the first doubling size whose one-node all-reduce takes longer."""
    launch = calibration.resolve(None).value("harness_launch_us", "nccl-tests")
    assert facts["lab_launch_us"] == pytest.approx(launch)
    assert facts["lab_floor_us"] == pytest.approx(8 * launch)
    first = parse_size(facts["lab_floor_size"])
    time = lambda n: collectives.time_us("allreduce", lab.SYSTEM, 8, float(n))  # noqa: E731
    assert time(first) > facts["lab_floor_us"] >= time(first / 2)


def test_the_worked_example_is_slow_only_where_one_process_launches_the_kernels(facts):
    """The published -g 8 log: its slow sizes are small, and the diagnosis names one process driving the GPUs."""
    table = lab.example_table()
    slower = table[table["Against the interval"] == "slower"]
    assert len(slower) == facts["lab_example_slower"] > 0 and facts["lab_example_slower_large"] == 0
    assert all(parse_size(s) < 64 * 2**20 for s in slower["Message size"])
    assert "one process driving all the GPUs" in facts["lab_example_diagnosis"]
    assert facts["lab_example_diagnosis_zh"] != facts["lab_example_diagnosis"]
    assert np.isfinite(table["Measured time (us)"]).all()
