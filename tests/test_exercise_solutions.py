"""Every exercise's solution, checked against the numbers it quotes.

Each chapter notebook ends with ``## Exercises``: MyST ``{exercise}`` and ``{solution}`` blocks whose numbers
are glued facts of the chapter's page module. These tests (1) read those blocks from the notebooks and check
that every glue name they quote is a fact of the chapter that takes its format spec, and (2) redo each
solution's arithmetic the way a reader with a calculator would: from the catalogue, the model's inputs or the
other numbers the solution shows, at the precision the page prints. Each test's docstring names the exercise
label it checks. The chapters' facts are computed once per module (chapter 5's guide takes the longest)."""

from __future__ import annotations

import inspect
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from multigpu.book import ch01_generations as ch01
from multigpu.book import ch02_topology as ch02
from multigpu.book import ch03_bottlenecks as ch03
from multigpu.book import ch04_cost as ch04
from multigpu.book import ch05_guide as ch05
from multigpu.book import inputs
from multigpu.comm import collectives
from multigpu.common.units import GiB, KiB
from multigpu.compute import models
from multigpu.evidence import bottlenecks, guide
from multigpu.evidence import topology as views
from multigpu.evidence.cost import TRAIN_8B, TRAIN_70B, VALUE_PAIRS
from multigpu.hardware import catalog
from multigpu.market import cost, recommend, workloads

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = {1: "01-nvlink-generations", 2: "02-nvswitch-topology", 3: "03-communication-bottlenecks",
            4: "04-cost-benefit", 5: "05-selection-guide"}
_BLOCK = re.compile(r"^```\{(exercise|solution)\}[ \t]*([^\n]*)\n(.*?)\n```[ \t]*$", re.S | re.M)
_LABEL = re.compile(r"^:label:\s*(\S+)", re.M)
_GLUE = re.compile(r"\{glue:(text|md)\}`([^`:]+)(?::([^`]*))?`")
_USD = re.compile(r"USD ([\d,]+(?:\.\d+)?)")


# ------------------------------------------------------------------ reading the exercises


def exercises(chapter: int) -> dict[str, dict[str, str]]:
    """The chapter's Exercises section: per exercise label, the Markdown of its ``exercise`` and ``solution``
    blocks (the notebook's Markdown cells from the ``## Exercises`` heading on)."""
    cells = json.loads((ROOT / "book" / "chapters" / f"{CHAPTERS[chapter]}.ipynb").read_text())["cells"]
    markdown = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    start = next(i for i, text in enumerate(markdown) if re.search(r"^## Exercises\s*$", text, re.M))
    text = "\n".join(markdown[start:])
    text = text[re.search(r"^## Exercises\s*$", text, re.M).start():]
    out: dict[str, dict[str, str]] = {}
    for kind, argument, body in _BLOCK.findall(text):
        label = _LABEL.search(body).group(1) if kind == "exercise" else argument.strip()
        out.setdefault(label, {})[kind] = body
    return out


def cited(body: str) -> list[tuple[str, str, str]]:
    """The ``{glue:role}`name:spec``` citations of a block: (role, name, spec or "")."""
    return [(role, name, spec or "") for role, name, spec in _GLUE.findall(body)]


def decimals(spec: str) -> int:
    match = re.search(r"\.(\d+)[fe%]", spec)
    return int(match.group(1)) if match else 0


def half_unit(spec: str) -> float:
    """Half a unit in the last place a format spec prints: the precision shown (and a hair for float ties)."""
    return 0.5 * 10.0 ** -decimals(spec) + 1e-9


def shown(value: float, spec: str) -> float:
    """The number as the page prints it (format spec applied), read back."""
    return float(format(value, spec).replace(",", ""))


def usd(text: str) -> float:
    """The first ``USD x`` amount of a text."""
    return float(_USD.search(text).group(1).replace(",", ""))


def calculator(fn, *shown_inputs: tuple[float, str]) -> tuple[float, float]:
    """What a reader gets applying ``fn`` to the printed inputs ((value, spec) pairs), and how far the
    printing's rounding of those inputs moves it (each input put back to its unrounded value in turn)."""
    xs = [shown(v, s) for v, s in shown_inputs]
    result = fn(*xs)
    spread = 0.0
    for i, (value, _) in enumerate(shown_inputs):
        moved = list(xs)
        moved[i] = float(value)
        spread += abs(fn(*moved) - result)
    return result, spread


def assert_printed_arithmetic(fn, inputs_: list[tuple[float, str]], result: tuple[float, str]):
    """The arithmetic the page prints holds: ``fn`` of the printed inputs gives the printed result, within
    the rounding of what is printed."""
    got, spread = calculator(fn, *inputs_)
    value, spec = result
    assert got == pytest.approx(shown(value, spec), abs=spread + half_unit(spec) + 1e-9), (got, value, spec)


