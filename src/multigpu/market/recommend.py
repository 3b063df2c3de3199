"""Recommend instances and layouts for a training job or a serving target, from a price file.

:func:`train` answers "where do I train this model on this many tokens?": for
every offer of the price file (:func:`multigpu.market.prices.load_prices`, which
honours ``MULTIGPU_PRICES``) and every power-of-two number of its instances up
to ``max_gpus`` GPUs, it finds the fastest parallel layout with the vectorised
search (:func:`multigpu.market.search.train`, ZeRO stage 1 and 3 both tried),
and turns its step time into the job's wall-clock hours and cost:

    time_h   = tokens / (global_batch x seq) x step_time_s / 3600
    cost_usd = time_h x instances x price per instance-hour (USD)

:func:`serve` answers "what do I rent to serve ``requests_per_s`` queries at
``tokens_per_s_per_user``?": for every offer and every tensor-parallel degree
that divides its instance, the serving search (:func:`multigpu.market.search.serve`)
gives the largest in-flight batch that still meets the per-user speed, and the
degree with the most tokens per second per GPU; replicas fill the instance,
and enough instances are rented to carry the load. The cost is per hour and
per million output tokens *served* (instances are paid whether full or not).

Both return one row per option, ranked (:func:`rank`): feasible options
first, then those that run but miss the deadline, the budget or the GPU limit
(with their numbers, ``feasible`` False), then offers that cannot run the job
at all (no numbers); each row has a one-line ``reason``. :func:`pareto` keeps
the options no other option beats on both cost and time.

The job is pre-training unless ``method`` says ``full`` (full fine-tuning: the
same maths on fewer tokens) or ``lora`` (frozen base weights and rank-``lora_rank``
adapters, :mod:`multigpu.compute.training`); every layout search gets them. An
offer whose ``scale_out`` is ``none`` has no network between its instances: its
options of more than one instance cannot run (reason "no network between
instances", as in :mod:`multigpu.market.cost`), and one instance is planned as
before.

The global batch, unless given, follows the tokens per step of published
pre-training runs (Llama 3, Chinchilla): about 1M tokens per step below 5B
parameters, 2M below 30B, 4M above (:func:`default_global_batch`). Units are
in the column names: ``_h`` hours, ``_s`` seconds, ``_ms`` milliseconds,
``_usd`` US dollars, ``_GB`` 1e9 bytes.
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.common.errors import InputError
from multigpu.common.findings import Finding, Items, Sentence, Word, msg, say
from multigpu.compute import inference, models, queueing, training
from multigpu.compute.layout import DEFAULT_TRAINING_STACK
from multigpu.hardware import catalog
from multigpu.market import cost, search
from multigpu.market.prices import PriceTable
from multigpu.market.search import ZERO_STAGES, TrainingLayout

KINDS = ("train", "serve")
RANK_BY = ("cost", "time")
#: Default cap on the GPUs one option may rent (128 8-GPU nodes).
DEFAULT_MAX_GPUS = 1024
#: Default sequence length of a training job (tokens), as in Llama 3's pre-training.
DEFAULT_SEQ = 4096
#: Tokens per optimiser step by model size: (below this many parameters, tokens per step). Llama 3 trained
#: its 8B and 70B models at 1M-4M tokens per step (Grattafiori et al. 2024); Chinchilla at 1.5M-3M.
TOKENS_PER_STEP = ((5e9, 2**20), (30e9, 2**21), (math.inf, 2**22))
#: Default query of a serving target: the NVIDIA blog's 8K prompt tokens and 256 output tokens.
DEFAULT_INPUT_TOKENS = 8192
DEFAULT_OUTPUT_TOKENS = 256
#: Tiers of :func:`rank`: feasible, runs but misses a limit, cannot run.
FEASIBLE, MISSES_LIMIT, CANNOT_RUN = 0, 1, 2

#: Columns of :func:`train`, in order (the CLI's JSON fields).
TRAIN_COLUMNS = (
    "rank", "offer", "provider", "instance", "gpu", "interconnect", "interconnect_class", "system", "pricing",
    "instances", "gpus_per_instance", "gpus", "layout", "tp", "pp", "dp", "ep", "micro_batch", "interleave",
    "recompute",
    "sequence_parallel", "zero_stage", "global_batch", "seq", "stack", "step_time_s", "mfu", "exposed_comm_pct",
    "memory_per_gpu_GB", "time_h", "price_per_gpu_hour_usd", "cost_usd", "feasible", "reason")
#: Columns of :func:`serve`, in order (the CLI's JSON fields).
SERVE_COLUMNS = (
    "rank", "offer", "provider", "instance", "gpu", "interconnect", "interconnect_class", "system", "pricing",
    "instances", "gpus_per_instance", "gpus", "layout", "tp", "ep", "batch", "replicas", "tokens_per_s_per_user",
    "tpot_ms", "capacity_tokens_per_s", "capacity_requests_per_s", "load_pct", "price_per_gpu_hour_usd",
    "cost_per_hour_usd", "cost_per_million_tokens_usd", "feasible", "reason")
#: Columns :func:`serve` adds with a p99 limit on time to first token (``ttft_p99_s``): the 99th percentiles
#: under random arrivals at each copy's share of the load.
LOAD_COLUMNS = ("ttft_p99_s", "tpot_p99_ms")

_AMOUNT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMbBtT]?)\s*$")
_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def parse_amount(text: str | float, what: str = "amount") -> float:
    """A positive count such as ``2e11``, ``200B`` (1e9), ``1.5T`` (1e12), ``300M`` or ``4096``."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        match = _AMOUNT.match(str(text))
        if not match:
            raise InputError(f"{what} '{text}' is not a number; expected e.g. 2e11, 200B, 1.5T")
        value = float(match.group(1)) * _SUFFIX[match.group(2).lower()]
    if not value > 0 or not math.isfinite(value):
        raise InputError(f"{what} '{text}' must be a positive number")
    return value


