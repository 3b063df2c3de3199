"""An offline benchmark's finite run: a fixed number of requests of one length, all queued at once.

Benchmarks of maximum throughput (``trtllm-bench throughput``, TensorRT-LLM's ``gptManagerBenchmark``) queue a
set number of requests at once and divide the output tokens by the time the last one took. With every request
of one input and one output length, the engine admits as many as it holds (``batch``), they finish together,
and the next ones take their places: the run is ``ceil(requests / batch)`` waves, the last one holding what is
left. :func:`multigpu.compute.inference.run` gives the steady state, one cycle of ``batch`` prefills and
``output_tokens`` decode steps (``cycle_s``); here a full wave takes that cycle at ``batch`` and the last wave
the cycle at its own size. A decode step at a small batch costs nearly what one at a large batch does (the
weights are read either way), so a last wave that is partly filled lowers the run's throughput below the
steady state's: a run of 1500 requests with 1393 in flight is one full wave and one of 107.

The waves are an approximation: an engine that admits prompts a pass at a time (``max_num_tokens``) starts the
requests of one wave a few passes apart, and the next wave's requests enter as the first wave's leave. Times in
seconds, throughput in output tokens per second per GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from multigpu.common.errors import InputError
from multigpu.compute import inference


@dataclass(frozen=True)
class OfflineRun:
    """The waves of one offline benchmark run and what they deliver."""

    requests: int  #: requests the benchmark queued
    batch: int  #: queries in flight in a full wave
    waves: int  #: ceil(requests / batch)
    last_wave: int  #: queries of the last wave (``batch`` where it is full)
    run_s: float  #: seconds from the first request's admission to the last one's last token
    tokens_per_s_per_gpu: float  #: output tokens of all requests over ``run_s``, per GPU
    steady_tokens_per_s_per_gpu: float  #: the steady state's (:func:`multigpu.compute.inference.run`)


def run(requests: int, batch: int, **run_args: Any) -> OfflineRun:
    """The offline run of ``requests`` requests at most ``batch`` at a time (fewer where there are fewer
    requests); ``run_args``: the other arguments of :func:`multigpu.compute.inference.run` (model, system,
    layout, lengths, precision). Raises :class:`InputError` for a count below 1."""
    if requests < 1 or batch < 1:
        raise InputError("requests and batch must be at least 1")
    batch = min(batch, requests)
    full_waves, rest = divmod(requests, batch)
    full = inference.run(batch=batch, **run_args)
    run_s = full_waves * full.cycle_s + (inference.run(batch=rest, **run_args).cycle_s if rest else 0.0)
    # the steady state delivers batch x output over one cycle; the run delivers requests x output over run_s
    per_gpu = full.tokens_per_s_per_gpu * requests * full.cycle_s / (batch * run_s)
    return OfflineRun(requests, batch, full_waves + (1 if rest else 0), rest or batch, float(run_s),
                      float(per_gpu), float(full.tokens_per_s_per_gpu))
