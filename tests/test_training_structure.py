"""Structure of the training model that published runs point to (issue: training out of sample): what FP8
sends and where it computes, FlashAttention memory, pipeline transfers, expert-parallel reductions and the
GEMM ceilings that carry the A100 fit to other GPUs."""

from __future__ import annotations

import numpy as np
import pytest

from multigpu.common.errors import InputError
from multigpu.compute import efficiency, gemm, models, stepflops, training
from multigpu.compute.layout import FP8_RECIPES, Layout
from multigpu.hardware import catalog


def _lay(**kw):
    base = dict(tp=np.array([4]), pp=np.array([2]), dp=np.array([2]), micro_batch=np.array([1]),
                interleave=np.array([1]), ep=np.array([1]), global_batch=64, seq=4096, recompute="none",
                sequence_parallel=True, dtype="bf16", zero_stage=1)
    base.update(kw)
    return Layout(**base)


def test_fp8_training_sends_bf16_activations_and_parameters():
    m, system = models.model("llama3.1-70b"), catalog.system("hgx-h100")
    bf16, fp8 = _lay(), _lay(dtype="fp8")
    for part in (training._tp_comm_s, training._pp_comm_s, training._dp_comm_s):
        assert np.allclose(np.asarray(part(m, system, bf16, None)), np.asarray(part(m, system, fp8, None)))


def test_attention_and_the_vocabulary_projection_run_at_the_16_bit_rate_under_fp8():
    """FP8 reaches the transformer layers' linear GEMMs only: FlashAttention and Megatron-Core's output layer
    (a ColumnParallelLinear, outside Transformer Engine) run in BF16."""
    m, system = models.model("llama3.1-8b"), catalog.system("hgx-h100")
    gpu = catalog.gpu(system.gpu)
    lay = _lay(tp=np.array([1]), pp=np.array([1]), dp=np.array([8]), dtype="fp8", seq=8192, global_batch=8,
               sequence_parallel=False)
    r = training.evaluate(m, system, lay)
    _, hw = models.training_flops_per_step(m, 1, 8192)
    attention = models.attention_training_flops_per_step(m, 1, 8192)
    head = 3 * 2 * m.vocab * m.hidden * 8192  # forward, backward-data, backward-weight of the output layer
    assert models.head_training_flops_per_step(m, 1, 8192) == pytest.approx(head)
    fp8_rate = training.peak_flops(gpu, "fp8") * training._fraction(m, gpu, lay, "fp8")
    bf16_rate = training.peak_flops(gpu, "bf16") * training._fraction(m, gpu, lay, "bf16")
    kernels = m.layers * training.kernel_overhead_s("none")  # the fixed time of the layers' kernels
    expected = lay.microbatches * ((hw - attention - head) / fp8_rate + (attention + head) / bf16_rate + kernels)
    assert r["compute_s"][0] == pytest.approx(expected[0])
    assert attention / hw > 0.1  # at 8K tokens attention is a real share of Llama 3.1 8B's FLOPs
    assert head / hw > 0.05  # and a 128K vocabulary is a real share of an 8B model's


def test_fp8_pays_for_quantizing_its_gemm_operands():
    """Each activation into an FP8 linear layer and each gradient out of one is read in BF16 and written in FP8
    as it is and transposed: 4 bytes an element under delayed scaling, 6 under current scaling (one more read
    for the amax). Per FLOP that is 4 x sum(d_in + d_out) / (6 x sum(d_in x d_out)) over the layer's GEMMs."""
    m = models.model("llama3.1-8b")
    shapes = stepflops.lora_matrices(m)
    per_flop = 4 * sum(n * (i + o) for i, o, n in shapes) / (6 * sum(n * i * o for i, o, n in shapes))
    assert stepflops.fp8_cast_bytes_per_flop(m, "delayed") == pytest.approx(per_flop)
    assert stepflops.fp8_cast_bytes_per_flop(m, "current") == pytest.approx(1.5 * per_flop)
    assert 1e-4 < per_flop < 1e-3  # an 8B model: a few hundred bytes per MFLOP
    system = catalog.system("hgx-h100")
    base = dict(tp=np.array([1]), pp=np.array([1]), dp=np.array([8]), seq=8192, global_batch=8,
                sequence_parallel=False)
    step = {recipe: training.evaluate(m, system, _lay(dtype="fp8", fp8_recipe=recipe, **base))["compute_s"][0]
            for recipe in FP8_RECIPES}
    assert step["current"] > step["delayed"]
    bf16 = [training.evaluate(m, system, _lay(fp8_recipe=recipe, **base))["compute_s"][0]
            for recipe in FP8_RECIPES]
    assert bf16[0] == bf16[1]  # BF16 training quantizes nothing