# ------------------------------------------------------------------ the chapters' facts, once per module


@pytest.fixture(scope="module")
def cal():
    return inputs.model_calibration()


@pytest.fixture(scope="module")
def table():
    return inputs.price_table()  # as the notebooks read it


@pytest.fixture(scope="module")
def f1():
    return ch01.facts()


@pytest.fixture(scope="module")
def f2(cal):
    return ch02.facts(cal)


@pytest.fixture(scope="module")
def f3(cal):
    return ch03.facts(cal)


@pytest.fixture(scope="module")
def f4(table):
    """Chapter 4's Exercises cell: ``ch04.exercise_facts(table=table)`` (the full ``ch04.facts`` takes ~30 s and
    adds nothing the exercises quote)."""
    return ch04.exercise_facts(table=table)


@pytest.fixture(scope="module")
def run5(table):
    """Chapter 5 as its notebook computes it: the reference pricing, the training example and the full guide."""
    ref = guide.reference_pricing(table)
    return {"ref": ref, "ex": ch05.training_example(table, ref), "decided": guide.decisions(table)}


@pytest.fixture(scope="module")
def f5(table, run5):
    """The chapter-5 facts the notebook glues in the cells the Exercises section quotes from."""
    ref, ex, decided = run5["ref"], run5["ex"], run5["decided"]
    out: dict = {}
    for part in (ch05.intro_facts(table), ch05.training_example_facts(ex, table), ch05.guide_facts(decided, ref),
                 ch05.flip_facts(decided, ref), ch05.deadline_exercise_facts(ex, table, ref),
                 ch05.floor_exercise_facts(decided, table, ref)):
        out.update(part)
    return out


# ------------------------------------------------------------------ every quoted number exists and formats


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_every_number_an_exercise_or_solution_quotes_is_a_fact_that_formats(chapter, request):
    """All exercises (ch1-ex-*, ch2-ex-*, ch3-ex-*, ch4-ex-*, ch5-ex-*): every glue name an exercise or its
    solution quotes is a fact of the chapter; ``text`` facts are plain numbers that take the cited format spec
    (and print no nan), ``md`` facts non-empty text. Every exercise has a solution that quotes at least one."""
    facts = request.getfixturevalue(f"f{chapter}")
    blocks = exercises(chapter)
    assert len(blocks) >= 3, blocks.keys()
    for label, parts in blocks.items():
        assert set(parts) == {"exercise", "solution"}, label
        assert cited(parts["solution"]), f"{label}'s solution quotes no number"
        for role, name, spec in cited(parts["exercise"]) + cited(parts["solution"]):
            assert name in facts, f"{label} quotes {name}, which chapter {chapter} does not compute"
            value = facts[name]
            if role == "md":
                assert isinstance(value, str) and value.strip(), (label, name)
                assert f"{name}_zh" in facts, (label, name)  # the Chinese edition quotes its twin
            else:
                assert type(value) in (int, float), (label, name, type(value))
                printed = format(value, spec)
                assert "nan" not in printed.lower() and "inf" not in printed.lower(), (label, name, printed)


def test_every_solution_is_checked_by_a_test_of_this_module():
    """All exercises: each solution's label is named in the docstring of a ``test_ch*`` test of this module
    (beyond the format check above), so a new exercise without a check fails here."""
    here = sys.modules[__name__]
    docs = " ".join(inspect.getdoc(fn) or "" for name, fn in vars(here).items()
                    if name.startswith("test_ch") and callable(fn))
    labels = [label for chapter in CHAPTERS for label in exercises(chapter)]
    missing = [label for label in labels if not re.search(rf"\b{re.escape(label)}\b", docs)]
    assert not missing, missing


# ------------------------------------------------------------------ chapter 1


def test_ch1_ex_convert_the_listing_is_bidirectional_and_one_way_divides_by_one_direction(f1):
    """ch1-ex-convert, parts 1-2: the advertised figure is the catalogue's per-direction H800 rate x 2; the
    printed "size GB / per-direction GB/s = ms" holds, and dividing by the advertised figure instead gives
    the printed wrong time, which is half ("twice too optimistic")."""
    h800 = catalog.gpu("h800-sxm")
    assert f1["ex1_h800_dir"] == pytest.approx(h800.nvlink_GBps_per_dir)
    assert f1["ex1_h800_bidir"] == pytest.approx(2 * h800.nvlink_GBps_per_dir)
    size = (f1["ex1_size_GB"], "g")
    assert_printed_arithmetic(lambda s, r: 1e3 * s / r, [size, (f1["ex1_h800_dir"], ".0f")], (f1["ex1_h800_ms"], ".0f"))
    assert_printed_arithmetic(lambda s, r: 1e3 * s / r, [size, (f1["ex1_h800_bidir"], ".0f")],
                              (f1["ex1_h800_wrong_ms"], ".0f"))
    assert shown(f1["ex1_h800_ms"], ".0f") / shown(f1["ex1_h800_wrong_ms"], ".0f") == pytest.approx(2)