def default_global_batch(model_id: str, seq: int = DEFAULT_SEQ) -> int:
    """Sequences per step: :data:`TOKENS_PER_STEP` for the model's size over ``seq``, a power of two (>= 1)."""
    params = models.model(model_id).params_total
    tokens = next(t for limit, t in TOKENS_PER_STEP if params < limit)
    return max(1, 2 ** round(math.log2(tokens / seq)))


def instance_counts(gpus_per_instance: int, max_gpus: int) -> list[int]:
    """Instances to try: 1, 2, 4, ... while instances x ``gpus_per_instance`` <= ``max_gpus``."""
    counts, k = [], 1
    while k * gpus_per_instance <= max_gpus:
        counts.append(k)
        k *= 2
    return counts


# ------------------------------------------------------------------ training


def _short_link(link_id: str | None) -> str | Word:
    if not link_id:
        return Word(msg("the network"))
    return catalog.link(link_id).name.split(" (")[0]


def _comm_clause(b: TrainingLayout, system: catalog.System, gpus: int, cls: str) -> Sentence:
    """Where a training option's exposed communication goes, e.g. 'exposed comm 3 % of the step, mostly dp8 over
    InfiniBand NDR', naming the parallel dimension with the largest part and the link it crosses."""
    step = b.step_time_s
    parts = {"tp": b.tp_s, "pp": b.pp_s, "dp": b.dp_s, "ep": b.ep_s, "cp": b.cp_s}
    total = sum(parts.values())
    pct = 100 * total / step if step > 0 else 0.0
    if pct < 0.5:
        return say(msg("{link} leaves no exposed comm"), link=cls.replace(" only", ""))
    part = max(parts, key=parts.get)
    inside = (part == "tp" or gpus <= system.gpus_per_node or (part == "ep" and b.tp * b.ep <= system.gpus_per_node)
              or (part == "cp" and b.tp * b.cp <= system.gpus_per_node))
    over = cls.replace(" only", "") if inside else _short_link(system.nic)
    what = {"tp": f"tp{b.tp}", "pp": f"pp{b.pp}", "dp": f"dp{b.dp}", "ep": f"ep{b.ep}", "cp": f"cp{b.cp}"}[part]
    return say(msg("exposed comm {pct:.0f} % of the step, mostly {part} over {link}"), pct=float(pct), part=what,
               link=over)


