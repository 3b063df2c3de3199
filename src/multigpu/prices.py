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
catalogue system id that pins the model of the node), ``notes``, and any other
column, which is kept as text.

Each row is checked by a pydantic model (:class:`Offer`); the first problem is
raised as an :class:`~multigpu.errors.InputError` naming the file (as given),
the physical line (header = line 1) and the column. Files saved by spreadsheet
programs (UTF-8 with BOM, CRLF line ends, trailing empty lines) read the same
as plain ones. The file is only ever read.

Environment: ``MULTIGPU_PRICES`` points the book and the CLI at another price
file, ``MULTIGPU_FX`` at another FX table (same columns as ``data/fx_rates.csv``:
``currency, usd_per_unit, date, source``).
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import hashlib
import io
import os
import re
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError,
                      ValidationInfo, field_validator)

from multigpu import catalog
from multigpu.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

DATA_DIR = Path(__file__).parent / "data"
PRICES_ENV = "MULTIGPU_PRICES"
FX_ENV = "MULTIGPU_FX"
PRICING = ("on-demand", "spot", "reserved", "community")
#: Columns that identify an offer: two rows with the same values are a duplicate.
OFFER_KEY = ("provider", "instance", "pricing", "region", "currency")

# ------------------------------------------------------------ cell types


def _iso_date(value: Any) -> Any:
    """A ``YYYY-MM-DD`` text as a date; anything else is an error."""
    if not isinstance(value, str):
        return value
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise ValueError(f"'{value}' is not an ISO date; expected YYYY-MM-DD, e.g. 2026-09-20")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"'{value}' is not a calendar date; expected YYYY-MM-DD, e.g. 2026-09-20") from None


def _not_future(value: date) -> date:
    today = date.today()
    if value > today:
        raise ValueError(f"{value} is in the future (today is {today}); expected the date the price was seen")
    return value


Text = Annotated[str, Field(min_length=1)]
IsoDate = Annotated[date, BeforeValidator(_iso_date), AfterValidator(_not_future)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class _Row(BaseModel):
    """A CSV row: cells are stripped text, empty cells are None; extra columns are kept."""

    model_config = ConfigDict(extra="allow", frozen=True)
    REQUIRED: ClassVar[tuple[str, ...]] = ()
    OPTIONAL: ClassVar[tuple[str, ...]] = ()
    #: What a column should hold, for the error messages.
    EXPECTED: ClassVar[dict[str, str]] = {}
    NOUN: ClassVar[str] = "row"


class Offer(_Row):
    """One rental offer (a row of the price file); ``price_per_hour`` is per instance, in ``currency``."""

    provider: Text
    instance: Text
    gpu: Text
    gpus_per_instance: int = Field(ge=1)
    interconnect: Text
    price_per_hour: Positive
    currency: Text
    pricing: Literal[PRICING]  # type: ignore[valid-type]
    observed: IsoDate
    source: Text
    region: str | None = None
    system: str | None = None
    notes: str | None = None

    REQUIRED = ("provider", "instance", "gpu", "gpus_per_instance", "interconnect", "price_per_hour",
                "currency", "pricing", "observed", "source")
    OPTIONAL = ("region", "system", "notes")
    NOUN = "offer"
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
    }

    @field_validator("gpu")
    @classmethod
    def _known_gpu(cls, value: str) -> str:
        return _known(value, catalog.gpus(), "GPU", "gpus")

    @field_validator("interconnect")
    @classmethod
    def _known_link(cls, value: str) -> str:
        return _known(value, catalog.links(), "interconnect", "links")

    @field_validator("currency")
    @classmethod
    def _known_currency(cls, value: str, info: ValidationInfo) -> str:
        known = (info.context or {}).get("fx") or load_fx()
        if value not in known:
            raise ValueError(f"unknown currency '{value}'; expected one of the FX table: {', '.join(sorted(known))}")
        return value


class FxRate(_Row):
    """One exchange rate: ``usd_per_unit`` US dollars buy one unit of ``currency``, on ``date``."""

    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
    usd_per_unit: Positive
    date: IsoDate
    source: Text
    notes: str | None = None

    REQUIRED = ("currency", "usd_per_unit", "date", "source")
    OPTIONAL = ("notes",)
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