def test_an_moe_token_quantizes_for_its_routed_experts_only():
    m = models.model("mixtral-8x7b")
    total, active = stepflops.lora_matrices(m), stepflops.lora_matrices(m, active=True)
    assert sum(n for *_, n in active) < sum(n for *_, n in total)
    assert stepflops.fp8_cast_bytes_per_flop(m) > 0


def test_bf16_training_runs_every_gemm_at_one_rate():
    m, system = models.model("llama3.1-8b"), catalog.system("hgx-h100")
    gpu = catalog.gpu(system.gpu)
    lay = _lay(tp=np.array([1]), pp=np.array([1]), dp=np.array([8]), seq=8192, global_batch=8,
               sequence_parallel=False)
    _, hw = models.training_flops_per_step(m, 1, 8192)
    rate = training.peak_flops(gpu, "bf16") * training._fraction(m, gpu, lay, "bf16")
    kernels = m.layers * training.kernel_overhead_s("none")  # the fixed time of the layers' kernels
    assert training.evaluate(m, system, lay)["compute_s"][0] == pytest.approx(lay.microbatches[0] * (hw / rate
                                                                                                     + kernels))


def test_flash_attention_stores_no_score_matrix():
    m = models.model("llama3.1-8b")
    flash = [models.activation_bytes_per_layer(m, 1, s) for s in (4096, 8192)]
    stored = [models.activation_bytes_per_layer(m, 1, s, attention="materialised") for s in (4096, 8192)]
    assert flash[1] == pytest.approx(2 * flash[0])  # linear in the sequence: no s^2 term
    assert stored[1] > 2.5 * stored[0] and stored[0] > flash[0]
    # Korthikanti et al.'s selective recompute drops exactly the score term
    assert models.activation_bytes_per_layer(m, 1, 4096, attention="materialised", recompute="selective") < flash[0]


def test_pipeline_transfers_are_scattered_over_tp_and_overlapped_when_interleaved():
    m, system = models.model("llama3.1-70b"), catalog.system("hgx-h100")
    one, four = (training._pp_comm_s(m, system, _lay(tp=np.array([t]), dp=np.array([1]), sequence_parallel=False),
                                     None) for t in (1, 4))
    assert four[0] < one[0]  # each TP rank sends a quarter, with or without sequence parallelism
    plain = training._pp_comm_s(m, system, _lay(pp=np.array([4]), dp=np.array([1])), None)
    interleaved = training._pp_comm_s(m, system, _lay(pp=np.array([4]), dp=np.array([1]), interleave=np.array([2])),
                                      None)
    lay = _lay(pp=np.array([4]), dp=np.array([1]))
    # plain 1F1B: 2 (m + pp - 1) transfers exposed; interleaved: only the 2 v (pp - 1) of warm-up and cool-down
    assert interleaved[0] / plain[0] == pytest.approx(2 * 2 * 3 / (2 * (lay.microbatches[0] + 3)))