def _base_row(offer: dict[str, Any]) -> dict[str, Any]:
    return {"offer": int(offer["offer"]), "provider": offer["provider"], "instance": offer["instance"],
            "gpu": offer["gpu"], "interconnect": offer["interconnect"],
            "interconnect_class": offer["interconnect_class"], "system": offer["system"],
            "pricing": offer["pricing"], "gpus_per_instance": int(offer["gpus_per_instance"]),
            "price_per_gpu_hour_usd": float(offer["price_per_gpu_hour_usd"])}


def train(model_id: str, tokens: float | str, table: PriceTable | None = None, *, max_gpus: int = DEFAULT_MAX_GPUS,
          deadline_h: float | None = None, budget_usd: float | None = None, seq: int = DEFAULT_SEQ,
          global_batch: int | None = None, dtype: str = "bf16", rank_by: str = "cost",
          zero_stages: tuple[int, ...] = ZERO_STAGES, cal: Calibration | None = None,
          progress: Callable[[int, int], None] | None = None, method: str = "pretrain",
          lora_rank: int = 0, stack: str = DEFAULT_TRAINING_STACK) -> pd.DataFrame:
    """Every (offer, instance count) for training ``model_id`` on ``tokens`` tokens, ranked, with the training
    ``stack`` (:data:`multigpu.compute.layout.TRAINING_STACKS`) the layouts are searched under.

    ``table``: the price table (default: the packaged one). ``max_gpus``: the most GPUs an option may rent. ``deadline_h`` (hours) and ``budget_usd`` (USD per
    job): options past either stay in the table, ``feasible`` False, ranked after the feasible ones.
    ``global_batch`` sequences of ``seq`` tokens per step (default :func:`default_global_batch`).
    ``rank_by``: ``cost`` (USD per job, then time) or ``time`` (hours, then cost). ``progress(i, n)`` is called
    after each offer. ``method``: ``pretrain`` (default), ``full`` (fine-tune) or ``lora`` with adapters of rank
    ``lora_rank`` (> 0, lora only). Offers with ``scale_out`` ``none`` give one instance only: their options of
    more instances are listed with no numbers, ``feasible`` False, "no network between instances".
    Columns :data:`TRAIN_COLUMNS`; ``attrs`` hold the model, tokens, steps, global batch, method, LoRA rank,
    the layouts evaluated and the seconds the search took.
    """
    model = models.model(model_id)
    tokens = parse_amount(tokens, "tokens")
    lora_rank = _check_method(method, lora_rank)
    training.check_stack(stack)
    _check_common(max_gpus, rank_by, deadline_h, budget_usd)
    if seq < 1:
        raise InputError(f"sequence length {seq} must be at least 1")
    global_batch = default_global_batch(model, seq) if global_batch is None else int(global_batch)
    if global_batch < 1:
        raise InputError(f"global batch {global_batch} must be at least 1")
    steps = tokens / (global_batch * seq)
    if steps < 1:
        raise InputError(f"--tokens: {tokens:g} tokens are less than one step of {global_batch} sequences x {seq} "
                         f"tokens ({global_batch * seq:,} tokens)")
    listed = cost.offers(table)
    start = time.perf_counter()
    rows, evaluated = [], 0
    records = listed.to_dict("records")
    for i, offer in enumerate(records):
        found = _train_offer(model, offer, steps, global_batch, seq, dtype, max_gpus, zero_stages, cal,
                             method, lora_rank, stack)
        for row, n in found:
            row.update(global_batch=global_batch, seq=seq, stack=stack)
            rows.append(row)
            evaluated += n
        if progress is not None:
            progress(i + 1, len(records))
    frame = pd.DataFrame(rows, columns=[c for c in TRAIN_COLUMNS if c != "rank"] + ["_tier"])
    for row_index in frame.index:  # deadline and budget
        _apply_limits(frame, row_index, deadline_h, budget_usd)
    frame = rank(frame, rank_by, "cost_usd", "time_h")
    frame.attrs.update(kind="train", model=model.id, tokens=tokens, steps=steps, global_batch=global_batch, seq=seq,
                       deadline_h=deadline_h, budget_usd=budget_usd, max_gpus=max_gpus, rank_by=rank_by,
                       method=method, lora_rank=lora_rank, stack=stack, evaluated=evaluated, seconds=time.perf_counter() - start, offers=len(records),
                       path=listed.attrs.get("path"))
    return frame


