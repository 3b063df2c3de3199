"""Checks of the article's hardware claims (C01-C04, C20), from the catalogue; chapter 1.

Each check compares the article's figure with the catalogue in one direction
convention: bidirectional against bidirectional, or per direction against
per direction. The explanation names the convention and computes every number
it quotes.
"""

from __future__ import annotations

from statistics import mean

from multigpu.common.findings import Finding, Number, Numbers, Word, msg, say
from multigpu.evidence import generations
from multigpu.evidence.claims.rules import (
    TOLERANCE,
    Inputs,
    Verdict,
    caveat,
    claim,
    conclusion,
    fact,
    judge,
    sourced,
)
from multigpu.hardware import catalog

CHAPTER = "book/chapters/01-nvlink-generations"
#: "about one generation a year": at most this many years between generations
YEARLY = 1.25


def _per_gpu_TBps_bidir(link_id: str) -> float:
    return catalog.link(link_id).per_gpu_GBps_bidir / 1000


def nvlink6_vs_pcie6() -> dict[str, float]:
    """NVLink 6 per GPU against one PCIe Gen6 x16 port, in three conventions (GB/s and ratios).

    ``nvlink_GBps_bidir`` / ``pcie_GBps_bidir``: the like-with-like ratio
    ``ratio_bidir`` (equal to per direction / per direction); ``pcie_raw_GBps_bidir``
    (lanes x lane rate, before FLIT overhead, as NVIDIA prints it) gives
    ``ratio_raw_bidir``; ``ratio_mixed`` divides bidirectional NVLink by PCIe per
    direction, the trap.
    """
    nvlink, pcie = catalog.link("nvlink6"), catalog.link("pcie6-x16")
    raw_bidir = 2 * pcie.signalling_GBps_per_dir
    return {
        "nvlink_GBps_bidir": nvlink.per_gpu_GBps_bidir,
        "nvlink_GBps_per_dir": nvlink.per_gpu_GBps_per_dir,
        "pcie_GBps_bidir": pcie.per_gpu_GBps_bidir,
        "pcie_GBps_per_dir": pcie.per_gpu_GBps_per_dir,
        "pcie_raw_GBps_bidir": raw_bidir,
        "pcie_lanes": pcie.lanes_per_link,
        "pcie_lane_Gbps": pcie.lane_Gbps,
        "ratio_bidir": nvlink.per_gpu_GBps_bidir / pcie.per_gpu_GBps_bidir,
        "ratio_per_dir": nvlink.per_gpu_GBps_per_dir / pcie.per_gpu_GBps_per_dir,
        "ratio_raw_bidir": nvlink.per_gpu_GBps_bidir / raw_bidir,
        "ratio_mixed": nvlink.per_gpu_GBps_bidir / pcie.per_gpu_GBps_per_dir,
    }


def nvlink_cadence() -> dict[str, object]:
    """NVLink 4-6 per-GPU bandwidth (bidirectional GB/s) and years, with the mean gap between generations.

    Keys: ``GBps_bidir`` and ``years`` (lists, NVLink 4, 5, 6), ``years_per_generation``
    (NVLink 4 to 6), ``years_per_generation_all`` (NVLink 1 to 6), and
    ``gpu_years`` (the launch years of the flagship GPUs since NVLink 5) with
    ``years_per_gpu`` (mean gap between them).
    """
    recent = [catalog.link(i) for i in ("nvlink4", "nvlink5", "nvlink6")]
    every = [catalog.link(i) for i in generations.FAMILIES["nvlink"]]
    gpu_years = sorted({catalog.gpu(i).year for i in generations.FLAGSHIPS if catalog.gpu(i).year >= recent[1].year})

    def gap(years: list[int]) -> float:
        return mean(b - a for a, b in zip(years, years[1:]))

    return {
        "GBps_bidir": [link.per_gpu_GBps_bidir for link in recent],
        "years": [link.year for link in recent],
        "years_per_generation": gap([link.year for link in recent]),
        "years_per_generation_all": gap([link.year for link in every]),
        "gpu_years": gpu_years,
        "years_per_gpu": gap(gpu_years),
    }


