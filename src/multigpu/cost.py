"""Cost: the price file turns model time into money, per job and per million tokens.

For a named workload (``data/cost_workloads.csv``: a training job or a
serving target) and every offer of the price file (:func:`multigpu.prices.load_prices`,
which honours ``MULTIGPU_PRICES``), this module

1. finds the best layout the offer's system can run (:func:`plan`): for
   training, every tensor x pipeline split of the job's GPUs with
   micro-batches of 1-8 sequences and the least activation recomputation that
   fits in memory, timed by :func:`multigpu.training.step`; for serving,
   every tensor-parallel degree that divides the instance, with the largest
   in-flight batch that still meets the per-user speed floor
   (:func:`multigpu.inference.run`);
2. turns time into money (:func:`offer_costs`): a training job costs its
   wall-clock hours x the instances it rents x their price; serving costs the
   GPU-hours per million output tokens x the price per GPU-hour. Both are
   divided by the *utilisation*, the fraction of rented time doing useful
   work. Offers whose system cannot run the workload are kept, flagged
   ``feasible = False`` with the reason, and left out of the ranking;
3. compares an NVLink-class offer with a PCIe-only offer of a comparable GPU
   (:func:`break_even`): the *break-even price*, at which both cost the same
   per job, is the PCIe offer's price x the ratio of their GPU-hours, and the
   break-even premium is how much more per GPU-hour that allows;
4. measures how the comparison moves with price, efficiency and utilisation
   (:func:`sensitivity`, a tornado-ready table).

:func:`interconnect_value` gives the break-even premium of one catalogue
system over another from the model alone (no prices); :func:`landscape`,
:func:`charged_premiums`, :func:`best_by_class`, :func:`job_summary` and
:func:`market_table` are the price-file tables of chapter 4, and the
``plot_*`` functions its figures (house style, :mod:`multigpu.plotting`).

Conventions. Prices are per instance-hour in the file; here they are USD per
GPU-hour (``price_per_gpu_hour_usd``) unless a column says otherwise
(``price_per_gpu_hour`` and ``cost`` are in the offer's ``currency``). A
training cost is per job (``cost_unit`` says so); a serving cost is per
million output tokens, the prompts' prefill included. Times are hours (``_h``)
or seconds (``_s``). The interconnect class of an offer is that of the
catalogue system that models it (:data:`CLASS_BY_TOPOLOGY`): a price file
that pins a bridged box to a PCIe-tree system is costed, and classed, as PCIe.
"""

from __future__ import annotations

import csv
import functools
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from multigpu import catalog, inference, prices, training, workloads
from multigpu.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

DATA_DIR = Path(__file__).parent / "data"
WORKLOADS_CSV = DATA_DIR / "cost_workloads.csv"
KINDS = ("train", "serve")
DTYPES = ("bf16", "fp16", "fp8")
#: Micro-batch sizes (sequences) tried by the training layout search.
MICRO_BATCHES = (1, 2, 4, 8)
#: Recomputation tried in this order; the first that fits wins (more recomputation only costs time).
RECOMPUTE_ORDER = ("none", "selective", "full")
#: Largest in-flight batch tried when serving.
MAX_BATCH = 256
#: Two GPUs are comparable when vendor and architecture match and their memory differs by at most this factor.
COMPARABLE_MEMORY_RATIO = 1.25
#: Interconnect class of an offer, from the topology of the catalogue system that models it.
CLASS_BY_TOPOLOGY = {"nvswitch": "NVSwitch", "mesh": "GPU mesh", "hybrid-cube-mesh": "GPU mesh",
                     "pcie-bridged": "NVLink bridge", "pcie-tree": "PCIe only"}
NVLINK_CLASSES = ("NVSwitch", "NVLink bridge", "GPU mesh")
PCIE_CLASS = "PCIe only"
#: Provider type by name prefix (lower case), for the price landscape; a ``provider_type`` column
#: in the price file wins, and an unknown provider is "other".
PROVIDER_TYPES = {
    "aws": "hyperscaler", "amazon": "hyperscaler", "google": "hyperscaler", "gcp": "hyperscaler",
    "azure": "hyperscaler", "microsoft": "hyperscaler", "oracle": "hyperscaler", "oci": "hyperscaler",
    "alibaba": "hyperscaler", "aliyun": "hyperscaler", "tencent": "hyperscaler", "huawei": "hyperscaler",
    "baidu": "hyperscaler", "volcengine": "hyperscaler",
    "lambda": "GPU cloud", "coreweave": "GPU cloud", "crusoe": "GPU cloud", "nebius": "GPU cloud",
    "hyperstack": "GPU cloud", "runpod": "GPU cloud", "together": "GPU cloud", "voltage park": "GPU cloud",
    "paperspace": "GPU cloud", "fluidstack": "GPU cloud", "vultr": "GPU cloud", "genesis": "GPU cloud",
    "akash": "marketplace", "vast": "marketplace", "tensordock": "marketplace", "salad": "marketplace",
    "smm": "China IDC lessor", "autodl": "China GPU cloud", "zhixingyun": "China GPU cloud",
}
#: Sensitivity defaults: a +-20 % swing, and utilisation down to 70 % of rented time.
SWING = 0.2
UTILISATION_LOW = 0.7


# ---------------------------------------------------------------- workloads


@dataclass(frozen=True)
class Workload:
    """A named workload of the book (a row of ``data/cost_workloads.csv``).

    ``kind`` is ``train`` (``gpus`` GPUs per job, ``tokens_per_param`` x the
    model's parameters training tokens, ``global_batch`` sequences of ``seq``
    tokens per step) or ``serve`` (queries of ``input_tokens`` prompt and
    ``output_tokens`` answer, each user seeing at least
    ``min_tokens_per_s_per_user`` tokens per second).
    """

    id: str
    kind: str
    model: str
    title: str
    dtype: str
    source: str
    rationale: str
    gpus: int | None = None
    tokens_per_param: float | None = None
    seq: int | None = None
    global_batch: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    min_tokens_per_s_per_user: float | None = None

    @property
    def params(self) -> int:
        """Parameters of the workload's model (total)."""
        return workloads.model(self.model).params_total

    @property
    def tokens(self) -> float | None:
        """Training tokens of the job (``tokens_per_param`` x parameters); None for serving."""
        return None if self.tokens_per_param is None else self.tokens_per_param * self.params

    @property
    def steps(self) -> float | None:
        """Training steps of the job: tokens / (global batch x sequence length); None for serving."""
        return None if self.kind != "train" else self.tokens / (self.global_batch * self.seq)

    @property
    def cost_unit(self) -> str:
        return "USD per job" if self.kind == "train" else "USD per 1M output tokens"

    def to_dict(self) -> dict[str, Any]:
        row = {k: getattr(self, k) for k in self.__dataclass_fields__}
        row.update(params_B=self.params / 1e9, tokens_B=None if self.tokens is None else self.tokens / 1e9)
        return row


_TRAIN_COLUMNS = ("gpus", "tokens_per_param", "seq", "global_batch")
_SERVE_COLUMNS = ("input_tokens", "output_tokens", "min_tokens_per_s_per_user")
_WORKLOAD_COLUMNS = ("id", "kind", "model", "title") + _TRAIN_COLUMNS + _SERVE_COLUMNS + ("dtype", "source",
                                                                                           "rationale")