def _check_method(method: str, lora_rank: int | None) -> int:
    """The LoRA rank as an int (0 unless ``method`` is lora); an InputError for an unknown method, a LoRA
    rank that is not a whole number > 0, or a rank without method lora."""
    rank_ = 0 if lora_rank is None else lora_rank
    if isinstance(rank_, bool) or not isinstance(rank_, (int, float, np.integer, np.floating)):
        raise InputError(f"LoRA rank {lora_rank!r} is not a whole number")
    training.check_method(method, rank_)
    if method != "lora" and rank_:
        raise InputError(f"a LoRA rank ({rank_:g}) needs method lora (method is {method})")
    return int(rank_)


def _train_offer(model: models.Model, offer: dict[str, Any], steps: float, global_batch: int, seq: int,
                 dtype: str, max_gpus: int, zero_stages: tuple[int, ...], cal: Calibration | None,
                 method: str = "pretrain", lora_rank: int = 0,
                 stack: str = DEFAULT_TRAINING_STACK) -> list[tuple[dict[str, Any], int]]:
    """Rows (with the layouts each evaluated) for one offer: one per runnable instance count, or one row
    saying why none runs; on an offer with ``scale_out`` ``none``, one more (no numbers, cannot run) per
    instance count above one."""
    system = catalog.system(offer["system"])
    per, node = int(offer["gpus_per_instance"]), system.gpus_per_node
    base = _base_row(offer)
    price_hour = float(offer["price_per_gpu_hour_usd"]) * per
    counts = instance_counts(per, max_gpus)
    out: list[tuple[dict[str, Any], int]] = []
    blocked: list[tuple[dict[str, Any], int]] = []
    no_network = offer.get("scale_out") == "none"
    why = ""
    if not counts:
        why = f"one instance has {per} GPUs, more than the {max_gpus} allowed (--max-gpus)"
    elif per > node:
        why = (f"an instance of {per} GPUs is modelled as {system.id} nodes of {node}; how they are joined inside "
               f"the instance is not modelled (pin a 'system' in the price file)")
        counts = []
    for k in counts:
        gpus = k * per
        if k > 1 and no_network:
            blocked.append((dict(base, instances=k, gpus=gpus, layout="", feasible=False, _tier=CANNOT_RUN,
                                 reason=cost.no_network_reason(gpus, per)), 0))
            continue
        if k > 1 and per != node:
            why = why or (f"{k} instances of {per} GPUs: the catalogue system {system.id} models nodes of {node}, "
                          f"so the network between such instances is not modelled")
            continue
        try:
            found = search.train(model, system.id, gpus, global_batch, seq, dtype=dtype,
                                 zero_stages=zero_stages, cal=cal, method=method, lora_rank=lora_rank, stack=stack)
        except InputError as exc:
            why = exc.message
            continue
        b = found.best
        if b is None:
            why = found.reason or why
            continue
        hours = steps * b.step_time_s / 3600
        comm = 100 * b.exposed_comm_s / b.step_time_s
        row = dict(base, instances=k, gpus=gpus, layout=b.label, tp=b.tp, pp=b.pp, dp=b.dp, ep=b.ep,
                   micro_batch=b.micro_batch, interleave=b.interleave, recompute=b.recompute,
                   sequence_parallel=b.sequence_parallel, zero_stage=b.zero_stage,
                   step_time_s=b.step_time_s, mfu=b.mfu, exposed_comm_pct=comm,
                   memory_per_gpu_GB=b.memory_per_gpu_GB, time_h=hours, cost_usd=hours * k * price_hour,
                   feasible=True, reason=_comm_clause(b, system, gpus, offer["interconnect_class"]),
                   _tier=FEASIBLE)
        out.append((row, found.evaluated))
    if not out:
        row = dict(base, instances=None, gpus=None, layout="", feasible=False, _tier=CANNOT_RUN,
                   reason=_cannot_run(why))
        out.append((row, 0))
    return out + blocked


