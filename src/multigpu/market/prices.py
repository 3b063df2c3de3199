"""The analyst's price file: rental offers, validated, turned into USD per GPU-hour.

The price file is a CSV with one row per offer (the **contract** of DESIGN.md):

=====================  ==========================================================
``provider``           who rents it out (``Lambda``, ``AWS``, ...)
``instance``           the instance type or product name (``p5.48xlarge``)
``gpu``                catalogue GPU id (``python -m multigpu gpus``)
``gpus_per_instance``  GPUs in one instance, a whole number >= 1
``interconnect``       catalogue link id joining the GPUs (``python -m multigpu links``)
``price_per_hour``     price of one instance for one hour, in ``currency`` (> 0)
``currency``           a currency of the FX table (``data/fx_rates.csv``)
``pricing``            ``on-demand``, ``spot``, ``reserved`` or ``community``
``observed``           the date the price was seen, ``YYYY-MM-DD``, not in the future
``source``             where it was seen (a URL)
=====================  ==========================================================

Optional columns: ``region`` (part of an offer's identity), ``system`` (a
catalogue system id that pins the model of the node), ``fabric``, ``provider_type``,
``notes``, the renting frictions below, and any other column, which is kept as text.

Renting frictions (optional; a file without these columns reads as before):

=====================  ==========================================================
``price_basis``        ``instance`` (default): ``price_per_hour`` is the price of one
                       instance; ``gpu``: it is quoted per GPU-hour, and the loader
                       multiplies it by ``gpus_per_instance`` (the table then holds the
                       price per instance like every other row)
``scale_out``          the network the renter gets between instances: ``none``,
                       ``ethernet`` or ``infiniband`` (default: the catalogue system's
                       NIC: ``infiniband`` for InfiniBand NICs, ``ethernet`` for Ethernet
                       ones, ``none`` without a NIC). It is the renter-facing name of
                       ``fabric``: ``infiniband`` is the system's InfiniBand fabric (``ib``
                       when its NIC is Ethernet), ``ethernet`` the system's Ethernet fabric
                       (``roce`` or ``tcp``; ``tcp`` when its NIC is InfiniBand), ``none``
                       lets no layout span instances. A ``fabric`` cell is the more precise
                       of the two and wins: ``scale_out`` may then be left empty, and a
                       ``scale_out`` that names another class of network (or ``none``)
                       is an error
``min_lease_h``        the shortest term the offer can be rented for, in hours (>= 0;
                       720 for a monthly lease): a training job shorter than it pays for
                       the term (see :mod:`multigpu.market.cost`)
=====================  ==========================================================

Each row is checked by a pydantic model (:class:`Offer`); the first problem is
raised as an :class:`~multigpu.common.errors.InputError` naming the file (as given),
the physical line (header = line 1) and the column. Files saved by spreadsheet
programs (UTF-8 with BOM, CRLF line ends, trailing empty lines) read the same
as plain ones. The file is only ever read.

Environment: ``MULTIGPU_PRICES`` points the book and the CLI at another price
file, ``MULTIGPU_FX`` at another FX table (same columns as ``data/fx_rates.csv``:
``currency, usd_per_unit, date, source``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import pandas as pd
from pydantic import BeforeValidator, Field, ValidationInfo, field_validator

from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR, PastDate, Positive, Row, Text
from multigpu.common.errors import InputError, InputErrors, InputWarning
from multigpu.common.findings import Finding, Items, Number, Sentence, msg, say
from multigpu.hardware import catalog
from multigpu.market import pricecheck

PRICING = ("on-demand", "spot", "reserved", "community")
#: How ``price_per_hour`` is quoted: per instance (default) or per GPU (multiplied out by the loader).
PRICE_BASES = ("instance", "gpu")
#: The network between instances, as a renter sees it (optional ``scale_out`` column).
SCALE_OUTS = ("none", "ethernet", "infiniband")
#: The catalogue fabrics (:data:`multigpu.hardware.catalog.FABRICS`) of each ``scale_out`` class.
SCALE_OUT_FABRICS = {"infiniband": ("ib", "ib-sharp"), "ethernet": ("roce", "tcp", "efa", "tcpx", "tcpxo")}
#: The fabric a ``scale_out`` gives when the catalogue system's own fabric is of the other class.
SCALE_OUT_DEFAULT_FABRIC = {"infiniband": "ib", "ethernet": "tcp"}
#: Columns that identify an offer: two rows with the same values are a duplicate.
OFFER_KEY = ("provider", "instance", "pricing", "region", "currency")
DEFAULT_PRICES = DATA_DIR / "prices.csv"
DEFAULT_FX = DATA_DIR / "fx_rates.csv"


def lower_cell(value: Any) -> Any:
    """A text cell stripped and in lower case (a pricing type, a system id); anything else as it is."""
    return value.strip().lower() if isinstance(value, str) else value


def upper_cell(value: Any) -> Any:
    """A text cell stripped and in upper case (a currency code); anything else as it is."""
    return value.strip().upper() if isinstance(value, str) else value


def _hours(value: Any) -> Any:
    """A ``min_lease_h`` cell: a finite number of hours >= 0 (None when empty)."""
    if value is None or not isinstance(value, str):
        return value
    expected = "expected hours >= 0, e.g. 720 for a monthly lease"
    try:
        hours = float(value)
    except ValueError:
        raise ValueError(f"'{value}' is not a number; {expected}") from None
    if not (hours >= 0 and hours != float("inf")):
        raise ValueError(f"'{value}' is not a number of hours >= 0; {expected}")
    return hours


class ListedPrice(Row):
    """The columns every dated price has (an offer of a price file, a past list price of
    :mod:`multigpu.market.history`): an instance of a catalogue GPU and link, its price per instance-hour in
    ``currency``, the pricing type, when and where it was seen."""

    provider: Text
    instance: Text
    gpu: Text
    gpus_per_instance: int = Field(ge=1)
    interconnect: Text
    price_per_hour: Positive
    currency: Annotated[str, BeforeValidator(upper_cell), Field(min_length=1)]
    pricing: Annotated[Literal[PRICING], BeforeValidator(lower_cell)]  # type: ignore[valid-type]
    observed: PastDate
    source: Text

    @field_validator("gpu")
    @classmethod
    def _known_gpu(cls, value: str) -> str:
        return datafiles.known(value, catalog.gpus(), "GPU", "gpus")

    @field_validator("interconnect")
    @classmethod
    def _known_link(cls, value: str) -> str:
        return datafiles.known(value, catalog.links(), "interconnect", "links")


class Offer(ListedPrice):
    """One rental offer (a row of the price file); ``price_per_hour`` is per instance, in ``currency``."""

    region: str | None = None
    system: Annotated[str | None, BeforeValidator(lower_cell)] = None
    fabric: Annotated[str | None, BeforeValidator(lower_cell)] = None
    provider_type: str | None = None
    notes: str | None = None
    price_basis: Annotated[str | None, BeforeValidator(lower_cell)] = None
    scale_out: Annotated[str | None, BeforeValidator(lower_cell)] = None
    min_lease_h: Annotated[float | None, BeforeValidator(_hours)] = None

    NOUN = "offer"
    TEMPLATE = "python -m multigpu prices template"
    EXPECTED = {
        "provider": "the provider's name",
        "instance": "the instance type or product name",
        "gpu": "a catalogue GPU id (python -m multigpu gpus)",
        "gpus_per_instance": "a whole number of GPUs >= 1",
        "interconnect": "a catalogue link id (python -m multigpu links)",
        "price_per_hour": "the price of one instance for one hour in `currency`, a number > 0",
        "currency": "a currency of the FX table",
        "pricing": f"one of {', '.join(PRICING)}",
        "observed": "the date the price was seen, YYYY-MM-DD",
        "source": "where the price was seen (a URL)",
        "region": "optional: where the offer is (part of its identity: one row per provider, instance, "
                  "pricing, region and currency)",
        "system": "optional: a catalogue system id that pins the model of the node (python -m multigpu systems); "
                  "default: the system with this GPU wired by this interconnect",
        "fabric": f"optional: the network joining instances, one of {', '.join(catalog.FABRICS)} (default: the "
                  "catalogue system's: ib for InfiniBand NICs, without in-network reduction; tcp for plain Ethernet)",
        "provider_type": "optional: hyperscaler, GPU cloud, marketplace, ... (default: from the provider's name)",
        "notes": "optional: anything, kept as text",
        "price_basis": f"optional: one of {', '.join(PRICE_BASES)} (default instance): gpu when price_per_hour is "
                       "quoted per GPU-hour; the loader multiplies it by gpus_per_instance",
        "scale_out": f"optional: the network between instances, one of {', '.join(SCALE_OUTS)} (default: the "
                     "catalogue system's NIC); none: no job spans instances; a fabric cell, if given, wins and "
                     "scale_out must agree with it",
        "min_lease_h": "optional: the shortest rental term in hours, a number >= 0 (720 for a monthly lease); a "
                       "shorter training job pays for the term",
    }

    @field_validator("fabric")
    @classmethod
    def _known_fabric(cls, value: str | None) -> str | None:
        if value is not None and value not in catalog.FABRICS:
            raise ValueError(f"unknown fabric '{value}'; expected one of {', '.join(catalog.FABRICS)}")
        return value

    @field_validator("price_basis")
    @classmethod
    def _known_basis(cls, value: str | None) -> str | None:
        if value is not None and value not in PRICE_BASES:
            raise ValueError(f"unknown price_basis '{value}'; expected one of {', '.join(PRICE_BASES)} "
                             f"(gpu: price_per_hour is per GPU-hour)")
        return value

    @field_validator("scale_out")
    @classmethod
    def _known_scale_out(cls, value: str | None) -> str | None:
        if value is not None and value not in SCALE_OUTS:
            raise ValueError(f"unknown scale_out '{value}'; expected one of {', '.join(SCALE_OUTS)}")
        return value

    @field_validator("currency")
    @classmethod
    def _known_currency(cls, value: str, info: ValidationInfo) -> str:
        known = (info.context or {})["fx"]
        if value not in known:
            raise ValueError(f"unknown currency '{value}'; expected one of the FX table: {', '.join(sorted(known))}")
        return value


class FxRate(Row):
    """One exchange rate: ``usd_per_unit`` US dollars buy one unit of ``currency``, on ``date``."""

    currency: Annotated[str, BeforeValidator(upper_cell), Field(pattern=r"^[A-Z]{3}$")]
    usd_per_unit: Positive
    date: PastDate
    source: Text
    notes: str | None = None

    NOUN = "rate"
    EXPECTED = {
        "currency": "an ISO 4217 code such as USD or CNY",
        "usd_per_unit": "US dollars per unit of the currency, a number > 0",
        "date": "the date of the rate, YYYY-MM-DD",
        "source": "where the rate comes from",
    }

    @field_validator("usd_per_unit")
    @classmethod
    def _usd_is_one(cls, value: float, info: ValidationInfo) -> float:
        if info.data.get("currency") == "USD" and value != 1:
            raise ValueError(f"'{value:g}' for USD; expected 1 (USD is the base currency)")
        return value


def template() -> str:
    """The packaged price file preceded by comment lines that document every column, required and
    optional: a valid price file to start from (``python -m multigpu prices template``)."""
    lines = ["# A price file: one offer per line, comma-separated, UTF-8. Lines starting with # are comments.",
             "# Required columns:"]
    lines += [f"#   {c}: {Offer.EXPECTED[c]}" for c in Offer.required()]
    lines += ["# Optional columns (leave out, or leave cells empty):"]
    lines += [f"#   {c}: {Offer.EXPECTED[c].removeprefix('optional: ')}" for c in Offer.optional()]
    lines += ["# Any other column is kept as text. Check a file with: python -m multigpu prices check FILE"]
    return "\n".join(lines) + "\n" + DEFAULT_PRICES.read_bytes().decode("utf-8")


# ---------------------------------------------------------------- the table


@dataclass(frozen=True, eq=False)
class PriceTable:
    """A validated price file and the FX table it is converted with: what the cost model takes.

    ``offers`` has one row per offer with the contract's columns (typed:
    ``gpus_per_instance`` int, ``price_per_hour`` float in ``currency``,
    ``observed`` a date), the optional ``region`` and ``notes`` (missing when
    empty or absent), any extra column of the file, ``system`` (the catalogue
    system that models the node), ``price_per_hour_usd`` (USD per
    instance-hour) and ``price_per_gpu_hour_usd`` (USD per GPU-hour). The
    renting frictions are always filled: ``price_basis`` (how the file quoted
    the price; ``price_per_hour`` is per instance either way), ``scale_out``
    (given, or the catalogue system's) and ``min_lease_h`` (missing when none). Compared
    and hashed by identity; :attr:`key` names its content.
    """

    path: str  #: the price file, as given
    sha256: str  #: SHA-256 of its bytes, hex
    offers: pd.DataFrame = field(repr=False)
    fx: Mapping[str, FxRate] = field(repr=False)
    fx_path: str  #: the FX table, as given
    notes: tuple[str, ...] = ()  #: what the reader kept or skipped (extra columns, comment lines)
    warnings: tuple[InputWarning, ...] = ()  #: valid but probably not meant (see multigpu.market.pricecheck)

    @property
    def name(self) -> str:
        """The price file's name."""
        return Path(self.path).name

    @property
    def key(self) -> tuple[str, str]:
        """(sha256 of the price file, the FX table's rates): equal keys, equal costs."""
        rates = ",".join(f"{c}={r.usd_per_unit!r}" for c, r in sorted(self.fx.items()))
        return self.sha256, rates

    def scaled(self, factor: float, systems: set[str] | frozenset[str]) -> PriceTable:
        """A what-if copy: the prices of every offer modelled by one of ``systems`` multiplied by ``factor``
        (its :attr:`sha256` marks the change, so caches keyed by :attr:`key` tell the two apart)."""
        frame = self.offers.copy()
        mask = frame["system"].isin(list(systems))
        for column in ("price_per_hour", "price_per_hour_usd", "price_per_gpu_hour_usd"):
            frame.loc[mask, column] = frame.loc[mask, column] * factor
        return dataclasses.replace(self, offers=frame, sha256=f"{self.sha256} x{factor!r} {sorted(systems)}")

    def of_pricing(self, pricing: str) -> PriceTable:
        """A copy with only the offers of one pricing type (on-demand, spot, reserved or community)."""
        frame = self.offers[self.offers["pricing"] == pricing].reset_index(drop=True)
        return dataclasses.replace(self, offers=frame, sha256=f"{self.sha256} {pricing}")

    def to_usd(self, amount: float, currency: str) -> float:
        """``amount`` in ``currency`` converted to USD."""
        return amount * _rate(currency, self.fx)

    def from_usd(self, amount_usd: float, currency: str) -> float:
        """``amount_usd`` US dollars converted to ``currency``."""
        return amount_usd / _rate(currency, self.fx)

    def stamp(self) -> dict[str, Any]:
        """What identifies the price file: ``name``, ``sha256_12`` (first 12 hex digits of its
        SHA-256), ``offers`` (count), ``observed_from`` / ``observed_to`` (ISO dates), and the FX table it
        is converted with: ``fx_name`` and ``fx_rates`` (the rates of the currencies it uses, with their dates)."""
        observed = list(self.offers["observed"])
        return {"name": self.name, "sha256_12": self.sha256[:12], "offers": len(observed),
                "observed_from": min(observed).isoformat(), "observed_to": max(observed).isoformat(),
                "fx_name": Path(self.fx_path).name, "fx_rates": self.fx_rates()}

    def fx_rates(self) -> Sentence:
        """The rates the file's non-USD prices are converted at, e.g. "6.7063 CNY per USD (2026-09-10)" (empty
        when every price is in USD)."""
        used = sorted(set(self.offers["currency"]) - {"USD"})
        return Sentence(Items(tuple(
            Finding.of(msg("{rate} {currency} per USD ({date})"), rate=Number(1 / self.fx[c].usd_per_unit, ".4f"),
                       currency=c, date=self.fx[c].date.isoformat()) for c in used), msg("; ")))

    def source_label(self) -> Sentence:
        """How a figure's source line names the price file: "price file prices.csv (sha256 0123456789ab)"."""
        s = self.stamp()
        return say(msg("price file {name} (sha256 {sha})"), name=s["name"], sha=s["sha256_12"])

    def stamp_markdown(self) -> Sentence:
        """The sentence every page that uses prices shows, e.g. "Prices: `prices.csv` (sha256 0123456789ab),
        42 offers observed 2025-06-01 to 2026-09-20; converted with `fx_rates.csv`, 6.7063 CNY per USD
        (2026-09-10)." (the FX part only when the file has prices in other currencies than USD)."""
        s = self.stamp()
        fx = (Finding.of(msg("; converted with `{fx}`, {rates}"), fx=s["fx_name"], rates=s["fx_rates"].value)
              if s["fx_rates"] else "")
        message = (msg("Prices: `{name}` (sha256 {sha}), {offers} offer observed {start} to {end}{fx}.")
                   if s["offers"] == 1 else
                   msg("Prices: `{name}` (sha256 {sha}), {offers} offers observed {start} to {end}{fx}."))
        return say(message, name=s["name"], sha=s["sha256_12"], offers=s["offers"], start=s["observed_from"],
                   end=s["observed_to"], fx=fx)


def load_fx(path: str | Path = DEFAULT_FX) -> dict[str, FxRate]:
    """An FX table (default: the packaged one), validated, keyed by currency code."""
    rows = datafiles.read(path, FxRate, unique=("currency",))
    return {rate.currency: rate for _, rate in rows}


def load_offers(path: str | Path = DEFAULT_PRICES, fx: Mapping[str, FxRate] | None = None) -> list[Offer]:
    """The validated offers of a price file, in file order, each with its ``system``: the catalogue
    system that models its node (:func:`system_for_offer`: the pinned one, or the one its GPU and
    interconnect give), and its ``scale_out``. Prices are per instance-hour in the offer's currency
    (a ``price_basis`` ``gpu`` quote multiplied by ``gpus_per_instance``)."""
    return [offer for _, offer in _read_offers(path, load_fx() if fx is None else fx).rows]


def _read_offers(path: str | Path, fx: Mapping[str, FxRate]) -> datafiles.DataFile:
    """Every offer validated and mapped to its system; every problem of the file raised at once."""
    data = datafiles.read_file(path, Offer, {"fx": fx})
    problems = _duplicates(data.rows, str(path))
    mapped = []
    for line, offer in data.rows:
        try:
            mapped.append((line, _resolved(offer)))
        except InputError as exc:
            problems.append(dataclasses.replace(exc, file=str(path), line=line))
    if problems:
        raise InputErrors(sorted(problems, key=lambda e: e.line or 0))
    return dataclasses.replace(data, rows=mapped)


def _resolved(offer: Offer) -> Offer:
    """An offer as the cost model takes it: its catalogue ``system`` (:func:`system_for_offer`), its
    ``scale_out`` (the given one, else the system's: :func:`scale_out_of`), ``price_per_hour`` per instance
    (a per-GPU quote multiplied by ``gpus_per_instance``) and ``price_basis`` (``instance`` when empty)."""
    system_id = system_for_offer(offer)
    basis = offer.price_basis or "instance"
    price = offer.price_per_hour * offer.gpus_per_instance if basis == "gpu" else offer.price_per_hour
    return offer.model_copy(update={"system": system_id, "scale_out": offer.scale_out or scale_out_of(system_id),
                                    "price_per_hour": price, "price_basis": basis})


def load_table(path: str | Path = DEFAULT_PRICES, fx_path: str | Path = DEFAULT_FX) -> PriceTable:
    """A price file and an FX table, validated, as a :class:`PriceTable` (defaults: the packaged files).

    Its ``warnings`` name what is valid but probably not meant (:func:`multigpu.market.pricecheck.warnings`),
    its ``notes`` the extra columns kept and the comment lines skipped.
    """
    fx = load_fx(fx_path)
    data = _read_offers(path, fx)
    frame = pd.DataFrame.from_records([_record(offer, fx) for _, offer in data.rows])
    sha = hashlib.sha256(datafiles.read_bytes(path)).hexdigest()
    notes = []
    if data.extra_columns:
        notes.append(f"{path}: extra column{'s' if len(data.extra_columns) != 1 else ''} kept as text: "
                     f"{', '.join(data.extra_columns)}")
    if data.comments:
        notes.append(f"{path}: {data.comments} comment line{'s' if data.comments != 1 else ''} (starting with #) "
                     f"skipped")
    table = PriceTable(str(path), sha, frame, fx, str(fx_path), tuple(notes))
    lines = [line for line, _ in data.rows]
    reference = () if str(path) == str(DEFAULT_PRICES) else reference_prices()  # the packaged file is the range
    return dataclasses.replace(table, warnings=tuple(pricecheck.warnings(table, lines, reference)))


@functools.cache
def reference_prices() -> pricecheck.Reference:
    """(GPU id, USD per GPU-hour) of every offer of the packaged price file: the range another file's prices
    are checked against (:func:`multigpu.market.pricecheck.warnings`)."""
    table = default_table()
    return tuple(zip(table.offers["gpu"], table.offers["price_per_gpu_hour_usd"].astype(float)))


@functools.cache
def default_table() -> PriceTable:
    """The packaged price file and FX table (loaded once); the analyst's template."""
    return load_table()


def resolve(table: PriceTable | None) -> PriceTable:
    """``table``, or :func:`default_table` when None (the cost model's functions take either)."""
    return default_table() if table is None else table


def _rate(currency: str, fx: Mapping[str, FxRate]) -> float:
    if currency not in fx:
        raise InputError(f"unknown currency '{currency}'; the FX table has {', '.join(sorted(fx))}")
    return fx[currency].usd_per_unit


def _record(offer: Offer, fx: Mapping[str, FxRate]) -> dict[str, Any]:
    """An offer as a flat dict with its prices in USD per instance-hour and per GPU-hour."""
    usd = offer.price_per_hour * _rate(offer.currency, fx)
    return offer.model_dump() | {
        "system": offer.system, "price_per_hour_usd": usd, "price_per_gpu_hour_usd": usd / offer.gpus_per_instance}


def _duplicates(offers: list[tuple[int, Offer]], name: str) -> list[InputError]:
    """Two rows with the same :data:`OFFER_KEY` values: an error at the second one."""
    seen: dict[tuple, int] = {}
    problems = []
    for line, offer in offers:
        key = tuple(getattr(offer, column, None) for column in OFFER_KEY)
        if key in seen:
            problems.append(InputError(f"duplicate offer: same provider, instance, pricing, region and currency "
                                       f"as line {seen[key]}; expected one row per offer", name, line, "instance"))
        seen[key] = line
    return problems


# ------------------------------------------------------ offer -> system


def system_for_offer(offer: Offer | Mapping[str, Any]) -> str:
    """The id of the catalogue system that models an offer's node.

    A ``system`` given in the offer wins (it must exist and have the offer's
    GPU). A ``fabric`` other than the system's default makes it the variant
    ``<system>@<fabric>``; without a ``fabric``, a ``scale_out`` of ``ethernet`` or
    ``infiniband`` gives the fabric (:func:`fabric_for_scale_out`), and ``none`` leaves the
    system as it is (the cost model keeps such jobs inside one instance). Otherwise the system has the offer's GPU and is wired by its
    ``interconnect``: a switch link gives the system with that switch, a PCIe
    link the PCIe-tree system, an NVLink bridge the bridged system, a GPU
    fabric (NVLink, Infinity Fabric) the system with that fabric; a wiring variant
    (``variant_of``) only when the ``system`` column names it. No such
    system is an :class:`InputError` naming the column.
    """
    get = offer.get if isinstance(offer, Mapping) else lambda key: getattr(offer, key, None)
    system_id = _node_system(get)
    fabric = fabric_for_scale_out(get("scale_out"), get("fabric"), system_id)
    if fabric is None or catalog.system(system_id).fabric == fabric:
        return system_id
    if not catalog.system(system_id).nics_per_node:
        raise InputError(f"fabric '{fabric}' given, but the catalogue system {system_id} has no scale-out NIC",
                         column="fabric")
    return f"{system_id}@{fabric}"


def _cell(value: Any) -> str | None:
    """A text cell lower-cased, None when empty or not text."""
    return value.strip().lower() if isinstance(value, str) and value.strip() else None


def fabric_for_scale_out(scale_out: Any, fabric: Any, system_id: str) -> str | None:
    """The catalogue fabric (:data:`multigpu.hardware.catalog.FABRICS`) an offer's ``scale_out`` and
    ``fabric`` cells give on ``system_id``; None: the system's own (or no network, for ``none``).

    A ``fabric`` wins; a ``scale_out`` beside it must name its class (``ib``, ``ib-sharp``:
    ``infiniband``; ``roce``, ``tcp``, ``efa``: ``ethernet``), else an :class:`InputError` on the
    ``scale_out`` column. Without a fabric, ``infiniband`` is the system's fabric when it is an
    InfiniBand one, else ``ib``; ``ethernet`` the system's when it is an Ethernet one, else ``tcp``
    (a rented network between instances of unknown kind is taken as plain TCP).
    """
    scale, fabric = _cell(scale_out), _cell(fabric)
    if scale is not None and scale not in SCALE_OUTS:
        raise InputError(f"unknown scale_out '{scale}'; expected one of {', '.join(SCALE_OUTS)}", column="scale_out")
    if fabric is not None:
        kind = next((k for k, members in SCALE_OUT_FABRICS.items() if fabric in members), None)
        if scale is not None and scale != kind:
            raise InputError(f"scale_out '{scale}' contradicts fabric '{fabric}' (an {kind} fabric); expected "
                             f"scale_out {kind} or empty (the fabric wins)", column="scale_out")
        return fabric
    if scale is None or scale == "none":
        return None
    own = catalog.system(system_id).fabric
    if own in SCALE_OUT_FABRICS[scale]:
        return own
    if not catalog.system(system_id).nics_per_node:
        raise InputError(f"scale_out '{scale}' given, but the catalogue system {system_id} has no scale-out NIC; "
                         f"expected none, or a 'system' with a NIC", column="scale_out")
    return SCALE_OUT_DEFAULT_FABRIC[scale]


def scale_out_of(system_id: str) -> str:
    """The ``scale_out`` class of a catalogue system (or ``<id>@<fabric>`` variant): ``infiniband``,
    ``ethernet``, or ``none`` without a scale-out NIC."""
    fabric = catalog.system(system_id).fabric
    if fabric is None:
        return "none"
    return "infiniband" if fabric in SCALE_OUT_FABRICS["infiniband"] else "ethernet"


def _node_system(get: Callable[[str], Any]) -> str:
    """The catalogue system of an offer's node, before its fabric (see :func:`system_for_offer`)."""
    gpu, link_id, pinned = get("gpu"), get("interconnect"), get("system")
    systems = catalog.systems()
    if isinstance(pinned, str) and pinned.strip():
        return _pinned(pinned.strip(), gpu, systems)
    link = catalog.links().get(link_id)
    if link is None:
        raise InputError(f"unknown interconnect '{link_id}'", column="interconnect")
    matches = [s.id for s in systems.values() if s.gpu == gpu and _wired_by(s, link) and s.variant_of is None]
    if not matches:
        with_gpu = [s.id for s in systems.values() if s.gpu == gpu] or ["none"]
        raise InputError(f"no catalogue system has GPU '{gpu}' joined by '{link_id}' ({link.category}); "
                         f"systems with this GPU: {', '.join(with_gpu)}; expected the interconnect of one "
                         f"of them, or a 'system' column naming one", column="interconnect")
    return _smallest_that_holds(matches, systems, get("gpus_per_instance"))


def _smallest_that_holds(ids: list[str], systems: Mapping[str, catalog.System], gpus: Any) -> str:
    """Of several matching systems, the smallest node that holds the instance's GPUs (else the largest)."""
    try:
        wanted = int(gpus)
    except (TypeError, ValueError):
        wanted = 1
    holds = sorted((systems[i].gpus_per_node, i) for i in ids if systems[i].gpus_per_node >= wanted)
    return holds[0][1] if holds else max(ids, key=lambda i: systems[i].gpus_per_node)


def _pinned(system_id: str, gpu: str, systems: Mapping[str, catalog.System]) -> str:
    if system_id not in systems:
        close = datafiles.suggest(system_id, list(systems))
        raise InputError(f"unknown system '{system_id}'; expected a catalogue id such as {', '.join(close)} "
                         f"(all: python -m multigpu systems)", column="system")
    if systems[system_id].gpu != gpu:
        raise InputError(f"system '{system_id}' has GPU '{systems[system_id].gpu}', the offer '{gpu}'; "
                         f"expected a system with the offer's GPU", column="system")
    return system_id


def _wired_by(system: catalog.System, link: catalog.Link) -> bool:
    """Whether ``system``'s GPUs are joined by ``link`` (a switch, PCIe, a bridge or a GPU fabric)."""
    if link.category == "nvswitch":
        return system.nvswitch == link.id
    if link.category == "pcie":
        return system.topology == "pcie-tree"
    if link.category == "nvlink-bridge":
        return system.topology == "pcie-bridged" and system.nvlink == link.id
    return system.nvlink == link.id
