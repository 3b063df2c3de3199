"""Checks of claims C01-C04 and C20 (multigpu.evidence.claims.generations): valid verdicts, values from the catalogue."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from multigpu.evidence import claims
from multigpu.evidence.claims import generations
from multigpu.hardware import catalog

IDS = ("C01", "C02", "C03", "C04", "C20")
ROOT = Path(__file__).resolve().parents[1]


def _patch_link(monkeypatch, link_id, **changes):
    """Serve a catalogue in which one link row has other values."""
    links = catalog.links()
    links[link_id] = dataclasses.replace(links[link_id], **changes)
    monkeypatch.setattr(catalog, "_links", lambda: links)


@pytest.mark.parametrize("claim_id", IDS)
def test_each_check_returns_a_valid_verdict(claim_id):
    verdict = claims.check(claim_id)
    assert verdict.id == claim_id
    assert verdict.verdict in claims.VERDICTS
    assert verdict.seed_value and verdict.unit and len(verdict.explanation) > 100
    assert verdict.chapter == generations.CHAPTER
    assert (ROOT / f"{verdict.chapter}.ipynb").exists()
    assert claim_id in {v.id for v in claims.check_all()}


def test_c01_is_the_year_and_gpu_of_nvlink_1():
    verdict = claims.check("C01")
    assert verdict.model_value == catalog.link("nvlink1").year == 2016
    assert verdict.verdict == "holds"
    assert catalog.gpu("p100-sxm2").name in verdict.explanation


def test_c02_says_3_6_tbps_is_bidirectional():
    verdict = claims.check("C02")
    assert verdict.model_value == catalog.link("nvlink6").per_gpu_GBps_bidir / 1000 == 3.6
    assert "bidirectional" in verdict.unit
    assert f"{catalog.link('nvlink6').per_gpu_GBps_per_dir / 1000:.1f} TB/s" in verdict.explanation
    assert verdict.verdict == "holds-with-caveat"


def test_c03_ratio_uses_the_same_convention_on_both_sides():
    verdict = claims.check("C03")
    nvlink, pcie = catalog.link("nvlink6"), catalog.link("pcie6-x16")
    assert verdict.model_value == pytest.approx(nvlink.per_gpu_GBps_bidir / pcie.per_gpu_GBps_bidir, abs=0.01)
    assert verdict.model_value == pytest.approx(nvlink.per_gpu_GBps_per_dir / pcie.per_gpu_GBps_per_dir, abs=0.01)
    mixed = nvlink.per_gpu_GBps_bidir / pcie.per_gpu_GBps_per_dir
    assert verdict.model_value < mixed / 1.9  # not the bidirectional / per-direction trap
    ratios = generations.nvlink6_vs_pcie6()
    assert ratios["pcie_raw_GBps_bidir"] == 256  # NVIDIA's "256 GB/s" for Gen6 x16: 2 x 16 x 64 Gb/s / 8
    assert verdict.verdict == "holds" and ratios["ratio_raw_bidir"] > 14


def test_c03_verdict_follows_the_catalogue(monkeypatch):
    # a PCIe Gen6 twice as fast would bring the ratio under 14x: the check must then say so
    pcie = catalog.link("pcie6-x16")
    _patch_link(monkeypatch, "pcie6-x16", per_link_GBps_per_dir=2 * pcie.per_link_GBps_per_dir,
                per_gpu_GBps_per_dir=2 * pcie.per_gpu_GBps_per_dir, lane_Gbps=2 * pcie.lane_Gbps)
    verdict = claims.check("C03")
    assert verdict.model_value == pytest.approx(7.44, abs=0.01)
    assert verdict.verdict == "wrong"


def test_c04_values_equal_the_catalogues():
    verdict = claims.check("C04")
    bandwidths = [catalog.link(i).per_gpu_GBps_bidir for i in ("nvlink4", "nvlink5", "nvlink6")]
    assert bandwidths == [900, 1800, 3600]  # the article's figures, bidirectional
    years = [catalog.link(i).year for i in ("nvlink4", "nvlink5", "nvlink6")]
    gap = (years[-1] - years[0]) / (len(years) - 1)
    assert verdict.model_value == f"900 / 1800 / 3600 GB/s; {gap:.1f} years per generation"
    cadence = generations.nvlink_cadence()
    assert cadence["GBps_bidir"] == bandwidths and cadence["years"] == years
    assert cadence["years_per_generation"] == gap > 1.5  # not "one generation per year"


def test_c04_cadence_is_read_from_the_catalogue(monkeypatch):
    _patch_link(monkeypatch, "nvlink5", year=2025)
    assert claims.check("C04").model_value.endswith("; 2.0 years per generation")
    _patch_link(monkeypatch, "nvlink6", year=2028)
    assert claims.check("C04").model_value.endswith("; 3.0 years per generation")


def test_c20_finds_the_system_and_precision_of_3_6_exaflops():
    verdict = claims.check("C20")
    system = catalog.system("vr-nvl72")
    rubin = catalog.gpu(system.gpu)
    assert verdict.model_value == pytest.approx(system.gpus_per_node * rubin.fp4_peak_TFLOPS / 1e6) == 3.6
    assert "NVFP4" in verdict.unit and system.name in verdict.explanation
    dense_bf16 = 72 * catalog.gpu("gb200").bf16_dense_TFLOPS / 1e6
    assert f"{dense_bf16:.2f} dense BF16" in verdict.explanation
    assert verdict.verdict == "holds-with-caveat"