def _cannot_run(why: str) -> Sentence:
    """A row's reason when no layout runs: "cannot run: <why>", keeping the finding of ``why`` where it has one."""
    if not why:
        return say(msg("cannot run"))
    return say(msg("cannot run: {why}"), why=why.value if isinstance(why, Sentence) else why)


def _hours_text(hours: float) -> Finding:
    """A duration as a reader counts it: days from 48 h up, else hours."""
    if hours >= 48:
        return Finding.of(msg("{days:,.1f} days"), days=float(hours / 24))
    return Finding.of(msg("{hours:,.1f} h"), hours=float(hours))


def _joined(parts: list[Finding]) -> Sentence:
    """Several limits an option misses, as one reason ("...; ...")."""
    return Sentence(Items(tuple(parts), msg("; ")))


def _apply_limits(frame: pd.DataFrame, i: Any, deadline_h: float | None, budget_usd: float | None) -> None:
    if frame.at[i, "_tier"] != FEASIBLE:
        return
    missed = []
    hours, usd = frame.at[i, "time_h"], frame.at[i, "cost_usd"]
    if deadline_h is not None and hours > deadline_h:
        missed.append(Finding.of(msg("misses the deadline by {late}"), late=_hours_text(hours - deadline_h)))
    if budget_usd is not None and usd > budget_usd:
        missed.append(Finding.of(msg("over budget by USD {usd:,.0f}"), usd=float(usd - budget_usd)))
    if missed:
        frame.at[i, "feasible"] = False
        frame.at[i, "_tier"] = MISSES_LIMIT
        frame.at[i, "reason"] = _joined(missed)


def _check_common(max_gpus: int | None, rank_by: str, deadline_h: float | None, budget: float | None) -> None:
    if max_gpus is not None and max_gpus < 1:
        raise InputError(f"--max-gpus {max_gpus} must be at least 1")
    if rank_by not in RANK_BY:
        raise InputError(f"rank by '{rank_by}'; expected one of {', '.join(RANK_BY)}")
    for name, value in (("deadline", deadline_h), ("budget", budget)):
        if value is not None and not (value > 0 and math.isfinite(value)):
            raise InputError(f"{name} {value:g} must be a positive number")


