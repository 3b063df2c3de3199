"""The one CSV reader of the project: every data file is read here, against a declared schema.

A schema is a pydantic model, a subclass of :class:`Row`: its fields are the
file's columns (required unless they have a default), with types and
validators; ``EXPECTED`` says in words what each column holds. :func:`read`
returns ``[(line, row)]`` and raises the first problem as an
:class:`~multigpu.common.errors.InputError` naming the file (as given), the
physical line (header = line 1) and the column, which the CLI prints as
``error: <file>:<line>: column '<col>': ...`` with exit status 2. Extra columns
are kept as text, except in a :class:`ClosedRow` schema, whose header may hold
only the declared columns.

Files saved by spreadsheet programs (UTF-8 with BOM, CRLF line ends, trailing
empty lines) read the same as plain ones. A file is only ever read.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
)

from multigpu.common.errors import InputError, InputErrors

DATA_DIR = Path(__file__).resolve().parents[1] / "data"


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
        raise ValueError(f"{value} is in the future (today is {today}); expected the date it was seen")
    return value


def _bool(value: Any) -> Any:
    """``true``/``false`` (any case, also ``yes``/``no``, ``1``/``0``) as a bool."""
    if not isinstance(value, str):
        return value
    text = value.strip().lower()
    if text in ("true", "yes", "1"):
        return True
    if text in ("false", "no", "0"):
        return False
    raise ValueError(f"'{value}' is not true or false")


def _json_object(value: Any) -> Any:
    """A JSON object written in one cell (e.g. ``{"nics_per_node": 4}``); empty: None."""
    if value is None or isinstance(value, dict):
        return value
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValueError(f"'{value}' is not JSON: {exc.msg}") from None
    if not isinstance(parsed, dict):
        raise ValueError(f"'{value}' is not a JSON object")
    return parsed


def _true_false(value: Any) -> Any:
    """Only ``true`` or ``false`` (any case) as a bool; an empty cell stays None (reported as empty)."""
    if not isinstance(value, str):
        return value
    if value.lower() not in ("true", "false"):
        raise ValueError(f"'{value}' is not true or false; expected true or false")
    return value.lower() == "true"


_LOWER_ID = re.compile(r"[a-z0-9][a-z0-9.-]*")


def _lower_id(value: str) -> str:
    if not _LOWER_ID.fullmatch(value):
        raise ValueError(f"'{value}' is not a lower-case id; expected a-z, 0-9, '-' and '.' "
                         "(starting with a letter or digit), e.g. h100-sxm")
    return value


def _empty_as_blank(value: Any) -> Any:
    return "" if value is None else value


def one_of(values: Iterable[str]) -> Any:
    """The type of a column holding one of ``values`` (an enum): a ``Literal`` of them whose error
    names them all, ``'x' is not one of a, b, c``."""
    allowed = tuple(values)

    def check(value: Any) -> Any:
        if value is not None and value not in allowed:
            raise ValueError(f"'{value}' is not one of {', '.join(allowed)}")
        return value

    return Annotated[Literal[allowed], BeforeValidator(check)]


Text = Annotated[str, Field(min_length=1)]
IsoDate = Annotated[date, BeforeValidator(_iso_date)]
PastDate = Annotated[date, BeforeValidator(_iso_date), AfterValidator(_not_future)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]
PositiveCount = Annotated[int, Field(ge=1)]
Flag = Annotated[bool, BeforeValidator(_bool)]
JsonObject = Annotated[dict | None, BeforeValidator(_json_object)]
TrueFalse = Annotated[bool, BeforeValidator(_true_false)]  #: strictly ``true``/``false`` (any case)
LowerId = Annotated[str, AfterValidator(_lower_id)]  #: a lower-case id such as ``h100-sxm``
BlankText = Annotated[str, BeforeValidator(_empty_as_blank)]  #: text that may be empty (then "")


class Row(BaseModel):
    """A CSV row: cells are stripped text, empty cells are None; extra columns are kept as text.

    Subclasses declare a file's schema: fields (a default makes the column
    optional), ``EXPECTED`` (what each column holds, for messages),
    ``NOUN`` (what one row is) and ``TEMPLATE`` (a command that prints a
    valid file, named when the header is not this schema's).
    """

    model_config = ConfigDict(extra="allow", frozen=True)
    EXPECTED: ClassVar[dict[str, str]] = {}
    NOUN: ClassVar[str] = "row"
    TEMPLATE: ClassVar[str] = ""

    @classmethod
    def required(cls) -> tuple[str, ...]:
        """Columns the header must have."""
        return tuple(name for name, f in cls.model_fields.items() if f.is_required())

    @classmethod
    def optional(cls) -> tuple[str, ...]:
        """Columns the header may have."""
        return tuple(name for name, f in cls.model_fields.items() if not f.is_required())


class ClosedRow(Row):
    """A row of a file whose header may hold only the declared columns: any other is an error on line 1."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Cells:
    """A CSV file split into cells: the header, the rows by physical line, and what was skipped or wrong."""

    header: list[str]  #: column names, stripped
    rows: list[tuple[int, dict[str, str | None]]]  #: (line, {column: stripped text or None})
    problems: list[InputError]  #: rows that could not be split into the header's cells
    comments: int  #: lines starting with '#', skipped


@dataclass(frozen=True)
class DataFile:
    """A validated file: its rows, the columns it has that the schema does not declare, comments skipped."""

    rows: list[tuple[int, Any]]  #: (physical line, validated row), in file order
    extra_columns: list[str]  #: header columns the schema does not declare (kept as text on each row)
    comments: int  #: lines starting with '#', skipped


def wanted_splits(splits: Iterable[str], known: Iterable[str]) -> set[str]:
    """The set of ``splits`` (of published rows: fit, holdout, sealed ...), or :class:`InputError` naming any that
    is not one of ``known``."""
    wanted, known = set(splits), tuple(known)
    unknown = wanted - set(known)
    if unknown:
        raise InputError(f"unknown split(s) {', '.join(sorted(unknown))}; expected {', '.join(known)}")
    return wanted


def read(path: str | Path, schema: type[Row], context: Mapping[str, Any] | None = None, *,
         unique: Iterable[str] = (), allow_empty: bool = False) -> list[tuple[int, Any]]:
    """Read ``path`` and validate each row with ``schema``: ``[(line, row)]`` in file order (see :func:`read_file`)."""
    return read_file(path, schema, context, unique=unique, allow_empty=allow_empty).rows


def read_file(path: str | Path, schema: type[Row], context: Mapping[str, Any] | None = None, *,
              unique: Iterable[str] = (), allow_empty: bool = False) -> DataFile:
    """Read ``path`` and validate each row with ``schema``.

    Every problem of the file is found in one pass: a file with several bad
    cells raises :class:`~multigpu.common.errors.InputErrors` listing each at
    its file, line and column (a bad header stops before the rows). Header
    names are matched to the schema's whatever their case. ``unique``:
    columns whose values together may appear once (a duplicate is an error at
    the second line, naming the last of them). ``context`` reaches the
    schema's validators. A file with a header and no rows is an error unless
    ``allow_empty``.
    """
    name = str(path)
    cells = canonical(read_cells(path), schema)
    header_problems = check_closed(cells.header, schema, name) + check_header(cells.header, schema, name)
    if header_problems:
        raise InputErrors(header_problems)
    if not cells.rows and not cells.problems and not allow_empty:
        raise InputError(f"has a header but no rows; expected one {schema.NOUN} per line", name, 1)
    problems = list(cells.problems)
    out = []
    for line, row in cells.rows:
        try:
            out.append((line, validate(schema, row, name, line, context)))
        except InputErrors as exc:
            problems.extend(exc.errors)
    key = tuple(unique)
    if key:
        seen: dict[tuple, int] = {}
        for line, row in out:
            value = tuple(getattr(row, column, None) for column in key)
            if value in seen:
                problems.append(InputError(f"duplicate {schema.NOUN}: same {', '.join(key)} as line {seen[value]}",
                                           name, line, key[-1]))
            seen[value] = line
    if problems:
        raise InputErrors(sorted(problems, key=lambda e: e.line or 0))
    return DataFile(out, extra_columns(cells.header, schema), cells.comments)


def canonical(cells: Cells, schema: type[Row]) -> Cells:
    """The cells with header names that equal a declared column but for case (``Provider``, ``GPU``) renamed
    to it; other names are kept as written."""
    declared = {c.lower(): c for c in schema.required() + schema.optional()}
    rename = {h: declared.get(h.lower(), h) for h in cells.header}
    if all(a == b for a, b in rename.items()):
        return cells
    rows = [(line, {rename[k]: v for k, v in row.items()}) for line, row in cells.rows]
    return Cells([rename[h] for h in cells.header], rows, cells.problems, cells.comments)


def read_bytes(path: str | Path) -> bytes:
    """The bytes of ``path`` (read-only); an unreadable file is an InputError naming it."""
    try:
        with open(path, "rb") as handle:  # read-only: an analyst's file is never written
            return handle.read()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", str(path)) from None


_DECIMAL_COMMA = re.compile(r"^-?\d+,\d+$")


def read_cells(path: str | Path) -> Cells:
    """The header and the non-empty rows of a comma-separated file, lines starting with ``#`` skipped.

    A file separated by ``;`` or tabs (a spreadsheet's regional setting) is an
    error that says so; a row with one cell too many where a number was
    written with a decimal comma says that too.
    """
    name = str(path)
    try:
        text = read_bytes(path).decode("utf-8-sig")  # a BOM (spreadsheet export) is dropped
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        raise InputError("is not UTF-8 text; expected a CSV saved as UTF-8 (in a spreadsheet: 'CSV UTF-8')",
                         name, line) from None
    lines = text.splitlines(keepends=True)
    comments = [i for i, line in enumerate(lines) if line.lstrip().startswith("#")]
    kept = "".join("\n" if i in set(comments) else line for i, line in enumerate(lines))  # keep line numbers
    reader = csv.reader(io.StringIO(kept, newline=""))  # the csv module reads LF and CRLF
    try:
        raw, header_line = [], 0
        while not any(c.strip() for c in raw):
            raw = next(reader, None)
            if raw is None:
                raise InputError("is empty; expected a header line, then one row per line", name, 1)
            header_line = reader.line_num
        _check_separator(raw, name, header_line)
        header = [cell.strip() for cell in raw]
        rows, problems, end = [], [], reader.line_num
        for cells in reader:
            start, end = end + 1, reader.line_num
            if not any(cell.strip() for cell in cells):
                continue  # empty line, e.g. trailing ones from a spreadsheet, or a comment
            if len(cells) != len(header):
                problems.append(_cell_count(cells, header, name, start))
                continue
            rows.append((start, {col: cell.strip() or None for col, cell in zip(header, cells)}))
    except csv.Error as exc:
        raise InputError(f"is not valid CSV: {exc}", name, reader.line_num) from None
    return Cells(header, rows, problems, len(comments))


def _check_separator(header: list[str], name: str, line: int) -> None:
    """A header read as one cell holding ``;`` or tabs: the file is not comma-separated."""
    if len(header) > 1:
        return
    for separator, called in ((";", "semicolons (;)"), ("\t", "tabs")):
        if separator in header[0]:
            raise InputError(f"is separated by {called}; expected commas (in a spreadsheet: save as "
                             f"'CSV UTF-8 (comma delimited)')", name, line)


def _cell_count(cells: list[str], header: list[str], name: str, line: int) -> InputError:
    """A row with the wrong number of cells; a decimal comma (``3,99`` split in two) is named as such."""
    if len(cells) == len(header) + 1:
        for i in range(len(cells) - 1):
            joined = f"{cells[i].strip()},{cells[i + 1].strip()}"
            if _DECIMAL_COMMA.match(joined) and cells[i + 1].strip().isdigit() and len(cells[i + 1].strip()) <= 3:
                return InputError(f"'{joined}' looks like a decimal comma; expected a decimal point, "
                                  f"{joined.replace(',', '.')}", name, line, header[i])
    return InputError(f"has {len(cells)} cells, the header {len(header)}; expected one cell per column "
                      f"(quote a cell that holds a comma)", name, line)


def check_header(header: list[str], schema: type[Row], name: str) -> list[InputError]:
    """Every required column once; a misspelt name (a typo, other spacing) is an error naming the known
    column. Other extra columns are allowed (see :func:`extra_columns`)."""
    problems = []
    if "" in header:
        problems.append(InputError("a column has no name; expected a name in every header cell", name, 1))
    for column in header:
        if not column:
            continue
        if header.count(column) > 1 and column not in {p.column for p in problems}:
            problems.append(InputError("appears twice in the header; expected each column once", name, 1, column))
    required, optional = schema.required(), schema.optional()
    unknown = [column for column in header if column and column not in required + optional]
    missing = []
    for column in required:
        if column not in header:
            guess = closest(column, unknown)
            if guess:
                problems.append(InputError(f"unknown column; did you mean '{column}' (a required column)?",
                                           name, 1, guess))
                unknown.remove(guess)
            else:
                missing.append(column)
    if len(missing) == 1:
        problems.append(InputError(f"is missing; expected columns {', '.join(required)}", name, 1, missing[0]))
    elif missing:  # several missing columns are one problem: the file has no header row of this kind
        template = f"; '{schema.TEMPLATE}' prints a valid file" if schema.TEMPLATE else ""
        problems.append(InputError(f"no header row with the required columns (missing: {', '.join(missing)}; "
                                   f"expected {', '.join(required)}){template}", name, 1))
    for column in unknown:
        guess = closest(column, [c for c in optional if c not in header])
        if guess:
            problems.append(InputError(f"unknown column; did you mean '{guess}'?", name, 1, column))
    return problems


def extra_columns(header: list[str], schema: type[Row]) -> list[str]:
    """Header columns the schema does not declare (kept as text)."""
    declared = schema.required() + schema.optional()
    return [column for column in header if column and column not in declared]


def check_closed(header: list[str], schema: type[Row], name: str) -> list[InputError]:
    """For a :class:`ClosedRow` schema, a header column it does not declare is an error (none otherwise)."""
    if schema.model_config.get("extra") != "forbid":
        return []
    columns = schema.required() + schema.optional()
    problems = []
    for column in header:
        if column and column not in columns:
            guess = closest(column, [c for c in columns if c not in header])
            hint = f"did you mean '{guess}'?" if guess else f"expected only the columns {', '.join(columns)}"
            problems.append(InputError(f"unknown column; {hint}", name, 1, column))
    return problems


def suggest(word: str, ids: list[str], n: int = 4) -> list[str]:
    """A few ids close to ``word`` (those it begins, then similar ones), else the first ones."""
    word = word.lower()
    close = [i for i in ids if i.startswith(word)] + difflib.get_close_matches(word, ids, n=n, cutoff=0.4)
    return list(dict.fromkeys(close))[:n] or sorted(ids)[:n]


def closest(word: str, candidates: list[str]) -> str | None:
    """The candidate that ``word`` most likely misspells (case-insensitive), if any."""
    lowered = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.75)
    return lowered[close[0]] if close else None