def load_workloads(path: str | Path = WORKLOADS_CSV) -> dict[str, Workload]:
    """The workloads of ``path`` by id, validated; the first problem is an InputError at file:line:column."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", name) from None
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in _WORKLOAD_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"is missing; expected columns {', '.join(_WORKLOAD_COLUMNS)}", name, 1, missing[0])
    out: dict[str, Workload] = {}
    for line, row in enumerate(reader, start=2):
        cells = {k: (v or "").strip() for k, v in row.items() if k}
        if not any(cells.values()):
            continue
        workload = _parse_workload(cells, name, line)
        if workload.id in out:
            raise InputError(f"duplicate workload id '{workload.id}'", name, line, "id")
        out[workload.id] = workload
    if not out:
        raise InputError("has no workloads", name, 1)
    return out


def _parse_workload(cells: dict[str, str], name: str, line: int) -> Workload:
    def need(column: str) -> str:
        if not cells.get(column):
            raise InputError("is empty", name, line, column)
        return cells[column]

    def number(column: str, kind: type) -> Any:
        text = need(column)
        try:
            value = kind(text)
        except ValueError:
            raise InputError(f"'{text}' is not a {'whole ' if kind is int else ''}number", name, line, column) from None
        if not value > 0 or (isinstance(value, float) and not math.isfinite(value)):
            raise InputError(f"'{text}' is not above 0", name, line, column)
        return value

    kind = need("kind")
    if kind not in KINDS:
        raise InputError(f"'{kind}' is not one of {', '.join(KINDS)}", name, line, "kind")
    model = need("model")
    if model not in workloads.models():
        raise InputError(f"unknown model '{model}' (see data/models.csv)", name, line, "model")
    dtype = need("dtype")
    if dtype not in DTYPES:
        raise InputError(f"'{dtype}' is not one of {', '.join(DTYPES)}", name, line, "dtype")
    common = dict(id=need("id"), kind=kind, model=model, title=need("title"), dtype=dtype, source=need("source"),
                  rationale=need("rationale"))
    if kind == "train":
        return Workload(**common, gpus=number("gpus", int), tokens_per_param=number("tokens_per_param", float),
                        seq=number("seq", int), global_batch=number("global_batch", int))
    return Workload(**common, input_tokens=number("input_tokens", int), output_tokens=number("output_tokens", int),
                    min_tokens_per_s_per_user=number("min_tokens_per_s_per_user", float))


@functools.cache
def _workloads() -> dict[str, Workload]:
    return load_workloads()


def workloads_table() -> dict[str, Workload]:
    """The book's workloads by id (``data/cost_workloads.csv``)."""
    return dict(_workloads())


def workload(workload_id: str | Workload) -> Workload:
    """One workload by id; an InputError naming the known ids if there is none."""
    if isinstance(workload_id, Workload):
        return workload_id
    table = _workloads()
    if workload_id not in table:
        raise InputError(f"unknown workload '{workload_id}'; expected one of {', '.join(table)} "
                         f"(python -m multigpu cost --list-workloads)")
    return table[workload_id]


def workload_frame() -> pd.DataFrame:
    """The workloads as a table: id, kind, model, size in billions of parameters, tokens, shape, source."""
    import pandas as pd

    rows = []
    for w in _workloads().values():
        rows.append({"workload": w.id, "kind": w.kind, "model": w.model, "params_B": round(w.params / 1e9, 2),
                     "GPUs per job": w.gpus if w.kind == "train" else None,
                     "tokens_B": None if w.tokens is None else round(w.tokens / 1e9, 1),
                     "seq or in/out tokens": (f"{w.seq}" if w.kind == "train"
                                              else f"{w.input_tokens}/{w.output_tokens}"),
                     "floor_tokens_per_s_per_user": w.min_tokens_per_s_per_user})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------- plans


@dataclass(frozen=True)
class Plan:
    """The best layout of a workload on a system, and how long it takes.

    Training: ``step_time_s`` of the chosen layout split into
    ``noncomm_s`` (compute, and the pipeline bubble's compute share) and
    ``comm_s`` (exposed communication), over ``steps`` steps on ``job_gpus``
    GPUs. Serving: ``job_gpus`` GPUs per replica (tp x pp), and per candidate
    batch the query lifetime split the same way (``lifetime_noncomm_s``,
    ``lifetime_comm_s``) with ``fits``; the chosen batch is the largest that
    meets the floor.
    """

    workload: str
    system: str
    feasible: bool
    reason: str
    layout: str
    job_gpus: int
    details: dict[str, Any]
    steps: float = 0.0
    noncomm_s: float = 0.0
    comm_s: float = 0.0
    lifetime_noncomm_s: tuple[float, ...] = ()
    lifetime_comm_s: tuple[float, ...] = ()
    fits: tuple[bool, ...] = ()

    def time_h(self, compute_efficiency: float = 1.0, comm_bandwidth: float = 1.0) -> float:
        """Training: wall-clock hours of the job. Serving: GPU-hours per million output tokens.

        ``compute_efficiency`` and ``comm_bandwidth`` scale the achievable
        compute (and memory) rate and the communication bandwidth (1 = the
        model's): non-communication time is divided by the first,
        communication time by the second, at the chosen layout (serving
        re-picks the batch). NaN if infeasible.
        """
        if not self.feasible:
            return math.nan
        if self.details["kind"] == "train":
            step = self.noncomm_s / compute_efficiency + self.comm_s / comm_bandwidth
            return self.steps * step / 3600
        rate = self.serve_rate(compute_efficiency, comm_bandwidth)["tokens_per_s_per_gpu"]
        return math.inf if rate <= 0 else 1e6 / (rate * 3600)

    def serve_rate(self, compute_efficiency: float = 1.0, comm_bandwidth: float = 1.0) -> dict[str, float]:
        """Serving: the largest batch meeting the floor and its tokens/s per GPU and per user (0 if none)."""
        d = self.details
        life = (np.asarray(self.lifetime_noncomm_s) / compute_efficiency
                + np.asarray(self.lifetime_comm_s) / comm_bandwidth)
        per_user = d["output_tokens"] / life
        ok = (per_user >= d["floor"]) & np.asarray(self.fits, dtype=bool)
        if not ok.any():
            return {"batch": 0, "tokens_per_s_per_gpu": 0.0, "tokens_per_s_per_user": float(per_user[0])}
        i = int(np.flatnonzero(ok)[-1])
        batch = i + 1
        return {"batch": batch, "tokens_per_s_per_gpu": float(batch * per_user[i] / self.job_gpus),
                "tokens_per_s_per_user": float(per_user[i])}


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@functools.lru_cache(maxsize=4096)
def plan(workload_id: str, system_id: str, gpus_per_instance: int) -> Plan:
    """The best layout of ``workload_id`` on ``system_id`` rented in instances of ``gpus_per_instance`` GPUs.

    Training uses the workload's GPUs (whole instances; a job larger than one
    instance needs instances that are whole catalogue nodes, since the network
    between smaller instances is not modelled) and minimises the step time.
    Serving tries every tensor-parallel degree that divides the instance (and
    fits in one node) and maximises tokens/s per GPU at the floor.
    """
    w = workload(workload_id)
    system = catalog.system(system_id)
    if w.kind == "train":
        return _plan_train(w, system, gpus_per_instance)
    return _plan_serve(w, system, gpus_per_instance)


def _infeasible(w: Workload, system: catalog.System, reason: str, job_gpus: int) -> Plan:
    return Plan(w.id, system.id, False, reason, "", job_gpus, {"kind": w.kind})


