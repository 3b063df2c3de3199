"""Disaggregated serving: prompts prefilled on one pool of GPUs, answers decoded on another, the KV cache moved
between them (DistServe, Zhong et al., OSDI 2024, arXiv:2401.09670; Splitwise, Patel et al., ISCA 2024,
arXiv:2311.18677).

Requests arrive at random (a Poisson process at ``rate`` per second) and are simulated one by one:

- **Prefill pool**: ``prefill_copies`` copies of the model on ``prefill_tp`` GPUs each take waiting prompts first
  come, first served, one whole prompt at a time (a prefill is compute-bound: prompts batched together take as
  long in all). The prefill produces the first token.
- **KV transfer**: the request's KV cache, ``input_tokens`` x :func:`multigpu.compute.models.kv_cache_bytes_per_token`
  bytes in the stack's KV precision, goes to a decode copy over the NICs (``kv_link="network"``, the pools on
  different nodes: each of the prefill copy's GPUs sends its share over its part of the node's NICs), over
  NVLink (``"nvlink"``, both in one NVLink domain) or over each GPU's PCIe link (``"pcie"``, both in one PCIe
  server), at line rate: a lower bound on the time.
- **Decode pool**: ``decode_copies`` copies (on ``tp`` GPUs, or with ``ep`` the experts over ``ep`` GPUs and
  attention in ``ep / tp`` groups, each its own scheduler) take the requests in turn (round robin). Each runs
  the iteration-level scheduler of :mod:`multigpu.compute.queueing` with no prefill: a request joins the batch
  when its KV cache has arrived and gets one token per iteration until its answer is done.

A user measures TTFT = the prefill's end - arrival (the wait for a prefill copy and the prefill), and the time
per output token = (last token - first token) / (output tokens - 1): the transfer, the wait for a place in a
decode batch, and the decode steps, with no other prompt's prefill between them. Times in seconds; the
latencies are counted over the middle of the run as in :mod:`multigpu.compute.queueing`.
"""

from __future__ import annotations

import dataclasses
import heapq
import random
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from multigpu.comm.calibration import Calibration
from multigpu.common.errors import InputError
from multigpu.compute import inference, models, queueing
from multigpu.hardware import catalog

#: Where the KV cache travels between the pools.
KV_LINKS = ("network", "nvlink", "pcie")


@dataclass(frozen=True)
class Split:
    """A disaggregated deployment, as the simulation sees it (seconds)."""

    prefill_s: float  #: one prompt's prefill on a prefill copy
    transfer_s: float  #: one request's KV cache from its prefill copy to its decode copy
    prefill_copies: int
    prefill_gpus: int  #: GPUs of one prefill copy (its tp)
    decode: queueing.Engine  #: one decode scheduler: no prefill, the output tokens after the first
    decode_copies: int
    kv_bytes: float  #: one request's KV cache, bytes

    @property
    def schedulers(self) -> int:
        """Decode schedulers: each copy's data-parallel attention groups."""
        return self.decode_copies * self.decode.groups

    @property
    def gpus(self) -> int:
        """GPUs of both pools."""
        return self.prefill_copies * self.prefill_gpus + self.schedulers * self.decode.gpus

    def capacity_per_s(self) -> float:
        """The most requests per second the deployment completes: the prefill pool's (copies / prefill_s) or the
        decode pool's (schedulers x the best over batch b of b / (tokens after the first x decode step at b)),
        whichever is less."""
        b = np.arange(1, self.decode.max_batch + 1, dtype=float)
        steps = self.decode.output_tokens * np.asarray(self.decode.decode_step_s)
        decode = self.schedulers * float(np.max(b / steps))
        return min(self.prefill_copies / self.prefill_s, decode)


