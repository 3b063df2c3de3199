"""Calibration: the communication model's constants as one immutable, hashable value.

Constants live in ``data/calibration.csv`` (``name, key, value, unit, source,
fitted_on, std_error, fit_status, notes``). Most are NCCL's own tuner priors
(latencies, protocol factors; NCCL 2.30 ``src/graph/tuning.cc`` and
``src/graph/topo.h``); a few are fitted on the
``measured`` rows of ``data/measurements.csv`` or on the ``fit`` sweeps of
``data/sweeps_index.csv``, and ``fitted_on`` lists their ids (the fitting
itself lives in :mod:`multigpu.evidence.fitting` and
:mod:`multigpu.evidence.sweepfit`).

A :class:`Calibration` is passed into the model (collectives, training,
inference, cost) as a value. A what-if is a modified copy,
``default().replace({("bounce", "rate_factor"): 0.4})``; nothing is changed in
place, and every cache of derived results is keyed by the calibration it was
computed with (it hashes by its values).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR
from multigpu.common.errors import InputError
from multigpu.hardware.wiring import Edge

CALIBRATION_CSV = DATA_DIR / "calibration.csv"

#: GPU architecture -> the row of NCCL's per-architecture tables it uses
ARCH_FAMILY: dict[str, str] = {
    "pascal": "volta", "volta": "volta", "ampere": "ampere", "ada": "ampere", "hopper": "hopper",
    "blackwell": "blackwell", "rubin": "blackwell", "cdna2": "hopper", "cdna3": "hopper", "cdna4": "hopper",
}
#: GPU architecture -> its row of ``sm_efficiency`` (NCCL's per-SM NVLink figure); others use "default"
_SM_NVLINK_KEY = {"pascal": "volta", "volta": "volta", "ampere": "ampere", "hopper": "hopper",
                  "blackwell": "blackwell"}
#: link class (see :data:`multigpu.hardware.wiring.LINK_CLASS`) -> key of the efficiency rows
_EFFICIENCY_KEY = {"pci": "pcie", "net": "net"}

Key = tuple[str, str]
#: what a fit's data say of a fitted constant (``fit_status``; multigpu.evidence.fitquality gives the rules)
DETERMINED, LOOSE, AT_BOUND = "determined", "loose", "at bound"
FIT_STATUSES = (DETERMINED, LOOSE, AT_BOUND)


class CalibrationRow(datafiles.Row):
    """Schema of ``data/calibration.csv``."""

    name: datafiles.Text
    key: datafiles.Text
    value: float
    unit: datafiles.Text
    source: datafiles.Text
    fitted_on: str | None = None
    std_error: datafiles.NonNegative | None = None
    fit_status: datafiles.one_of(FIT_STATUSES) | None = None  # type: ignore[valid-type]
    notes: str | None = None

    NOUN = "constant"
    EXPECTED = {"value": "a number", "fitted_on": "measurement or sweep ids, comma-separated",
                "std_error": "the fit's standard error, in the constant's unit (empty: none is finite)",
                "fit_status": ", ".join(FIT_STATUSES)}


@dataclass(frozen=True)
class Constant:
    """One calibration constant and its provenance."""

    name: str
    key: str
    value: float
    unit: str
    source: str
    fitted_on: str  #: measurement ids or sweep ids it was fitted on, comma-separated ("" for a prior)
    notes: str
    std_error: float | None = None  #: the fit's standard error, in ``unit`` (None: a prior, or none is finite)
    fit_status: str = ""  #: for a fitted constant, :data:`FIT_STATUSES` (what its data say of it)

    @property
    def fitted_ids(self) -> tuple[int, ...]:
        """The measurement ids (``data/measurements.csv``) of ``fitted_on``."""
        return tuple(int(i) for i in self.fitted_on.split(",") if i.strip().isdigit())

    @property
    def fitted_sweeps(self) -> tuple[str, ...]:
        """The sweep ids (``data/sweeps_index.csv``) of ``fitted_on``."""
        return tuple(i.strip() for i in self.fitted_on.split(",") if i.strip() and not i.strip().isdigit())


@dataclass(frozen=True, eq=False)
class Calibration:
    """Every constant of the communication model, by ``(name, key)``; immutable and hashable."""

    constants: tuple[Constant, ...]
    _index: dict[Key, Constant] = field(init=False, repr=False, compare=False, hash=False)
    _values: tuple = field(init=False, repr=False, compare=False, hash=False)
    _hash: int = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {(c.name, c.key): c for c in self.constants})
        values = tuple((c.name, c.key, c.value) for c in self.constants)
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_hash", hash(values))

    def __hash__(self) -> int:  # by value, computed once: every model cache is keyed by the calibration
        return self._hash

    def __reduce__(self) -> tuple:  # pickled as its constants; the hash is recomputed in the loading process
        return (Calibration, (self.constants,))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return isinstance(other, Calibration) and self._hash == other._hash and self._values == other._values

    def value(self, name: str, key: str) -> float:
        """The value of constant ``name``/``key``."""
        try:
            return self._index[(name, key)].value
        except KeyError:
            raise InputError(f"no calibration constant {name}/{key}", str(CALIBRATION_CSV)) from None

    def has(self, name: str, key: str) -> bool:
        """Whether constant ``name``/``key`` exists."""
        return (name, key) in self._index

    def constant(self, name: str, key: str) -> Constant:
        """Constant ``name``/``key`` with its provenance."""
        self.value(name, key)
        return self._index[(name, key)]

    def replace(self, values: Mapping[Key, float], note: str = "what-if") -> Calibration:
        """A copy with some values changed (a what-if); unknown keys are an :class:`InputError`."""
        for name, key in values:
            self.value(name, key)
        return Calibration(tuple(
            replace(c, value=float(values[(c.name, c.key)]), source=note) if (c.name, c.key) in values else c
            for c in self.constants))

    def scaled(self, factors: Mapping[str, float]) -> Calibration:
        """A copy with every constant of each name in ``factors`` multiplied by its factor."""
        return self.replace({(c.name, c.key): c.value * factors[c.name] for c in self.constants
                             if c.name in factors}, note="scaled what-if")

    @property
    def digest(self) -> str:
        """A short hash of every (name, key, value): equal digests, equal model results."""
        text = "\n".join(f"{c.name},{c.key},{c.value!r}" for c in self.constants)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def table(self) -> pd.DataFrame:
        """Every constant with its value, unit, source and ``fitted_on``."""
        return pd.DataFrame([c.__dict__ for c in self.constants])

    def fitted_ids(self) -> set[int]:
        """Every measurement id some constant was fitted on."""
        return {i for c in self.constants for i in c.fitted_ids}

    # ---------------------------------------------------------- derived constants

    def efficiency(self, link_class: str, arch: str, engine: str = "sm", fabric: str | None = None) -> float:
        """Achievable fraction of a link's line rate, per direction.

        ``link_class`` is ``nvlink``, ``pci`` or ``net``; ``arch`` the GPU
        architecture; ``engine`` ``"sm"`` (NCCL and custom kernels: SM loads
        and stores) or ``"ce"`` (copy engines: cudaMemcpy, p2p benchmarks);
        ``fabric`` the scale-out fabric, for ``net`` links (its own row if it
        has one, else the InfiniBand figure).
        """
        if link_class == "nvlink":
            if engine == "ce":
                return self.value("ce_efficiency", "nvlink")
            return self.value("sm_efficiency", f"nvlink.{_SM_NVLINK_KEY.get(arch, 'default')}")
        if link_class == "net" and fabric and self.has(f"{engine}_efficiency", f"net.{fabric}"):
            return self.value(f"{engine}_efficiency", f"net.{fabric}")
        return self.value(f"{engine}_efficiency", _EFFICIENCY_KEY[link_class])

    def link_efficiency(self, arch: str, engine: str = "sm", fabric: str | None = None) -> Callable[[Edge], float]:
        """Per-edge achievable fraction of line rate for GPUs of ``arch`` (a topology ``efficiency``) on a
        node whose NICs join ``fabric``; a virtual host-staging edge gets ``bounce/rate_factor`` of the GPU's
        PCIe link."""
        bounce = self.value("bounce", "rate_factor")

        def efficiency(edge: Edge) -> float:
            return bounce if edge.kind == "bounce" else self.efficiency(edge.link_class, arch, engine, fabric)

        return efficiency

    def fabric_latency_us(self, fabric: str | None) -> float:
        """What a fabric adds to each network hop beyond NCCL's InfiniBand figures, us (0 if it has no row)."""
        return self.value("fabric_latency_us", fabric) if fabric and self.has("fabric_latency_us", fabric) else 0.0

    def net_fill_time_us(self, fabric: str | None, arch: str) -> float:
        """The network pipeline's fill time, us: an all-reduce across nodes of the size that takes this long at
        full bandwidth runs at 2 ** -q of it, and larger ones come closer (``collectives._ramped``; all-gather and
        reduce-scatter, at the same size, take half as long: ``collectives._fill_share``):
        ``bandwidth_ramp/net.full_time_us`` on InfiniBand, stretched for a fabric with a latency of its own by
        1 + that latency / InfiniBand's delay per message (NCCL's Ring/Simple network hop latency, scaled as
        measured for ``arch``'s library). NCCL keeps a fixed number of chunks in flight per channel, so a fabric
        whose every message waits longer (EFA's SRD, TCP stacks) needs proportionally more bytes in flight to
        keep its NICs busy. The library's own network latency (RCCL's proxy) is left out: the RCCL sweep of
        the fit split fills as InfiniBand does."""
        delay = self.value("hop_latency_us", "net.ring.simple") * self.latency_scale(arch, network=True)
        return self.value("bandwidth_ramp", "net.full_time_us") * (1.0 + self.fabric_latency_us(fabric) / delay)

    def line_rate(self) -> Callable[[Edge], float]:
        """Raw line rate of every link (efficiency 1), a bounce through host memory still at
        ``bounce/rate_factor``: what the wiring allows before protocol and kernel losses."""
        bounce = self.value("bounce", "rate_factor")
        return lambda edge: bounce if edge.kind == "bounce" else 1.0

    def nvls_efficiency(self, arch: str, rack: bool = False) -> float:
        """NVLink SHARP efficiency relative to :meth:`efficiency` of the NVLink ports; ``rack``: in a
        rack-scale NVLink domain (NVL72: the reduction spans the switch trays), its own row where it has one."""
        for key in ([f"{arch}.rack"] if rack else []) + [arch]:
            if self.has("nvls_efficiency", key):
                return self.value("nvls_efficiency", key)
        return self.value("nvls_efficiency", "default")

    def library_net_latency_us(self, arch: str) -> float:
        """What the collective library's network path adds to each network hop, us: 0 for NCCL (its tuner's
        network latencies are its own), RCCL's proxy path on AMD CDNA fitted apart (0 if it has no row)."""
        library = "rccl" if arch.startswith("cdna") else "nccl"
        return self.value("library_net_latency_us", library) if self.has("library_net_latency_us", library) else 0.0

    def latency_scale(self, arch: str, network: bool = False) -> float:
        """Measured collective latencies over NCCL's tuner figures for GPUs of ``arch``: NCCL's own (fitted)
        on NVIDIA GPUs; RCCL keeps its own tables on AMD CDNA. ``network``: for a hop between nodes, NCCL's
        network-hop scale (``nccl.net``, fitted apart) where it has a row."""
        library = "rccl" if arch.startswith("cdna") else "nccl"
        if network and self.has("latency_scale", f"{library}.net"):
            return self.value("latency_scale", f"{library}.net")
        return self.value("latency_scale", library)

    def ll_max_bw_GBps(self, arch: str, nodes: int) -> float:
        """NCCL's cap on LL-protocol bandwidth, GB/s (per architecture on one node, per node count beyond)."""
        if nodes >= 3:
            return self.value("ll_max_bw_GBps", "nodes3")
        if nodes == 2:
            return self.value("ll_max_bw_GBps", "nodes2")
        return self.value("ll_max_bw_GBps", ARCH_FAMILY.get(arch, "hopper"))

    def harness_overhead_us(self, harness: str) -> float:
        """Host-side cost per timed call of a benchmark harness, us (0 for kernel-level timers)."""
        return self.value("harness_overhead_us", harness) if self.has("harness_overhead_us", harness) else 0.0

    def harness_launch_floor_us(self, harness: str, gpus_per_thread: int) -> float:
        """The least time per collective, us, of a harness whose one host thread launches the kernels of
        ``gpus_per_thread`` GPUs one after another every iteration (nccl-tests ``-g N``): N x
        ``harness_launch_us`` (0 where the harness has no row)."""
        per_gpu = self.value("harness_launch_us", harness) if self.has("harness_launch_us", harness) else 0.0
        return gpus_per_thread * per_gpu


def load(path: str | Path = CALIBRATION_CSV) -> Calibration:
    """The calibration of ``path``; a bad row is an :class:`InputError` at file:line:column."""
    rows = datafiles.read(path, CalibrationRow, unique=("name", "key"))
    return Calibration(tuple(Constant(r.name, r.key, r.value, r.unit, r.source, r.fitted_on or "", r.notes or "",
                                      r.std_error, r.fit_status or "") for _, r in rows))


@functools.cache
def default() -> Calibration:
    """The shipped calibration (``data/calibration.csv``), loaded once."""
    return load()


def resolve(calibration: Calibration | None) -> Calibration:
    """``calibration``, or :func:`default` when None (the model's functions take either)."""
    return default() if calibration is None else calibration
