"""Cost: a price table turns model time into money, per job and per million tokens.

For a named workload (:mod:`multigpu.market.workloads`: a training job or a
serving target) and every offer of a price table (:class:`~multigpu.market.prices.PriceTable`),
this module

1. finds the best layout the offer's system can run (:func:`plan`), with the
   project's one training search and one serving search
   (:func:`multigpu.market.search.train`, :func:`multigpu.market.search.serve`);
2. turns time into money (:func:`offer_costs`): a training job costs its
   wall-clock hours x the instances it rents x their price; serving costs the
   GPU-hours per million output tokens x the price per GPU-hour. Both are
   divided by the *utilisation*, the fraction of rented time doing useful
   work. Offers whose system cannot run the workload are kept, flagged
   ``feasible = False`` with the reason, and left out of the ranking.

Renting frictions (optional price-file columns, :mod:`multigpu.market.prices`).
An offer with ``scale_out`` ``none`` has no network between its instances: a
training job that needs more GPUs than one instance holds is infeasible there
("no network between instances"); a job inside one instance is costed as
before. An offer with a ``min_lease_h`` rents for at least that many hours: a
training job pays ``price x max(rented hours, min_lease_h) x instances``, the
rented hours being the job's wall-clock hours over the utilisation. Serving
costs per million tokens assume an instance used without a break (the
utilisation says how fully), so a minimum term does not change them.

The comparisons of an NVLink-class offer with a PCIe-only one are in
:mod:`multigpu.market.premium`, their sensitivity in
:mod:`multigpu.market.sensitivity`.

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

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from multigpu.comm import calibration
from multigpu.comm.calibration import Calibration
from multigpu.common.errors import InputError
from multigpu.common.findings import Sentence, Word, msg, say
from multigpu.compute.layout import DEFAULT_TRAINING_STACK
from multigpu.hardware import catalog
from multigpu.market import prices, search
from multigpu.market.prices import PriceTable
from multigpu.market.search import ServingOption, TrainingLayout
from multigpu.market.workloads import Workload, workload, workloads_table

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


# ------------------------------------------------------------------- plans


@dataclass(frozen=True)
class WorkloadPlan:
    """The best layout of a named workload on a system rented in instances of ``gpus_per_instance`` GPUs.

    Training: ``training`` is the layout (:class:`~multigpu.market.search.TrainingLayout`) over ``steps``
    steps on ``job_gpus`` GPUs. Serving: ``serving`` is the tensor- (and expert-) parallel degree at its batch
    (:class:`~multigpu.market.search.ServingOption`), ``job_gpus`` GPUs per replica. Infeasible plans have
    neither, and a ``reason``.
    """

    workload: str
    system: str
    gpus_per_instance: int
    feasible: bool
    reason: str
    job_gpus: int
    steps: float = 0.0
    training: TrainingLayout | None = None
    serving: ServingOption | None = None

    @property
    def layout(self) -> str:
        """The layout in words: the training layout's label, or ``tp2 batch 9`` (``tp1 ep8 batch 512`` with expert
        parallelism; "" if infeasible)."""
        if self.training is not None:
            return self.training.label
        if self.serving is not None:
            return f"{self.serving.label} batch {self.serving.batch}"
        return ""

    def time_h(self, compute_efficiency: float = 1.0, comm_bandwidth: float = 1.0) -> float:
        """Training: wall-clock hours of the job. Serving: GPU-hours per million output tokens.

        ``compute_efficiency`` and ``comm_bandwidth`` scale the achievable
        compute (and memory) rate and the communication bandwidth (1 = the
        model's): non-communication time is divided by the first,
        communication time by the second, at the chosen layout (serving
        re-picks the batch). NaN if infeasible.
        """
        if self.training is not None:
            step = self.training.noncomm_s / compute_efficiency + self.training.comm_s / comm_bandwidth
            return self.steps * step / 3600
        if self.serving is not None:
            rate = self.serving.at(compute_efficiency, comm_bandwidth).tokens_per_s_per_gpu
            return math.inf if rate <= 0 else 1e6 / (rate * 3600)
        return math.nan


def plan(workload_id: str | Workload, system_id: str, gpus_per_instance: int,
         cal: Calibration | None = None, stack: str = DEFAULT_TRAINING_STACK) -> WorkloadPlan:
    """The best layout of a workload on ``system_id`` rented in instances of ``gpus_per_instance`` GPUs.

    Training uses the workload's GPUs (whole instances; a job larger than one
    instance needs instances that are whole catalogue nodes, since the network
    between smaller instances is not modelled) and the fastest layout of
    :func:`multigpu.market.search.train`. Serving uses
    :func:`multigpu.market.search.serve` on one instance. ``stack``: the training stack a training job runs
    (:data:`multigpu.compute.layout.TRAINING_STACKS`).
    """
    return _plan(workload(workload_id).id, system_id, gpus_per_instance, calibration.resolve(cal), stack)


@functools.lru_cache(maxsize=4096)
def _plan(workload_id: str, system_id: str, gpus_per_instance: int, cal: Calibration,
          stack: str = DEFAULT_TRAINING_STACK) -> WorkloadPlan:
    w, system = workload(workload_id), catalog.system(system_id)
    if w.kind == "train":
        return _plan_train(w, system, gpus_per_instance, cal, stack)
    found = search.serve(w.model, system.id, gpus_per_instance, w.input_tokens, w.output_tokens,
                         w.min_tokens_per_s_per_user, dtype=w.dtype, max_ttft_s=w.max_ttft_s, cal=cal)
    if found.best is None:
        return WorkloadPlan(w.id, system.id, gpus_per_instance, False, found.reason, 0)
    return WorkloadPlan(w.id, system.id, gpus_per_instance, True, "", found.best.gpus, serving=found.best)


def _plan_train(w: Workload, system: catalog.System, gpus_per_instance: int, cal: Calibration,
                stack: str) -> WorkloadPlan:
    gpus, node = w.gpus, system.gpus_per_node

    def infeasible(reason: str) -> WorkloadPlan:
        return WorkloadPlan(w.id, system.id, gpus_per_instance, False, reason, gpus)

    if gpus > gpus_per_instance:
        if gpus % gpus_per_instance:
            return infeasible(f"{gpus} GPUs are not a whole number of {gpus_per_instance}-GPU instances")
        if gpus_per_instance != node:
            return infeasible(f"the job spans {gpus // gpus_per_instance} instances of {gpus_per_instance} GPUs; "
                              f"the catalogue system {system.id} models nodes of {node}, so the network between "
                              f"such instances is not modelled")
    elif gpus > node:
        return infeasible(f"the job's {gpus} GPUs sit in one {gpus_per_instance}-GPU instance, which the "
                          f"catalogue system {system.id} models as nodes of {node}; how they are joined inside "
                          f"the instance is not modelled (pin a 'system' in the price file)")
    try:
        found = search.train(w.model, system.id, gpus, w.global_batch, w.seq, dtype=w.dtype, cal=cal,
                             method=w.method, lora_rank=w.lora_rank or 0, stack=stack)
    except InputError as exc:
        return infeasible(exc.message)
    if found.best is None:
        return infeasible(found.reason)
    return WorkloadPlan(w.id, system.id, gpus_per_instance, True, "", gpus, steps=w.steps, training=found.best)


# ------------------------------------------------------------------ offers


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


def offer_label(row: Any) -> Sentence:
    """A short name of an offer: provider, instance, pricing (and region when given)."""
    region = row.get("region") if hasattr(row, "get") else None
    names = {"provider": row["provider"], "instance": row["instance"], "pricing": Word(row["pricing"])}
    if isinstance(region, str) and region:
        return say(msg("{provider}: {instance} ({pricing}, {region})"), region=region, **names)
    return say(msg("{provider}: {instance} ({pricing})"), **names)


def offers(table: PriceTable | None = None) -> pd.DataFrame:
    """The price table's offers with what the cost model adds: ``offer`` (row number, 0-based),
    ``label``, ``gpu_name``, ``interconnect_class``, ``provider_type`` and ``price_per_gpu_hour``
    (in the offer's currency). ``attrs["path"]`` names the price file."""
    table = prices.resolve(table)
    frame = table.offers.copy()
    frame.insert(0, "offer", range(len(frame)))
    frame["label"] = [offer_label(row) for row in frame.to_dict("records")]
    frame["gpu_name"] = [catalog.gpu(g).name for g in frame["gpu"]]
    frame["interconnect_class"] = [interconnect_class(s) for s in frame["system"]]
    given = frame["provider_type"] if "provider_type" in frame else [None] * len(frame)
    frame["provider_type"] = [provider_type(p, g) for p, g in zip(frame["provider"], given)]
    frame["price_per_gpu_hour"] = frame["price_per_hour"] / frame["gpus_per_instance"]
    frame.attrs["path"] = table.path
    return frame


#: Columns of :func:`offer_costs`, in order (the CLI's fields).
COST_COLUMNS = ("offer", "provider", "instance", "gpu", "gpus", "interconnect", "interconnect_class", "system",
                "pricing", "region", "observed", "currency", "price_per_gpu_hour", "price_per_gpu_hour_usd",
                "feasible", "reason", "layout", "job_gpus", "instances", "time_h", "gpu_hours", "cost_usd", "cost",
                "cost_unit", "rank", "mfu", "tokens_per_s_per_gpu", "batch", "min_lease_h", "billed_h")


def offer_costs(workload_id: str, table: PriceTable | None = None, utilisation: float = 1.0,
                progress: Callable[[int, int], None] | None = None, cal: Calibration | None = None) -> pd.DataFrame:
    """The cost of one workload on every offer of a price table, ranked.

    ``table``: the price table (default: the packaged one). ``utilisation``: the
    fraction of rented time doing useful work (0-1]. ``progress(i, n)`` is
    called after each offer.

    One row per offer (columns :data:`COST_COLUMNS`): ``gpus`` per instance;
    ``job_gpus`` the GPUs the job uses (serving: one replica, tp x pp);
    ``instances`` rented (serving: 1, replicas fill it); ``time_h`` the job's
    wall-clock hours (serving: GPU-hours per million output tokens);
    ``gpu_hours`` the GPU-hours billed per job at full utilisation (serving: per
    million output tokens); ``cost_usd`` = ``gpu_hours`` x ``price_per_gpu_hour_usd`` /
    ``utilisation``, and ``cost`` the same in the offer's currency. Training on an
    offer with a ``min_lease_h``: ``billed_h``, the hours each instance is paid
    for, is ``max(time_h / utilisation, min_lease_h)`` and ``gpu_hours`` =
    ``billed_h`` x ``utilisation`` x GPUs, so the cost is the term's when the job is
    shorter (``billed_h`` is empty for serving, which a term does not change). An
    offer with ``scale_out`` ``none`` cannot run a training job larger than one
    instance (reason "no network between instances"). Infeasible
    offers have ``feasible`` False, a ``reason``, empty times and costs, and no
    ``rank``; feasible ones are ranked 1, 2, ... by cost (then time).
    """
    if not 0 < utilisation <= 1:
        raise InputError(f"utilisation {utilisation:g} is not in (0, 1]; expected the fraction of rented time "
                         f"doing useful work")
    w = workload(workload_id)
    table = prices.resolve(table)
    listed = offers(table)
    rows = []
    for i, offer in enumerate(listed.to_dict("records")):
        rows.append(_offer_row(w, offer, utilisation, table, cal))
        if progress is not None:
            progress(i + 1, len(listed))
    frame = pd.DataFrame(rows, columns=list(COST_COLUMNS))
    feasible = frame[frame["feasible"]].sort_values(["cost_usd", "time_h", "offer"], kind="stable")
    frame["rank"] = pd.Series(range(1, len(feasible) + 1), index=feasible.index, dtype="Int64")
    frame.attrs["workload"] = w.id
    frame.attrs["cost_unit"] = w.cost_unit
    frame.attrs["path"] = table.path
    return frame


def _lease_h(value: Any) -> float:
    """An offer's ``min_lease_h`` cell as hours (0 when empty)."""
    try:
        hours = float(value)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if math.isnan(hours) else hours


def no_network_reason(gpus: int, per_instance: int) -> str:
    """Why ``gpus`` GPUs cannot run on instances of ``per_instance`` GPUs with no network between them (an
    offer's ``scale_out`` none); the cost tables and the recommender give this one text."""
    return say(msg("no network between instances: the job needs {n_gpus} GPUs and one instance has {n_per} "
                   "(scale_out none)"), n_gpus=gpus, n_per=per_instance)


def _no_network(w: Workload, offer: dict[str, Any], per_instance: int) -> str:
    """Why a training job cannot run on an offer without a network between instances ("" if it can)."""
    if w.kind != "train" or offer.get("scale_out") != "none" or w.gpus <= per_instance:
        return ""
    return no_network_reason(w.gpus, per_instance)


def _offer_row(w: Workload, offer: dict[str, Any], utilisation: float, table: PriceTable,
               cal: Calibration | None) -> dict[str, Any]:
    per_instance = int(offer["gpus_per_instance"])
    blocked = _no_network(w, offer, per_instance)
    if blocked:
        p = WorkloadPlan(w.id, offer["system"], per_instance, False, blocked, w.gpus)
    else:
        p = plan(w.id, offer["system"], per_instance, cal)
    lease = _lease_h(offer.get("min_lease_h"))
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
        "min_lease_h": lease if lease else math.nan, "billed_h": math.nan,
    }
    if not p.feasible:
        return row
    hours = p.time_h()
    instances = math.ceil(w.gpus / per_instance) if w.kind == "train" else 1
    billed, billed_h = billing(w.kind, hours, utilisation, lease, instances, per_instance)
    if w.kind == "train":
        row.update(mfu=p.training.mfu, billed_h=billed_h)
    else:
        row.update(tokens_per_s_per_gpu=p.serving.tokens_per_s_per_gpu, batch=p.serving.batch)
    cost_usd = billed * offer["price_per_gpu_hour_usd"] / utilisation
    row.update(instances=instances, time_h=hours, gpu_hours=billed, cost_usd=cost_usd,
               cost=table.from_usd(cost_usd, offer["currency"]))
    return row


