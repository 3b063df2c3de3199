"""The book's named workloads: training jobs and serving targets (``data/cost_workloads.csv``).

Each workload names a catalogue model (:mod:`multigpu.compute.models`), what
is done with it (``train`` a job of so many tokens on so many GPUs, or
``serve`` queries of a given shape at a per-user speed floor), and the source
of its shape and size.

A training job is pre-training (``method`` ``pretrain``, the default), a full
fine-tune (``full``: the same maths, fewer tokens) or LoRA (``lora``: frozen
base weights and trainable rank-``lora_rank`` adapters,
:func:`multigpu.compute.stepflops.lora_params`). Its tokens are ``tokens``
when given (a fine-tuning budget, e.g. 1e9), else ``tokens_per_param`` x the
model's parameters (a pre-training budget).
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
#: Training methods: pre-training, full fine-tuning (the same maths on fewer tokens), LoRA.
METHODS = ("pretrain", "full", "lora")


@dataclass(frozen=True)
class Workload:
    """A named workload of the book (a row of ``data/cost_workloads.csv``).

    ``kind`` is ``train`` (``gpus`` GPUs per job, ``tokens_per_param`` x the
    model's parameters training tokens, or ``train_tokens`` when the file gives
    ``tokens``, ``global_batch`` sequences of ``seq`` tokens per step,
    ``method`` pretrain, full or lora with adapters of rank ``lora_rank``) or ``serve`` (queries of ``input_tokens`` prompt and
    ``output_tokens`` answer, each user seeing at least
    ``min_tokens_per_s_per_user`` tokens per second, one per decode step, and
    the first within ``max_ttft_s`` seconds where a ceiling is given).
    """

    id: str
    kind: str
    model: str
    title: str
    title_zh: str | None  #: the title in the Chinese edition (the same facts, in Chinese)
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
    train_tokens: float | None = None  #: the ``tokens`` column: absolute training tokens (wins when given)
    method: str = "pretrain"  #: training method (:data:`METHODS`); pretrain for serving
    lora_rank: int | None = None  #: LoRA adapter rank (``method`` lora only)

    @property
    def params(self) -> int:
        """Parameters of the workload's model (total)."""
        return models.model(self.model).params_total

    @property
    def tokens(self) -> float | None:
        """Training tokens of the job: ``train_tokens`` if given, else ``tokens_per_param`` x parameters;
        None for serving."""
        if self.train_tokens is not None:
            return self.train_tokens
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



#: Columns a workload of each kind must fill (the other kind's are ignored); a training workload also needs
#: ``tokens_per_param`` or ``tokens``, and ``lora_rank`` when its method is lora.
_KIND_COLUMNS = {"train": ("gpus", "seq", "global_batch"),
                 "serve": ("input_tokens", "output_tokens", "min_tokens_per_s_per_user")}


class WorkloadRow(datafiles.Row):
    """Schema of ``data/cost_workloads.csv``: one workload per row, the columns of its kind filled."""

    id: Text
    kind: one_of(KINDS)  # type: ignore[valid-type]
    model: Text
    title: Text
    title_zh: Text | None = None
    gpus: PositiveCount | None
    tokens_per_param: Positive | None
    seq: PositiveCount | None
    global_batch: PositiveCount | None
    input_tokens: PositiveCount | None
    output_tokens: PositiveCount | None
    min_tokens_per_s_per_user: Positive | None
    max_ttft_s: Positive | None = None
    tokens: Positive | None = None
    method: one_of(METHODS) | None = None  # type: ignore[valid-type]
    lora_rank: PositiveCount | None = None
    dtype: one_of(DTYPES)  # type: ignore[valid-type]
    source: Text
    rationale: Text

    NOUN = "workload"
    EXPECTED = {
        "id": "the workload's id", "model": "a model id of data/models.csv", "title": "a one-line title",
        "title_zh": "the title in Chinese, for the Chinese edition",
        "gpus": "GPUs per job, a whole number > 0", "tokens_per_param": "training tokens per parameter, a number > 0",
        "seq": "sequence length in tokens, a whole number > 0",
        "global_batch": "sequences per step, a whole number > 0",
        "input_tokens": "prompt tokens per query, a whole number > 0",
        "output_tokens": "answer tokens per query, a whole number > 0",
        "min_tokens_per_s_per_user": "output tokens per second each user sees at least, a number > 0",
        "max_ttft_s": "optional: the longest time to first token, seconds, a number > 0 (empty: no ceiling)",
        "tokens": "optional: training tokens of the job, a number > 0 (wins over tokens_per_param)",
        "method": "optional: pretrain (default), full (fine-tune) or lora",
        "lora_rank": "the LoRA adapters' rank, a whole number > 0 (method lora only)",
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
        common = {c: getattr(row, c) for c in ("id", "kind", "model", "title", "title_zh", "dtype", "source",
                                               "rationale")}
        extra = {"max_ttft_s": row.max_ttft_s} if row.kind == "serve" else _training_extra(row, path, line)
        out[row.id] = Workload(**common, **{c: getattr(row, c) for c in _KIND_COLUMNS[row.kind]}, **extra)
    return out


def _training_extra(row: WorkloadRow, path: str | Path, line: int) -> dict[str, Any]:
    """The token budget and method of a training row: ``tokens`` wins over ``tokens_per_param`` (which is then
    ``tokens`` / parameters, so both read the same); LoRA needs a rank, other methods must not give one."""
    if row.tokens is None and row.tokens_per_param is None:
        raise InputError("is empty; expected training tokens per parameter, a number > 0, or a 'tokens' column "
                         "(a train workload needs one of them)", str(path), line, "tokens_per_param")
    method = row.method or "pretrain"
    if method == "lora" and row.lora_rank is None:
        raise InputError(f"is empty; expected {WorkloadRow.EXPECTED['lora_rank']}", str(path), line, "lora_rank")
    if method != "lora" and row.lora_rank is not None:
        raise InputError(f"is {row.lora_rank}; a rank needs method lora (method is {method})", str(path), line,
                         "lora_rank")
    per_param = row.tokens_per_param
    if row.tokens is not None:
        per_param = row.tokens / models.model(row.model).params_total
    return {"tokens_per_param": per_param, "train_tokens": row.tokens, "method": method,
            "lora_rank": row.lora_rank}


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
    """The workloads as a table: id, kind, model, size in billions of parameters, training method (and LoRA
    rank), GPUs, tokens in billions, shape (sequence, or prompt/answer tokens) and the per-user floor
    (tokens/s)."""
    import pandas as pd

    rows = []
    for w in _workloads().values():
        rows.append({"workload": w.id, "kind": w.kind, "model": w.model, "params_B": round(w.params / 1e9, 2),
                     "method": (w.method + (f" r{w.lora_rank}" if w.lora_rank else "")) if w.kind == "train"
                     else None,
                     "GPUs per job": w.gpus if w.kind == "train" else None,
                     "tokens_B": None if w.tokens is None else round(w.tokens / 1e9, 1),
                     "seq or in/out tokens": (f"{w.seq}" if w.kind == "train"
                                              else f"{w.input_tokens}/{w.output_tokens}"),
                     "floor_tokens_per_s_per_user": w.min_tokens_per_s_per_user})
    return pd.DataFrame(rows)
