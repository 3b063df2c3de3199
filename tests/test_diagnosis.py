"""The diagnosis of ``validate`` (issue 44, deliverable 5): the curves of named faults, the rule that names one,
and how it does on published logs whose cause is known."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multigpu.cli import main
from multigpu.evidence import diagnosis

SIZES = 2.0 ** np.arange(3, 34)
#: A setup per kind of node, each with the variants that change something for it.
SETUPS = {
    "one NVSwitch node": diagnosis.Setup("hgx-h100", "allreduce", 8),
    "two NVSwitch nodes": diagnosis.Setup("hgx-h100", "allreduce", 16, 2),
    "two PCIe nodes": diagnosis.Setup("pcie-l40s-8", "allgather", 16, 2),
    "one PCIe node": diagnosis.Setup("pcie-a100-8", "allreduce", 8),
}


def test_each_setup_is_offered_the_faults_that_change_it():
    offered = {name: diagnosis.applicable(s) for name, s in SETUPS.items()}
    assert offered["one NVSwitch node"] == ("nvls-off", "p2p-off", "one-process")
    assert offered["two NVSwitch nodes"] == ("nvls-off", "p2p-off", "half-nics", "no-gdr", "tcp", "pcie-lower",
                                             "one-process")
    assert "nvls-off" not in offered["one PCIe node"] and "pcie-lower" in offered["one PCIe node"]


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(SETUPS)), exponent=st.floats(3, 34))
def test_no_fault_makes_a_collective_faster(name, exponent):
    """Each variant takes something away (a path, a NIC, RDMA, a PCIe generation, launches in parallel), so its
    time is never below the expected configuration's at any size."""
    setup, size = SETUPS[name], np.array([2.0**exponent])
    expected = diagnosis.times_us(setup, size)
    for variant in diagnosis.applicable(setup):
        assert diagnosis.times_us(setup, size, variant)[0] >= expected[0] * (1 - 1e-9), variant


@pytest.mark.parametrize("name", sorted(SETUPS))
def test_a_log_drawn_from_a_fault_s_curve_is_named_for_it_and_one_from_the_expected_curve_for_none(name):
    """The mechanism only: a log the model draws is no evidence that the diagnosis works on real clusters (that
    is the next test's). Where two faults draw the same curve at every size that tells them from the expected
    one, either may be named."""
    setup, told = SETUPS[name], 0
    assert diagnosis.diagnose(setup, SIZES, diagnosis.typical_us(setup, SIZES)).named is None
    for variant in diagnosis.applicable(setup):
        curve = diagnosis.typical_us(setup, SIZES, variant)
        found = diagnosis.diagnose(setup, SIZES, curve)
        if found.best is None or not found.best.clearly_better:
            continue  # too close to the expected curve to be told apart (fewer than MIN_SIZES sizes differ)
        twins = {f.variant for f in found.fits if np.allclose(diagnosis.typical_us(setup, SIZES, f.variant), curve)}
        assert found.named in twins | {variant}, (variant, found)
        told += 1
    assert told, f"{name}: no fault told apart from the expected curve"


#: The first count (2026-12-05), the rule fixed before it; the rule revised after the mechanism test above (see
#: the module doc) gives the same counts. Published logs whose cause is known
#: from their source (TCP where the NICs do RDMA, NVLS left out, one thread driving several GPUs), read as a renter
#: who expected the system as catalogued would: (right, wrong, none named) per split; and the logs with no known
#: cause, read as they were run: (a fault named, logs).
FIRST_COUNT = {"holdout": (4, 0, 3), "fit": (4, 1, 5)}
FIRST_FALSE_NAMES = {"holdout": (2, 36), "fit": (1, 36)}


@pytest.fixture(scope="module")
def scored():
    return diagnosis.evidence()


@pytest.mark.parametrize("split", ["holdout", "fit"])
def test_on_logs_whose_cause_is_known_the_diagnosis_is_as_first_counted(scored, split):
    """Held to the first count: a change that names a wrong fault, or loses a right one, is seen. On the held-out
    logs no fault is named wrongly; the one wrong name (fit split) is an RTX 4090 box read as PCIe Gen3, which its
    source does not rule out."""
    part = scored[(scored["split"] == split) & (scored["causes"] != "")]
    right, wrong, none = (int((part["outcome"] == o).sum()) for o in ("right", "wrong", "none named"))
    first = FIRST_COUNT[split]
    assert right >= first[0] and wrong <= first[1] and right + wrong + none == sum(first)


@pytest.mark.parametrize("split", ["holdout", "fit"])
def test_healthy_published_logs_are_rarely_given_a_fault(scored, split):
    part = scored[(scored["split"] == split) & (scored["causes"] == "")]
    named, total = int((part["outcome"] == "false alarm").sum()), len(part)
    assert total == FIRST_FALSE_NAMES[split][1] and named <= FIRST_FALSE_NAMES[split][0]


def test_the_sealed_sweeps_are_not_read(scored):
    assert set(scored["split"]) == {"fit", "holdout"}
    with pytest.raises(ValueError):
        diagnosis.evidence(("holdout", "sealed"))


def _log(path, sizes: np.ndarray, times_us: np.ndarray) -> str:
    """An nccl-tests all-reduce log of 8 GPUs on one node (one process per GPU) with these sizes and times."""
    head = open("tests/data/nccl/a100_allreduce.log", encoding="utf-8").read().split("           8             2")[0]
    rows = []
    for nbytes, time in zip(sizes.astype(int), times_us):
        algbw = nbytes / time / 1e3
        cells = f"{time:.2f} {algbw:.2f} {algbw * 2 * 7 / 8:.2f} 0"
        rows.append(f"{nbytes:>12d} {max(nbytes // 4, 1):>13d}     float     sum      -1 {cells} {cells}")
    path.write_text(head + "\n".join(rows) + "\n# Out of bounds values : 0 OK\n", encoding="utf-8")
    return str(path)


def test_validate_names_the_fault_in_its_heading_and_fields(tmp_path, capsys):
    setup, sizes = diagnosis.Setup("dgx-a100", "allreduce", 8), 2.0 ** np.arange(3, 31, 3)
    slow = _log(tmp_path / "slow.log", sizes, diagnosis.typical_us(setup, sizes, "p2p-off"))
    assert main(["validate", "--system", "dgx-a100", "--nccl-tests", slow]) == 0
    out = capsys.readouterr().out
    assert "diagnosis: the log looks like no peer-to-peer path between the GPUs" in out
    assert main(["validate", "--system", "dgx-a100", "--nccl-tests", slow, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["diagnosis"] for r in rows} == {"p2p-off"}
    assert [r["diagnosis_time_us"] for r in rows] == pytest.approx(diagnosis.times_us(setup, sizes, "p2p-off"))
    fine = _log(tmp_path / "fine.log", sizes, diagnosis.typical_us(setup, sizes))
    assert main(["validate", "--system", "dgx-a100", "--nccl-tests", fine, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["diagnosis"] for r in rows} == {""} and {r["diagnosis_time_us"] for r in rows} == {None}