def test_ch1_ex_convert_the_h100_has_the_same_compute_and_more_than_twice_the_link(f1):
    """ch1-ex-convert, part 3: the H100's time is the shard over its per-direction NVLink rate (at .1f), and the
    H100 has the H800's dense BF16 compute and more than twice its NVLink, as the solution says."""
    h100, h800 = catalog.gpu("h100-sxm"), catalog.gpu("h800-sxm")
    assert f1["ex1_h100_ms"] == pytest.approx(1e3 * f1["ex1_size_GB"] / h100.nvlink_GBps_per_dir, abs=half_unit(".1f"))
    assert h100.bf16_dense_TFLOPS == pytest.approx(h800.bf16_dense_TFLOPS)
    assert h100.nvlink_GBps_per_dir > 2 * h800.nvlink_GBps_per_dir
    assert f1["ex1_h100_ms"] < f1["ex1_h800_ms"] / 2


def test_ch1_ex_ratio_like_with_like_is_over_14_in_both_pcie_rates(f1):
    """ch1-ex-ratio: NVLink 5's bidirectional rate (18 links x 50 GB/s x 2), PCIe Gen5 x16's data rate x 2 and
    its raw rate (16 lanes x 32 Gb/s / 8 x 2) from the catalogue; the printed "nvl5 / pcie5 = ratio" and the raw
    ratio nvl5 / raw hold at .2f; both are over 14; the mixed ratio is bidirectional NVLink over one PCIe
    direction (at .1f)."""
    nvl5, pcie5 = catalog.link("nvlink5"), catalog.link("pcie5-x16")
    assert f1["ex2_nvl5_bidir"] == pytest.approx(2 * nvl5.links_per_gpu * nvl5.per_link_GBps_per_dir)
    assert f1["ex2_pcie5_bidir"] == pytest.approx(2 * pcie5.per_gpu_GBps_per_dir)
    assert f1["ex2_pcie5_raw_bidir"] == pytest.approx(2 * pcie5.lanes_per_link * pcie5.lane_Gbps / 8)
    nvl = (f1["ex2_nvl5_bidir"], ".0f")
    assert_printed_arithmetic(lambda a, b: a / b, [nvl, (f1["ex2_pcie5_bidir"], ".2f")], (f1["ex2_ratio"], ".2f"))
    assert_printed_arithmetic(lambda a, b: a / b, [nvl, (f1["ex2_pcie5_raw_bidir"], ".0f")],
                              (f1["ex2_ratio_raw"], ".2f"))
    assert shown(f1["ex2_ratio"], ".2f") > 14 and shown(f1["ex2_ratio_raw"], ".2f") > 14
    assert f1["ex2_ratio_mixed"] == pytest.approx(f1["ex2_nvl5_bidir"] / pcie5.per_gpu_GBps_per_dir,
                                                  abs=half_unit(".1f"))


def test_ch1_ex_bytes_per_flop_scales_with_link_over_compute(f1):
    """ch1-ex-bytes-per-flop: with communication = compute on the parent (H100), a variant's communication over
    compute is (parent link / variant link) / (parent BF16 / variant BF16), from the catalogue, at .2f; the H20
    has the parent's link and less compute (ratio < 1), the H800 the parent's compute and a narrower link
    (ratio > 1)."""
    for key, gpu_id in (("h20", "h20"), ("h800", "h800-sxm")):
        gpu = catalog.gpu(gpu_id)
        parent = catalog.gpu(gpu.parent)
        expected = (parent.nvlink_GBps_per_dir / gpu.nvlink_GBps_per_dir) / (
            parent.bf16_dense_TFLOPS / gpu.bf16_dense_TFLOPS)
        assert f1[f"ex3_{key}"] == pytest.approx(expected, abs=half_unit(".2f")), key
    h20, h800, h100 = catalog.gpu("h20"), catalog.gpu("h800-sxm"), catalog.gpu("h100-sxm")
    assert h20.nvlink_GBps_per_dir == h100.nvlink_GBps_per_dir and h20.bf16_dense_TFLOPS < h100.bf16_dense_TFLOPS
    assert h800.bf16_dense_TFLOPS == h100.bf16_dense_TFLOPS and h800.nvlink_GBps_per_dir < h100.nvlink_GBps_per_dir
    assert f1["ex3_h20"] < 1 < f1["ex3_h800"]


