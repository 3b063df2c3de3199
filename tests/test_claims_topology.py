"""Checks of claims C05-C11, C14, C15, C19 and C25 (multigpu.evidence.claims.topology): verdicts from the model."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from multigpu.comm import calibration
from multigpu.evidence import claims
from multigpu.evidence.claims import topology as checks
from multigpu.hardware import catalog, wiring

IDS = ("C05", "C06", "C07", "C08", "C09", "C10", "C11", "C14", "C15", "C19", "C25")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def patched_link(monkeypatch):
    """Serve a catalogue in which one link row has other values; rebuild topologies around it."""

    def patch(link_id, **changes):
        links = catalog.links()
        links[link_id] = dataclasses.replace(links[link_id], **changes)
        monkeypatch.setattr(catalog, "_links", lambda: links)
        wiring.for_system.cache_clear()

    yield patch
    monkeypatch.undo()
    wiring.for_system.cache_clear()


@pytest.fixture(scope="module")
def registered():
    """The ids of every registered check (check_all runs every chapter's checks: once per module)."""
    return {v.id for v in claims.check_all()}


@pytest.mark.parametrize("claim_id", IDS)
def test_each_check_returns_a_valid_verdict(claim_id, registered):
    verdict = claims.check(claim_id)
    assert verdict.id == claim_id
    assert verdict.verdict in claims.VERDICTS and verdict.verdict != "not-checkable"
    assert verdict.seed_value and verdict.unit and len(verdict.explanation) > 150
    assert verdict.chapter == checks.CHAPTER == "book/chapters/02-nvswitch-topology"
    assert (ROOT / f"{verdict.chapter}.ipynb").exists()
    assert claim_id in registered


def test_c05_first_nvswitch_system_had_16_gpus_and_300_bidirectional():
    # NVIDIA, "NVSwitch Accelerates NVIDIA DGX-2" (2018): 16 V100s, 300 GB/s NVLink per GPU (bidirectional)
    verdict = claims.check("C05")
    first = checks.first_nvswitch()
    assert first["year"] == 2018 and first["gpus"] == 16
    assert first["pair_GBps_bidir"] == 2 * catalog.link("nvswitch1").per_gpu_GBps_per_dir == 300
    assert verdict.model_value == "2018; 16 GPUs; 300 GB/s bidirectional per pair"
    assert first["alltoall_pair_GBps_per_dir"] == pytest.approx(150 / 15)
    assert first["first8_year"] > first["year"]


def test_c06_in_switch_reduction_starts_with_gen3_and_its_gain_matches_the_measurement():
    r = checks.first_in_switch_reduction()
    assert r["switch"] == catalog.link("nvswitch3").name and r["year"] == 2022
    assert not catalog.link("nvswitch1").in_network_reduction and not catalog.link("nvswitch2").in_network_reduction
    assert r["ring_bytes_factor"] == 1.75 and r["nvls_bytes_factor"] == 1.125
    assert r["model_gain_x"] == pytest.approx(r["measured_gain_x"], rel=0.05)  # 480 / 367.2 measured
    assert f"x{r['model_gain_x']:.2f}" in claims.check("C06").model_value


def test_c07_is_72_times_the_bidirectional_figure():
    verdict = claims.check("C07")
    per_gpu = catalog.link("nvlink6").per_gpu_GBps_bidir / 1000
    assert verdict.model_value == pytest.approx(72 * per_gpu) == pytest.approx(259.2)
    assert "129.6 TB/s" in verdict.explanation and "64.8 TB/s" in verdict.explanation


def test_c08_fan_out_shares_one_port():
    verdict = claims.check("C08")
    assert verdict.model_value == pytest.approx(catalog.link("nvlink6").per_gpu_GBps_per_dir / 71, abs=0.01)


def test_c09_is_900_over_7_bidirectional(patched_link):
    verdict = claims.check("C09")
    h200 = catalog.gpu("h200-sxm")
    assert verdict.model_value == pytest.approx(h200.nvlink_GBps_bidir / 7, abs=0.01)
    assert "64.3" in verdict.explanation  # one direction
    m = checks.mesh_link()
    assert m["link_GBps_per_dir"] == catalog.link("nvlink4-p2p-mesh").per_link_GBps_per_dir
    patched_link("nvlink4-p2p-mesh", per_link_GBps_per_dir=32.0, per_gpu_GBps_per_dir=224.0)
    assert checks.mesh_link()["link_GBps_bidir"] == 64  # read from the wiring, not typed


def test_c10_switch_pair_in_an_8_gpu_all_to_all_equals_the_mesh_link():
    verdict = claims.check("C10")
    assert verdict.model_value == pytest.approx(2 * 450 / 7, abs=0.05)
    assert verdict.verdict == "misleading"


def test_c11_gap_closes_from_7x_to_1x(patched_link):
    r = checks.switch_vs_mesh()
    assert r["gpus"] == list(range(2, 9))
    assert r["pair_ratio_x"] == pytest.approx([450 / 64] * 7)
    assert r["alltoall_gpu_ratio_x"] == pytest.approx([450 / (64 * (k - 1)) for k in range(2, 9)])
    assert r["alltoall_busbw_ratio_x"][-1] == pytest.approx(1.0, abs=0.02)
    assert r["allreduce_busbw_ratio_x"][-1] > 1.2  # NVLS
    assert claims.check("C11").verdict == "wrong"
    # half the mesh link: every ratio doubles, and the 2-GPU figure follows
    patched_link("nvlink4-p2p-mesh", per_link_GBps_per_dir=32.0, per_gpu_GBps_per_dir=224.0)
    assert checks.switch_vs_mesh((2,))["pair_ratio_x"][0] == pytest.approx(450 / 32)
    assert claims.check("C11").model_value.startswith(f"{450 / 32:.2f}x at 2 GPUs")


def test_c14_ring_steps_are_2n_minus_2():
    verdict = claims.check("C14")
    assert verdict.model_value == 2 * (8 - 1) and verdict.verdict == "holds"
    assert "142 rounds for N = 72" in verdict.explanation
    # counted by passing chunks around a ring, not read back from the latency formula
    assert [checks.ring_allreduce_rounds(n) for n in (2, 3, 5, 8)] == [2, 4, 8, 14]


def test_c15_latency_slope_follows_the_hop_latency():
    hop = calibration.default().value("hop_latency_us", "nvlink.ring.ll")
    scale = calibration.default().latency_scale("blackwell")  # measured over NCCL's tuner latencies
    assert claims.check("C15").model_value == pytest.approx(2 * hop * scale, abs=0.01)
    faster = calibration.default().replace({("hop_latency_us", "nvlink.ring.ll"): 1.0})
    assert claims.check("C15", claims.Inputs(cal=faster)).model_value == pytest.approx(2.0 * scale, abs=0.01)


def test_c19_two_shot_latency_does_not_depend_on_n_and_gains_only_on_small_messages():
    r = checks.multishot()
    assert r["latency_spread_us"] == 0
    # 16 GiB is still inside the one-node ramp of NCCL's ring (the fitted ramp reaches full bandwidth only at many
    # GB per rank): the ring is a few per cent slower there than the ramp-free two-shot kernel
    assert 1.5 < r["max_vs_ring_x"] < 3 and r["large_vs_ring_x"] == pytest.approx(1, abs=0.02)
    assert r["large_vs_nccl_x"] < 1  # NVLS is faster for large messages
    assert claims.check("C19").model_value == round(r["max_vs_ring_x"], 2)
    # if a synchronisation cost ten times more, two-shot would no longer beat the ring on small messages
    sync = calibration.default().value("custom_latency_us", "sync")
    slow_sync = calibration.default().replace({("custom_latency_us", "sync"): 10 * sync})
    assert checks.multishot(cal=slow_sync)["small_vs_ring_x"] < 1


def test_c25_nvlink_over_ib_per_gpu():
    verdict = claims.check("C25")
    assert verdict.model_value == catalog.link("nvlink4").per_gpu_GBps_per_dir / \
        catalog.link("infiniband-hdr").per_gpu_GBps_per_dir == 18
    r = checks.scale_out()
    assert r["a100_hdr_x"] == 12 and r["h100_ndr_x"] == 9
    assert r["hdr_allreduce_2"] < r["ndr_allreduce_2"] and r["hdr_alltoall_2"] < r["ndr_alltoall_2"]