def test_experts_are_reduced_over_their_own_data_parallel_group():
    m, system = models.model("mixtral-8x7b"), catalog.system("dgx-b200")
    lay = _lay(tp=np.array([1]), pp=np.array([1]), dp=np.array([64]), ep=np.array([8]), sequence_parallel=False)
    experts = m.expert_params_total
    expected = (training._reduce_s(system, m.params_total - experts, 64, 1, lay, None)
                + training._reduce_s(system, experts / 8, 8, 8, lay, None))  # 8 ranks holding the same experts
    assert np.ravel(training._dp_comm_s(m, system, lay, None))[0] == pytest.approx(np.ravel(expected)[0])
    dense = models.model("llama3.1-8b")  # no experts: one reduction of every parameter over dp
    assert np.ravel(training._dp_comm_s(dense, system, lay, None))[0] == pytest.approx(
        np.ravel(training._reduce_s(system, dense.params_total, 64, 1, lay, None))[0])


def test_gemm_ceilings_are_measured_and_relative_to_the_fitted_gpu():
    assert gemm.relative_ceiling(*gemm.REFERENCE) == 1.0
    # the best row of data/gemm_throughput.csv: H100 BF16 797.51 TFLOP/s at 8192^3 (a community sweep) of the
    # catalogue's 989.4; A100 271.2 of 312 (stas00's maximum achievable matmul table)
    assert gemm.ceiling("h100-sxm", "bf16") == pytest.approx(797.51 / 989.4, rel=1e-6)
    assert gemm.relative_ceiling("h100-sxm", "bf16") == pytest.approx((797.51 / 989.4) / (271.2 / 312), rel=1e-6)
    assert gemm.ceiling("h100-sxm", "fp16") == gemm.ceiling("h100-sxm", "bf16")
    # a GPU with no row borrows the mean of its architecture's measured GPUs
    gpus = catalog.gpus()
    hopper = [v for (g, d), v in gemm._ceilings().items() if d == "bf16" and gpus[g].arch == "hopper"]
    assert ("h800-sxm", "bf16") not in gemm._ceilings()
    assert gemm.ceiling("h800-sxm", "bf16") == pytest.approx(sum(hopper) / len(hopper))
    fast = efficiency.achievable_fraction(989e12, 2048, 8192, 3.35e12, ceiling_scale=1.0)
    slow = efficiency.achievable_fraction(989e12, 2048, 8192, 3.35e12, ceiling_scale=0.9)
    assert slow < fast


def test_rack_scale_domains_can_be_rented_in_parts():
    """NVL72 racks are rented as trays, partial racks and several racks; an HGX node beyond one is rented
    whole (128 GPUs on GB200 NVL72: 2 racks of 64; 12 GPUs of 8-GPU nodes: refused)."""
    from multigpu.common.errors import InputError

    rack, hgx = catalog.system("gb200-nvl72"), catalog.system("hgx-h100")
    assert [training.nodes_spanned(rack, g) for g in (4, 72, 128, 144, 256)] == [1, 1, 2, 2, 4]
    assert list(training.placement(rack, np.array([128, 32]), np.array([1, 4]))) == [2, 2]
    assert training.nodes_spanned(hgx, 16) == 2
    with pytest.raises(InputError, match="whole"):
        training.nodes_spanned(hgx, 12)
    r = training.step("llama3.1-8b", "gb200-nvl72", 128, 1, 1, 256, 1, seq=4096)
    assert r.step_time_s > 0
    tray = training.step("llama3.1-8b", "gb200-nvl72", 4, 1, 1, 64, 1, seq=4096)
    assert tray.dp == 4


