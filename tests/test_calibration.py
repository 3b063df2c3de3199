"""Calibration: provenance of every constant, reproducible fits, error bounds in and out of sample."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from multigpu.comm import calibration, collectives
from multigpu.evidence import epfit, fitquality, fitting, measurements, sweepfit, sweeps

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "measurements.csv"


def test_every_constant_says_where_it_came_from():
    table = calibration.default().table()
    assert table["source"].str.len().gt(0).all()
    measured = set(measurements.measurements().query("kind == 'measured'")["id"])
    fit_sweeps = {s.sweep for s in sweeps.sweeps() if s.split == "fit"}
    ep_fit_rows = {r.id for r in epfit.load(("fit",))}
    for constant in calibration.default().constants:
        if (constant.name, constant.key) in epfit.CONSTANTS:  # fitted on DeepEP's tables, never on held-out rows
            assert set(constant.fitted_on.split(",")) <= ep_fit_rows, (constant.name, constant.key)
            continue
        assert set(constant.fitted_ids) <= measured, (constant.name, constant.key)  # fitted only on measured rows
        assert set(constant.fitted_sweeps) <= fit_sweeps, (constant.name, constant.key)  # never on held-out sweeps
    fitted = {(r.name, r.key) for r in table.itertuples() if r.fitted_on}
    judged = {("bounce", "hop_latency_us")}  # set from a fit sweep by reading it, not by a fit
    assert fitted == set(fitting.FITTED) | {p.ident for p in sweepfit.FITTED} | set(epfit.CONSTANTS) | judged


def test_fitted_constants_are_reproduced_by_fit():
    """A median of measured / predicted has no optimiser path: a determined constant (multigpu.evidence.
    fitquality's rule) is its refit to the file's 4 digits, and the file records the same status and standard
    error; one fitted on a single measurement has no standard error, is loose and is not compared."""
    shipped = calibration.default()
    for (name, key), estimate in fitting.fit_result().items():
        constant = shipped.constant(name, key)
        assert constant.fit_status == estimate.status, (name, key)
        if estimate.status != calibration.DETERMINED:
            assert len(constant.fitted_ids) == 1 and constant.std_error is None, (name, key)
            continue
        assert fitquality.agrees(constant.value, estimate, (0.0, 1.0)), (name, key)
        assert estimate.value == pytest.approx(constant.value, rel=0.01), (name, key)
        assert constant.std_error == pytest.approx(estimate.std_error, rel=0.05), (name, key)


def test_a_fabric_with_its_own_latency_fills_the_network_pipeline_later():
    """NCCL keeps a fixed number of chunks in flight per channel (NCCL_STEPS), so the bytes needed in flight grow
    with the delay of each message: InfiniBand's fill time, stretched by 1 + the fabric's latency over NCCL's
    Ring/Simple network hop (14 us in NCCL 2.30's tuning.cc, as scaled by the fit)."""
    cal = calibration.default()
    ib = cal.value("bandwidth_ramp", "net.full_time_us")
    assert cal.net_fill_time_us("ib", "hopper") == ib
    hop = 14.0 * cal.value("latency_scale", "nccl.net")
    assert cal.net_fill_time_us("efa", "ampere") == pytest.approx(ib * (1 + cal.fabric_latency_us("efa") / hop))
    assert cal.net_fill_time_us("tcp", "hopper") > cal.net_fill_time_us("efa", "hopper") > ib
    assert cal.net_fill_time_us("ib", "cdna3") == ib  # RCCL's own network latency does not stretch it


def test_fitted_values_stay_near_nccls_priors():
    # fitting moved NCCL's own numbers little: SM90 NVLink 20.6/25 = 0.824, nvlsEfficiency 0.85
    assert calibration.default().value("sm_efficiency", "nvlink.hopper") == pytest.approx(0.824, rel=0.03)
    assert calibration.default().value("nvls_efficiency", "hopper") == pytest.approx(0.85, rel=0.03)


def test_measurements_copy_the_reference_rows():
    ours = measurements.measurements()
    if REFERENCE.exists():
        with open(REFERENCE, newline="", encoding="utf-8") as handle:
            reference = list(csv.DictReader(handle))
        assert [int(r["id"]) for r in reference] == list(ours["id"])
        for ref, (_, row) in zip(reference, ours.iterrows()):
            assert all(str(row[k]) == v for k, v in ref.items()), ref["id"]
    assert {"kind", "source", "conditions", "metric", "model_value"} <= set(ours.columns)
    assert {"measured", "vendor-modeled", "vendor-presentation"} <= set(ours["kind"])
    assert set(ours.query("id in (75, 79, 80, 81)")["kind"]) == {"measured"}  # training rows are kept


def test_only_measured_rows_calibrate():
    comparison = measurements.compare()
    kinds = measurements.measurements().set_index("id")["kind"]
    assert set(kinds[comparison["id"]]) == {"measured"}
    assert len(comparison) >= 25


def test_large_message_error_is_small_and_small_messages_are_reported():
    summary = measurements.summary().set_index("size_class")
    assert summary.loc["large", "median_abs_error"] <= 0.10
    assert summary.loc["large", "worst_abs_error"] <= 0.25
    assert summary.loc["small", "rows"] >= 3 and summary.loc["small", "worst_abs_error"] <= 0.35


def test_nvls_gpu_count_sweep_follows_the_switch_physics():
    # measurements 15-19 (stas00): busbw grows with n as 2(n-1)/(n+1) while ring stays flat
    comparison = measurements.compare(ids=[15, 16, 17, 18, 19])
    assert comparison["rel_error"].abs().max() < 0.03


def test_out_of_sample_checks():
    # published measurements NOT in shared/reference, sources in data/out_of_sample.csv:
    # A100 ring ~232 (nccl-tests #175, #149); B200 NVLS 838 / ring 682 (stas00); H800 NVLS 215 (nccl #1374);
    # NDR 400G 46-48 per NIC (nccl-tests #290); MI300X 312.9 / 47.7 (stas00); 4x RTX 4090 P2P 25.95
    # (nccl-tests #269); 8x RTX 5090 28 (nccl #1639); 2x H100 PCIe bridged 116 (nccl-tests #194)
    table = measurements.out_of_sample()
    for row in table.itertuples():
        if row.known_miss:
            assert abs(row.rel_error) > row.tolerance, f"{row.check} is no longer a miss: update OUT_OF_SAMPLE"
        else:
            assert abs(row.rel_error) <= row.tolerance, row.check
    assert (table["known_miss"] == "").sum() >= 9


def test_a_what_if_is_a_modified_copy_and_equals_a_fresh_computation():
    shipped = calibration.default()
    before = collectives.time_us("allreduce", "hgx-h200", 8, 2**34, algorithm="ring")
    what_if = shipped.replace({("sm_efficiency", "nvlink.hopper"): 0.4})
    slow = collectives.time_us("allreduce", "hgx-h200", 8, 2**34, algorithm="ring", cal=what_if)
    assert slow > 1.9 * before
    assert shipped.value("sm_efficiency", "nvlink.hopper") != 0.4  # the shipped value is untouched
    assert collectives.time_us("allreduce", "hgx-h200", 8, 2**34, algorithm="ring") == before
    # a fresh calibration with the same values, loaded from a file, gives the same times (caches keyed by value)
    fresh = calibration.Calibration(tuple(what_if.constants))
    assert fresh == what_if and hash(fresh) == hash(what_if) and fresh.digest == what_if.digest
    assert collectives.time_us("allreduce", "hgx-h200", 8, 2**34, algorithm="ring", cal=fresh) == slow


def test_calibration_loads_from_a_file_and_is_hashable(tmp_path):
    copy = tmp_path / "calibration.csv"
    copy.write_bytes(calibration.CALIBRATION_CSV.read_bytes())
    assert calibration.load(copy) == calibration.default()
    assert len({calibration.load(copy), calibration.default()}) == 1
    with pytest.raises(Exception):
        calibration.default().replace({("no_such", "constant"): 1.0})
