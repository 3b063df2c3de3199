"""Search every parallel layout of a training job, vectorised with numpy.

:func:`layouts` enumerates tensor x pipeline x data parallelism, micro-batch,
interleaving, recomputation and sequence parallelism for a model on a
system; :func:`search` evaluates them all with the training model
(:func:`multigpu.training.evaluate`, the function behind ``train``, so the
best layout's step time is the one ``train`` reports), drops those that do not
fit in memory, and ranks the rest by step time.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from multigpu import catalog, training, workloads
from multigpu.errors import InputError

RECOMPUTE = ("none", "selective", "full")


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def layouts(model: workloads.Model, system: catalog.System, gpus: int, global_batch: int, *,
            max_micro_batch: int = 16, max_interleave: int = 8) -> pd.DataFrame:
    """Every (tp, pp, dp, micro_batch, interleave) that divides, as integer columns of a DataFrame.

    ``tp`` divides the heads and fits in a node; ``pp`` divides the layers and
    the GPUs left by ``tp``; ``dp`` is what remains; ``micro_batch`` divides
    the batch of a data-parallel rank (up to ``max_micro_batch``);
    ``interleave`` divides the layers of a stage (only with ``pp > 1``).
    """
    rows = []
    for tp in _divisors(min(system.gpus_per_node, gpus)):
        if model.heads % tp or gpus % tp:
            continue
        for pp in _divisors(gpus // tp):
            if model.layers % pp:
                continue
            dp = gpus // (tp * pp)
            if global_batch % dp:
                continue
            micro = [b for b in _divisors(global_batch // dp) if b <= max_micro_batch]
            inter = [v for v in _divisors(model.layers // pp) if v <= max_interleave] if pp > 1 else [1]
            rows.extend((tp, pp, dp, b, v) for b in micro for v in inter)
    return pd.DataFrame(rows, columns=["tp", "pp", "dp", "micro_batch", "interleave"], dtype=int)


def _options(tp: np.ndarray) -> Iterable[tuple[str, bool, np.ndarray]]:
    """(recompute, sequence_parallel, mask of layouts it applies to): SP only where tp > 1."""
    for recompute, sp in itertools.product(RECOMPUTE, (False, True)):
        yield recompute, sp, (tp > 1) if sp else np.ones(tp.shape, dtype=bool)


def search(model_id: str, system_id: str, gpus: int, global_batch: int, seq: int = 2048, *, dtype: str = "bf16",
           zero_stage: int = 1, top: int = 1, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Evaluate every layout; return ``evaluated``, ``valid`` (fit in memory), ``seconds``, ``best``
    (a dict: tp, pp, dp, micro_batch, interleave, recompute, sequence_parallel, step_time_s, mfu, ...),
    ``top`` (the ``top`` best as dicts) and ``table`` (every evaluated layout, a DataFrame)."""
    model, system = workloads.model(model_id), catalog.system(system_id)
    if gpus > system.gpus_per_node and gpus % system.gpus_per_node:
        raise InputError(f"{gpus} GPUs do not fill whole {system.id} nodes of {system.gpus_per_node}")
    start = time.perf_counter()
    base = layouts(model, system, gpus, global_batch)
    if base.empty:
        raise InputError(f"no layout of {gpus} GPUs divides '{model.id}' with global batch {global_batch}")
    frames = []
    tp = base["tp"].to_numpy()
    option_list = list(_options(tp))
    for done, (recompute, sp, mask) in enumerate(option_list):
        part = base[mask]
        arrays = training.Layouts(*(part[c].to_numpy() for c in ("tp", "pp", "dp", "micro_batch", "interleave")),
                                  ep=np.ones(len(part), dtype=int), global_batch=global_batch, seq=seq,
                                  recompute=recompute, sequence_parallel=sp, dtype=dtype, zero_stage=zero_stage)
        result = training.evaluate(model, system, arrays)
        frame = part.assign(recompute=recompute, sequence_parallel=sp,
                            **{k: np.asarray(v) for k, v in result.items()})
        frames.append(frame)
        if progress:
            progress(done + 1, len(option_list))
    table = pd.concat(frames, ignore_index=True)
    valid = table[table["fits"]].sort_values(["step_time_s", "tp", "pp", "micro_batch"], kind="stable")
    seconds = time.perf_counter() - start
    best = [_row(r) for r in valid.head(max(top, 1)).to_dict("records")]
    return {"model": model.id, "system": system.id, "gpus": gpus, "global_batch": global_batch, "seq": seq,
            "evaluated": len(table), "valid": len(valid), "seconds": seconds,
            "layouts_per_s": len(table) / seconds if seconds > 0 else float("inf"),
            "best": best[0] if best else None, "top": best[:top], "table": table}


def _row(record: dict[str, Any]) -> dict[str, Any]:
    keys = ("tp", "pp", "dp", "micro_batch", "interleave", "recompute", "sequence_parallel", "step_time_s", "mfu",
            "model_tflops_per_gpu", "memory_per_gpu_GB", "bubble_s", "tp_s", "pp_s", "dp_s")
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in record.items() if k in keys}