def test_context_parallelism_splits_the_sequence():
    """--cp N: each sequence over N GPUs (GPUs = tp x cp x pp x dp); each rank computes and stores its 1/N of
    the tokens, gradients reduce over dp x cp, and the ring passes of keys and values hide behind attention
    unless they are slower than it."""
    from multigpu.common.errors import InputError

    one = training.step("llama3.1-8b", "hgx-h100", 8, 1, 1, 64, 1, seq=16384, dtype="bf16")
    two = training.step("llama3.1-8b", "hgx-h100", 8, 1, 1, 64, 1, seq=16384, dtype="bf16", cp=2)
    assert (one.dp, one.cp, two.dp, two.cp) == (8, 1, 4, 2)
    assert two.memory_per_gpu_GB < one.memory_per_gpu_GB  # half the activations per GPU
    assert two.exposed_comm_s.cp >= 0 and two.to_dict()["cp"] == 2
    m, system = models.model("llama3.1-8b"), catalog.system("hgx-h100")
    lay = _lay(tp=np.array([1]), pp=np.array([1]), dp=np.array([4]), cp=2, seq=16384, sequence_parallel=False)
    attention = np.array([1e-6])  # a near-instant attention cannot hide the ring passes
    assert training._cp_comm_s(m, system, lay, None, attention)[0] > 0
    assert training._cp_comm_s(m, system, lay, None, np.array([1e3]))[0] == 0  # a long one hides them
    with pytest.raises(InputError, match="2 x cp"):
        training.step("llama3.1-8b", "hgx-h100", 8, 1, 1, 64, 1, seq=1000, cp=8)
    with pytest.raises(InputError, match="tp x pp x cp"):
        training.step("llama3.1-8b", "hgx-h100", 8, 1, 1, 64, 1, seq=4096, cp=3)


def test_uneven_pipeline_stages_are_paced_by_the_busiest():
    """126 layers on 16 stages: 8 layers on the busiest stage instead of 7.875; with interleaving, every chunk
    rounds up (Llama 3.1 405B, pp 8, 8 virtual stages: 2 layers per chunk, 16 per stage)."""
    m = models.model("llama3.1-405b")
    lay = _lay(pp=np.array([16, 8, 7]), interleave=np.array([1, 8, 2]), tp=np.array([8, 8, 8]), dp=np.array([1, 1, 1]),
               micro_batch=np.array([1, 1, 1]), ep=np.array([1, 1, 1]))
    assert list(training.stage_layers(m, lay)) == [8, 16, 18]
    even = training.step("llama3.1-70b", "hgx-h100", 64, 8, 8, 64, 1, seq=4096, sequence_parallel=True)
    assert even.step_time_s > 0  # 80 layers on 8 stages: even, as before
    uneven = training.step("llama3.1-405b", "hgx-h100", 1024, 8, 16, 512, 1, seq=8192, sequence_parallel=True)
    assert uneven.step_time_s > 0


def test_zero3_gathers_hide_behind_the_compute_of_their_pass():
    """FSDP prefetches each layer's parameters during the previous layer's compute (issue: training out of
    sample; llm-foundry's MPT runs): a ZeRO-3 gather shows only where it outlasts its pass, so with enough
    compute ZeRO-3 costs what ZeRO-1 costs, and with none every gather of every pass is exposed. After the
    optimizer step a ZeRO-3 rank keeps its updated shard (PyTorch FSDP's ``FULL_SHARD``: parameters are gathered
    only in the passes), so it does not gather the whole model as the distributed optimizer (ZeRO 1) does."""
    m, system = models.model("llama3.1-8b"), catalog.system("hgx-h100")
    lay = _lay(tp=np.array([1]), pp=np.array([1]), dp=np.array([16]), sequence_parallel=False, zero_stage=3)
    zero1 = _lay(tp=np.array([1]), pp=np.array([1]), dp=np.array([16]), sequence_parallel=False)
    gather = np.ravel(training._gather_s(m, system, lay, None))[0]
    assert gather > 0 and np.ravel(training._gather_s(m, system, zero1, None))[0] == 0
    plenty, none = np.array([1e3]), np.array([0.0])
    assert training._exposed_dp_s(m, system, lay, None, plenty, 2 / 3)[0] == pytest.approx(
        training._exposed_dp_s(m, system, zero1, None, plenty, 2 / 3)[0])
    bare = training._exposed_dp_s(m, system, lay, None, none, 2 / 3)[0]
    grads, params = (np.ravel(x)[0] for x in training._dp_parts_s(m, system, lay, None))
    assert params == 0  # no gather of the updated weights after the step: the next pass gathers them, layer by layer
    assert bare == pytest.approx(grads + 2 * lay.microbatches[0] * gather)
    some = np.array([gather])  # the forward pass (a third) hides a third of a gather, the backward two thirds
    assert training._exposed_dp_s(m, system, lay, None, some, 2 / 3)[0] == pytest.approx(
        max(0.0, grads - 2 / 3 * gather) + lay.microbatches[0] * (gather * 2 / 3 + gather / 3))