def billing(kind: str, hours: float, utilisation: float, lease: float, instances: int,
            per_instance: int) -> tuple[float, float]:
    """(GPU-hours paid for, hours each instance is paid for) of a job the model times at ``hours``: a training
    job (``kind`` ``train``) pays each instance for its wall-clock hours over ``utilisation``, at least the minimum
    ``lease``; a serving target's ``hours`` are already GPU-hours per million tokens (NaN for the second)."""
    if kind != "train":
        return hours, math.nan
    billed_h = max(hours / utilisation, lease)
    return billed_h * utilisation * instances * per_instance, billed_h


def scaled_costs(row: dict[str, Any], kind: str, factor: float, utilisation: float = 1.0) -> dict[str, float]:
    """``time_h``, ``gpu_hours``, ``cost_usd`` and ``cost`` of a feasible :func:`offer_costs` row if the job took
    ``factor`` times the hours the model gives it, billed as :func:`billing` bills: a prediction interval of the
    time carried to the money (a minimum lease is still paid for)."""
    lease = 0.0 if pd.isna(row.get("min_lease_h")) else float(row["min_lease_h"])
    hours = row["time_h"] * factor
    billed, _ = billing(kind, hours, utilisation, lease, int(row["instances"]), int(row["gpus"]))
    cost_usd = billed * row["price_per_gpu_hour_usd"] / utilisation
    return {"time_h": hours, "gpu_hours": billed, "cost_usd": cost_usd,
            "cost": cost_usd * (row["cost"] / row["cost_usd"]) if row["cost_usd"] else math.nan}


def cost_table(workload_ids: Iterable[str] | None = None, table: PriceTable | None = None,
               utilisation: float = 1.0, cal: Calibration | None = None) -> pd.DataFrame:
    """Every workload's costs on every offer, stacked (a ``workload`` column first)."""
    ids = list(workload_ids) if workload_ids is not None else list(workloads_table())
    frames = [offer_costs(i, table, utilisation, cal=cal).assign(workload=i) for i in ids]
    out = pd.concat(frames, ignore_index=True)
    return out[["workload"] + [c for c in out.columns if c != "workload"]]


