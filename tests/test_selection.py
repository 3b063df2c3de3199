"""The one training-layout search: same answer as brute force, only feasible layouts, fast, CLI contract."""

import json
import subprocess
import sys

import pytest

from multigpu.common.errors import InputError
from multigpu.compute import models, training
from multigpu.hardware import catalog
from multigpu.market import search


def brute_force(model_id, system_id, gpus, global_batch, zero_stages=(1, 3)):
    """Best layout by calling the scalar training model on every layout, one at a time."""
    model, system = models.model(model_id), catalog.system(system_id)
    best = None
    for row in search.layouts(model, system, gpus, global_batch).to_dict("records"):
        for recompute in search.RECOMPUTE:
            for sp in (False, True):
                if sp and row["tp"] == 1:
                    continue
                for stage in zero_stages:
                    r = training.step(model_id, system_id, gpus, row["tp"], row["pp"], global_batch,
                                      row["micro_batch"], recompute=recompute, sequence_parallel=sp,
                                      interleave=row["interleave"], zero_stage=stage)
                    if r.fits and (best is None or r.step_time_s < best.step_time_s):
                        best = r
    return best


def test_search_finds_the_brute_force_best():
    found = search.train("llama3.1-8b", "hgx-h100", 16, 64).best
    expected = brute_force("llama3.1-8b", "hgx-h100", 16, 64)
    assert found.step_time_s == pytest.approx(expected.step_time_s, rel=1e-12)
    assert (found.tp, found.pp, found.micro_batch) == (expected.tp, expected.pp, expected.micro_batch)


def test_best_layouts_agree_with_the_training_model():
    result = search.train("gpt3-175b", "dgx-a100", 1024, 1536, top=3)
    assert len(result.top) == 3
    for b in result.top:
        r = training.step("gpt3-175b", "dgx-a100", 1024, b.tp, b.pp, 1536, b.micro_batch, recompute=b.recompute,
                          sequence_parallel=b.sequence_parallel, interleave=b.interleave, zero_stage=b.zero_stage)
        assert r.step_time_s == pytest.approx(b.step_time_s, rel=1e-12)
        assert r.mfu == pytest.approx(b.mfu, rel=1e-12)


def test_infeasible_layouts_never_rank():
    result = search.train("llama3.1-70b", "hgx-h100", 32, 64, top=50, keep_table=True)
    assert result.valid < result.evaluated
    table = result.table
    assert not table[table["fits"]].empty
    for layout in result.top:
        assert layout.memory_per_gpu_GB <= catalog.gpu("h100-sxm").usable_memory_GB


def test_a_job_that_fits_nowhere_says_why():
    result = search.train("llama3.1-405b", "dgx-a100", 8, 64)
    assert result.best is None and result.reason.startswith("does not fit")


def test_full_gpt3_space_on_1024_a100_is_searched_in_well_under_a_second():
    result = search.train("gpt3-175b", "dgx-a100", 1024, 1536, 2048, zero_stages=(1,), keep_table=True)
    assert result.evaluated > 1000
    assert result.seconds < 1.0


def test_layouts_divide():
    model, system = models.model("gpt3-175b"), catalog.system("dgx-a100")
    frame = search.layouts(model, system, 1024, 1536)
    assert (frame.tp * frame.pp * frame.dp == 1024).all()
    assert (model.heads % frame.tp == 0).all() and (model.layers % (frame.pp * frame.interleave) == 0).all()
    assert (1536 % (frame.dp * frame.micro_batch) == 0).all()
    assert (frame.tp <= system.gpus_per_node).all()


def test_no_layout_is_an_error():
    with pytest.raises(InputError):
        search.train("llama3.1-8b", "hgx-h100", 12, 64)


def test_bf16_gradients_never_slow_the_best_layout_and_let_more_layouts_fit():
    """``grad_dtype="bf16"`` (NVIDIA's performance recipes): each layout's gradient buffer and reduction halve, so
    as many layouts fit or more, and the best is never slower; the search agrees with the scalar model."""
    fp32 = search.train("llama3.1-70b", "hgx-h100", 32, 64)
    bf16 = search.train("llama3.1-70b", "hgx-h100", 32, 64, grad_dtype="bf16")
    assert bf16.grad_dtype == "bf16" and fp32.grad_dtype == "fp32"
    assert bf16.valid >= fp32.valid and bf16.best.step_time_s <= fp32.best.step_time_s
    b = bf16.best
    r = training.step("llama3.1-70b", "hgx-h100", 32, b.tp, b.pp, 64, b.micro_batch, recompute=b.recompute,
                      sequence_parallel=b.sequence_parallel, interleave=b.interleave, zero_stage=b.zero_stage,
                      grad_dtype="bf16")
    assert r.step_time_s == pytest.approx(b.step_time_s, rel=1e-12)
    with pytest.raises(InputError, match="gradient precision"):
        search.train("llama3.1-70b", "hgx-h100", 32, 64, grad_dtype="fp16")


def test_cli_search_json():
    out = subprocess.run([sys.executable, "-m", "multigpu", "search", "--model", "llama3.1-8b", "--system",
                          "hgx-h100", "--gpus", "16", "--global-batch", "64", "--format", "json", "--top", "2",
                          "--grad-dtype", "bf16"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""  # no progress output in json
    result = json.loads(out.stdout)
    assert result["grad_dtype"] == "bf16"
    for key in ("evaluated", "valid", "seconds", "best"):
        assert key in result
    for key in ("tp", "pp", "dp", "micro_batch", "step_time_s", "mfu"):
        assert key in result["best"]
    assert len(result["top"]) == 2


def test_a_ttft_ceiling_is_part_of_the_serving_target():
    """A serving target is a per-user floor plus, if given, a ceiling on the time to first token: a ceiling
    below every layout's prefill leaves nothing, and says why; a loose one changes nothing."""
    from multigpu.market import search

    free = search.serve("llama3.1-70b", "hgx-h200", 8, 8192, 256, 30)
    assert free.best is not None and free.max_ttft_s is None
    fastest = min(o.ttft_s for o in free.options if o.fits_one)
    tight = search.serve("llama3.1-70b", "hgx-h200", 8, 8192, 256, 30, max_ttft_s=fastest / 2)
    assert tight.best is None and tight.reason.startswith("too slow to first token")
    loose = search.serve("llama3.1-70b", "hgx-h200", 8, 8192, 256, 30, max_ttft_s=100.0)
    assert loose.best == free.best
    assert free.best.ttft_s <= 100.0


def test_the_2k_chat_workload_carries_mlperfs_ttft_limit():
    from multigpu.market import workloads

    w = workloads.workload("serve-llama3.1-70b-2k-30tps")
    assert w.max_ttft_s == 2.0 and "mlcommons" in w.source
    assert workloads.workload("serve-llama3.1-70b-30tps").max_ttft_s is None
