"""Serving under load: requests that arrive one by one, served by in-flight (continuous) batching.

A small discrete-event simulation of an iteration-level scheduler, as TensorRT-LLM's in-flight batcher and
vLLM's scheduler run one (TensorRT-LLM's performance tuning guide, "Tuning Max Batch Size and Max Num Tokens",
https://nvidia.github.io/TensorRT-LLM/performance/performance-tuning-guide/tuning-max-batch-size-and-max-num-tokens.html):

- **Arrivals.** Open loop: requests arrive at ``rate`` per second as a Poisson process, as a load generator
  sends them (MLPerf's Server scenario, vLLM's ``benchmark_serving --request-rate``). Closed loop:
  ``concurrency`` users each send their next request when their answer ends (fixed-concurrency benchmarks);
  their first requests are spread at random over one cycle of the batch, so that they do not run in step.
- **Admission.** Waiting requests are taken first come, first served. At the start of each iteration the
  scheduler admits them while the batch holds fewer than ``max_batch`` queries and the iteration's tokens
  (one per decoding query, the whole prompt per admitted request) stay within ``max_num_tokens``
  (by default :data:`DEFAULT_MAX_NUM_TOKENS`, or a whole prompt beside a full batch where that is more, as an
  engine built for such prompts holds; prompts are not chunked).
- **An iteration** runs the admitted prompts' prefills in one pass (their GEMMs together, the layers' fixed
  time once: the inference model's prefill pass, :func:`multigpu.compute.inference.run`) and one decode step
  of the queries already decoding, ``decode_step_s`` at their number: the sum of the two. An admitted
  request's first token comes at the end of that iteration; it then gets one token per iteration until its
  output is done.
- **What a user measures.** TTFT = first token - arrival: the wait for admission and the iteration that ran
  the prefill. TPOT = (last token - first token) / (output tokens - 1): the decode steps at the batch the
  request met, and the other requests' prefills run between its tokens.

Every request's TTFT and TPOT are kept. The result gives their mean, median (p50), p90 and p99 over the
requests issued in the middle of the run (:data:`EDGE` of them at each end are left out: they see the
system filling or draining). Every request has the same input and output length. The run is deterministic
for a ``seed`` (Python's Mersenne Twister; no linear algebra). Times in seconds.

The step times are the inference model's (:func:`multigpu.compute.inference.run`) at every batch size up
to the largest that fits the GPU's memory: its assumptions hold (the KV cache read at the mean context
length, one decode step's fixed kernel time). Pipeline parallelism is not simulated (``pp`` 1). With expert
parallelism (``ep`` > 1, attention in ``ep / tp`` data-parallel groups, ``infer --ep``) each group has its
own scheduler and an equal share of the requests, as DP-attention servers balance them; one group is
simulated, and its decode step is the model's at its batch times the number of groups (every group holding
as many queries as the one simulated).
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from multigpu.comm.calibration import Calibration
from multigpu.common.errors import InputError
from multigpu.compute import inference

#: Requests simulated by default.
DEFAULT_REQUESTS = 2000
#: Tokens one iteration may hold (decoding queries plus admitted prompts): TensorRT-LLM's engine default
#: ``max_num_tokens`` (:data:`multigpu.compute.inference.DEFAULT_MAX_NUM_TOKENS`).
DEFAULT_MAX_NUM_TOKENS = inference.DEFAULT_MAX_NUM_TOKENS
#: Share of the requests at each end of a run whose latencies are not counted.
EDGE = 0.1
#: Percentiles reported.
PERCENTILES = (50, 90, 99)


@dataclass(frozen=True)
class Engine:
    """The step times of one deployment, as the scheduler sees them (seconds)."""

    prefill_s: float  #: one prompt's prefill (the single-request TTFT of the inference model)
    decode_step_s: tuple[float, ...]  #: one decode step of n queries at index n - 1, n = 1 .. max_batch
    input_tokens: int
    output_tokens: int
    gpus: int  #: GPUs of one scheduler's group (tp)
    max_num_tokens: int = DEFAULT_MAX_NUM_TOKENS
    groups: int = 1  #: data-parallel attention groups, each with its scheduler (ep / tp; 1 without ep)
    #: requests arrive with their KV cache (a disaggregated decode pool): the iteration that admits them runs no
    #: prefill and decodes them with the others, one decode step of them all
    prefilled: bool = False
    #: one prefill pass of n admitted prompts at index n - 1 (empty: each prompt a pass of its own)
    prefill_pass_s: tuple[float, ...] = ()

    def prefills_s(self, prompts: int) -> float:
        """Seconds to prefill ``prompts`` admitted prompts: one pass (:attr:`prefill_pass_s`) where it holds them,
        else full passes and the rest."""
        if not self.prefill_pass_s:
            return prompts * self.prefill_s
        full, rest = divmod(prompts, len(self.prefill_pass_s))
        return full * self.prefill_pass_s[-1] + (self.prefill_pass_s[rest - 1] if rest else 0.0)

    @property
    def max_batch(self) -> int:
        """The most queries in one group's iteration: the largest batch that fits memory, or the one asked for."""
        return len(self.decode_step_s)

    def capacity_per_s(self) -> float:
        """The most requests per second the deployment completes: its groups times the best over batch sizes b
        of b / (prefills of b + (output_tokens - 1) x decode_step_s(b)), each request costing its prefill (in
        passes of as many prompts as one holds, :meth:`prefills_s`) and its share of the decode steps after its
        first token."""
        b = np.arange(1, self.max_batch + 1, dtype=float)
        steps = np.asarray(self.decode_step_s) * (self.output_tokens - 1)
        prefills = np.array([self.prefills_s(int(n)) for n in b])
        return self.groups * float(np.max(b / (prefills + steps)))


