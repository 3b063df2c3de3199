"""torchtitan's per-operator selective activation checkpointing (``selective_ac_option = "op"``; pytorch/torchtitan
at e7c0cae, torchtitan/models/llama3/parallelize_llama.py, ``_save_list`` and ``_custom_policy``): a Llama block
keeps the attention kernel's output and every second matrix multiply's, in the order they run (the query, value,
gate and down projections), and recomputes the key, output and up projections with the elementwise norms and
activation."""

from __future__ import annotations

import json

import pytest

from multigpu.cli.app import main
from multigpu.common.errors import InputError
from multigpu.compute import models
from multigpu.compute.shapes import TORCHTITAN_OP_PARTS
from multigpu.evidence import runs

MODEL = "llama3.1-8b"


def _stored(recompute: str = "none", modules: tuple[str, ...] = ()) -> float:
    """Activation bytes one layer stores for a 1 x 1 micro-batch without tensor parallelism (16-bit)."""
    return float(models.activation_bytes_per_layer(MODEL, 1, 1, recompute=recompute, modules=modules))


def test_the_policy_recomputes_every_second_matrix_multiply():
    """Seven GEMMs per block, counted from one: the even ones (key, output, up) are recomputed."""
    order = ("q_proj", "k_proj", "v_proj", "out_proj", "mlp_gate", "mlp_up", "mlp_down")
    recomputed = {name for i, name in enumerate(order, start=1) if i % 2 == 0}
    assert recomputed == {"k_proj", "out_proj", "mlp_up"} == set(TORCHTITAN_OP_PARTS) - {"layernorm", "mlp_act"}
    assert models.named_recompute(MODEL, "torchtitan-op") == ("selective", TORCHTITAN_OP_PARTS)


def test_recomputed_gemms_are_their_forward_flops():
    """Llama 3.1 8B (h 4096, 8 KV heads of 128, SwiGLU f 14336, 32 layers): the key (h x 1024), output (h x h) and
    up (h x f) projections run again, 2 FLOPs a weight a token; the attention kernel does not (its output is
    kept)."""
    h, f, layers = 4096, 14336, 32
    model_flops, hardware = models.training_flops_per_step(MODEL, 1, 1, recompute="selective",
                                                           modules=TORCHTITAN_OP_PARTS)
    assert float(hardware - model_flops) == pytest.approx(2 * layers * h * (8 * 128 + h + f))


def test_each_dropped_tensor_is_its_size_per_token():
    """What the policy does not store, 16-bit, per token: the norms' outputs (4h), the residual the second norm
    reads (2h), the keys (2 x 1024), the up projection's output and the SwiGLU product (2f each)."""
    h, f = 4096, 14336
    assert _stored() - _stored("selective", TORCHTITAN_OP_PARTS) == pytest.approx(4 * h + 2 * h + 2 * 1024 + 4 * f)
    # the finer parts drop less than the whole GEMM groups they belong to
    assert _stored("selective", ("k_proj",)) > _stored("selective", ("qkv_proj",))
    assert _stored("selective", ("mlp_up",)) > _stored("selective", ("mlp_in",))


def test_the_cli_takes_the_policy_and_refuses_it_for_experts(capsys):
    args = ["train", "--model", MODEL, "--system", "hgx-h200", "--gpus", "8", "--tp", "1", "--pp", "1",
            "--global-batch", "16", "--micro-batch", "2", "--seq", "8192", "--stack", "pytorch-fsdp",
            "--format", "json"]
    assert main(args + ["--remat-policy", "torchtitan-op"]) == 0
    op = json.loads(capsys.readouterr().out)
    assert op["recompute"] == "selective" and tuple(op["recompute_modules"]) == TORCHTITAN_OP_PARTS
    assert main(args + ["--recompute", "full"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert op["memory_per_gpu_GB"] > full["memory_per_gpu_GB"] and op["step_time_s"] < full["step_time_s"]
    with pytest.raises(InputError, match="dense layers"):
        models.named_recompute("mixtral-8x7b", "torchtitan-op")


def test_torchtitan_runs_read_their_policy_from_the_notes():
    """Trainy's torchtitan runs (selective_ac_option op in the launch config) are priced with the policy; a row
    whose notes do not name it keeps Megatron-Core's default, the attention core."""
    titan = [r for r in runs.runs() if r.framework.startswith("torchtitan")]
    assert titan and all(runs.plan(r)[0].recompute_modules == TORCHTITAN_OP_PARTS for r in titan)
    unstated = titan[0].model_copy(update={"notes": titan[0].notes.replace("selective_ac_option op", "")})
    assert runs.plan(unstated)[0].recompute_modules == ()