@claim("C01")
def c01(inputs: Inputs) -> Verdict:
    link = catalog.link("nvlink1")
    gpu = generations.first_gpu("nvlink1")
    pcie = catalog.link(gpu.pcie)
    ratio = link.per_gpu_GBps_per_dir / pcie.per_gpu_GBps_per_dir
    verdict, rule = judge(fact(Finding.of(msg("NVLink 1 came in 2016 (catalogue: {year})"), year=link.year), link.year == 2016),
                          conclusion(Finding.of(msg("it was faster than the PCIe port of its GPU, per direction")), ratio > 1))
    return Verdict(
        id="C01", verdict=verdict, seed_value="2016", model_value=link.year, unit="year",
        explanation=say(msg("The catalogue dates {link_name} to {link_year}, when it shipped on the {gpu_name}: {links_per_gpu} "
                "links of {gbps_per_dir} GB/s per direction, {gbps_per_dir_2} GB/s per direction ({gpu_gbps_bidir} "
                "GB/s bidirectional) per GPU. That is {ratio}x the {pcie_name} port the same GPU had (per direction "
                "against per direction), so NVLink {did_did_not} get past PCIe when it arrived."),
            link_name=link.name, link_year=link.year, gpu_name=gpu.name, links_per_gpu=link.links_per_gpu,
            gbps_per_dir=Number(link.per_link_GBps_per_dir, "g"),
            gbps_per_dir_2=Number(link.per_gpu_GBps_per_dir, "g"),
            gpu_gbps_bidir=Number(link.per_gpu_GBps_bidir, "g"), ratio=Number(ratio, ".1f"), pcie_name=pcie.name,
            did_did_not=Word(msg("did")) if ratio > 1 else Word(msg("did not"))),
        chapter=CHAPTER, rule=rule, confidence=sourced(link.source, gpu.source))


@claim("C02")
def c02(inputs: Inputs) -> Verdict:
    link = catalog.link("nvlink6")
    bidir = _per_gpu_TBps_bidir("nvlink6")
    verdict, rule = judge(fact(Finding.of(msg("a Rubin GPU has 3.6 TB/s of NVLink 6 (catalogue: {bidir} TB/s both ways)"),
                                          bidir=Number(bidir)),
                               abs(bidir / 3.6 - 1) <= TOLERANCE),
                          caveat(Finding.of(msg("the figure adds both directions; one direction gets half")),
                                 abs(link.per_gpu_GBps_per_dir / 1000 / 3.6 - 1) > TOLERANCE))
    return Verdict(
        id="C02", verdict=verdict, seed_value="3.6 TB/s per Rubin GPU", model_value=bidir, unit="TB/s bidirectional",
        explanation=say(msg("{link_name} gives a Rubin GPU {gbps_bidir_1000} TB/s, but that is the bidirectional sum: one "
                "transfer in one direction can use at most {per_dir_1000} TB/s, the figure to divide bytes by. A "
                "Rubin 'GPU' is a package of two dies. NVIDIA publishes only the total; the catalogue's split into "
                "{links_per_gpu} links of {gbps_per_dir} GB/s per direction rests on secondary sources."),
            link_name=link.name, gbps_bidir_1000=Number(link.per_gpu_GBps_bidir / 1000, ".1f"),
            per_dir_1000=Number(link.per_gpu_GBps_per_dir / 1000, ".1f"), links_per_gpu=link.links_per_gpu,
            gbps_per_dir=Number(link.per_link_GBps_per_dir, "g")),
        chapter=CHAPTER, rule=rule, confidence=sourced(link.source))