def _known(value: str, table: Mapping[str, Any], kind: str, command: str) -> str:
    """``value`` if it is a key of ``table``; else an error naming a few close keys."""
    if value in table:
        return value
    close = _suggest(value, list(table))
    raise ValueError(f"unknown {kind} '{value}'; expected a catalogue id such as {', '.join(close)} "
                     f"(all: python -m multigpu {command})")


# ---------------------------------------------------------------- paths


def default_prices_path() -> Path:
    """The price file shipped with the package (``data/prices.csv``), the analyst's template."""
    return DATA_DIR / "prices.csv"


def default_fx_path() -> Path:
    """The FX table shipped with the package (``data/fx_rates.csv``)."""
    return DATA_DIR / "fx_rates.csv"


def active_prices_path() -> Path:
    """``MULTIGPU_PRICES`` if set (it must name a file), else :func:`default_prices_path`."""
    return _from_env(PRICES_ENV) or default_prices_path()


def active_fx_path() -> Path:
    """``MULTIGPU_FX`` if set (it must name a file), else :func:`default_fx_path`."""
    return _from_env(FX_ENV) or default_fx_path()


def _from_env(variable: str) -> Path | None:
    value = os.environ.get(variable, "").strip()
    if not value:
        return None
    if not Path(value).is_file():
        raise InputError(f"{variable} names no such file", file=value)
    return Path(value)


# -------------------------------------------------------------- loading


def load_fx(path: str | Path | None = None) -> dict[str, FxRate]:
    """The FX table (default: :func:`active_fx_path`), validated, keyed by currency code."""
    path = active_fx_path() if path is None else path
    rates: dict[str, FxRate] = {}
    for line, rate in _load(path, FxRate):
        if rate.currency in rates:
            raise InputError(f"duplicate currency '{rate.currency}'; expected one rate per currency",
                             str(path), line, "currency")
        rates[rate.currency] = rate
    return rates


def to_usd(amount: float, currency: str, fx: Mapping[str, FxRate] | None = None) -> float:
    """``amount`` in ``currency`` converted to USD with the FX table (default: the active one)."""
    return amount * _rate(currency, fx)


def from_usd(amount_usd: float, currency: str, fx: Mapping[str, FxRate] | None = None) -> float:
    """``amount_usd`` US dollars converted to ``currency`` with the FX table (default: the active one)."""
    return amount_usd / _rate(currency, fx)


def _rate(currency: str, fx: Mapping[str, FxRate] | None) -> float:
    fx = load_fx() if fx is None else fx
    if currency not in fx:
        raise InputError(f"unknown currency '{currency}'; the FX table has {', '.join(sorted(fx))}")
    return fx[currency].usd_per_unit


def load_offers(path: str | Path | None = None) -> list[Offer]:
    """The validated offers of a price file (default: :func:`active_prices_path`), in file order.

    Each offer's ``system`` is the catalogue system that models its node
    (:func:`system_for_offer`: the pinned one, or the one its GPU and
    interconnect give). Prices stay per instance-hour in the offer's currency.
    """
    path = active_prices_path() if path is None else path
    offers = _load(path, Offer, {"fx": load_fx()})
    _check_unique(offers, str(path))
    return [offer.model_copy(update={"system": _system_at(offer, str(path), line)}) for line, offer in offers]


def load_prices(path: str | Path | None = None) -> pd.DataFrame:
    """The validated offers of a price file (default: :func:`active_prices_path`) as a table.

    One row per offer with the contract's columns (typed: ``gpus_per_instance``
    int, ``price_per_hour`` float in ``currency``, ``observed`` a date), the
    optional ``region`` and ``notes`` (missing when empty or absent), any extra
    column of the file, ``system`` (the catalogue system that models the node)
    and two more: ``price_per_hour_usd`` (USD per instance-hour) and
    ``price_per_gpu_hour_usd`` (USD per GPU-hour), converted with the FX table
    (``MULTIGPU_FX`` or the packaged one).
    """
    import pandas as pd

    path = active_prices_path() if path is None else path
    fx = load_fx()
    frame = pd.DataFrame.from_records([_record(offer, fx) for offer in load_offers(path)])
    frame.attrs["path"] = str(path)
    return frame