# ------------------------------------------------------------------ chapter 2


def test_ch2_ex_tp4_line_rates_share_the_port_or_use_3_of_7_mesh_links(f2):
    """ch2-ex-tp4, part 1: through the switch a GPU sends its whole port (the catalogue's H200 NVLink per
    direction) split over 3 peers; on the mesh each peer gets one mesh link (the mesh's per-GPU rate / its 7
    links) and a GPU sends on 3 of its 7 links."""
    switch, mesh = catalog.system(views.SWITCH), catalog.system(views.MESH)
    peers = ch02.EX1_GPUS - 1
    assert f2["ex1_sw_gpu"] == pytest.approx(switch.nvlink_GBps_per_dir)
    assert f2["ex1_sw_pair"] == pytest.approx(switch.nvlink_GBps_per_dir / peers)
    link = mesh.nvlink_GBps_per_dir / mesh.nvlink_links_per_gpu
    assert mesh.nvlink_links_per_gpu == 7 and peers == 3
    assert f2["ex1_mesh_pair"] == pytest.approx(link)
    assert f2["ex1_mesh_gpu"] == pytest.approx(peers * link)


def test_ch2_ex_tp4_a_large_all_reduce_is_slower_by_about_the_bandwidth_ratio(f2):
    """ch2-ex-tp4, part 2: the printed "x times longer: mesh ms against switch ms" holds at .1f, for a 1 GiB
    all-reduce; and the slowdown is about the per-GPU bandwidth ratio of part 1 (within 5 %), which the
    solution's "3 of the mesh's 7 links" explains."""
    assert ch02.EX1_LARGE == 1 * GiB and ch02.EX1_GPUS == 4
    assert_printed_arithmetic(lambda m, s: m / s, [(f2["ex1_mesh_large_ms"], ".1f"), (f2["ex1_sw_large_ms"], ".1f")],
                              (f2["ex1_large_x"], ".1f"))
    assert f2["ex1_large_x"] == pytest.approx(f2["ex1_sw_gpu"] / f2["ex1_mesh_gpu"], rel=0.05)


def test_ch2_ex_tp4_a_64_KiB_all_reduce_is_about_the_same_and_latency_bound(f2):
    """ch2-ex-tp4, part 3: at 64 KiB the mesh and the switch take "about the same" (within 10 %) with NCCL's
    choice and with two-shot, unlike the > 2x of 1 GiB; the bytes at each wiring's line rate
    (2(n-1)/n x 64 KiB / per-GPU GB/s) are under a tenth of each time: latency-bound."""
    assert ch02.EX1_SMALL == 64 * KiB
    for kind in ("small", "2shot"):
        mesh, switch = f2[f"ex1_mesh_{kind}_us"], f2[f"ex1_sw_{kind}_us"]
        assert mesh / switch == pytest.approx(1, abs=0.1), kind
        for time_us, rate in ((mesh, f2["ex1_mesh_gpu"]), (switch, f2["ex1_sw_gpu"])):
            n = ch02.EX1_GPUS
            data_us = 2 * (n - 1) / n * 64 * KiB / (rate * 1e3)  # GB/s = 1e3 bytes per µs
            assert data_us < 0.1 * time_us, (kind, data_us, time_us)
    assert f2["ex1_large_x"] > 2


def test_ch2_ex_fanout_the_sender_divides_its_port_and_a_whole_port_takes_an_eighth(f2):
    """ch2-ex-fanout: a whole GB200 NVL72 port (catalogue, per direction) is the per-flow rate with 8 senders;
    the printed 1 GB / that rate = ms holds at .2f; one sender's 8 slices each take 8 times as long (at .1f):
    the sender, not the switch, is the limit."""
    assert ch02.EX2_PEERS == 8 and ch02.EX2_SLICE_GB == 1 and ch02.EX2_SYSTEM == "gb200-nvl72"
    assert f2["ex2_pair"] == pytest.approx(catalog.system("gb200-nvl72").nvlink_GBps_per_dir)
    assert_printed_arithmetic(lambda r: 1e3 * ch02.EX2_SLICE_GB / r, [(f2["ex2_pair"], ".0f")],
                              (f2["ex2_pair_ms"], ".2f"))
    assert f2["ex2_fan_ms"] == pytest.approx(ch02.EX2_PEERS * f2["ex2_pair_ms"], abs=half_unit(".1f"))


def _allreduce_plans(cal):
    """NCCL's all-reduce plans on the HGX H200, 8 GPUs: {(algorithm, protocol): plan}."""
    possible = collectives.available("allreduce", views.SWITCH, 8, cal=cal)
    return {(name, plan.protocol): plan for name in views.NCCL_ALGORITHMS if name in possible
            for plan in collectives.plans("allreduce", views.SWITCH, 8, algorithm=name, cal=cal)}