@claim("C03")
def c03(inputs: Inputs) -> Verdict:
    r = nvlink6_vs_pcie6()
    verdict, rule = judge(fact(Finding.of(msg("NVLink 6 is more than 14x PCIe Gen6, like with like (x{ratio}; x{raw} against the raw "
                                           "PCIe rate)"), ratio=Number(r["ratio_bidir"], ".2f"),
                                       raw=Number(r["ratio_raw_bidir"], ".2f")),
                               min(r["ratio_bidir"], r["ratio_raw_bidir"]) > 14))
    return Verdict(
        id="C03", verdict=verdict, seed_value="more than 14x PCIe Gen6", model_value=round(r["ratio_bidir"], 2),
        unit="x (bidirectional / bidirectional)",
        explanation=say(msg("Like with like: NVLink 6 at {nvlink_gbps_bidir} GB/s bidirectional against a PCIe Gen6 x16 port at "
                "{pcie_gbps_bidir} GB/s bidirectional (after FLIT overhead) is {r_ratio_bidir}x; per direction "
                "against per direction ({gbps_per_dir} / {gbps_per_dir_2}) gives the same {ratio_per_dir}x. Against "
                "the raw {raw_gbps_bidir} GB/s that NVIDIA prints ({r_pcie_lanes} lanes x {pcie_lane_gbps} Gb/s raw, "
                "both directions) it is {ratio_raw_bidir}x, still above 14. Mixing conventions (bidirectional NVLink "
                "over per-direction PCIe) would give {r_ratio_mixed}x, twice too much; the article's 14x is the "
                "honest comparison."),
            nvlink_gbps_bidir=Number(r['nvlink_GBps_bidir'], "g"),
            pcie_gbps_bidir=Number(r['pcie_GBps_bidir'], "g"), r_ratio_bidir=Number(r['ratio_bidir'], ".1f"),
            gbps_per_dir=Number(r['nvlink_GBps_per_dir'], "g"),
            gbps_per_dir_2=Number(r['pcie_GBps_per_dir'], "g"), ratio_per_dir=Number(r['ratio_per_dir'], ".1f"),
            raw_gbps_bidir=Number(r['pcie_raw_GBps_bidir'], "g"), r_pcie_lanes=r['pcie_lanes'],
            pcie_lane_gbps=Number(r['pcie_lane_Gbps'], "g"), ratio_raw_bidir=Number(r['ratio_raw_bidir'], ".2f"),
            r_ratio_mixed=Number(r['ratio_mixed'], ".1f")),
        chapter=CHAPTER, rule=rule,
        confidence=sourced(catalog.link("nvlink6").source, catalog.link("pcie6-x16").source))


@claim("C04")
def c04(inputs: Inputs) -> Verdict:
    c = nvlink_cadence()
    bw, years = c["GBps_bidir"], c["years"]
    b300 = catalog.gpu("b300")
    stated = (900, 1800, 3600)
    verdict, rule = judge(
        fact(Finding.of(msg("NVLink 4, 5 and 6 give 900, 1800 and 3600 GB/s per GPU (catalogue: {values})"),
                        values=Numbers(tuple(bw))), all(abs(b / s - 1) <= TOLERANCE for b, s in zip(bw, stated))),
        conclusion(Finding.of(msg("NVLink doubles about once a year (one generation every {gap} years)"),
                              gap=Number(c["years_per_generation"], ".1f")),
                   c["years_per_generation"] <= YEARLY),
        caveat(Finding.of(msg("the figures add both directions")), not all(abs(b / 2 / s - 1) <= TOLERANCE for b, s in zip(bw, stated))))
    return Verdict(
        id="C04", verdict=verdict,
        seed_value="900 / 1800 / 3600 GB/s; one generation per year",
        model_value=say(msg("{n_a} / {n_b} / {n_c} GB/s; {n_years} years per generation"), n_a=Number(bw[0]), n_b=Number(bw[1]),
            n_c=Number(bw[2]), n_years=Number(c["years_per_generation"], ".1f")),
        unit="GB/s per GPU (bidirectional); years",
        explanation=say(msg("The bandwidths are the catalogue's: NVLink 4, 5 and 6 give {bw4}, {bw5} and {bw6} GB/s per GPU, "
                "bidirectional ({dir4}, {dir5} and {dir6} per direction), each double the last. The cadence is "
                "{not_}one a year: those generations came in {year4}, {year5} and {year6}, one every {gap} years, "
                "and NVLink 1 to 6 averaged {gap_all} years. What is yearly is NVIDIA's flagship GPU launches since "
                "NVLink 5 ({gpu_years}: one every {gpu_gap} years), and a GPU of an in-between year keeps the "
                "previous NVLink (the {b300_year} {b300} has {b300_link})."),
            bw4=Number(bw[0]), bw5=Number(bw[1]), bw6=Number(bw[2]), dir4=Number(bw[0] / 2), dir5=Number(bw[1] / 2),
            dir6=Number(bw[2] / 2), not_="" if c["years_per_generation"] <= YEARLY else Word(msg("not ")),
            year4=years[0], year5=years[1], year6=years[2], gap=Number(c["years_per_generation"], ".1f"),
            gap_all=Number(c["years_per_generation_all"], ".1f"), gpu_years=Numbers(tuple(c["gpu_years"])),
            gpu_gap=Number(c["years_per_gpu"], ".1f"), b300_year=b300.year, b300=generations.short_name(b300.name),
            b300_link=catalog.link(b300.nvlink).name),
        chapter=CHAPTER, rule=rule,
        confidence=sourced(*(catalog.link(i).source for i in ("nvlink4", "nvlink5", "nvlink6"))))