def _record(offer: Offer, fx: Mapping[str, FxRate]) -> dict[str, Any]:
    """An offer as a flat dict with its prices in USD per instance-hour and per GPU-hour."""
    usd = to_usd(offer.price_per_hour, offer.currency, fx)
    return offer.model_dump() | {
        "system": offer.system, "price_per_hour_usd": usd, "price_per_gpu_hour_usd": usd / offer.gpus_per_instance}


def _check_unique(offers: list[tuple[int, Offer]], name: str) -> None:
    """Two rows with the same :data:`OFFER_KEY` values are an error at the second one."""
    seen: dict[tuple, int] = {}
    for line, offer in offers:
        key = tuple(getattr(offer, column, None) for column in OFFER_KEY)
        if key in seen:
            raise InputError(f"duplicate offer: same provider, instance, pricing, region and currency as "
                             f"line {seen[key]}; expected one row per offer", name, line, "instance")
        seen[key] = line


def _system_at(offer: Offer, name: str, line: int) -> str:
    try:
        return system_for_offer(offer)
    except InputError as exc:
        raise dataclasses.replace(exc, file=name, line=line) from None


# ------------------------------------------------------ offer -> system


def system_for_offer(offer: Offer | Mapping[str, Any]) -> str:
    """The id of the catalogue system that models an offer's node.

    A ``system`` given in the offer wins (it must exist and have the offer's
    GPU). Otherwise the system has the offer's GPU and is wired by its
    ``interconnect``: a switch link gives the system with that switch, a PCIe
    link the PCIe-tree system, an NVLink bridge the bridged system, a GPU
    fabric (NVLink, Infinity Fabric) the system with that fabric. No such
    system is an :class:`InputError` naming the column.
    """
    get = offer.get if isinstance(offer, Mapping) else lambda key: getattr(offer, key, None)
    gpu, link_id, pinned = get("gpu"), get("interconnect"), get("system")
    systems = catalog.systems()
    if isinstance(pinned, str) and pinned.strip():
        return _pinned(pinned.strip(), gpu, systems)
    link = catalog.links().get(link_id)
    if link is None:
        raise InputError(f"unknown interconnect '{link_id}'", column="interconnect")
    matches = [s.id for s in systems.values() if s.gpu == gpu and _wired_by(s, link)]
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
        close = _suggest(system_id, list(systems))
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


# ---------------------------------------------------------------- stamp


def price_file_stamp(path: str | Path | None = None) -> dict[str, Any]:
    """What identifies a price file: ``name``, ``sha256_12`` (first 12 hex digits of
    its SHA-256), ``offers`` (count) and ``observed_from`` / ``observed_to`` (ISO dates)."""
    path = active_prices_path() if path is None else Path(path)
    observed = [offer.observed for offer in load_offers(path)]
    return {"name": Path(path).name, "sha256_12": hashlib.sha256(_read_bytes(path)).hexdigest()[:12],
            "offers": len(observed), "observed_from": min(observed).isoformat(),
            "observed_to": max(observed).isoformat()}


def stamp_markdown(path: str | Path | None = None) -> str:
    """The sentence every page that uses prices shows, e.g. "Prices: `prices.csv`
    (sha256 0123456789ab), 42 offers observed 2025-06-01 to 2026-09-20." """
    s = price_file_stamp(path)
    offers = f"{s['offers']} offer{'s' if s['offers'] != 1 else ''}"
    return (f"Prices: `{s['name']}` (sha256 {s['sha256_12']}), {offers} observed "
            f"{s['observed_from']} to {s['observed_to']}.")


# ------------------------------------------------------------ CSV reading


def _load(path: str | Path, model: type[_Row], context: dict[str, Any] | None = None) -> list[tuple[int, Any]]:
    """Read ``path`` and validate each row with ``model``: [(line, record)], at least one row."""
    name = str(path)
    header, rows = _read_csv(path)
    _check_header(header, model, name)
    if not rows:
        raise InputError(f"has a header but no rows; expected one {model.NOUN} per line", name, 1)
    return [(line, _validate(model, cells, name, line, context)) for line, cells in rows]


def _read_bytes(path: str | Path) -> bytes:
    try:
        with open(path, "rb") as handle:  # read-only: the analyst's file is never written
            return handle.read()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", str(path)) from None


