"""Every price-dependent table of the book for one price file, as CSV files and one XLSX workbook.

``python -m multigpu report --prices FILE --out DIR`` (or ``make report
PRICES=FILE``) writes, for the price table it is given:

- chapter 4's tables: the offers, the price landscape, the premiums charged,
  every workload's cost on every offer (with its 90 % prediction interval:
  ``cost_usd_lo``, ``cost_usd_hi`` and the like), the cheapest offer per class,
  the job summary, the break-even premiums, the market in CNY and the
  sensitivity;
- chapter 5's tables: the guide's decisions, size lines and flip scales, and
  its summaries;
- the claims whose verdicts read prices (C24, C26), with the cases they count.

Each CSV has full precision, the stable offer ids (:func:`offer_id`) beside
every offer number, and stamp columns: the price file's name, SHA-256 and
observation dates, the FX table and its rates' dates, the package version and
the calibration's digest. The workbook has a sheet per table and a README
sheet with the stamp. Prices only multiply GPU-hours that do not depend on
them; the searches behind those GPU-hours are kept on disk between runs
(:func:`multigpu.market.search.save_memo`), so a re-run with another price file
only prices.
"""

from __future__ import annotations

import csv
import hashlib
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from multigpu import __version__
from multigpu.comm import calibration
from multigpu.comm.calibration import Calibration
from multigpu.common.csvout import csv_cell
from multigpu.evidence import claims, guide, intervals
from multigpu.evidence import cost as cost_analysis
from multigpu.evidence.claims import cost as cost_claims
from multigpu.market import cost, premium, prices, workloads
from multigpu.market.prices import PriceTable

Tables = dict[str, pd.DataFrame]


def offer_id(row: Mapping[str, Any]) -> str:
    """A stable id of an offer: 10 hex digits of the SHA-1 of its identity (provider, instance, pricing,
    region, currency), the same in every run and every price file that lists the offer."""
    parts = []
    for column in prices.OFFER_KEY:
        value = row.get(column)
        parts.append("" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value))
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:10]


def stamp(table: PriceTable, cal: Calibration | None = None) -> dict[str, str]:
    """The provenance of a report: price file, FX table, package version and calibration."""
    s = table.stamp()
    used = sorted(set(table.offers["currency"]) - {"USD"})
    rates = "; ".join(f"{c} = {table.fx[c].usd_per_unit!r} USD ({table.fx[c].date.isoformat()})" for c in used)
    return {"price_file": s["name"], "price_file_sha256": table.sha256, "observed_from": s["observed_from"],
            "observed_to": s["observed_to"], "fx_table": Path(table.fx_path).name, "fx_rates": rates or "USD only",
            "package_version": __version__, "calibration_digest": calibration.resolve(cal).digest}


def chapter4(table: PriceTable, cal: Calibration | None = None) -> Tables:
    """Chapter 4's price-dependent tables."""
    ids = list(workloads.workloads_table())
    tornados = [t.assign(workload=w, kind=kind) for kind, w, t in cost_analysis.tornados(table, cal) if t is not None]
    break_even = [premium.break_even(w, table, cal=cal) for w in ids]
    return {
        "offers": cost.offers(table),
        "landscape_by_gpu": cost_analysis.landscape_summary(table),
        "landscape_by_provider_type": cost_analysis.landscape_summary(table, by=("provider_type", "interconnect_class")),
        "charged_premiums": premium.charged_premiums(table),
        "costs": _bounded(cost.cost_table(ids, table, cal=cal)),
        "cheapest_by_class": cost_analysis.best_by_class(ids, table, cal=cal),
        "job_summary": cost_analysis.job_summary(ids, table, cal=cal),
        "break_even": pd.concat([b for b in break_even if not b.empty] or [break_even[0]], ignore_index=True),
        "break_even_summary": premium.break_even_summary(ids, table, cal=cal),
        "market_cny": cost_analysis.market_table("CNY", ids, table, cal=cal),
        "sensitivity": pd.concat(tornados, ignore_index=True) if tornados else pd.DataFrame(),
    }