def kv_rate_GBps(system: catalog.System, senders: int, kv_link: str) -> float:
    """Line rate of one KV transfer, GB/s (1e9 B/s) in one direction: ``senders`` GPUs each over NVLink, over its
    PCIe link, or over its share of the node's NICs (NICs x rate / GPUs per node)."""
    if kv_link not in KV_LINKS:
        raise InputError(f"kv link '{kv_link}': expected one of {', '.join(KV_LINKS)}")
    if kv_link == "pcie":
        return senders * system.pcie_GBps_per_dir
    if kv_link == "nvlink":
        if not system.nvlink_GBps_per_dir:
            raise InputError(f"{system.id} has no NVLink for the KV cache; use the network")
        return senders * system.nvlink_GBps_per_dir
    if not system.nics_per_node:
        raise InputError(f"{system.id} has no scale-out NIC for the KV cache")
    return senders * system.nics_per_node * system.nic_GBps_per_dir / system.gpus_per_node


def split(model_id: str, system_id: str, tp: int, input_tokens: int, output_tokens: int, max_batch: int, *,
          prefill_copies: int, decode_copies: int, prefill_tp: int | None = None, ep: int = 1,
          dtype: str = "bf16", cal: Calibration | None = None, stack_name: str = inference.DEFAULT_STACK,
          kv_link: str = "network", release: str | None = None) -> Split:
    """The :class:`Split` of serving ``model_id`` on ``system_id``: ``prefill_copies`` copies on ``prefill_tp``
    GPUs (default ``tp``), ``decode_copies`` copies on ``tp`` GPUs (with ``ep``, the experts over ``ep`` GPUs)
    holding at most ``max_batch`` queries each; ``release``: the stack's release whose decode kernels both pools
    run, as :func:`multigpu.compute.inference.run` takes it (None: the model's). Raises :class:`InputError` for
    fewer than 2 output tokens, a copy count below 1, or what the inference model refuses."""
    if output_tokens < 2:
        raise InputError("disaggregated serving needs 2 or more output tokens: the prefill gives the first")
    if min(prefill_copies, decode_copies) < 1:
        raise InputError("a disaggregated deployment needs at least one prefill copy and one decode copy")
    prefill_tp = prefill_tp or tp
    prefill = inference.run(model_id, system_id, prefill_tp, 1, input_tokens, output_tokens, dtype=dtype, cal=cal,
                            stack_name=stack_name, release=release)
    decode = queueing.engine(model_id, system_id, tp, input_tokens, output_tokens, max_batch, dtype=dtype, cal=cal,
                             stack_name=stack_name, ep=ep, release=release)
    # the decode scheduler admits a request with its KV cache ready: no prefill, one token in the iteration
    decode = dataclasses.replace(decode, prefill_s=0.0, input_tokens=1, output_tokens=output_tokens - 1,
                                 max_num_tokens=decode.max_batch + 1, prefilled=True)
    kv_bytes = models.kv_cache_bytes_per_token(model_id, prefill.kv_cache_dtype) * input_tokens
    rate = kv_rate_GBps(catalog.system(system_id), min(prefill_tp, max(tp, ep)), kv_link)
    return Split(float(prefill.ttft_s), kv_bytes / (rate * 1e9), prefill_copies, prefill_tp, decode, decode_copies,
                 kv_bytes)


@dataclass(frozen=True)
class SplitRun:
    """What the users of a disaggregated deployment measure, from :func:`simulate` (seconds)."""

    load: queueing.LoadRun  #: the latencies, rate, capacity and throughput, as for one pool
    gpus: int  #: GPUs of both pools
    kv_transfer_s: float  #: one request's KV transfer
    prefill_wait_p99_s: float  #: the 99th percentile of the wait for a prefill copy


@lru_cache(maxsize=queueing.MEMO_RUNS)
def simulate(deployment: Split, rate: float, requests: int = queueing.DEFAULT_REQUESTS, seed: int = 0) -> SplitRun:
    """Serve ``requests`` requests arriving at ``rate`` per second. Raises :class:`InputError` for a rate at or
    above :meth:`Split.capacity_per_s` or too few requests."""
    capacity = deployment.capacity_per_s()
    if rate >= capacity:
        raise InputError(f"{rate:g} requests/s is at or above the {capacity:.3g} requests/s this deployment can "
                         "serve: the queue would grow without end")
    if requests < 20:
        raise InputError(f"{requests} requests are too few to measure latencies under load; use 20 or more")
    return _run(deployment, rate, requests, seed, capacity)