def _plan_train(w: Workload, system: catalog.System, gpus_per_instance: int) -> Plan:
    gpus = w.gpus
    node = system.gpus_per_node
    if gpus > gpus_per_instance:
        if gpus % gpus_per_instance:
            return _infeasible(w, system, f"{gpus} GPUs are not a whole number of {gpus_per_instance}-GPU instances",
                               gpus)
        if gpus_per_instance != node:
            return _infeasible(w, system, f"the job spans {gpus // gpus_per_instance} instances of "
                               f"{gpus_per_instance} GPUs; the catalogue system {system.id} models nodes of {node}, "
                               f"so the network between such instances is not modelled", gpus)
    elif gpus > node:
        return _infeasible(w, system, f"the job's {gpus} GPUs sit in one {gpus_per_instance}-GPU instance, which the "
                           f"catalogue system {system.id} models as nodes of {node}; how they are joined inside "
                           f"the instance is not modelled (pin a 'system' in the price file)", gpus)
    model = workloads.model(w.model)
    tp_limit = min(node, gpus_per_instance)
    best: dict[str, Any] | None = None
    least_memory = math.inf
    for tp in _divisors(gpus):
        if tp > tp_limit or model.heads % tp:
            continue
        for pp in _divisors(gpus // tp):
            if model.layers % pp:
                continue
            dp = gpus // (tp * pp)
            for mb in MICRO_BATCHES:
                if w.global_batch % (mb * dp):
                    continue
                for recompute in RECOMPUTE_ORDER:
                    try:
                        r = training.step(w.model, system.id, gpus, tp, pp, w.global_batch, mb, seq=w.seq,
                                          recompute=recompute, sequence_parallel=tp > 1, dtype=w.dtype)
                    except InputError:
                        break
                    least_memory = min(least_memory, r["memory_per_gpu_GB"])
                    if r["fits"]:
                        if best is None or r["step_time_s"] < best["step_time_s"]:
                            best = r
                        break
    gpu = catalog.gpu(system.gpu)
    if best is None:
        if math.isinf(least_memory):
            return _infeasible(w, system, f"no tensor x pipeline split of {gpus} GPUs divides the model", gpus)
        return _infeasible(w, system, f"does not fit: the leanest layout needs {least_memory:.0f} GB per GPU, "
                           f"the {gpu.name} has {gpu.memory_GB:g} GB", gpus)
    exposed = best["exposed_comm_s"]
    m = best["microbatches"]
    compute_mb = best["compute_s"] / m
    comm_mb = (exposed["tp"] + exposed["ep"]) / m
    bubble_comm = best["bubble_s"] * comm_mb / (compute_mb + comm_mb)
    noncomm = best["compute_s"] + best["bubble_s"] - bubble_comm
    comm = best["step_time_s"] - noncomm
    layout = (f"tp{best['tp']} pp{best['pp']} dp{best['dp']} mb{best['micro_batch']}"
              + ("" if best["recompute"] == "none" else f" recompute={best['recompute']}"))
    details = {"kind": "train", "tp": best["tp"], "pp": best["pp"], "dp": best["dp"],
               "micro_batch": best["micro_batch"], "recompute": best["recompute"],
               "step_time_s": best["step_time_s"], "mfu": best["mfu"],
               "memory_per_gpu_GB": best["memory_per_gpu_GB"], "exposed_comm_s": sum(exposed.values())}
    return Plan(w.id, system.id, True, "", layout, gpus, details, steps=w.steps, noncomm_s=noncomm, comm_s=comm)


def _plan_serve(w: Workload, system: catalog.System, gpus_per_instance: int) -> Plan:
    model = workloads.model(w.model)
    batches = np.arange(1, MAX_BATCH + 1)
    best: Plan | None = None
    best_rate = -1.0
    fastest_user, fits_any = 0.0, False
    for tp in _divisors(gpus_per_instance):
        if tp > system.gpus_per_node or model.heads % tp:
            continue
        r = inference.run(w.model, system.id, tp, batches, w.input_tokens, w.output_tokens, dtype=w.dtype)
        life = np.asarray(r["query_time_s"], dtype=float)
        comm = np.asarray(r["comm_fraction"], dtype=float) * life
        fits = np.asarray(r["fits"], dtype=bool)
        if fits[0]:
            fits_any = True
            fastest_user = max(fastest_user, float(r["tokens_per_s_per_user"][0]))
        details = {"kind": "serve", "tp": tp, "pp": 1, "output_tokens": w.output_tokens,
                   "floor": w.min_tokens_per_s_per_user}
        candidate = Plan(w.id, system.id, True, "", f"tp{tp}", tp, details,
                         lifetime_noncomm_s=tuple((life - comm).tolist()), lifetime_comm_s=tuple(comm.tolist()),
                         fits=tuple(fits.tolist()))
        rate = candidate.serve_rate()
        if rate["batch"] and rate["tokens_per_s_per_gpu"] > best_rate:
            best, best_rate = candidate, rate["tokens_per_s_per_gpu"]
    gpu = catalog.gpu(system.gpu)
    if best is None:
        if not fits_any:
            return _infeasible(w, system, f"does not fit: the model's weights and one query's KV cache exceed "
                               f"{gpus_per_instance} x {gpu.memory_GB:g} GB", 0)
        return _infeasible(w, system, f"too slow: the fastest layout gives {fastest_user:.1f} tokens/s per user "
                           f"at batch 1, below the floor of {w.min_tokens_per_s_per_user:g}", 0)
    rate = best.serve_rate()
    details = dict(best.details, batch=rate["batch"], tokens_per_s_per_gpu=rate["tokens_per_s_per_gpu"],
                   tokens_per_s_per_user=rate["tokens_per_s_per_user"])
    return Plan(best.workload, best.system, True, "", f"{best.layout} batch {rate['batch']}", best.job_gpus, details,
                lifetime_noncomm_s=best.lifetime_noncomm_s, lifetime_comm_s=best.lifetime_comm_s, fits=best.fits)


# ------------------------------------------------------------------ offers


def _prices_frame(prices_source: Any = None) -> pd.DataFrame:
    """The offers: a loaded frame as is, else :func:`multigpu.prices.load_prices` of a path (None: active file)."""
    import pandas as pd

    if isinstance(prices_source, pd.DataFrame):
        return prices_source
    return prices.load_prices(prices_source)


def interconnect_class(system_id: str) -> str:
    """NVSwitch, NVLink bridge, GPU mesh or PCIe only: how a catalogue system joins its GPUs."""
    return CLASS_BY_TOPOLOGY[catalog.system(system_id).topology]


def provider_type(provider: str, given: Any = None) -> str:
    """The provider's type: ``given`` (a price-file ``provider_type`` cell) if set, else :data:`PROVIDER_TYPES`."""
    if isinstance(given, str) and given.strip():
        return given.strip()
    name = provider.lower()
    for prefix, kind in PROVIDER_TYPES.items():
        if name.startswith(prefix):
            return kind
    return "other"


def comparable(gpu_a: str, gpu_b: str) -> bool:
    """Whether two catalogue GPUs are comparable: same vendor and architecture, memory within
    :data:`COMPARABLE_MEMORY_RATIO` (A100 SXM 80GB and A100 PCIe 80GB are; B200 and RTX 5090 are not)."""
    a, b = catalog.gpu(gpu_a), catalog.gpu(gpu_b)
    ratio = max(a.memory_GB, b.memory_GB) / min(a.memory_GB, b.memory_GB)
    return a.vendor == b.vendor and a.arch == b.arch and ratio <= COMPARABLE_MEMORY_RATIO


def offer_label(row: Any) -> str:
    """A short name of an offer: provider, instance, pricing (and region when given)."""
    region = row.get("region") if hasattr(row, "get") else None
    where = f", {region}" if isinstance(region, str) and region else ""
    return f"{row['provider']}: {row['instance']} ({row['pricing']}{where})"


def offers(prices_source: Any = None) -> pd.DataFrame:
    """The price file's offers with what the cost model adds: ``offer`` (row number, 0-based),
    ``label``, ``gpu_name``, ``interconnect_class``, ``provider_type`` and ``price_per_gpu_hour``
    (in the offer's currency)."""
    frame = _prices_frame(prices_source).copy()
    frame.insert(0, "offer", range(len(frame)))
    frame["label"] = [offer_label(row) for row in frame.to_dict("records")]
    frame["gpu_name"] = [catalog.gpu(g).name for g in frame["gpu"]]
    frame["interconnect_class"] = [interconnect_class(s) for s in frame["system"]]
    given = frame["provider_type"] if "provider_type" in frame else [None] * len(frame)
    frame["provider_type"] = [provider_type(p, g) for p, g in zip(frame["provider"], given)]
    frame["price_per_gpu_hour"] = frame["price_per_hour"] / frame["gpus_per_instance"]
    return frame


#: Columns of :func:`offer_costs`, in order (the CLI's fields).
COST_COLUMNS = ("offer", "provider", "instance", "gpu", "gpus", "interconnect", "interconnect_class", "system",
                "pricing", "region", "observed", "currency", "price_per_gpu_hour", "price_per_gpu_hour_usd",
                "feasible", "reason", "layout", "job_gpus", "instances", "time_h", "gpu_hours", "cost_usd", "cost",
                "cost_unit", "rank", "mfu", "tokens_per_s_per_gpu", "batch")


def offer_costs(workload_id: str, prices_source: Any = None, utilisation: float = 1.0,
                progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """The cost of one workload on every offer of a price file, ranked.

    ``prices_source``: a price file path, a frame of :func:`multigpu.prices.load_prices`,
    or None for the active file (``MULTIGPU_PRICES``). ``utilisation``: the
    fraction of rented time doing useful work (0-1]. ``progress(i, n)`` is
    called after each offer.

    One row per offer (columns :data:`COST_COLUMNS`): ``gpus`` per instance;
    ``job_gpus`` the GPUs the job uses (serving: one replica, tp x pp);
    ``instances`` rented (serving: 1, replicas fill it); ``time_h`` the job's
    wall-clock hours (serving: GPU-hours per million output tokens);
    ``gpu_hours`` the GPU-hours billed per job (serving: per million output
    tokens); ``cost_usd`` = ``gpu_hours`` x ``price_per_gpu_hour_usd`` /
    ``utilisation``, and ``cost`` the same in the offer's currency. Infeasible
    offers have ``feasible`` False, a ``reason``, empty times and costs, and no
    ``rank``; feasible ones are ranked 1, 2, ... by cost (then time).
    """
    import pandas as pd

    if not 0 < utilisation <= 1:
        raise InputError(f"utilisation {utilisation:g} is not in (0, 1]; expected the fraction of rented time "
                         f"doing useful work")
    w = workload(workload_id)
    table = offers(prices_source)
    fx = prices.load_fx()
    rows = []
    for i, offer in enumerate(table.to_dict("records")):
        rows.append(_offer_row(w, offer, utilisation, fx))
        if progress is not None:
            progress(i + 1, len(table))
    frame = pd.DataFrame(rows, columns=list(COST_COLUMNS))
    feasible = frame[frame["feasible"]].sort_values(["cost_usd", "time_h", "offer"], kind="stable")
    frame["rank"] = pd.Series(range(1, len(feasible) + 1), index=feasible.index, dtype="Int64")
    frame.attrs["workload"] = w.id
    frame.attrs["cost_unit"] = w.cost_unit
    frame.attrs["path"] = table.attrs.get("path")
    return frame


def _offer_row(w: Workload, offer: dict[str, Any], utilisation: float, fx: Any) -> dict[str, Any]:
    per_instance = int(offer["gpus_per_instance"])
    p = plan(w.id, offer["system"], per_instance)
    region = offer.get("region")
    row = {
        "offer": offer["offer"], "provider": offer["provider"], "instance": offer["instance"], "gpu": offer["gpu"],
        "gpus": per_instance, "interconnect": offer["interconnect"],
        "interconnect_class": offer["interconnect_class"], "system": offer["system"], "pricing": offer["pricing"],
        "region": region if isinstance(region, str) else None, "observed": offer["observed"].isoformat(),
        "currency": offer["currency"], "price_per_gpu_hour": offer["price_per_gpu_hour"],
        "price_per_gpu_hour_usd": offer["price_per_gpu_hour_usd"], "feasible": p.feasible, "reason": p.reason,
        "layout": p.layout, "job_gpus": p.job_gpus, "instances": None, "time_h": math.nan,
        "gpu_hours": math.nan, "cost_usd": math.nan, "cost": math.nan, "cost_unit": w.cost_unit, "rank": None,
        "mfu": math.nan, "tokens_per_s_per_gpu": math.nan, "batch": None,
    }
    if not p.feasible:
        return row
    hours = p.time_h()
    if w.kind == "train":
        instances = math.ceil(w.gpus / per_instance)
        billed = hours * instances * per_instance
        row.update(instances=instances, mfu=p.details["mfu"])
    else:
        instances, billed = 1, hours
        row.update(tokens_per_s_per_gpu=p.details["tokens_per_s_per_gpu"], batch=p.details["batch"])
    cost_usd = billed * offer["price_per_gpu_hour_usd"] / utilisation
    row.update(instances=instances, time_h=hours, gpu_hours=billed, cost_usd=cost_usd,
               cost=prices.from_usd(cost_usd, offer["currency"], fx))
    return row


def cost_table(workload_ids: Iterable[str] | None = None, prices_source: Any = None,
               utilisation: float = 1.0) -> pd.DataFrame:
    """Every workload's costs on every offer, stacked (a ``workload`` column first)."""
    import pandas as pd

    table = _prices_frame(prices_source)
    ids = list(workload_ids) if workload_ids is not None else list(_workloads())
    frames = [offer_costs(i, table, utilisation).assign(workload=i) for i in ids]
    out = pd.concat(frames, ignore_index=True)
    return out[["workload"] + [c for c in out.columns if c != "workload"]]


def best_by_class(workload_ids: Iterable[str] | None = None, prices_source: Any = None,
                  pricing: Iterable[str] | None = None) -> pd.DataFrame:
    """Per workload and interconnect class, the cheapest feasible offer (optionally of some pricing types only)."""
    import pandas as pd

    table = _prices_frame(prices_source)
    rows = []
    for wid in (list(workload_ids) if workload_ids is not None else list(_workloads())):
        costs = offer_costs(wid, table)
        if pricing is not None:
            costs = costs[costs["pricing"].isin(list(pricing))]
        costs = costs[costs["feasible"]].sort_values(["cost_usd", "offer"], kind="stable")
        for cls, group in costs.groupby("interconnect_class", sort=False):
            top = group.iloc[0]
            rows.append({"workload": wid, "interconnect_class": cls, "offer": int(top["offer"]),
                         "provider": top["provider"], "instance": top["instance"], "gpu": top["gpu"],
                         "pricing": top["pricing"], "price_per_gpu_hour_usd": top["price_per_gpu_hour_usd"],
                         "layout": top["layout"], "time_h": top["time_h"], "cost_usd": top["cost_usd"],
                         "cost_unit": top["cost_unit"]})
    return pd.DataFrame(rows, columns=["workload", "interconnect_class", "offer", "provider", "instance", "gpu",
                                       "pricing", "price_per_gpu_hour_usd", "layout", "time_h", "cost_usd",
                                       "cost_unit"])


# ---------------------------------------------------------- price landscape


def landscape(prices_source: Any = None) -> pd.DataFrame:
    """The offers as the price landscape: GPU, interconnect class, provider type, pricing, USD per
    GPU-hour (and in the offer's currency), date observed; sorted by GPU, class, price."""
    t = offers(prices_source)
    out = t[["offer", "provider", "provider_type", "instance", "gpu", "gpu_name", "interconnect_class", "pricing",
             "currency", "price_per_gpu_hour", "price_per_gpu_hour_usd", "observed"]].copy()
    return out.sort_values(["gpu_name", "interconnect_class", "price_per_gpu_hour_usd", "offer"],
                           kind="stable").reset_index(drop=True)


def landscape_summary(prices_source: Any = None, by: tuple[str, ...] = ("gpu_name", "interconnect_class")
                      ) -> pd.DataFrame:
    """Per group (default: GPU and interconnect class; any columns of :func:`offers`, e.g.
    ``("provider_type", "interconnect_class")``): offers, lowest / median / highest USD per GPU-hour,
    and the dates the prices were seen; sorted by median price."""
    t = offers(prices_source)
    g = t.groupby(list(by), sort=True)
    out = g.agg(offers=("offer", "size"), min_usd_per_gpu_hour=("price_per_gpu_hour_usd", "min"),
                median_usd_per_gpu_hour=("price_per_gpu_hour_usd", "median"),
                max_usd_per_gpu_hour=("price_per_gpu_hour_usd", "max"),
                observed_from=("observed", "min"), observed_to=("observed", "max")).reset_index()
    out["observed_from"] = out["observed_from"].map(lambda d: d.isoformat())
    out["observed_to"] = out["observed_to"].map(lambda d: d.isoformat())
    return out.sort_values(["median_usd_per_gpu_hour"] + list(by), kind="stable").reset_index(drop=True)


def charged_premiums(prices_source: Any = None) -> pd.DataFrame:
    """The NVLink-class over PCIe-only premium actually charged: same provider, same pricing type,
    comparable GPUs (:func:`comparable`). One row per pair; ``premium_pct`` = (NVLink price /
    PCIe price - 1) x 100, per GPU-hour. Empty (with the columns) if the file has no such pair."""
    import pandas as pd

    t = offers(prices_source)
    rows = []
    for nv in t[t["interconnect_class"].isin(NVLINK_CLASSES)].to_dict("records"):
        for pc in t[t["interconnect_class"] == PCIE_CLASS].to_dict("records"):
            same = nv["provider"] == pc["provider"] and nv["pricing"] == pc["pricing"]
            if not same or not comparable(nv["gpu"], pc["gpu"]):
                continue
            rows.append({"provider": nv["provider"], "pricing": nv["pricing"], "nvlink_offer": nv["offer"],
                         "nvlink_instance": nv["instance"], "nvlink_gpu": nv["gpu"],
                         "interconnect_class": nv["interconnect_class"], "pcie_offer": pc["offer"],
                         "pcie_instance": pc["instance"], "pcie_gpu": pc["gpu"],
                         "nvlink_usd_per_gpu_hour": nv["price_per_gpu_hour_usd"],
                         "pcie_usd_per_gpu_hour": pc["price_per_gpu_hour_usd"],
                         "premium_usd_per_gpu_hour": nv["price_per_gpu_hour_usd"] - pc["price_per_gpu_hour_usd"],
                         "premium_pct": 100 * (nv["price_per_gpu_hour_usd"] / pc["price_per_gpu_hour_usd"] - 1)})
    return pd.DataFrame(rows, columns=["provider", "pricing", "nvlink_offer", "nvlink_instance", "nvlink_gpu",
                                       "interconnect_class", "pcie_offer", "pcie_instance", "pcie_gpu",
                                       "nvlink_usd_per_gpu_hour", "pcie_usd_per_gpu_hour",
                                       "premium_usd_per_gpu_hour", "premium_pct"])


# -------------------------------------------------------------- break-even

BREAK_EVEN_COLUMNS = (
    "workload", "offer", "provider", "instance", "gpu", "interconnect_class", "system", "pricing",
    "price_per_gpu_hour_usd", "reference", "reference_offer", "reference_provider", "reference_instance",
    "reference_gpu", "reference_system", "reference_pricing", "reference_price_per_gpu_hour_usd", "gpu_hours",
    "reference_gpu_hours", "gpu_hour_ratio", "break_even_price_per_gpu_hour_usd", "break_even_premium_pct",
    "break_even_premium_usd", "charged_premium_pct", "charged_premium_usd", "cost_usd", "reference_cost_usd",
    "nvlink_cheaper", "saving_pct", "cost_unit")
#: How the PCIe reference of an NVLink offer was found, best first.
REFERENCE_KINDS = ("same provider", "cheapest comparable, same pricing", "cheapest comparable",
                   "no comparable PCIe offer can run it")


def break_even(workload_id: str, prices_source: Any = None, utilisation: float = 1.0) -> pd.DataFrame:
    """Break-even premium of every feasible NVLink-class offer over a comparable PCIe-only offer.

    The reference is a feasible PCIe-only offer of a comparable GPU: the same
    provider and pricing type if there is one (``reference`` = "same
    provider"), else the cheapest per job of the same pricing type, else the
    cheapest of any. When comparable PCIe-only offers exist but none can run
    the workload (too slow for the floor, or too small), the reference is the
    lowest-priced of them and the break-even price, premium and GPU-hour ratio
    are infinite (``reference`` says so). The break-even price per GPU-hour is the one at which the
    NVLink offer's cost per job equals the reference's:
    ``reference_cost_usd x utilisation / gpu_hours``, i.e. the reference price
    x ``gpu_hour_ratio`` (reference GPU-hours / NVLink GPU-hours).
    ``break_even_premium_pct`` is how much above the reference price that is;
    ``charged_premium_pct`` what the price file charges; the NVLink offer is
    cheaper per job exactly when the charged premium is below the break-even
    one. Empty (with the columns) when no pair exists.
    """
    import pandas as pd

    costs = offer_costs(workload_id, prices_source, utilisation)
    nvl = costs[costs["feasible"] & costs["interconnect_class"].isin(NVLINK_CLASSES)]
    pcie_all = costs[costs["interconnect_class"] == PCIE_CLASS]
    rows = []
    for nv in nvl.to_dict("records"):
        comparable_all = pcie_all[[comparable(nv["gpu"], g) for g in pcie_all["gpu"]]]
        if comparable_all.empty:
            continue
        candidates = comparable_all[comparable_all["feasible"]]
        same = candidates[(candidates["provider"] == nv["provider"]) & (candidates["pricing"] == nv["pricing"])]
        same_pricing = candidates[candidates["pricing"] == nv["pricing"]]
        if candidates.empty:  # PCIe cannot run it at all: any premium is worth paying
            kind = REFERENCE_KINDS[-1]
            pool = comparable_all[(comparable_all["provider"] == nv["provider"])
                                  & (comparable_all["pricing"] == nv["pricing"])]
            ref = (pool if not pool.empty else comparable_all).sort_values(
                ["price_per_gpu_hour_usd", "offer"], kind="stable").iloc[0]
        else:
            for kind, pool in zip(REFERENCE_KINDS, (same, same_pricing, candidates)):
                if not pool.empty:
                    ref = pool.sort_values(["cost_usd", "offer"], kind="stable").iloc[0]
                    break
        p_ref, p_nv = ref["price_per_gpu_hour_usd"], nv["price_per_gpu_hour_usd"]
        if candidates.empty:
            be_price, ratio, cheaper, saving = math.inf, math.inf, True, math.nan
        else:
            be_price = ref["cost_usd"] * utilisation / nv["gpu_hours"]
            ratio = ref["gpu_hours"] / nv["gpu_hours"]
            cheaper, saving = bool(nv["cost_usd"] < ref["cost_usd"]), 100 * (1 - nv["cost_usd"] / ref["cost_usd"])
        rows.append({
            "workload": workload_id, "offer": nv["offer"], "provider": nv["provider"], "instance": nv["instance"],
            "gpu": nv["gpu"], "interconnect_class": nv["interconnect_class"], "system": nv["system"],
            "pricing": nv["pricing"], "price_per_gpu_hour_usd": p_nv, "reference": kind,
            "reference_offer": int(ref["offer"]), "reference_provider": ref["provider"],
            "reference_instance": ref["instance"], "reference_gpu": ref["gpu"], "reference_system": ref["system"],
            "reference_pricing": ref["pricing"], "reference_price_per_gpu_hour_usd": p_ref,
            "gpu_hours": nv["gpu_hours"], "reference_gpu_hours": ref["gpu_hours"], "gpu_hour_ratio": ratio,
            "break_even_price_per_gpu_hour_usd": be_price,
            "break_even_premium_pct": 100 * (be_price / p_ref - 1), "break_even_premium_usd": be_price - p_ref,
            "charged_premium_pct": 100 * (p_nv / p_ref - 1), "charged_premium_usd": p_nv - p_ref,
            "cost_usd": nv["cost_usd"], "reference_cost_usd": ref["cost_usd"], "nvlink_cheaper": cheaper,
            "saving_pct": saving, "cost_unit": nv["cost_unit"]})
    return pd.DataFrame(rows, columns=list(BREAK_EVEN_COLUMNS))


def interconnect_value(nvlink_system: str = "dgx-a100", pcie_system: str = "pcie-a100-8",
                       workload_ids: Iterable[str] | None = None, gpus_per_instance: int = 8) -> pd.DataFrame:
    """What the interconnect alone is worth, from the model only (no prices): per workload, the
    GPU-hours per job (serving: per million output tokens) of two systems with comparable GPUs, their
    ratio, and the break-even premium it allows, ``100 x (ratio - 1)`` %: an NVLink instance may charge
    that much more per GPU-hour than the PCIe one and still cost the same per job. Infinite when the
    PCIe system cannot run the workload (``pcie_reason`` says why)."""
    import pandas as pd

    rows = []
    for wid in (list(workload_ids) if workload_ids is not None else list(_workloads())):
        w = workload(wid)
        hours = {}
        for side, system in (("nvlink", nvlink_system), ("pcie", pcie_system)):
            p = plan(wid, system, gpus_per_instance)
            gpu_hours = p.time_h() * (w.gpus if w.kind == "train" else 1) if p.feasible else math.nan
            hours[side] = (p, gpu_hours)
        (nv, nv_h), (pc, pc_h) = hours["nvlink"], hours["pcie"]
        if not nv.feasible:
            ratio = math.nan
        elif not pc.feasible:
            ratio = math.inf
        else:
            ratio = pc_h / nv_h
        rows.append({"workload": wid, "kind": w.kind, "nvlink_system": nvlink_system, "pcie_system": pcie_system,
                     "nvlink_layout": nv.layout, "pcie_layout": pc.layout, "nvlink_gpu_hours": nv_h,
                     "pcie_gpu_hours": pc_h, "gpu_hour_ratio": ratio,
                     "break_even_premium_pct": 100 * (ratio - 1), "pcie_reason": pc.reason,
                     "unit": "GPU-hours per job" if w.kind == "train" else "GPU-hours per 1M output tokens"})
    return pd.DataFrame(rows)


def break_even_summary(workload_ids: Iterable[str] | None = None, prices_source: Any = None) -> pd.DataFrame:
    """Per workload and pair of systems (NVLink-class vs PCIe-only, comparable GPUs): the break-even
    premium (%, the GPU-hour ratio - 1) against the premiums charged by the same provider and, where
    none, against the cheapest comparable offer; with how many NVLink offers are cheaper per job."""
    import pandas as pd

    table = _prices_frame(prices_source)
    rows = []
    for wid in (list(workload_ids) if workload_ids is not None else list(_workloads())):
        be = break_even(wid, table)
        for (system, ref_system), g in be.groupby(["system", "reference_system"], sort=False):
            same = g[g["reference"] == REFERENCE_KINDS[0]]["charged_premium_pct"]
            rows.append({
                "workload": wid, "nvlink_system": system, "nvlink_class": g["interconnect_class"].iloc[0],
                "nvlink_gpu": g["gpu"].iloc[0], "pcie_system": ref_system, "pcie_gpu": g["reference_gpu"].iloc[0],
                "break_even_premium_pct": float(g["break_even_premium_pct"].median()),
                "charged_same_provider_pct_min": float(same.min()) if len(same) else math.nan,
                "charged_same_provider_pct_max": float(same.max()) if len(same) else math.nan,
                "charged_pct_min": float(g["charged_premium_pct"].min()),
                "charged_pct_max": float(g["charged_premium_pct"].max()),
                "nvlink_offers": len(g), "nvlink_cheaper": int(g["nvlink_cheaper"].sum())})
    return pd.DataFrame(rows, columns=["workload", "nvlink_system", "nvlink_class", "nvlink_gpu", "pcie_system",
                                       "pcie_gpu", "break_even_premium_pct", "charged_same_provider_pct_min",
                                       "charged_same_provider_pct_max", "charged_pct_min", "charged_pct_max",
                                       "nvlink_offers", "nvlink_cheaper"])


def nvlink_vs_pcie(workload_ids: Iterable[str] | None = None, prices_source: Any = None,
                   pricing: Iterable[str] | None = ("on-demand",)) -> pd.DataFrame:
    """Per workload, the cheapest feasible NVLink-class offer against the cheapest feasible PCIe-only
    offer of any GPU (of the given pricing types; None: all): costs, their ratio and which is cheaper.
    ``params_B`` sorts the workloads by model size (the article's C26 asks at which size NVLink wins)."""
    import pandas as pd

    table = _prices_frame(prices_source)
    rows = []
    for wid in (list(workload_ids) if workload_ids is not None else list(_workloads())):
        w = workload(wid)
        costs = offer_costs(wid, table)
        if pricing is not None:
            costs = costs[costs["pricing"].isin(list(pricing))]
        costs = costs[costs["feasible"]].sort_values(["cost_usd", "offer"], kind="stable")
        nv = costs[costs["interconnect_class"].isin(NVLINK_CLASSES)]
        pc = costs[costs["interconnect_class"] == PCIE_CLASS]
        row = {"workload": wid, "kind": w.kind, "params_B": w.params / 1e9, "nvlink_offer": None,
               "nvlink_gpu": None, "nvlink_cost_usd": math.nan, "pcie_offer": None, "pcie_gpu": None,
               "pcie_cost_usd": math.nan, "nvlink_over_pcie": math.nan, "cheaper": "n/a", "cost_unit": w.cost_unit}
        if not nv.empty:
            row.update(nvlink_offer=int(nv.iloc[0]["offer"]), nvlink_gpu=nv.iloc[0]["gpu"],
                       nvlink_cost_usd=float(nv.iloc[0]["cost_usd"]))
        if not pc.empty:
            row.update(pcie_offer=int(pc.iloc[0]["offer"]), pcie_gpu=pc.iloc[0]["gpu"],
                       pcie_cost_usd=float(pc.iloc[0]["cost_usd"]))
        if not nv.empty and not pc.empty:
            ratio = row["nvlink_cost_usd"] / row["pcie_cost_usd"]
            row.update(nvlink_over_pcie=ratio, cheaper="NVLink" if ratio < 1 else "PCIe")
        elif not nv.empty or not pc.empty:
            row["cheaper"] = "NVLink (only)" if not nv.empty else "PCIe (only)"
        rows.append(row)
    return pd.DataFrame(rows).sort_values(["kind", "params_B", "workload"], kind="stable").reset_index(drop=True)


# ------------------------------------------------------------- sensitivity


def default_pair(workload_id: str, prices_source: Any = None) -> tuple[int, int] | None:
    """The (NVLink offer, PCIe offer) pair the book's sensitivity uses for a workload: from
    :func:`break_even`, a same-provider pair if any, on-demand first, then the cheapest NVLink offer.
    None if there is no pair."""
    be = break_even(workload_id, prices_source)
    if be.empty:
        return None
    be = be.assign(_kind=be["reference"].map(REFERENCE_KINDS.index), _od=be["pricing"] != "on-demand")
    top = be.sort_values(["_kind", "_od", "cost_usd", "offer"], kind="stable").iloc[0]
    return int(top["offer"]), int(top["reference_offer"])


def sensitivity(workload_id: str, nvlink_offer: int | None = None, pcie_offer: int | None = None,
                prices_source: Any = None, swing: float = SWING,
                utilisation_low: float = UTILISATION_LOW) -> pd.DataFrame:
    """How the NVLink-over-PCIe cost ratio of one pair of offers moves: a tornado-ready table.

    Offers are row numbers of the price file (``offer`` of :func:`offer_costs`;
    default :func:`default_pair`). One row per factor, varied alone from its
    low to its high setting, the others at base (price as filed, the model's
    efficiency, full utilisation):

    - the price of each offer, x (1 - ``swing``) and x (1 + ``swing``);
    - compute efficiency (both offers): achievable compute and memory rate x
      (1 -/+ ``swing``), i.e. non-communication time divided by it;
    - communication bandwidth (both offers): achieved bandwidth x (1 -/+ ``swing``);
    - utilisation of each offer, from ``utilisation_low`` to 1.

    Columns: ``factor``, ``low`` and ``high`` (the settings, as multipliers or
    fractions), ``ratio_low`` and ``ratio_high`` (NVLink cost / PCIe cost; below
    1 the NVLink offer is cheaper), ``ratio_base``, the two offers' costs at
    each end, and ``spread`` (|ratio_high - ratio_low|); sorted by spread, the
    widest first. Serving re-picks the batch at each setting; training keeps
    the chosen layout (a first-order estimate).
    """
    import pandas as pd

    if nvlink_offer is None or pcie_offer is None:
        pair = default_pair(workload_id, prices_source)
        if pair is None:
            raise InputError(f"no NVLink-class offer with a comparable PCIe-only offer runs '{workload_id}' "
                             f"in this price file")
        nvlink_offer, pcie_offer = pair
    w = workload(workload_id)
    table = offers(prices_source)
    sides = {}
    for side, index in (("nvlink", nvlink_offer), ("pcie", pcie_offer)):
        if index not in set(table["offer"]):
            raise InputError(f"no offer {index} in the price file (offers are numbered 0-{len(table) - 1})")
        o = table[table["offer"] == index].iloc[0]
        p = plan(w.id, o["system"], int(o["gpus_per_instance"]))
        if not p.feasible:
            raise InputError(f"offer {index} ({o['label']}) cannot run '{w.id}': {p.reason}")
        per_instance = int(o["gpus_per_instance"])
        billed_per_hour = (math.ceil(w.gpus / per_instance) * per_instance) if w.kind == "train" else 1
        sides[side] = (p, billed_per_hour, float(o["price_per_gpu_hour_usd"]))

    def cost(side: str, price: float = 1.0, compute: float = 1.0, comm: float = 1.0, util: float = 1.0) -> float:
        p, billed, usd = sides[side]
        return p.time_h(compute, comm) * billed * usd * price / util

    def both(**kw_by_side: dict[str, float]) -> tuple[float, float]:
        return cost("nvlink", **kw_by_side.get("nvlink", {})), cost("pcie", **kw_by_side.get("pcie", {}))

    lo, hi = 1 - swing, 1 + swing
    factors = [
        ("price of the NVLink offer", lo, hi, lambda v: both(nvlink={"price": v})),
        ("price of the PCIe offer", lo, hi, lambda v: both(pcie={"price": v})),
        ("compute efficiency (both)", lo, hi, lambda v: both(nvlink={"compute": v}, pcie={"compute": v})),
        ("communication bandwidth (both)", lo, hi, lambda v: both(nvlink={"comm": v}, pcie={"comm": v})),
        ("utilisation of the NVLink offer", utilisation_low, 1.0, lambda v: both(nvlink={"util": v})),
        ("utilisation of the PCIe offer", utilisation_low, 1.0, lambda v: both(pcie={"util": v})),
    ]
    base_nv, base_pc = both()
    rows = []
    for name, low, high, f in factors:
        (nv_lo, pc_lo), (nv_hi, pc_hi) = f(low), f(high)
        rows.append({"factor": name, "low": low, "high": high, "ratio_low": nv_lo / pc_lo,
                     "ratio_high": nv_hi / pc_hi, "ratio_base": base_nv / base_pc,
                     "nvlink_cost_low_usd": nv_lo, "nvlink_cost_high_usd": nv_hi,
                     "pcie_cost_low_usd": pc_lo, "pcie_cost_high_usd": pc_hi,
                     "spread": abs(nv_hi / pc_hi - nv_lo / pc_lo)})
    out = pd.DataFrame(rows).sort_values("spread", ascending=False, kind="stable").reset_index(drop=True)
    out.attrs.update(workload=w.id, nvlink_offer=nvlink_offer, pcie_offer=pcie_offer, cost_unit=w.cost_unit)
    return out


# ------------------------------------------------------------------ helpers


def job_summary(workload_ids: Iterable[str] | None = None, prices_source: Any = None) -> pd.DataFrame:
    """Per workload: feasible offers, the cheapest offer with its cost, time and layout, and the most
    expensive feasible cost (the spread a buyer can lose by choosing blind)."""
    import pandas as pd

    table = _prices_frame(prices_source)
    rows = []
    for wid in (list(workload_ids) if workload_ids is not None else list(_workloads())):
        costs = offer_costs(wid, table)
        ok = costs[costs["feasible"]].sort_values("rank")
        row = {"workload": wid, "feasible_offers": len(ok), "offers": len(costs), "cheapest_offer": None,
               "cheapest_gpu": None, "cheapest_class": None, "layout": None, "time_h": math.nan,
               "cost_usd": math.nan, "max_cost_usd": math.nan, "cost_unit": workload(wid).cost_unit}
        if not ok.empty:
            top = ok.iloc[0]
            row.update(cheapest_offer=int(top["offer"]), cheapest_gpu=top["gpu"],
                       cheapest_class=top["interconnect_class"], layout=top["layout"], time_h=float(top["time_h"]),
                       cost_usd=float(top["cost_usd"]), max_cost_usd=float(ok["cost_usd"].max()))
        rows.append(row)
    return pd.DataFrame(rows)


class Progress:
    """A progress callback for :func:`offer_costs` that writes to ``stream`` only once ``after_s`` seconds
    have passed (so fast runs stay silent), and ends its line when done."""

    def __init__(self, stream: Any, after_s: float = 2.0, what: str = "offers") -> None:
        self.stream, self.after_s, self.what = stream, after_s, what
        self.start = time.monotonic()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if time.monotonic() - self.start < self.after_s and not self.shown:
            return
        self.shown = True
        end = "\n" if done == total else ""
        self.stream.write(f"\rcost: {done}/{total} {self.what} evaluated{end}")
        self.stream.flush()


def market_table(currency: str = "CNY", workload_ids: Iterable[str] = (), prices_source: Any = None
                 ) -> pd.DataFrame:
    """The offers quoted in ``currency``: price per GPU-hour in it and in USD, and for each workload of
    ``workload_ids`` the cost in that currency (``cost_<workload>``; empty where infeasible).
    Empty (with the columns) when the file has no offer in ``currency``."""
    import pandas as pd

    table = _prices_frame(prices_source)
    t = offers(table)
    t = t[t["currency"] == currency]
    out = pd.DataFrame({"provider": t["provider"], "instance": t["instance"], "gpu": t["gpu"],
                        "interconnect_class": t["interconnect_class"], "pricing": t["pricing"],
                        "observed": t["observed"].map(lambda d: d.isoformat()),
                        f"price_{currency}_per_gpu_hour": t["price_per_gpu_hour"],
                        "price_USD_per_gpu_hour": t["price_per_gpu_hour_usd"]})
    for wid in workload_ids:
        costs = offer_costs(wid, table).set_index("offer")
        unit = "per_job" if workload(wid).kind == "train" else "per_1M_tokens"
        out[f"{wid} ({currency} {unit})"] = [costs.loc[i, "cost"] for i in t["offer"]]
    return out.reset_index(drop=True)


# ------------------------------------------------------------------ figures


def plot_landscape(ax: Any, prices_source: Any = None) -> None:
    """Every offer's USD per GPU-hour (log scale) by GPU, one marker per interconnect class; hollow
    markers for spot, reserved and community prices, filled for on-demand."""
    from multigpu import plotting

    t = offers(prices_source)
    order = (t.groupby("gpu_name")["price_per_gpu_hour_usd"].median().sort_values(kind="stable").index.tolist())
    y = {g: i for i, g in enumerate(order)}
    classes = [c for c in (*NVLINK_CLASSES, PCIE_CLASS) if c in set(t["interconnect_class"])]
    for i, cls in enumerate(classes):
        part = t[t["interconnect_class"] == cls]
        color, marker = plotting.COLORS[i % len(plotting.COLORS)], plotting.MARKERS[i % len(plotting.MARKERS)]
        for on_demand in (True, False):
            sel = part[(part["pricing"] == "on-demand") == on_demand]
            if sel.empty:
                continue
            offset = (i - (len(classes) - 1) / 2) * 0.12
            ax.scatter(sel["price_per_gpu_hour_usd"], [y[g] + offset for g in sel["gpu_name"]], marker=marker,
                       s=36, color=color if on_demand else "none", edgecolors=color, linewidths=1.2,
                       label=f"{cls}, {'on-demand' if on_demand else 'spot / reserved / community'}")
    ax.set_xscale("log")
    ax.set_yticks(range(len(order)), order, fontsize=8.5)
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower right", fontsize=7.5)


def plot_break_even(ax: Any, value: pd.DataFrame, charged: pd.DataFrame | None = None) -> None:
    """Break-even premium (%, log scale) per workload for each system pair of ``value``
    (:func:`interconnect_value`, several pairs stacked), infinite ones drawn to the edge, against the
    band of premiums charged by the same provider (``charged``: :func:`charged_premiums`)."""
    from multigpu import plotting

    data = value.copy()
    data["pair"] = [f"{catalog.system(a).name.split(' /')[0]} vs {catalog.system(b).name.split(' (')[0]}"
                    for a, b in zip(data["nvlink_system"], data["pcie_system"])]
    finite = data.loc[data["break_even_premium_pct"].map(math.isfinite), "break_even_premium_pct"]
    top = 10 ** math.ceil(math.log10(max([100.0, *finite.clip(lower=1).tolist()]) * 2))
    floor = 0.1
    order = list(dict.fromkeys(data["workload"]))
    pairs = list(dict.fromkeys(data["pair"]))
    height = 0.8 / len(pairs)
    hatch = plotting.hatches()
    for j, pair in enumerate(pairs):
        part = data[data["pair"] == pair]
        ys = [order.index(w) + (j - (len(pairs) - 1) / 2) * height for w in part["workload"]]
        values = [top if math.isinf(v) else max(v, floor) for v in part["break_even_premium_pct"]]
        ax.barh(ys, [v - floor for v in values], height, left=floor, label=pair, hatch=next(hatch),
                color=plotting.COLORS[(2 * j + 2) % len(plotting.COLORS)], edgecolor="black", linewidth=0.6)
        for yv, v in zip(ys, part["break_even_premium_pct"]):
            text = "PCIe misses the floor: unbounded" if math.isinf(v) else f"{v:.1f} %".replace("-0.0", "0.0")
            ax.annotate(text, (top if math.isinf(v) else max(v, floor), yv), textcoords="offset points",
                        xytext=(-4 if math.isinf(v) else 3, 0), ha="right" if math.isinf(v) else "left",
                        va="center", fontsize=7, color="white" if math.isinf(v) else "black")
    if charged is not None and not charged.empty:
        lo, hi = charged["premium_pct"].min(), charged["premium_pct"].max()
        ax.axvspan(max(lo, floor), max(hi, floor * 1.5), color="#bbbbbb", alpha=0.5,
                   label="premium charged (same provider, price file)")
    ax.set_xscale("log")
    ax.set_xlim(floor, top)
    ax.set_yticks(range(len(order)), order, fontsize=8)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.legend(loc="upper right", fontsize=7, framealpha=0.9, frameon=True)


def _short_label(workload_id: str) -> str:
    """A two-line tick label: the model size, and the query shape and floor for serving."""
    w = workload(workload_id)
    family, size = w.model.rsplit("-", 1)
    if w.kind == "train":
        return f"{family}\n{size.upper()}"
    return f"{size.upper()} {w.input_tokens // 1024}K/{w.output_tokens}\n{w.min_tokens_per_s_per_user:g} tok/s"


def plot_best_by_class(axes: Any, best: pd.DataFrame) -> None:
    """Two panels: the cheapest offer per interconnect class for the training jobs (USD per job) and
    the serving targets (USD per million output tokens), grouped bars on a log scale."""
    from multigpu import plotting

    classes = [c for c in (*NVLINK_CLASSES, PCIE_CLASS) if c in set(best["interconnect_class"])]
    for ax, kind, unit in zip(axes, ("train", "serve"), ("USD per job", "USD per 1M output tokens")):
        part = best[[workload(w).kind == kind for w in best["workload"]]]
        names = list(dict.fromkeys(part["workload"]))
        width = 0.8 / max(1, len(classes))
        hatch = plotting.hatches()
        for i, cls in enumerate(classes):
            rows = part[part["interconnect_class"] == cls]
            xs = [names.index(w) + (i - (len(classes) - 1) / 2) * width for w in rows["workload"]]
            ax.bar(xs, rows["cost_usd"], width, label=cls, hatch=next(hatch),
                   color=plotting.COLORS[(i + 1) % len(plotting.COLORS)], edgecolor="black", linewidth=0.6)
        ax.set_yscale("log")
        ax.set_ylabel(f"cheapest offer ({unit}, log scale)")
        ax.set_xticks(range(len(names)), [_short_label(n) for n in names], fontsize=7.5)
        ax.set_title("training jobs" if kind == "train" else "serving targets", fontsize=10)
        ax.grid(axis="x", visible=False)
    axes[0].legend(loc="upper left", fontsize=7.5)
    axes[0].figure.subplots_adjust(bottom=0.2, wspace=0.35)


def plot_tornado(ax: Any, table: pd.DataFrame | None, title: str = "") -> None:
    """A tornado of :func:`sensitivity`: each factor's NVLink / PCIe cost ratio from its low to its high
    setting, around the base ratio; the dashed line at 1 is where the two offers cost the same."""
    from multigpu import plotting

    if table is None or table.empty:
        ax.text(0.5, 0.5, "no NVLink / PCIe pair in this price file", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_yticks([])
        return
    base = float(table["ratio_base"].iloc[0])
    ys = range(len(table))
    hatch = plotting.hatches()
    low_hatch, high_hatch = next(hatch), next(hatch)
    ax.barh(ys, table["ratio_low"] - base, left=base, color=plotting.COLORS[5], edgecolor="black", linewidth=0.6,
            hatch=low_hatch, label="low setting")
    ax.barh(ys, table["ratio_high"] - base, left=base, color=plotting.COLORS[1], edgecolor="black",
            linewidth=0.6, hatch=high_hatch, label="high setting")
    ax.axvline(base, color="black", linewidth=1.0)
    ax.axvline(1.0, color="#444444", linewidth=1.0, linestyle="--", label="equal cost")
    ax.set_yticks(list(ys), [f.replace(" (both)", "\n(both offers)").replace(" of the ", "\nof the ")
                             for f in table["factor"]], fontsize=7.5)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right", fontsize=7)


def fmt(value: Any, spec: str = ".1f", unit: str = "", none: str = "n/a") -> str:
    """A number as prose text: ``format(value, spec)`` with ``unit`` appended; ``none`` for a missing
    value (None, NaN) and "unbounded" for infinity. For glued text that must read right with any
    price file, including one that lacks the offers a number needs."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return none
    if isinstance(value, float) and math.isinf(value):
        return "unbounded"
    return f"{format(value, spec)}{unit}"