def test_ch2_ex_crossover_is_where_the_ring_ll_and_nvls_times_meet(f2, cal):
    """ch2-ex-crossover: timed with the collective model, the ring with LL is the fastest of NCCL's plans at
    half the printed crossover and NVLS at twice it; at the crossover their times agree (within 2 %); the ring
    LL starts in the printed ring latency, NVLS in its own (at .1f)."""
    plans = _allreduce_plans(cal)
    ring = plans[("ring", "ll")]
    nvls = [plan for (name, _), plan in plans.items() if name == "nvls"]
    cross = f2["ex3_cross_KiB"] * KiB

    def fastest(size):
        return min(plans, key=lambda key: float(plans[key].time_us(np.array([size]))[0]))

    assert fastest(cross / 2) == ("ring", "ll")
    assert fastest(2 * cross)[0] == "nvls"
    t_ring = float(ring.time_us(np.array([cross]))[0])
    t_nvls = min(float(p.time_us(np.array([cross]))[0]) for p in nvls)
    assert t_ring == pytest.approx(t_nvls, rel=0.02)
    assert float(ring.time_us(np.array([0.0]))[0]) == pytest.approx(f2["ex3_ring_lat"], abs=half_unit(".1f"))
    assert min(float(p.time_us(np.array([0.0]))[0]) for p in nvls) == pytest.approx(f2["ex3_nvls_lat"],
                                                                                   abs=half_unit(".1f"))


# ------------------------------------------------------------------ chapter 3


def test_ch3_ex_bytes_a_query_sends_two_all_reduces_per_layer_per_token(f3):
    """ch3-ex-bytes, parts 1-2: a 4-GPU all-reduce sends 2(n-1)/n = 1.5 buffers per GPU (.1f); the query's GB
    are 2 all-reduces x layers x hidden x 1 byte (FP8) x 1.5 x (8192 + 256) tokens of Llama 3.1 70B (.1f); the
    link rate is the H200's NVLink per direction; the printed "GB / GB/s = ms" holds (.0f)."""
    n = 4
    assert f3["ex1_tp4_factor"] == pytest.approx(2 * (n - 1) / n, abs=half_unit(".1f"))
    model = models.model("llama3.1-70b")
    assert bottlenecks.SERVE_MODEL == "llama3.1-70b" and f3["hidden"] == model.hidden
    assert (bottlenecks.INPUT_TOKENS, bottlenecks.OUTPUT_TOKENS) == (8192, 256)  # the article's query
    per_token = 2 * model.layers * model.hidden * 1 * 2 * (n - 1) / n  # bytes each GPU sends per token
    assert f3["ex1_fp8_tp4"] == pytest.approx(per_token * (8192 + 256) / 1e9, abs=half_unit(".1f"))
    assert f3["ex1_per_dir"] == pytest.approx(catalog.gpu(catalog.system("hgx-h200").gpu).nvlink_GBps_per_dir)
    assert_printed_arithmetic(lambda gb, r: 1e3 * gb / r, [(f3["ex1_fp8_tp4"], ".1f"), (f3["ex1_per_dir"], ".0f")],
                              (f3["ex1_ms"], ".0f"))


def test_ch3_ex_bytes_the_decode_part_is_latency_bound(f3):
    """ch3-ex-bytes, part 3: the decode part carries 256 tokens' bytes (.2f), which the link rate moves in the
    printed ms (.1f); the model's 2 x layers x 256 all-reduces cost "a few microseconds" each (1 to 10 µs) and
    their time is many times the bytes' time (bytes under a tenth of it): latency, not bytes, sets it."""
    model = models.model("llama3.1-70b")
    per_token = 2 * model.layers * model.hidden * 1 * 1.5
    assert f3["ex1_dec_GB"] == pytest.approx(per_token * 256 / 1e9, abs=half_unit(".2f"))
    assert_printed_arithmetic(lambda gb, r: 1e3 * gb / r, [(f3["ex1_dec_GB"], ".2f"), (f3["ex1_per_dir"], ".0f")],
                              (f3["ex1_dec_ideal_ms"], ".1f"))
    assert f3["ex1_dec_n"] == 2 * model.layers * 256
    each_us = 1e3 * f3["ex1_dec_ms"] / f3["ex1_dec_n"]
    assert 1 <= each_us <= 10, each_us
    assert f3["ex1_dec_ideal_ms"] < 0.1 * f3["ex1_dec_ms"]