# ------------------------------------------------------------------ serving


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def serve(model_id: str, tokens_per_s_per_user: float, requests_per_s: float, table: PriceTable | None = None, *,
          input_tokens: int = DEFAULT_INPUT_TOKENS, output_tokens: int = DEFAULT_OUTPUT_TOKENS,
          max_gpus: int = DEFAULT_MAX_GPUS, budget_usd_per_hour: float | None = None, dtype: str = "bf16",
          rank_by: str = "cost", max_ttft_s: float | None = None, cal: Calibration | None = None,
          progress: Callable[[int, int], None] | None = None, stack: str = inference.DEFAULT_STACK,
          ttft_p99_s: float | None = None) -> pd.DataFrame:
    """Every offer's cheapest way to serve ``requests_per_s`` queries (``input_tokens`` in, ``output_tokens``
    out) with each user seeing at least ``tokens_per_s_per_user`` (one token per decode step) and, if given,
    the first token within ``max_ttft_s`` seconds, ranked.

    Per offer: the serving search's best degree and batch (:func:`multigpu.market.search.serve`);
    ``instances`` = the load over one instance's capacity, rounded up. With ``ttft_p99_s``, the queries arrive
    at random and an instance's capacity is the most requests per second whose 99th percentiles stay within
    ``ttft_p99_s`` for the first token and the per-user floor for the time per output token
    (:func:`multigpu.compute.queueing.max_rate`, the batch capped at the search's); the two percentiles at each
    copy's share of the load are added (:data:`LOAD_COLUMNS`). Options over
    ``max_gpus`` GPUs or ``budget_usd_per_hour`` stay in the table, ``feasible`` False. ``rank_by``: ``cost``
    (USD per hour) or ``time`` (time per output token, ms). ``stack``: the serving stack, whose all-reduce
    kernels tensor parallelism runs on (:data:`multigpu.compute.inference.STACKS`). Columns :data:`SERVE_COLUMNS`.
    """
    model = models.model(model_id)
    inference.stack(stack)
    rate = parse_amount(tokens_per_s_per_user, "tokens per second per user")
    load = parse_amount(requests_per_s, "requests per second")
    _check_common(max_gpus, rank_by, None, budget_usd_per_hour)
    if min(input_tokens, output_tokens) < 1:
        raise InputError("input and output tokens must be at least 1")
    listed = cost.offers(table)
    start = time.perf_counter()
    demand_tps = load * output_tokens
    rows = []
    records = listed.to_dict("records")
    for i, offer in enumerate(records):
        rows.append(_serve_offer(model, offer, rate, demand_tps, input_tokens, output_tokens, dtype, max_ttft_s, cal,
                                 stack, ttft_p99_s))
        if progress is not None:
            progress(i + 1, len(records))
    columns = [c for c in SERVE_COLUMNS if c != "rank"]
    if ttft_p99_s is not None:
        columns[columns.index("tpot_ms") + 1:columns.index("tpot_ms") + 1] = LOAD_COLUMNS
    frame = pd.DataFrame(rows, columns=columns + ["_tier"])
    for i in frame.index:
        if frame.at[i, "_tier"] != FEASIBLE:
            continue
        missed = []
        if max_gpus is not None and frame.at[i, "gpus"] > max_gpus:
            missed.append(Finding.of(msg("needs {n_gpus} GPUs, more than the {n_max} allowed"),
                                     n_gpus=int(frame.at[i, "gpus"]), n_max=int(max_gpus)))
        if budget_usd_per_hour is not None and frame.at[i, "cost_per_hour_usd"] > budget_usd_per_hour:
            missed.append(Finding.of(msg("over budget by USD {usd:,.2f} per hour"),
                                     usd=float(frame.at[i, "cost_per_hour_usd"] - budget_usd_per_hour)))
        if missed:
            frame.loc[i, ["feasible", "_tier", "reason"]] = [False, MISSES_LIMIT, _joined(missed)]
    frame = rank(frame, rank_by, "cost_per_hour_usd", "tpot_ms")
    frame.attrs.update(kind="serve", model=model.id, tokens_per_s_per_user=rate, requests_per_s=load,
                       input_tokens=input_tokens, output_tokens=output_tokens, max_gpus=max_gpus, stack=stack,
                       budget_usd_per_hour=budget_usd_per_hour, rank_by=rank_by, offers=len(records),
                       seconds=time.perf_counter() - start, path=listed.attrs.get("path"), ttft_p99_s=ttft_p99_s)
    return frame


