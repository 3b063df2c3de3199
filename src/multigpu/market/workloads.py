"""The book's named workloads: training jobs and serving targets (``data/cost_workloads.csv``).

Each workload names a catalogue model (:mod:`multigpu.compute.models`), what
is done with it (``train`` a job of so many tokens on so many GPUs, or
``serve`` queries of a given shape at a per-user speed floor), and the source
of its shape and size.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import field_validator

from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR, Positive, PositiveCount, Text, one_of
from multigpu.common.errors import InputError
from multigpu.compute import models

if TYPE_CHECKING:
    import pandas as pd

WORKLOADS_CSV = DATA_DIR / "cost_workloads.csv"
KINDS = ("train", "serve")
DTYPES = ("bf16", "fp16", "fp8")


@dataclass(frozen=True)
class Workload:
    """A named workload of the book (a row of ``data/cost_workloads.csv``).

    ``kind`` is ``train`` (``gpus`` GPUs per job, ``tokens_per_param`` x the
    model's parameters training tokens, ``global_batch`` sequences of ``seq``
    tokens per step) or ``serve`` (queries of ``input_tokens`` prompt and
    ``output_tokens`` answer, each user seeing at least
    ``min_tokens_per_s_per_user`` tokens per second, one per decode step, and
    the first within ``max_ttft_s`` seconds where a ceiling is given).
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
    max_ttft_s: float | None = None

    @property
    def params(self) -> int:
        """Parameters of the workload's model (total)."""
        return models.model(self.model).params_total

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



#: Columns a workload of each kind must fill (the other kind's are ignored).
_KIND_COLUMNS = {"train": ("gpus", "tokens_per_param", "seq", "global_batch"),
                 "serve": ("input_tokens", "output_tokens", "min_tokens_per_s_per_user")}


class WorkloadRow(datafiles.Row):
    """Schema of ``data/cost_workloads.csv``: one workload per row, the columns of its kind filled."""

    id: Text
    kind: one_of(KINDS)  # type: ignore[valid-type]
    model: Text
    title: Text
    gpus: PositiveCount | None
    tokens_per_param: Positive | None
    seq: PositiveCount | None
    global_batch: PositiveCount | None
    input_tokens: PositiveCount | None
    output_tokens: PositiveCount | None
    min_tokens_per_s_per_user: Positive | None
    max_ttft_s: Positive | None = None
    dtype: one_of(DTYPES)  # type: ignore[valid-type]
    source: Text
    rationale: Text

    NOUN = "workload"
    EXPECTED = {
        "id": "the workload's id", "model": "a model id of data/models.csv", "title": "a one-line title",
        "gpus": "GPUs per job, a whole number > 0", "tokens_per_param": "training tokens per parameter, a number > 0",
        "seq": "sequence length in tokens, a whole number > 0",
        "global_batch": "sequences per step, a whole number > 0",
        "input_tokens": "prompt tokens per query, a whole number > 0",
        "output_tokens": "answer tokens per query, a whole number > 0",
        "min_tokens_per_s_per_user": "output tokens per second each user sees at least, a number > 0",
        "max_ttft_s": "optional: the longest time to first token, seconds, a number > 0 (empty: no ceiling)",
        "source": "where the shape and size come from", "rationale": "why this workload",
    }

    @field_validator("model")
    @classmethod
    def _known_model(cls, value: str) -> str:
        known = models.models()
        if value not in known:
            close = datafiles.suggest(value, list(known))
            raise ValueError(f"unknown model '{value}'; expected a model id of data/models.csv such as "
                             f"{', '.join(close)}")
        return value


def load_workloads(path: str | Path = WORKLOADS_CSV) -> dict[str, Workload]:
    """The workloads of ``path`` by id, validated; the first problem is an InputError at file:line:column."""
    out: dict[str, Workload] = {}
    for line, row in datafiles.read(path, WorkloadRow, unique=("id",)):
        for column in _KIND_COLUMNS[row.kind]:
            if getattr(row, column) is None:
                raise InputError(f"is empty; expected {WorkloadRow.EXPECTED[column]} (a {row.kind} workload "
                                 "needs it)", str(path), line, column)
        common = {c: getattr(row, c) for c in ("id", "kind", "model", "title", "dtype", "source", "rationale")}
        serve = {"max_ttft_s": row.max_ttft_s} if row.kind == "serve" else {}
        out[row.id] = Workload(**common, **{c: getattr(row, c) for c in _KIND_COLUMNS[row.kind]}, **serve)
    return out


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