def test_ch3_ex_amdahl_the_bound_is_t1_over_c_and_halving_c_doubles_it(f3, cal):
    """ch3-ex-amdahl: the printed "t1 / C = bound" holds with the printed numbers; C halved is the printed
    half (.1f); the bound with it is t1 / (C / 2) (.1f), twice the first and larger than any GPU count gives;
    the amdahl table's ``limit_x`` column is t1 / C for the PCIe setup."""
    assert_printed_arithmetic(lambda t1, c: t1 / c, [(f3["ex2_t1"], ".0f"), (f3["ex2_c"], ".1f")],
                              (f3["am_pcie_limit"], ".1f"))
    assert f3["ex2_c_half"] == pytest.approx(f3["ex2_c"] / 2, abs=half_unit(".1f"))
    assert_printed_arithmetic(lambda t1, c: t1 / c, [(f3["ex2_t1"], ".0f"), (f3["ex2_c_half"], ".1f")],
                              (f3["ex2_limit_half"], ".1f"))
    assert f3["ex2_limit_half"] > f3["am_pcie_limit"]
    row = bottlenecks.amdahl(cal=cal).set_index("setup").loc[ch03.SETUPS["pcie"].label]
    assert row["limit_x"] == pytest.approx(f3["ex2_t1"] / f3["ex2_c"])


def test_ch3_ex_batch_the_global_batch_is_per_gpu_sequences_times_32_gpus(f3):
    """ch3-ex-batch: 32 GPUs are four 8-GPU A100 PCIe servers (catalogue); the global batch is the printed
    sequences per GPU x 32; the exposed share at 4 sequences is over the 10 % the exercise asks to go under."""
    gpus = 4 * catalog.system("pcie-a100-8").gpus_per_node
    assert gpus == 32 and ch03.ETHERNET.gpus == gpus
    assert f3["ex3_global"] == shown(f3["ex3_under10"], ".0f") * gpus
    assert f3["ex3_share4"] > 10 and ch03.EXERCISE_SEQS == 4


# ------------------------------------------------------------------ chapter 4


def test_ch4_ex_breakeven_gpu_hours_are_the_best_plans_hours_times_gpus(f4):
    """ch4-ex-breakeven: the printed GPU-hours are each system's best plan for the 70B job, hours x the job's
    GPUs (A100 NVSwitch = dgx-a100, A100 PCIe = pcie-a100-8; at ,.0f), the PCIe side the larger."""
    w = workloads.workload(TRAIN_70B)
    nvlink, pcie = VALUE_PAIRS[0]
    assert (nvlink, pcie) == ("dgx-a100", "pcie-a100-8")
    assert f4["ex1_hn"] == pytest.approx(cost.plan(TRAIN_70B, nvlink, 8).time_h() * w.gpus, abs=half_unit(",.0f"))
    assert f4["ex1_hp"] == pytest.approx(cost.plan(TRAIN_70B, pcie, 8).time_h() * w.gpus, abs=half_unit(",.0f"))
    assert f4["ex1_hp"] > f4["ex1_hn"]


def test_ch4_ex_breakeven_price_and_premium_follow_from_equal_cost_per_job(f4):
    """ch4-ex-breakeven: the printed "price x H_P / H_N = break-even price" holds (USD, .2f); the premium is
    break-even / PCIe price - 1 (%, .1f, within the printed rounding); a cent lower makes the NVSwitch job
    cheaper; the premium is the same at any assumed PCIe price (only H_P / H_N enters)."""
    assert usd(f4["ex1_pcie_price"]) == shown(f4["ex1_price"], ".2f")
    be = usd(f4["ex1_break_even_price"])
    assert_printed_arithmetic(lambda p, hp, hn: p * hp / hn,
                              [(f4["ex1_price"], ".2f"), (f4["ex1_hp"], ",.0f"), (f4["ex1_hn"], ",.0f")], (be, ".2f"))
    exact = f4["ex1_price"] * f4["ex1_hp"] / f4["ex1_hn"]  # printed as ``be``, rounded to the cent
    assert shown(exact, ".2f") == be
    assert_printed_arithmetic(lambda b, p: 100 * (b / p - 1), [(exact, ".2f"), (f4["ex1_price"], ".2f")],
                              (f4["ex1_pct"], ".1f"))
    assert exact * f4["ex1_hn"] == pytest.approx(f4["ex1_price"] * f4["ex1_hp"])
    assert (exact - 0.01) * f4["ex1_hn"] < f4["ex1_price"] * f4["ex1_hp"]
    for other in (0.5, 3.0, 10.0):
        assert 100 * (other * f4["ex1_hp"] / f4["ex1_hn"] / other - 1) == pytest.approx(f4["ex1_pct"])