def test_moe_dispatch_sends_each_token_copy_once():
    """An all-to-all's size is a rank's whole send buffer (nccl-tests' convention, multigpu.comm.collectives):
    a rank dispatches each of its tokens to its top-k experts once, b s / tp x k x h elements (DeepSeek-V3
    report, section 3.2; Megatron-Core's token dispatcher), however many ranks the experts are spread over."""
    m, system = models.model("mixtral-8x7b"), catalog.system("dgx-b200")
    lay = _lay(tp=np.array([1]), pp=np.array([1]), dp=np.array([8]), ep=np.array([8]), sequence_parallel=False)
    nbytes = 1 * 4096 * m.experts_per_token * m.hidden * 2
    one = training._times_s("alltoall", system, 8, training.placement(system, 8, 1), nbytes, None)
    assert np.ravel(training._ep_comm_s(m, system, lay, None))[0] == pytest.approx(
        4 * np.ravel(one)[0] * m.moe_layers)


def test_whole_experts_spread_over_tensor_and_data_parallel_ranks():
    """Expert tensor parallelism 1 (DeepSeek-V3 on NeMo: TP 2, DP 32, EP 64, ETP 1): the 64 expert ranks are
    the 2 x 32 tensor- and data-parallel ranks of a stage; each holds whole experts, 1/64 of them."""
    m = models.model("deepseek-v3")
    r = training.step("deepseek-v3", "hgx-h100", 1024, 2, 16, 8192, 1, seq=4096, ep=64, etp=1,
                      sequence_parallel=True)
    assert r.fits and r.ep == 64
    with pytest.raises(InputError):  # experts split like the dense layers need ep to divide dp
        training.step("deepseek-v3", "hgx-h100", 1024, 2, 16, 8192, 1, seq=4096, ep=64, sequence_parallel=True)
    lay = _lay(tp=np.array([2]), pp=np.array([16]), dp=np.array([32]), ep=np.array([64]), etp=1)
    params, ranks, stride = training._expert_group(m.expert_params_total, lay)
    assert params[0] == pytest.approx(m.expert_params_total / (64 * 16)) and ranks[0] == 1 and stride[0] == 64


def test_the_parameter_gather_hides_behind_the_next_forward_pass():
    """Megatron-Core's distributed optimizer overlaps its gradient reduce-scatter with the last backward pass
    and its parameter all-gather with the next step's first forward pass: each shows only what outlasts it."""
    m, system = models.model("llama3.1-70b"), catalog.system("hgx-h100")
    lay = _lay(tp=np.array([8]), pp=np.array([1]), dp=np.array([16]))
    grads, params = (np.ravel(x)[0] for x in training._dp_parts_s(m, system, lay, None))
    assert grads > params > 0  # FP32 gradients, BF16 parameters
    compute = np.array([3 * params])  # its forward third hides the whole gather, its backward 2x its time
    assert training._exposed_dp_s(m, system, lay, None, compute, 2 / 3)[0] == pytest.approx(
        max(0.0, grads - 2 * params), abs=1e-12)
    assert training._exposed_dp_s(m, system, lay, None, np.array([0.0]), 2 / 3)[0] == pytest.approx(grads + params)