def known(value: str, table: Mapping[str, Any], kind: str, command: str) -> str:
    """``value`` if it is a key of ``table`` (matched whatever its case: ids are lower case); else a ValueError
    naming a few close keys."""
    if value in table:
        return value
    if value.lower() in table:
        return value.lower()
    close = suggest(value, list(table))
    raise ValueError(f"unknown {kind} '{value}'; expected a catalogue id such as {', '.join(close)} "
                     f"(all: python -m multigpu {command})")


def validate(schema: type[Row], cells: dict[str, str | None], name: str, line: int,
             context: Mapping[str, Any] | None = None) -> Any:
    """``cells`` as a ``schema`` row; every problem of the row as :class:`InputErrors` at (name, line, column)."""
    try:
        return schema.model_validate(cells, context=dict(context or {}))
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            column = str(error["loc"][0]) if error["loc"] else None
            problems.append(InputError(message(error, schema.EXPECTED.get(column or "", "")), name, line, column))
        raise InputErrors(problems) from None


_REASONS = {"int_parsing": "is not a whole number", "float_parsing": "is not a number",
            "finite_number": "is not a finite number", "literal_error": "is not allowed",
            "string_pattern_mismatch": "is not allowed", "bool_parsing": "is not true or false"}


def message(error: Mapping[str, Any], expected: str) -> str:
    """A pydantic error as '<what is wrong>; expected <what>'."""
    value, kind, ctx = error.get("input"), error["type"], error.get("ctx") or {}
    tail = f"; expected {expected}" if expected else ""
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))  # our own validators say it all
    if value is None or value == "":
        return f"is empty{tail}"
    if kind == "greater_than":
        return f"'{value}' is not above {ctx['gt']:g}{tail}"
    if kind == "greater_than_equal":
        return f"'{value}' is below {ctx['ge']:g}{tail}"
    if kind == "less_than_equal":
        return f"'{value}' is above {ctx['le']:g}{tail}"
    reason = _REASONS.get(kind, error["msg"])
    return f"'{value}' {reason}{tail}"