@functools.lru_cache(maxsize=1024)
def _loaded(model_id: str, system_id: str, best: search.ServingOption, input_tokens: int, output_tokens: int,
            dtype: str, cal: Calibration | None, stack: str, ttft_p99_s: float) -> tuple[queueing.Engine, float]:
    """One copy of ``best`` under random arrivals: its engine (the batch capped at ``best.batch``) and the most
    requests per second it carries with p99 TTFT within ``ttft_p99_s`` and p99 time per output token within the
    per-user floor (:func:`multigpu.compute.queueing.max_rate`)."""
    eng = queueing.engine(model_id, system_id, best.tp, input_tokens, output_tokens, best.batch, dtype=dtype,
                          cal=cal, stack_name=stack, ep=best.ep)
    return eng, queueing.max_rate(eng, ttft_p99_s, 1.0 / best.floor_tokens_per_s_per_user)


def _serve_offer(model: models.Model, offer: dict[str, Any], rate: float, demand_tps: float, input_tokens: int,
                 output_tokens: int, dtype: str, max_ttft_s: float | None, cal: Calibration | None,
                 stack: str = inference.DEFAULT_STACK, ttft_p99_s: float | None = None) -> dict[str, Any]:
    system = catalog.system(offer["system"])
    per = int(offer["gpus_per_instance"])
    price_hour = float(offer["price_per_gpu_hour_usd"]) * per
    base = _base_row(offer)
    found = search.serve(model, system.id, per, input_tokens, output_tokens, rate, dtype=dtype,
                         max_ttft_s=max_ttft_s, cal=cal, stack=stack)
    best = found.best
    if best is None:
        return dict(base, instances=None, gpus=None, layout="", feasible=False, reason=_cannot_run(found.reason),
                    _tier=CANNOT_RUN)
    instance_tps = best.tokens_per_s_per_gpu * per
    if ttft_p99_s is not None:  # under random arrivals another degree may carry more: each is sized again
        sized = [(_loaded(model.id, system.id, o, input_tokens, output_tokens, dtype, cal, stack, float(ttft_p99_s)),
                  o) for o in found.options if o.batch and (max_ttft_s is None or o.ttft_s <= max_ttft_s)]
        (eng, copy_rps), best = max(sized, key=lambda x: (x[0][1] / x[1].gpus, -x[1].gpus, -x[1].tp))
        if copy_rps <= 0:
            why = say(msg("no layout keeps the first token within {limit:g} s and each user's tokens at the floor "
                          "at the 99th percentile under any load (a lone prompt's first token takes {alone:.2f} s "
                          "at best)"), limit=float(ttft_p99_s),
                      alone=float(min(e.prefill_s for (e, _), _ in sized)))
            return dict(base, instances=None, gpus=None, layout="", feasible=False, reason=why, _tier=CANNOT_RUN)
        instance_tps = copy_rps * (per // best.gpus) * output_tokens
    copies = per // best.gpus
    instances = max(1, math.ceil(demand_tps / instance_tps - 1e-9))
    capacity = instance_tps * instances
    cls = offer["interconnect_class"].replace(" only", "")
    load_pct = 100 * demand_tps / capacity
    loaded = (msg("{n} instance loaded {pct:.0f} %") if instances == 1 else msg("{n} instances loaded {pct:.0f} %"))
    reason = say(msg("{layout} over {link} holds {rate:.0f} tokens/s per user at batch {batch}; {load}"),
                 layout=best.label, link=cls, rate=float(best.tokens_per_s_per_user), batch=int(best.batch),
                 load=Finding.of(loaded, n=int(instances), pct=float(load_pct)))
    tails = {}
    if ttft_p99_s is not None:  # the percentiles at each copy's share of the load
        at = queueing.simulate(eng, rate=demand_tps / output_tokens / (copies * instances))
        tails = {"ttft_p99_s": at.ttft_p99_s, "tpot_p99_ms": 1e3 * at.tpot_p99_s}
    return dict(base, **tails, instances=instances, gpus=instances * per, layout=f"{best.label} batch {best.batch}",
                tp=best.tp, ep=best.ep, batch=best.batch, replicas=copies * instances,
                tokens_per_s_per_user=best.tokens_per_s_per_user, tpot_ms=1e3 * best.tpot_s,
                capacity_tokens_per_s=capacity, capacity_requests_per_s=capacity / output_tokens, load_pct=load_pct,
                cost_per_hour_usd=instances * price_hour,
                cost_per_million_tokens_usd=instances * price_hour / (demand_tps * 3600 / 1e6),
                feasible=True, reason=reason, _tier=FEASIBLE)


# ------------------------------------------------------------------ ranking


def rank(frame: pd.DataFrame, by: str, cost_column: str, time_column: str) -> pd.DataFrame:
    """Sort by tier (feasible, misses a limit, cannot run), then by cost then time (``by='cost'``) or time then
    cost, then offer and instances; number the rows ``rank`` 1, 2, ... and rewrite the head of each feasible
    row's reason (cheapest / fastest / how far behind the best)."""
    keys = [cost_column, time_column] if by == "cost" else [time_column, cost_column]
    out = frame.sort_values(["_tier", *keys, "offer", "instances"], kind="stable", na_position="last")
    out = out.reset_index(drop=True)
    out.insert(0, "rank", range(1, len(out) + 1))
    feasible = out[out["_tier"] == FEASIBLE]
    if not feasible.empty:
        best = feasible.iloc[0]
        for i in feasible.index:
            out.at[i, "reason"] = say(msg("{head}; {reason}"), head=_rank_head(out, i, best, by, cost_column,
                                                                              time_column),
                                      reason=getattr(out.at[i, "reason"], "value", out.at[i, "reason"]))
    out = out.drop(columns="_tier")
    for column in ("instances", "gpus", "tp", "pp", "dp", "ep", "micro_batch", "interleave", "zero_stage", "batch",
                   "replicas"):
        if column in out:
            out[column] = out[column].astype("Int64")
    return out


def _rank_head(out: pd.DataFrame, i: Any, best: pd.Series, by: str, cost_column: str, time_column: str) -> Finding:
    """How a feasible option stands against the first: cheapest (per job or per hour) or fastest, or its cost
    or time as a multiple of the first's."""
    if best.name == i:
        if by != "cost":
            return Finding.of(msg("fastest"))
        return Finding.of(msg("cheapest per job") if cost_column == "cost_usd" else msg("cheapest per hour"))
    if by == "cost":
        return Finding.of(msg("{ratio:.2f}x the cost of #1"), ratio=float(out.at[i, cost_column] / best[cost_column]))
    return Finding.of(msg("{ratio:.2f}x the time of #1"), ratio=float(out.at[i, time_column] / best[time_column]))


def pareto(options: pd.DataFrame) -> pd.DataFrame:
    """The options no other option beats on both cost and time (the Pareto front), sorted by cost.

    Training: USD per job and hours; serving: USD per hour and ms per output token. Only options that run
    are considered (feasible or not: a deadline or budget does not move the front); ties keep the first.
    """
    if "cost_usd" in options:
        cost_column, time_column = "cost_usd", "time_h"
    else:
        cost_column, time_column = "cost_per_hour_usd", "tpot_ms"
    ran = options.dropna(subset=[cost_column, time_column])
    ran = ran.sort_values([cost_column, time_column, "offer"], kind="stable")
    keep, best_time = [], math.inf
    for i, t in zip(ran.index, ran[time_column]):
        if t < best_time:
            keep.append(i)
            best_time = t
    return ran.loc[keep]


def best(options: pd.DataFrame) -> dict[str, Any] | None:
    """The first-ranked feasible option as a dict, or None."""
    ok = options[options["feasible"]]
    return None if ok.empty else ok.iloc[0].to_dict()


def records(options: pd.DataFrame, top: int | None = None) -> list[dict[str, Any]]:
    """The options as plain JSON-able dicts (NaN and NA as None), the ``top`` first if given."""
    rows = options if not top else options.head(top)
    out = []
    for row in rows.to_dict("records"):
        clean = {}
        for key, value in row.items():
            if value is None or (not isinstance(value, (str, bool)) and pd.isna(value)):
                value = None
            elif isinstance(value, np.generic):
                value = value.item()
            clean[key] = value
        out.append(clean)
    return out