def test_fp8_dispatch_is_named_and_halves_two_of_the_four_all_to_alls():
    # DeepSeek-V3 Technical Report (arXiv:2412.19437) section 3.3.3: activations are quantized to FP8 before
    # dispatch, and activation gradients before the down-projections; the combine traffic, forward and
    # backward, stays BF16. With the all-to-alls bandwidth-bound (8 x 4096 tokens x 8 copies x 7168 over 64
    # GPUs), the MoE traffic time falls to (2 x 1.03 + 2 x 2) / (4 x 2) of BF16's
    m, system = models.model("deepseek-v3"), catalog.system("hgx-h100")
    lay = dict(tp=np.array([1]), pp=np.array([1]), dp=np.array([64]), micro_batch=np.array([8]),
               interleave=np.array([1]), ep=np.array([64]), etp=1)
    bf16 = training._ep_comm_s(m, system, _lay(**lay), None)[0]
    fp8 = training._ep_comm_s(m, system, _lay(ep_dispatch="fp8", **lay), None)[0]
    assert fp8 / bf16 == pytest.approx((2 * training.FP8_DISPATCH_BYTES + 2 * 2) / 8, rel=0.05)
    dense = models.model("llama3.1-8b")  # no experts, no all-to-all, whatever the dispatch precision
    assert training._ep_comm_s(dense, system, _lay(ep_dispatch="fp8"), None)[0] == 0
    step = training.step("mixtral-8x7b", "hgx-h100", 64, 1, 1, 256, 2, seq=4096, ep=8, dtype="fp8",
                         ep_dispatch="fp8")
    assert step.ep_dispatch == "fp8" and step.to_dict()["ep_dispatch"] == "fp8"
    with pytest.raises(InputError, match="dispatch precision"):
        training.step("mixtral-8x7b", "hgx-h100", 64, 1, 1, 256, 2, ep=8, ep_dispatch="fp4")


def test_sequence_parallelism_splits_the_norms_and_never_slows_the_compute():
    """Under sequence parallelism each tensor-parallel rank runs the norms, dropouts and residual additions on its
    share of the sequence (Korthikanti et al. 2022, section 4.2.2): a layout's compute is shorter with it than
    without, by more at TP 8 than at TP 2, and unchanged at TP 1."""
    m, system = models.model("llama3.1-70b"), catalog.system("hgx-h100")
    saved = {}
    for tp in (1, 2, 8):
        on, off = (training.evaluate(m, system, _lay(tp=np.array([tp]), pp=np.array([1]), dp=np.array([8 // tp]),
                                                      sequence_parallel=sp))["compute_s"].item()
                   for sp in (True, False))
        saved[tp] = 1 - on / off
    assert saved[1] == pytest.approx(0.0, abs=1e-12)
    assert 0 < saved[2] < saved[8] < efficiency.constants().sp_traffic_share


def test_a_larger_micro_batch_saves_at_least_the_kernels_it_no_longer_launches():
    """Each pass of a layer pays the fixed time of its kernels (``decode_layer_overhead_s``, fitted on decode
    steps): the forward pass once, the backward twice, a full recomputation once more. Halving the micro-batches
    of a step saves at least that time for every micro-batch dropped (the GEMMs also grow, never slower)."""
    m, system = models.model("llama3.1-8b"), catalog.system("hgx-h100")
    overhead = efficiency.constants().decode_layer_overhead_s
    for recompute, passes in (("none", 3), ("full", 4)):
        one, two = (training.evaluate(m, system, _lay(tp=np.array([1]), pp=np.array([1]), dp=np.array([8]),
                                                       micro_batch=np.array([mb]), recompute=recompute))
                    for mb in (1, 2))
        dropped = 64 // 8 - 64 // 16  # micro-batches per GPU: 8 at micro-batch 1, 4 at 2
        assert one["compute_s"].item() - two["compute_s"].item() >= dropped * m.layers * passes * overhead * 0.999