def _read_csv(path: str | Path) -> tuple[list[str], list[tuple[int, dict[str, str | None]]]]:
    """The header and the non-empty rows as (physical line, {column: stripped text or None})."""
    name = str(path)
    try:
        text = _read_bytes(path).decode("utf-8-sig")  # a BOM (spreadsheet export) is dropped
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        raise InputError("is not UTF-8 text; expected a CSV saved as UTF-8 (in a spreadsheet: 'CSV UTF-8')",
                         name, line) from None
    reader = csv.reader(io.StringIO(text, newline=""))  # the csv module reads LF and CRLF
    try:
        header = [cell.strip() for cell in next(reader, [])]
        if not any(header):
            raise InputError("is empty; expected a header line, then one row per line "
                             "(see python -m multigpu prices template)", name, 1)
        rows, end = [], reader.line_num
        for cells in reader:
            start, end = end + 1, reader.line_num
            if not any(cell.strip() for cell in cells):
                continue  # empty line, e.g. trailing ones from a spreadsheet
            if len(cells) != len(header):
                raise InputError(f"has {len(cells)} cells, the header {len(header)}; expected one cell per column",
                                 name, start)
            rows.append((start, {col: cell.strip() or None for col, cell in zip(header, cells)}))
    except csv.Error as exc:
        raise InputError(f"is not valid CSV: {exc}", name, reader.line_num) from None
    return header, rows


def _check_header(header: list[str], model: type[_Row], name: str) -> None:
    """Every required column once; a misspelt name gets the closest valid one suggested."""
    for column in header:
        if not column:
            raise InputError("a column has no name; expected a name in every header cell", name, 1)
        if header.count(column) > 1:
            raise InputError("appears twice in the header; expected each column once", name, 1, column)
    unknown = [column for column in header if column not in model.REQUIRED + model.OPTIONAL]
    for column in model.REQUIRED:
        if column not in header:
            guess = _closest(column, unknown)
            if guess:
                raise InputError(f"unknown column; did you mean '{column}' (a required column)?", name, 1, guess)
            raise InputError(f"is missing; expected columns {', '.join(model.REQUIRED)}", name, 1, column)
    for column in unknown:
        guess = _closest(column, [c for c in model.OPTIONAL if c not in header])
        if guess:
            raise InputError(f"unknown column; did you mean '{guess}'?", name, 1, column)


def _suggest(word: str, ids: list[str], n: int = 4) -> list[str]:
    """A few ids close to ``word`` (those it begins, then similar ones), else the first ones."""
    word = word.lower()
    close = [i for i in ids if i.startswith(word)] + difflib.get_close_matches(word, ids, n=n, cutoff=0.4)
    return list(dict.fromkeys(close))[:n] or sorted(ids)[:n]


def _closest(word: str, candidates: list[str]) -> str | None:
    """The candidate that ``word`` most likely misspells (case-insensitive), if any."""
    lowered = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.75)
    return lowered[close[0]] if close else None


def _validate(model: type[_Row], cells: dict[str, str | None], name: str, line: int,
              context: dict[str, Any] | None) -> Any:
    """``cells`` as a ``model``; the first problem as an InputError at (name, line, column)."""
    try:
        return model.model_validate(cells, context=context)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        column = str(error["loc"][0]) if error["loc"] else None
        raise InputError(_message(error, model.EXPECTED.get(column or "", "")), name, line, column) from None


_REASONS = {"int_parsing": "is not a whole number", "float_parsing": "is not a number",
            "finite_number": "is not a finite number", "literal_error": "is not allowed",
            "string_pattern_mismatch": "is not allowed"}


def _message(error: Mapping[str, Any], expected: str) -> str:
    """A pydantic error as '<what is wrong>; expected <what>'."""
    value, kind, ctx = error.get("input"), error["type"], error.get("ctx") or {}
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))  # our own validators say it all
    if value is None or value == "":
        return f"is empty; expected {expected}"
    if kind == "greater_than":
        return f"'{value}' is not above {ctx['gt']:g}; expected {expected}"
    if kind == "greater_than_equal":
        return f"'{value}' is below {ctx['ge']:g}; expected {expected}"
    reason = _REASONS.get(kind, error["msg"])
    return f"'{value}' {reason}; expected {expected}"