def max_rate(deployment: Split, ttft_p99_s: float, tpot_p99_s: float = float("inf"),
             requests: int = queueing.DEFAULT_REQUESTS, seed: int = 0) -> float:
    """The highest request rate at which both 99th percentiles stay within their limits (seconds)
    (:func:`multigpu.compute.queueing.bisect_rate`)."""
    return queueing.bisect_rate(deployment.capacity_per_s(),
                                lambda rate: simulate(deployment, rate, requests=requests, seed=seed).load,
                                ttft_p99_s, tpot_p99_s)


def _run(deployment: Split, rate: float, requests: int, seed: int, capacity: float) -> SplitRun:
    """Poisson arrivals, the prefill pool, then each decode scheduler's share of the requests in turn."""
    rng = random.Random(seed)
    arrival = np.cumsum([rng.expovariate(rate) for _ in range(requests)])
    first, wait = _prefill(deployment, arrival)
    last = np.empty(requests)
    batch_time, end = 0.0, float(first.max())
    units = deployment.schedulers
    for unit in range(units):  # round robin over the decode schedulers
        ids = np.arange(unit, requests, units)
        ready = first[ids] + deployment.transfer_s
        order = np.argsort(ready, kind="stable")
        trace = queueing.serve_trace(deployment.decode, [(float(ready[k]), int(i)) for i, k in enumerate(order)],
                                     len(ids), closed=False)
        last[ids[order]] = trace.last
        batch_time, end = batch_time + trace.batch_time, max(end, trace.end)
    return SplitRun(_load_run(deployment, arrival, first, last, rate, capacity, batch_time, end, seed),
                    deployment.gpus, deployment.transfer_s, float(np.percentile(wait, 99)))


def _prefill(deployment: Split, arrival: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each request's first token (the end of its prefill) and its wait for a prefill copy: first come, first
    served over the copies."""
    free = [0.0] * deployment.prefill_copies
    first, wait = np.empty(arrival.size), np.empty(arrival.size)
    for i, t in enumerate(arrival):
        start = max(float(t), heapq.heappop(free))
        first[i], wait[i] = start + deployment.prefill_s, start - t
        heapq.heappush(free, first[i])
    return first, wait


def _load_run(deployment: Split, arrival: np.ndarray, first: np.ndarray, last: np.ndarray, rate: float,
              capacity: float, batch_time: float, end: float, seed: int) -> queueing.LoadRun:
    """The :class:`~multigpu.compute.queueing.LoadRun` of a disaggregated run: latencies over the middle of it."""
    n = arrival.size
    kept = slice(int(n * queueing.EDGE), n - int(n * queueing.EDGE))
    output = deployment.decode.output_tokens + 1
    ttft = (first - arrival)[kept]
    tpot = ((last - first) / (output - 1))[kept]
    ttft_q, tpot_q = (np.percentile(x, queueing.PERCENTILES) for x in (ttft, tpot))
    return queueing.LoadRun(
        mode="open", rate_per_s=float(rate), concurrency=0, requests=n, measured=int(ttft.size), seed=seed,
        max_batch=deployment.schedulers * deployment.decode.max_batch, capacity_per_s=capacity,
        utilization=float(rate / capacity), batch_mean=batch_time / end,
        tokens_per_s_per_gpu=n * output / end / deployment.gpus,
        ttft_mean_s=float(ttft.mean()), ttft_p50_s=float(ttft_q[0]), ttft_p90_s=float(ttft_q[1]),
        ttft_p99_s=float(ttft_q[2]), tpot_mean_s=float(tpot.mean()), tpot_p50_s=float(tpot_q[0]),
        tpot_p90_s=float(tpot_q[1]), tpot_p99_s=float(tpot_q[2]))