def test_ch4_ex_utilisation_spot_is_dearer_below_spot_over_on_demand(f4):
    """ch4-ex-utilisation: the exercise's prices read as the solution's numbers (USD, .2f), spot the cheaper
    list price; the printed "spot / on-demand = u %" holds (.1f); with cost = GPU-hours x price / utilisation,
    spot costs more just below that utilisation and less just above it."""
    assert usd(f4["ex2_spot_price"]) == shown(f4["ex2_spot"], ".2f")
    assert usd(f4["ex2_od_price"]) == shown(f4["ex2_od"], ".2f")
    assert f4["ex2_spot"] < f4["ex2_od"]
    assert_printed_arithmetic(lambda s, o: 100 * s / o, [(f4["ex2_spot"], ".2f"), (f4["ex2_od"], ".2f")],
                              (f4["ex2_u"], ".1f"))
    hours = 1000.0
    u = f4["ex2_u"] / 100
    on_demand = hours * f4["ex2_od"] / 1.0
    assert hours * f4["ex2_spot"] / (u - 0.01) > on_demand
    assert hours * f4["ex2_spot"] / (u + 0.01) < on_demand


def test_ch4_ex_length_twice_the_tokens_is_twice_the_steps_at_the_same_step_time(f4):
    """ch4-ex-length: the 8B job's tokens are its workload's (billions, .0f); its steps are tokens / (global
    batch x sequence length); twice the tokens at the same layout and step time take twice the days (.0f);
    (the cost per job, GPU-hours x price, doubles with them)."""
    w = workloads.workload(TRAIN_8B)
    assert f4["ex3_tokens_B"] == pytest.approx(w.tokens / 1e9, abs=half_unit(".0f"))
    plan = cost.plan(TRAIN_8B, VALUE_PAIRS[0][0], 8)
    steps = f4["ex3_tokens_B"] * 1e9 / (w.global_batch * w.seq)
    assert plan.steps == pytest.approx(steps)
    step_s = plan.training.noncomm_s + plan.training.comm_s
    assert f4["ex3_days"] == pytest.approx(steps * step_s / 86400, abs=half_unit(".0f"))
    assert f4["ex3_days_2x"] == pytest.approx(2 * steps * step_s / 86400, abs=half_unit(".0f"))


# ------------------------------------------------------------------ chapter 5


def test_ch5_ex_flip_the_price_factor_is_the_cost_ratio_and_scales_only_pcie(f5, run5, table):
    """ch5-ex-flip: the question's two costs are the guide's closest flip case; the answer's printed
    "nvlink / pcie = factor" holds (.3f) and the cut is 100 x (1 - factor) (.1f), a fall (factor < 1); scaling
    every PCIe price by a factor scales the cheapest PCIe option's cost by it and leaves the NVLink-class
    cost alone (the guide's options rerun at half the PCIe prices)."""
    case = guide.flip_case(run5["decided"], run5["ref"])
    assert case is not None
    question, answer = f5["ex1_question"], f5["ex1_answer"]
    assert f"`{case['model']}`" in question
    costs = re.search(r"costs ([\d,]+\.\d\d) and the cheapest PCIe option ([\d,]+\.\d\d)", question)
    nvlink, pcie = (float(x.replace(",", "")) for x in costs.groups())
    assert (nvlink, pcie) == (shown(case["nvlink_cost"], ",.2f"), shown(case["pcie_cost"], ",.2f"))
    said = re.match(r"To ([\d,]+\.\d\d) / ([\d,]+\.\d\d) = (\d+\.\d\d) times their level, a cut of about (\d+) %",
                    answer)
    assert said, answer
    a, b, factor, cut = (float(x.replace(",", "")) for x in said.groups())
    assert (a, b) == (nvlink, pcie)
    assert_printed_arithmetic(lambda x, y: x / y, [(a, ",.2f"), (b, ",.2f")], (factor, ".2f"))
    assert_printed_arithmetic(lambda s: 100 * (1 - s), [(factor, ".2f")], (cut, ".0f"))
    assert factor < 1
    # and it agrees, at its precision, with the guide's own factor from the unrounded costs
    assert abs(factor - case["pcie_price_scale_to_flip"]) <= 0.01
    column = guide.cost_column(case["kind"])
    halved = guide.options(case["model"], case["kind"], guide.scale_prices(table, 0.5))
    ok = halved[halved["feasible"] & (halved["pricing"] == run5["ref"])]
    pcie_side = ok[ok["guide_class"] == "PCIe"]
    assert pcie_side[column].min() == pytest.approx(0.5 * case["pcie_cost"])
    assert ok[ok["guide_class"] != "PCIe"][column].min() == pytest.approx(case["nvlink_cost"])


