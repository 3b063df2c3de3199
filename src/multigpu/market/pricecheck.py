"""Price-file plausibility: what is valid but probably not what the analyst meant.

Each check yields an :class:`~multigpu.common.errors.InputWarning` at the
offer's line and column; the CLI prints them on stderr (exit status 0), the
book shows them as notes. Ages are measured against the file's own newest
observation date, not today's date, so the same file gives the same warnings
on any day.

- a price per GPU-hour more than :data:`OUTLIER_FACTOR` times outside the
  range of the packaged price file;
- more GPUs in an instance than the catalogue node that models it holds;
- a price that looks per GPU in the per-instance column (a row with
  ``price_basis`` ``gpu`` is checked after the loader multiplied it out);
- an observation more than :data:`MAX_OBSERVATION_AGE_DAYS` older than the
  file's newest;
- an exchange rate more than :data:`MAX_FX_AGE_DAYS` older than the file's
  newest observation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

import pandas as pd

from multigpu.common.errors import InputWarning
from multigpu.hardware import catalog

#: (GPU id, USD per GPU-hour) of each offer of the price range a file is checked against
Reference = tuple[tuple[str, float], ...]


class Table(Protocol):
    """What the checks read of a price table (:class:`multigpu.market.prices.PriceTable`)."""

    path: str
    offers: pd.DataFrame
    fx: Mapping[str, Any]
    fx_path: str

#: A price per GPU-hour this many times above the packaged file's highest, or below its lowest, is suspect.
OUTLIER_FACTOR = 10.0
#: An observation this many days older than the file's newest is stale.
MAX_OBSERVATION_AGE_DAYS = 730
#: An exchange rate this many days older than the file's newest observation is stale.
MAX_FX_AGE_DAYS = 90


def warnings(table: Table, lines: Sequence[int], reference: Reference = ()) -> list[InputWarning]:
    """Every plausibility warning of ``table`` (``lines``: each offer's line in the file), in line order.
    ``reference``: the price range outliers are judged against (the packaged file's offers; none for the packaged
    file itself)."""
    found = list(_offer_warnings(table, lines, reference)) + list(_fx_warnings(table))
    return sorted(found, key=lambda w: w.line or 0)


def _offer_warnings(table: Table, lines: Sequence[int], reference: Reference) -> Iterator[InputWarning]:
    frame = table.offers
    newest = max(frame["observed"])
    all_prices = [p for _, p in reference]
    for line, offer in zip(lines, frame.to_dict("records")):
        def warn(column: str, text: str) -> InputWarning:
            return InputWarning(text, table.path, line, column)

        per_gpu = float(offer["price_per_gpu_hour_usd"])
        if all_prices and (per_gpu > OUTLIER_FACTOR * max(all_prices) or per_gpu < min(all_prices) / OUTLIER_FACTOR):
            yield warn("price_per_hour", f"USD {per_gpu:.4g} per GPU-hour is more than {OUTLIER_FACTOR:g}x outside "
                                         f"the packaged file's range, USD {min(all_prices):.2f} to "
                                         f"{max(all_prices):.2f}; check the unit and the currency")
        node = catalog.system(offer["system"])
        if offer["gpus_per_instance"] > node.gpus_per_node:
            yield warn("gpus_per_instance", f"{offer['gpus_per_instance']} GPUs per instance, but the catalogue node "
                                            f"that models it ({node.id}) holds {node.gpus_per_node}; jobs that need "
                                            f"the instance's inside wiring cannot be costed")
        same = [p for g, p in reference if g == offer["gpu"]] or all_prices
        per_instance_usd = float(offer["price_per_hour_usd"])
        if (offer["gpus_per_instance"] > 1 and same and per_gpu < min(same) / 2
                and min(same) <= per_instance_usd <= 1.5 * max(same)):
            yield warn("price_per_hour", f"USD {per_instance_usd:.2f} per hour for {offer['gpus_per_instance']} GPUs "
                                         f"is USD {per_gpu:.2f} per GPU-hour, below half the packaged file's lowest "
                                         f"for this GPU (USD {min(same):.2f}); is it a per-GPU price? "
                                         f"price_per_hour is per instance (or set price_basis to gpu)")
        age = (newest - offer["observed"]).days
        if age > MAX_OBSERVATION_AGE_DAYS:
            yield warn("observed", f"{offer['observed'].isoformat()} is {age} days older than the file's newest "
                                   f"observation ({newest.isoformat()}); the price may be out of date")


def _fx_warnings(table: Table) -> Iterator[InputWarning]:
    newest = max(table.offers["observed"])
    for currency in sorted(set(table.offers["currency"]) - {"USD"}):
        rate = table.fx[currency]
        age = (newest - rate.date).days
        if age > MAX_FX_AGE_DAYS:
            yield InputWarning(f"the {currency} rate of {rate.date.isoformat()} is {age} days older than the "
                               f"newest observation ({newest.isoformat()}); costs in USD may be off",
                               table.fx_path, None, "date")
