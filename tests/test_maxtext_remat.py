"""MaxText's named remat policies (issue 46, item 4): each keeps the outputs of the GEMMs it names and recomputes
the rest of the layer from its input (AI-Hypercomputer/maxtext src/MaxText/layers/decoders.py at 02bc28ce534d,
Decoder.minimal_policy and get_remat_policy), priced through the model's layer parts."""

from __future__ import annotations

import json

import pytest

from multigpu.cli.app import main
from multigpu.common.errors import InputError
from multigpu.compute import models, training
from multigpu.compute.shapes import MAXTEXT_POLICIES, MAXTEXT_SAVES

MODEL = "llama3.1-8b"
JOB = dict(model_id=MODEL, system_id="hgx-h100", gpus=8, tp=1, pp=1, global_batch=128, micro_batch=2, seq=8192)


def _policy(name: str) -> dict:
    recompute, parts = models.maxtext_recompute(MODEL, name)
    return dict(recompute=recompute, modules=parts)


def _stored(name: str | None) -> float:
    """Activation bytes one layer stores for a 1 x 1 micro-batch without tensor parallelism."""
    kw = _policy(name) if name else {}
    return float(models.activation_bytes_per_layer(MODEL, 1, 1, **kw))


def test_every_policy_of_the_source_but_the_offloading_ones_maps():
    assert set(MAXTEXT_POLICIES) == {"minimal_with_context", "minimal", "save_dot_with_context_except_mlp",
                                     "save_dot_except_mlpwi", "save_dot_except_mlp", "save_qkv_proj",
                                     "save_out_proj", "full"}
    assert models.maxtext_recompute(MODEL, "full") == ("full", ())
    with pytest.raises(InputError, match="remat policy"):
        models.maxtext_recompute(MODEL, "minimal_offloaded")


def test_the_parts_a_policy_keeps_are_not_recomputed():
    for name, saves in MAXTEXT_SAVES.items():
        recompute, parts = models.maxtext_recompute(MODEL, name)
        assert recompute == "selective" and not saves & set(parts), name
        assert {"layernorm", "mlp_act"} <= set(parts)  # never named, so always recomputed
        assert ("core_attn" in parts) == ("context" not in saves)  # the attention output comes from its core


def test_each_dropped_tensor_is_its_size_per_token():
    """Llama 3.1 8B (h 4096, 32 heads of 128, 8 KV heads, SwiGLU f 14336, no dropout), 16-bit: minimal_with_context
    drops the norms' outputs (4h) and the SwiGLU product (2f); minimal also the attention output (2 x 4096);
    save_dot_except_mlp also the gate and up outputs (4f); save_qkv_proj also the second norm's residual (2h)."""
    h, f, v = 4096, 14336, 32 * 128
    none = _stored(None)
    assert none - _stored("minimal_with_context") == pytest.approx(4 * h + 2 * f)
    assert _stored("minimal_with_context") - _stored("minimal") == pytest.approx(2 * v)
    assert _stored("minimal") - _stored("save_dot_except_mlp") == pytest.approx(4 * f)
    assert _stored("save_dot_except_mlp") - _stored("save_qkv_proj") == pytest.approx(2 * h)
    assert _stored("save_dot_except_mlp") == _stored("save_dot_except_mlpwi")
    qkv = 2 * (32 * 128 + 2 * 8 * 128)
    assert _stored("save_dot_except_mlp") - _stored("save_out_proj") == pytest.approx(qkv)
    full = float(models.activation_bytes_per_layer(MODEL, 1, 1, recompute="full"))  # the layer's input alone
    assert full == 2 * h < _stored("save_out_proj")


def test_recomputed_gemms_are_their_forward_flops():
    """Hardware FLOPs over model FLOPs, per token: minimal_with_context reruns no GEMM; save_dot_with_context_except_mlp
    reruns the gate and up projections (2 x 2hf per layer); save_out_proj also the attention core and the Q, K and
    V projections."""
    m = models.model(MODEL)

    def extra(name):  # one sequence of one token
        model_flops, hardware = models.training_flops_per_step(MODEL, 1, 1, **_policy(name))
        return float(hardware - model_flops)

    assert extra("minimal_with_context") == 0
    assert extra("save_dot_with_context_except_mlp") == pytest.approx(2 * m.layers * 2 * m.hidden * m.ffn_hidden)
    scores = extra("minimal")
    qkv = 2 * m.layers * m.hidden * (32 * 128 + 2 * 8 * 128)
    assert extra("save_out_proj") == pytest.approx(scores + qkv + extra("save_dot_with_context_except_mlp"))


def test_less_kept_is_never_faster_and_never_more_memory():
    order = ("minimal_with_context", "minimal", "save_dot_except_mlp", "save_qkv_proj", "full")
    steps = [training.step(**JOB)] + [training.step(**JOB, **{"recompute": r, "recompute_modules": p})
                                      for r, p in (models.maxtext_recompute(MODEL, name) for name in order)]
    for kept, less in zip(steps, steps[1:]):
        assert less.step_time_s >= kept.step_time_s and less.memory_per_gpu_GB <= kept.memory_per_gpu_GB


def test_the_cli_takes_a_policy_and_refuses_what_it_cannot_price(capsys):
    args = ["train", "--model", MODEL, "--system", "hgx-h100", "--gpus", "8", "--tp", "1", "--pp", "1",
            "--global-batch", "128", "--micro-batch", "2", "--seq", "8192", "--format", "json"]
    assert main(args + ["--remat-policy", "minimal"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["recompute"] == "selective" and set(out["recompute_modules"]) == {"core_attn", "layernorm",
                                                                                   "mlp_act", "context"}
    for bad in (["--remat-policy", "minimal", "--recompute", "full"],
                ["--remat-policy", "minimal", "--model", "mixtral-8x7b"]):
        assert main(args + bad) == 2
        err = capsys.readouterr().err
        assert err.startswith("error:") and err.count("\n") == 1