def test_ch5_ex_deadline_the_tighter_deadline_never_lowers_the_pick_s_cost(f5, run5, table):
    """ch5-ex-deadline: the exercise's deadline is ex2_hours / 24 days, tighter than the example's; the
    answer's pick meets it (days <= ex2_days); if the pick is "still" the earlier one, its printed cost is the
    example's pick's and the options it says the deadline removes are the feasible ones slower than it, none
    cheaper; otherwise the printed "times the earlier pick's cost" is new / old (.2f) and at least 1."""
    assert f5["ex2_hours"] == pytest.approx(24 * f5["ex2_days"])
    assert f5["ex2_days"] < f5["ex_days"]
    answer, best = f5["ex2_answer"], f5["ex_best"]
    pick = re.search(r"([\d.]+) days for USD ([\d,]+)", answer)
    assert pick, answer
    days, new_cost = float(pick.group(1)), float(pick.group(2).replace(",", ""))
    assert days <= f5["ex2_days"]
    old_cost = float(re.search(r"days and USD ([\d,]+)", best).group(1).replace(",", ""))
    ex = run5["ex"]
    slower = ex[ex["feasible"] & (ex["time_h"] > f5["ex2_hours"])]
    tight = recommend.best(ch05.training_example(table, run5["ref"], deadline_h=f5["ex2_hours"]))
    assert tight["cost_usd"] >= recommend.best(ex)["cost_usd"]
    if "is still" in answer:
        assert new_cost == old_cost
        assert f"the {f5['ex_days']:.0f}-day pick" in answer
        removed = int(re.search(r"removes (\d+) options", answer).group(1)) if "removes" in answer else 0
        assert removed == len(slower)
        assert (slower["cost_usd"] >= tight["cost_usd"]).all()
    else:
        ratio = float(re.search(r"(\d+\.\d\d) times the", answer).group(1))
        assert_printed_arithmetic(lambda n, o: n / o, [(new_cost, ",.0f"), (old_cost, ",.0f")], (ratio, ".2f"))
        assert ratio >= 1
        assert f"{len(slower)} of the options that met the longer deadline miss the shorter one" in answer


def _bounds(line: str) -> tuple[float, float] | None:
    match = re.search(r"between ([\d.]+)B and ([\d.]+)B", line)
    return (float(match.group(1)), float(match.group(2))) if match else None


def test_ch5_ex_floor_the_named_models_are_those_whose_class_changes(f5, run5, table):
    """ch5-ex-floor: the exercise raises the floor from serve_rate to the 50 of its own code line (ex3_floor);
    rerunning the guide's serving decisions at that floor, the models the solution names are exactly those
    whose class changes at the reference pricing, with the printed before and after classes; its "why"
    says the move the two printed lines show (smaller, larger or none)."""
    exercise = exercises(5)["ch5-ex-floor"]["exercise"]
    floor = float(re.search(r'"tokens_per_s_per_user":\s*(\d+(?:\.\d+)?)', exercise).group(1))
    assert f5["ex3_floor"] == floor and f5["serve_rate"] < floor
    assert f5["serve_rate"] == guide.SERVE["tokens_per_s_per_user"]
    ref, decided = run5["ref"], run5["decided"]
    model_ids = tuple(dict.fromkeys(decided["model"]))
    faster = guide.decisions(table, model_ids, kinds=("serve",), serve={"tokens_per_s_per_user": floor})
    after = faster[faster["pricing"] == ref].set_index("model")["guide_class"]
    before = decided[(decided["kind"] == "serve") & (decided["pricing"] == ref)].set_index("model")["guide_class"]
    changed = {m: (before[m], after[m]) for m in after.index if after[m] != before[m]}
    named = dict((m, (b, a)) for m, b, a in re.findall(r"`([^`]+)` \(([^()]+?) to ([^()]+?)\)", f5["ex3_changed"]))
    assert set(named) == set(changed)
    for model, (b, a) in named.items():
        assert (b, a) == tuple(ch05.word(c) for c in changed[model]), model
    old, new = _bounds(f5["ex3_line_30"]), _bounds(f5["ex3_line_50"])
    why = f5["ex3_why"]
    if old and new and new[1] < old[1]:
        assert "towards smaller models" in why
    elif old and new and new[1] > old[1]:
        assert "towards larger models" in why
    elif changed:
        assert "stays where it was" in why and f5["ex3_line_30"] == f5["ex3_line_50"]
    else:
        assert "Nothing moves" in why and not named


def test_this_module_parses_all_the_exercises_it_should():
    """All exercises: the parser finds three exercises per chapter, labelled ch<N>-ex-*, each quoting its glue
    names in the form ``{glue:role}`name:spec```."""
    for chapter in CHAPTERS:
        labels = list(exercises(chapter))
        assert len(labels) == 3 and all(label.startswith(f"ch{chapter}-ex-") for label in labels), labels