def _bounded(costs: pd.DataFrame) -> pd.DataFrame:
    """Every workload's costs with the 90 % prediction interval of each (``cost_usd_lo``, ``cost_usd_hi``, ...:
    :func:`multigpu.evidence.intervals.cost_bounds`)."""
    return intervals.cost_bounds(costs, [workloads.workload(w).kind for w in costs["workload"]])


def chapter5(table: PriceTable, cal: Calibration | None = None) -> Tables:
    """Chapter 5's price-dependent tables: the guide over every pricing type of the file."""
    decided = guide.decisions(table, cal=cal)
    out = {"guide_decisions": decided, "guide_size_lines": guide.thresholds(decided),
           "guide_flip_scales": guide.flip_scales(decided)}
    reference = guide.reference_pricing(table)
    for kind in ("train", "serve"):
        out[f"guide_summary_{kind}"] = guide.summary(decided, reference, kind).reset_index()
    return out


def price_claims(table: PriceTable, cal: Calibration | None = None) -> Tables:
    """The claims whose verdicts read prices, and the cases behind them."""
    inputs = claims.Inputs(cal=cal, prices=table)
    verdicts = pd.DataFrame([claims.check(i, inputs).to_dict() for i in ("C24", "C26")])
    return {"claims": verdicts, "c24_cases": cost_claims.premium_cases(table, cal)["rows"],
            "c26_size_lines": cost_claims.size_lines(table, cal)}


def tables(table: PriceTable, cal: Calibration | None = None,
           progress: Callable[[int, int], None] | None = None) -> Tables:
    """Every price-dependent table of the book for ``table``, with stable offer ids."""
    out: Tables = {}
    parts = (chapter4, chapter5, price_claims)
    for done, part in enumerate(parts, start=1):
        out.update(part(table, cal))
        if progress:
            progress(done, len(parts))
    ids = {i: offer_id(row) for i, row in enumerate(table.offers.to_dict("records"))}
    return {name: _with_offer_ids(frame, ids) for name, frame in out.items()}


def _with_offer_ids(frame: pd.DataFrame, ids: Mapping[int, str]) -> pd.DataFrame:
    """Beside every offer-number column (``offer``, ``nvlink_offer``, ...) its stable id (``offer_id``, ...)."""
    frame = frame.copy()
    for column in [c for c in frame.columns if c == "offer" or c.endswith("_offer")]:
        position = list(frame.columns).index(column) + 1
        values = [ids.get(int(v)) if v is not None and not pd.isna(v) else None for v in frame[column]]
        frame.insert(position, f"{column}_id", values)
    return frame


def _value(value: Any) -> Any:
    """A cell for the workbook: numbers as numbers (NaN and NA empty), dates as ISO text, text made safe."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, (bool, int, float)):
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return csv_cell(value)


def write(out: str | Path, found: Tables, provenance: Mapping[str, str]) -> list[Path]:
    """Write one CSV per table (stamp columns appended) and ``report.xlsx``; return the files written."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in found.items():
        path = folder / f"{name}.csv"
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow([*frame.columns, *provenance])
            for row in frame.itertuples(index=False):
                writer.writerow([csv_cell(v) if v is not pd.NA else "" for v in row]
                                + [csv_cell(v) for v in provenance.values()])
        written.append(path)
    written.append(_workbook(folder / "report.xlsx", found, provenance))
    return written


def _workbook(path: Path, found: Tables, provenance: Mapping[str, str]) -> Path:
    """One sheet per table and a README sheet with the stamp and what each sheet holds."""
    from openpyxl import Workbook

    book = Workbook()
    readme = book.active
    readme.title = "README"
    readme.append(["multigpu report: every price-dependent table of the book for one price file"])
    readme.append([])
    for key, value in provenance.items():
        readme.append([key, csv_cell(value)])
    readme.append([])
    readme.append(["sheet", "rows", "columns"])
    for name, frame in found.items():
        readme.append([name, len(frame), ", ".join(map(str, frame.columns))])
        sheet = book.create_sheet(name[:31])
        sheet.append([str(c) for c in frame.columns])
        for row in frame.itertuples(index=False):
            sheet.append([_value(v) for v in row])
    book.save(path)
    return path
