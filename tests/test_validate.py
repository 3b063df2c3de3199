"""``validate --system ID --nccl-tests LOG``: nccl-tests output (any version's columns) against the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from multigpu.cli import main
from multigpu.comm import calibration, collectives
from multigpu.comm.ncclenv import Settings
from multigpu.common.errors import InputError
from multigpu.evidence import nccltests

LOGS = Path(__file__).parent / "data" / "nccl"  # synthetic logs in nccl-tests' formats (see README.md there)


def test_a_current_log_is_read_with_its_collective_ranks_and_nodes():
    log = nccltests.parse(LOGS / "a100_allreduce.log")
    assert (log.op, log.ranks, log.nodes) == ("allreduce", 8, 1)
    assert [p.bytes for p in log.points] == [8, 4096, 1048576, 268435456, 1073741824]
    assert log.points[-1].time_us == 7900.0 and log.points[-1].busbw_GBps == 237.86 and log.points[0].line == 18


def test_a_thread_driving_several_gpus_takes_at_least_one_launch_per_gpu(tmp_path, capsys):
    """``-g 8`` (one thread, 8 GPUs; the header's ``nGpus 8``): the small sizes take at least 8 kernel launches,
    the large ones are the collective model's; the header names it."""
    text = (LOGS / "a100_allreduce.log").read_text().replace("nThread 1 nGpus 1", "nThread 1 nGpus 8", 1)
    (tmp_path / "g8.log").write_text(text)
    log, rows = nccltests.compare(tmp_path / "g8.log", "dgx-a100")
    _, plain = nccltests.compare(LOGS / "a100_allreduce.log", "dgx-a100")
    floor = 8 * calibration.default().value("harness_launch_us", "nccl-tests")
    assert log.gpus_per_thread == 8 and nccltests.parse(LOGS / "a100_allreduce.log").gpus_per_thread == 1
    assert rows[0].predicted_time_us == pytest.approx(max(floor, plain[0].predicted_time_us))
    assert rows[0].predicted_time_us > plain[0].predicted_time_us
    assert rows[0].predicted_busbw_GBps == pytest.approx(plain[0].predicted_busbw_GBps * plain[0].predicted_time_us
                                                         / rows[0].predicted_time_us)
    assert rows[-1].predicted_time_us == plain[-1].predicted_time_us
    assert main(["validate", "--system", "dgx-a100", "--nccl-tests", str(tmp_path / "g8.log")]) == 0
    assert "one thread drove 8 GPUs" in capsys.readouterr().out


def test_an_old_log_without_redop_and_root_columns():
    log = nccltests.parse(LOGS / "old_format_allgather.log")
    assert (log.op, log.ranks, log.nodes) == ("allgather", 2, 1)
    assert [(p.bytes, p.time_us, p.busbw_GBps) for p in log.points] == [(65536, 16.57, 1.98),
                                                                        (134217728, 3298.6, 20.34)]


def test_predictions_are_the_collective_model():
    _, rows = nccltests.compare(LOGS / "a100_allreduce.log", "dgx-a100")
    model = collectives.evaluate("allreduce", "dgx-a100", 8, [r.bytes for r in rows])
    assert [r.predicted_time_us for r in rows] == pytest.approx(list(model["time_us"]))
    big = rows[-1]
    assert big.error_pct == pytest.approx(100 * (big.predicted_time_us / 7900.0 - 1))


def test_cli_json(capsys):
    assert main(["validate", "--system", "dgx-a100", "--nccl-tests", str(LOGS / "a100_allreduce.log"),
                 "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 5 and {"bytes", "measured_time_us", "predicted_time_us", "measured_busbw_GBps",
                               "predicted_busbw_GBps", "error_pct"} <= set(rows[0])


@pytest.mark.parametrize("text, line, words", [
    ("# only comments\n", 1, "has no size rows"),
    ("# all_reduce_perf\n     4096   1024  float  sum  -1  25.0  0.16\n", 2, "is not a size row"),
    ("# all_reduce_perf\n 4096 1024 float sum -1 fast 0.16 0.29 0 25.0 0.16 0.29 0\n", 2, "is not a number"),
])
def test_a_malformed_log_is_an_error_at_its_line(tmp_path, capsys, text, line, words):
    path = tmp_path / "bad.log"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        nccltests.parse(path)
    assert (info.value.file, info.value.line) == (str(path), line) and words in info.value.message
    assert main(["validate", "--system", "dgx-a100", "--nccl-tests", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:{line}: ") and err.count("\n") == 1


def test_a_log_that_does_not_name_its_collective_needs_op(tmp_path, capsys):
    path = tmp_path / "quiet.log"
    path.write_text(" 4096 1024 float sum -1 25.0 0.16 0.29 0 25.0 0.16 0.29 0\n", encoding="utf-8")
    assert main(["validate", "--system", "dgx-a100", "--nccl-tests", str(path)]) == 2
    assert "give --op and --gpus" in capsys.readouterr().err
    assert main(["validate", "--system", "dgx-a100", "--nccl-tests", str(path), "--op", "allreduce",
                 "--gpus", "8"]) == 0


def test_no_nvls_models_the_run_without_in_switch_reduction(capsys):
    """``--no-nvls`` is a run with NCCL_NVLS_ENABLE=0: on an H100 node (NVLink SHARP) the model then never picks
    NVLS, and its large sizes are no faster than with NVLS allowed."""
    log = str(LOGS / "a100_allreduce.log")
    runs = {}
    for flags in ([], ["--no-nvls"]):
        assert main(["validate", "--system", "hgx-h100", "--nccl-tests", log, "--format", "json", *flags]) == 0
        runs[bool(flags)] = json.loads(capsys.readouterr().out)
    assert "nvls" in {r["algorithm"] for r in runs[False]}
    assert "nvls" not in {r["algorithm"] for r in runs[True]}
    assert all(off["predicted_time_us"] >= on["predicted_time_us"] for on, off in zip(runs[False], runs[True]))


def test_a_debug_log_says_which_nccl_settings_the_run_changed():
    """NCCL_DEBUG=INFO lines are not size rows, even on a host whose name starts with a digit, and the settings
    they print are followed: NVLS off and LL128 forced, as ``--no-nvls`` and the protocol give."""
    path = LOGS / "h100_allreduce_nccl_debug.log"
    log = nccltests.parse(path)
    assert len(log.points) == 5
    assert log.settings.changed == (("NCCL_NVLS_ENABLE", "0"), ("NCCL_PROTO", "LL128"))
    _, rows = nccltests.compare(path, "hgx-h100")
    model = collectives.evaluate("allreduce", "hgx-h100", 8, [r.bytes for r in rows], protocol="ll128", nvls=False)
    assert [r.predicted_time_us for r in rows] == pytest.approx(list(model["time_us"]))
    assert {(r.algorithm, r.protocol) for r in rows} <= {("ring", "ll128"), ("tree", "ll128")}


def test_the_table_says_which_settings_it_followed(capsys):
    assert main(["validate", "--system", "hgx-h100", "--nccl-tests", str(LOGS / "h100_allreduce_nccl_debug.log")]) == 0
    assert "the run set NCCL: NCCL_NVLS_ENABLE=0, NCCL_PROTO=LL128" in capsys.readouterr().out


@pytest.mark.parametrize("algo, algorithm, nvls", [
    ("Ring", "ring", False), ("NVLSTree", "nvls", True), ("ring,tree", "auto", False), ("^nvls", "auto", True),
    ("^nvls,nvlstree", "auto", False), ("allreduce:tree;allgather:ring", "auto", True), ("PAT", "auto", True),
])
def test_nccl_algo_is_read_as_nccl_reads_it(algo, algorithm, nvls):
    """NCCL_ALGO names one algorithm, a list, or ``^`` and those it excludes; NVLS and NVLSTree are the model's
    one ``nvls``; a per-collective form or a name the model lacks (PAT) leaves NCCL's choice."""
    settings = Settings((("NCCL_ALGO", algo),))
    assert (settings.algorithm, settings.nvls) == (algorithm, nvls)


def test_an_algorithm_forced_for_all_reduce_leaves_the_other_collectives_to_nccl(tmp_path):
    text = (LOGS / "old_format_allgather.log").read_text()
    path = tmp_path / "allgather.log"
    path.write_text("host-1:1320:1320 [0] NCCL INFO NCCL_ALGO set by environment to Tree\n" + text)
    _, rows = nccltests.compare(path, "hgx-h100")
    auto = collectives.evaluate("allgather", "hgx-h100", 2, [r.bytes for r in rows])
    assert [r.predicted_time_us for r in rows] == pytest.approx(list(auto["time_us"]))