def engine(model_id: str, system_id: str, tp: int, input_tokens: int, output_tokens: int, max_batch: int,
           dtype: str = "bf16", cal: Calibration | None = None, stack_name: str = inference.DEFAULT_STACK,
           max_num_tokens: int | None = None, pp: int = 1, ep: int = 1, release: str | None = None) -> Engine:
    """The :class:`Engine` of serving ``model_id`` on ``tp`` GPUs of ``system_id`` (with ``ep`` > 1, its experts
    over ``ep`` GPUs and ``ep / tp`` groups), the batch of the whole deployment capped at ``max_batch`` and at
    the largest whose weights and KV cache fit memory. ``max_num_tokens`` None: :data:`DEFAULT_MAX_NUM_TOKENS`,
    or ``input_tokens`` plus a group's largest batch where that is more; ``release``: the stack's release, as
    :func:`multigpu.compute.inference.run` takes it. Raises :class:`InputError` where ``pp`` is
    not 1,
    ``max_batch`` is not a whole number of queries per group, a prompt is longer than ``max_num_tokens``, or
    one query per group does not fit."""
    if pp != 1:
        raise InputError("serving under load is simulated with one pipeline stage: pp must be 1")
    groups = ep // tp if ep > 1 else 1
    if max_batch % groups:
        raise InputError(f"a batch of {max_batch} is not a whole number of queries for each of the {groups} "
                         "data-parallel attention groups")
    if max_num_tokens is None:
        max_num_tokens = max(DEFAULT_MAX_NUM_TOKENS, input_tokens + max_batch // groups)
    if input_tokens > max_num_tokens:
        raise InputError(f"a prompt of {input_tokens} tokens is longer than the {max_num_tokens} tokens an "
                         "iteration holds (max_num_tokens); prompts are not chunked")
    per_group = np.arange(1, max_batch // groups + 1)
    sweep = inference.run(model_id, system_id, tp, groups * per_group, input_tokens, output_tokens,
                          dtype=dtype, cal=cal, stack_name=stack_name, ep=ep, release=release)
    fits = np.asarray(sweep.fits, dtype=bool)
    if not fits[0]:
        raise InputError(f"{model_id} does not fit {max(tp, ep)} GPUs of {system_id} with one query per group")
    largest = int(np.argmin(fits)) if not fits.all() else per_group.size
    decode = tuple(float(x) for x in np.asarray(sweep.decode_step_s)[:largest])
    # the most prompts one iteration holds beside no decoding query, and each such pass's time
    prompts = np.arange(1, max(1, min(max_num_tokens // input_tokens, largest)) + 1)
    passes = inference.prefill_passes_s(model_id, system_id, tp, input_tokens, prompts, dtype=dtype, cal=cal,
                                        stack_name=stack_name, ep=ep)
    pass_s = tuple(float(x) for x in passes)
    return Engine(float(np.asarray(sweep.ttft_s)[0]), decode, input_tokens, output_tokens, tp, max_num_tokens,
                  groups, prefill_pass_s=pass_s)


@dataclass(frozen=True)
class LoadRun:
    """TTFT and TPOT as the users of a loaded deployment measure them (seconds), from :func:`simulate`."""

    mode: str  #: ``open`` (Poisson arrivals at ``rate_per_s``) or ``closed`` (``concurrency`` users)
    rate_per_s: float  #: requests per second to the deployment: offered (open loop) or completed (closed loop)
    concurrency: int  #: users of a closed loop; 0 in an open loop
    requests: int  #: requests simulated (in one data-parallel group where there are several)
    measured: int  #: requests whose latencies are counted (the middle of the run)
    seed: int
    max_batch: int  #: the most queries the deployment held at once (the batch cap, or memory's)
    capacity_per_s: float  #: the most requests per second the deployment completes (:meth:`Engine.capacity_per_s`)
    utilization: float  #: rate_per_s / capacity_per_s
    batch_mean: float  #: queries in the deployment's batch, averaged over time
    tokens_per_s_per_gpu: float  #: output tokens over the whole run / its duration / GPUs
    ttft_mean_s: float
    ttft_p50_s: float
    ttft_p90_s: float
    ttft_p99_s: float
    tpot_mean_s: float
    tpot_p50_s: float
    tpot_p90_s: float
    tpot_p99_s: float

    def to_dict(self, prefix: str = "") -> dict[str, Any]:
        """The run as a flat dict, each name with ``prefix``."""
        return {f"{prefix}{k}": v for k, v in self.__dict__.items()}


#: Runs kept by :func:`simulate`'s memo: a run is a function of its arguments (the seed fixes the arrivals), and
#: a rate search and the book's two editions ask for the same runs again.
MEMO_RUNS = 4096


@lru_cache(maxsize=MEMO_RUNS)
def simulate(eng: Engine, rate: float | None = None, concurrency: int | None = None,
             requests: int = DEFAULT_REQUESTS, seed: int = 0) -> LoadRun:
    """Serve ``requests`` requests on ``eng``: arriving at ``rate`` per second (open loop) or from
    ``concurrency`` users (closed loop), exactly one of the two, for the whole deployment (each data-parallel
    group gets an equal share). Raises :class:`InputError` for an open-loop rate at or above
    :meth:`Engine.capacity_per_s` (the queue would grow without end), users that do not split evenly over the
    groups, or too few requests."""
    if (rate is None) == (concurrency is None):
        raise InputError("give a request rate or a concurrency, not both")
    if concurrency is not None and concurrency % eng.groups:
        raise InputError(f"{concurrency} users do not split evenly over {eng.groups} data-parallel attention groups")
    if eng.input_tokens > eng.max_num_tokens:
        raise InputError(f"a prompt of {eng.input_tokens} tokens is longer than the {eng.max_num_tokens} tokens an "
                         "iteration holds (max_num_tokens); prompts are not chunked")
    if requests < 20:
        raise InputError(f"{requests} requests are too few to measure latencies under load; use 20 or more")
    capacity = eng.capacity_per_s()
    if rate is not None and rate >= capacity:
        raise InputError(f"{rate:g} requests/s is at or above the {capacity:.3g} requests/s this deployment can "
                         "serve: the queue would grow without end")
    rng = random.Random(seed)
    pending: list[tuple[float, int]] = []  # (arrival time, request id): the requests not yet arrived
    if rate is not None:
        t = 0.0
        for rid in range(requests):
            t += rng.expovariate(rate / eng.groups)  # one group's share
            pending.append((t, rid))
    else:
        users = min(concurrency // eng.groups, requests)
        cycle = users * eng.prefill_s + (eng.output_tokens - 1) * eng.decode_step_s[min(users, eng.max_batch) - 1]
        pending = sorted((rng.uniform(0.0, cycle), rid) for rid in range(users))
        pending = [(when, rid) for rid, (when, _) in enumerate(pending)]
    trace = serve_trace(eng, pending, requests, closed=rate is None)
    return _result(eng, trace, rate, concurrency or 0, requests, seed, capacity)


#: Halvings of :func:`max_rate`'s bisection: the rate to 2**-14 of the capacity.
RATE_STEPS = 14


def max_rate(eng: Engine, ttft_p99_s: float, tpot_p99_s: float = math.inf, requests: int = DEFAULT_REQUESTS,
             seed: int = 0) -> float:
    """The highest request rate (per second, to the deployment) at which the 99th percentiles of TTFT and of
    the time per output token stay within ``ttft_p99_s`` and ``tpot_p99_s`` (seconds) (:func:`bisect_rate`)."""
    return bisect_rate(eng.capacity_per_s(), lambda rate: simulate(eng, rate=rate, requests=requests, seed=seed),
                       ttft_p99_s, tpot_p99_s)


def bisect_rate(capacity: float, run_at: Callable[[float], LoadRun], ttft_p99_s: float,
                tpot_p99_s: float = math.inf) -> float:
    """The highest rate below ``capacity`` (requests per second) whose run (``run_at(rate)``) keeps both 99th
    percentiles within their limits (seconds): a bisection between 0 and the capacity, :data:`RATE_STEPS`
    halvings; 0.0 where even the lightest load tried breaks them."""
    low, high = 0.0, capacity
    for _ in range(RATE_STEPS):
        rate = (low + high) / 2
        run = run_at(rate)
        if run.ttft_p99_s <= ttft_p99_s and run.tpot_p99_s <= tpot_p99_s:
            low = rate
        else:
            high = rate
    return low


@dataclass
class Trace:
    """What :func:`serve_trace` records: per request its arrival, first and last token (s), and the busy area."""

    arrival: list[float]
    first: list[float]
    last: list[float]
    batch_time: float = 0.0  #: the integral of queries in the batch over time
    end: float = 0.0  #: when the last request finished


def serve_trace(eng: Engine, pending: list[tuple[float, int]], requests: int, closed: bool) -> Trace:
    """Run one scheduler over ``pending`` (arrival time, request id 0..``requests`` - 1) until ``requests``
    requests are done: each request's arrival, first and last token. In a closed loop each finished request's
    user sends the next one at once, until ``requests`` have been sent.

    Each pass of the loop is one iteration that admits requests (as many as the batch and the iteration's
    tokens hold: one per decoding query, the whole prompt per admitted request), or a run of decode-only
    iterations up to the next event: a request's last token, or the iteration during which the next request
    arrives (it is admitted after it). The loop runs some ten thousand times per call, so it reads the
    engine from local names."""
    nan = float("nan")
    trace = Trace([nan] * requests, [nan] * requests, [nan] * requests)
    arrival, first, last = trace.arrival, trace.first, trace.last
    for when, rid in pending:
        arrival[rid] = when
    heapq.heapify(pending)
    decode, out_steps, prefilled = eng.decode_step_s, eng.output_tokens - 1, eng.prefilled
    max_batch, max_tokens, prompt = eng.max_batch, eng.max_num_tokens, eng.input_tokens
    prefills: dict[int, float] = {}  # prefills_s by prompts admitted, as they come
    heappush, heappop, ceil = heapq.heappush, heapq.heappop, math.ceil
    issued, done, t, it, busy = len(pending), 0, 0.0, 0, 0.0
    waiting: deque[int] = deque()
    running: list[tuple[int, int]] = []  # (iteration of its last token, request id)
    while done < requests:
        while pending and pending[0][0] <= t:
            waiting.append(heappop(pending)[1])
        n = len(running)
        admit = max(0, min(len(waiting), max_batch - n, (max_tokens - n) // prompt)) if waiting else 0
        if admit == 0 and n == 0:
            t = pending[0][0]  # idle until the next arrival
            continue
        if admit:
            if prefilled:
                dt = decode[n + admit - 1]
            else:
                if admit not in prefills:
                    prefills[admit] = eng.prefills_s(admit)
                dt = prefills[admit] + (decode[n - 1] if n else 0.0)
            steps = 1
        else:
            dt = decode[n - 1]
            to_finish = running[0][0] - it
            if pending and not waiting:
                steps = max(1, min(to_finish, ceil((pending[0][0] - t) / dt)))
            else:
                steps = to_finish
        busy += (n + admit) * dt * steps
        t += dt * steps
        it += steps
        for _ in range(admit):
            rid = waiting.popleft()
            first[rid] = t
            heappush(running, (it + out_steps, rid))
        while running and running[0][0] <= it:
            rid = heappop(running)[1]
            last[rid] = t
            done += 1
            if closed and issued < requests:
                arrival[issued] = t
                heappush(pending, (t, issued))
                issued += 1
    trace.batch_time, trace.end = busy, t
    return trace


def _result(eng: Engine, trace: Trace, rate: float | None, concurrency: int, requests: int, seed: int,
            capacity: float) -> LoadRun:
    """The :class:`LoadRun` of a trace: latencies over the middle of the run."""
    edge = int(requests * EDGE)
    kept = slice(edge, requests - edge)
    arrival, first, last = (np.asarray(x)[kept] for x in (trace.arrival, trace.first, trace.last))
    ttft = first - arrival
    tpot = (last - first) / (eng.output_tokens - 1) if eng.output_tokens > 1 else np.zeros_like(ttft)
    completed = eng.groups * requests / trace.end
    offered = completed if rate is None else rate
    ttft_q = np.percentile(ttft, PERCENTILES)
    tpot_q = np.percentile(tpot, PERCENTILES)
    return LoadRun(
        mode="closed" if rate is None else "open", rate_per_s=float(offered), concurrency=concurrency,
        requests=requests, measured=len(ttft), seed=seed, max_batch=eng.groups * eng.max_batch,
        capacity_per_s=capacity, utilization=float(offered / capacity),
        batch_mean=eng.groups * trace.batch_time / trace.end,
        tokens_per_s_per_gpu=requests * eng.output_tokens / trace.end / eng.gpus,
        ttft_mean_s=float(ttft.mean()), ttft_p50_s=float(ttft_q[0]), ttft_p90_s=float(ttft_q[1]),
        ttft_p99_s=float(ttft_q[2]), tpot_mean_s=float(tpot.mean()), tpot_p50_s=float(tpot_q[0]),
        tpot_p90_s=float(tpot_q[1]), tpot_p99_s=float(tpot_q[2]))