@claim("C20")
def c20(inputs: Inputs) -> Verdict:
    peak = generations.rack_EFLOPS("vr-nvl72", "fp4_peak_TFLOPS")
    dense_fp4 = generations.rack_EFLOPS("vr-nvl72", "fp4_dense_TFLOPS")
    gb200 = {attr: generations.rack_EFLOPS("gb200-nvl72", attr)
             for attr in ("bf16_dense_TFLOPS", "fp8_dense_TFLOPS", "fp4_dense_TFLOPS", "fp4_peak_TFLOPS")}
    rubin, system = catalog.gpu("rubin"), catalog.system("vr-nvl72")
    verdict, rule = judge(fact(Finding.of(msg("an NVL72 system gives up to 3.6 EFLOPS (Vera Rubin NVL72, NVFP4 peak: {peak})"),
                                          peak=Number(peak, ".2f")),
                               abs(peak / 3.6 - 1) <= TOLERANCE),
                          caveat(Finding.of(msg("the figure is 4-bit inference with sparsity or compression, not a dense "
                                             "training rate")), dense_fp4 < peak))
    return Verdict(
        id="C20", verdict=verdict, seed_value="up to 3.6 exaFLOPS of AI compute", model_value=round(peak, 2),
        unit="EFLOPS (Vera Rubin NVL72, NVFP4, vendor peak)",
        explanation=say(msg("{peak} EFLOPS is the {system_name}: {gpus_per_node} GPUs x {peak_tflops_1000} PFLOPS of 4-bit "
                "NVFP4, NVIDIA's inference figure with adaptive compression. Dense NVFP4 (the training figure) is "
                "{dense_fp4} EFLOPS, and NVIDIA publishes no BF16 rate for Rubin. The first NVL72 rack, GB200 NVL72, "
                "gives {fp4_peak_tflops} EFLOPS FP4 with 2:4 sparsity, {fp4_dense_tflops} dense FP4, "
                "{fp8_dense_tflops} dense FP8 and {bf16_dense_tflops} dense BF16; dense BF16, the precision most "
                "training still runs in, is {bf16_dense_tflops_2}x below the headline. The figure is right for the "
                "system and precision NVIDIA quotes, but not a training rate."),
            peak=Number(peak, ".1f"), system_name=system.name, gpus_per_node=system.gpus_per_node,
            peak_tflops_1000=Number(rubin.fp4_peak_TFLOPS / 1000, "g"), dense_fp4=Number(dense_fp4, ".2f"),
            fp4_peak_tflops=Number(gb200['fp4_peak_TFLOPS'], ".2f"),
            fp4_dense_tflops=Number(gb200['fp4_dense_TFLOPS'], ".2f"),
            fp8_dense_tflops=Number(gb200['fp8_dense_TFLOPS'], ".2f"),
            bf16_dense_tflops=Number(gb200['bf16_dense_TFLOPS'], ".2f"),
            bf16_dense_tflops_2=Number(peak / gb200['bf16_dense_TFLOPS'], ".0f")),
        chapter=CHAPTER, rule=rule, confidence=sourced(rubin.source, system.source))


#: This chapter's checks.
CHECKS = (c01, c02, c03, c04, c20)
