"""Published scaling series: one recipe run at several GPU counts with the same work per GPU (the same
micro-batch, sequences per GPU and sequence length), so that the rate per GPU changes only through what
scaling out adds: communication that stops hiding, stragglers, a deeper data-parallel reduction.

A series is the runs of ``data/training_runs.csv`` whose ids differ only in their GPU count, the id's last number
or the one before a sequence-length tail (``T-dgxc2504-h100-llama31-8b-bf16-8`` and ``-128``;
``T-foundry-h100-mpt-13b-bf16-8-s2048`` and ``-64-s2048``), in the splits asked for (sealed rows are never read
here).
Each larger count is set beside the fewest: the measured and the predicted change of the rate per GPU, tokens per
second per GPU, from the fewest GPUs to that count (:func:`series`). The model's error on such a change is what
a reader scaling a job out needs; the model's error on each run alone says little about it, since both ends
usually miss together.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.evidence import runs

#: The GPU count of a run id: its last number, or the one before a ``-s<sequence length>`` tail.
_GPU_COUNT = re.compile(r"-\d+(?=(?:-s\d+)?$)")
#: Columns of :func:`series`.
COLUMNS = ["series", "model_id", "system_id", "gpu", "dtype", "framework", "stack", "from_gpus", "to_gpus",
           "measured_change_pct", "predicted_change_pct", "gap_points", "held_out_runs"]


def _runs(splits: Iterable[str], cal: Calibration | None) -> pd.DataFrame:
    """The compared runs of ``splits`` with the work each GPU does: ``series`` (the id without its GPU count),
    ``sequences_per_gpu``, ``micro_batch`` and ``seq``."""
    frame = runs.compare(tuple(splits), cal).set_index("id")
    rows = []
    for row in runs.selected(splits):
        call, _ = runs.plan(row)
        if call is None or row.id not in frame.index:
            continue
        rows.append({"id": row.id, "series": _GPU_COUNT.sub("", row.id), "sequences_per_gpu": call.global_batch
                     / call.gpus, "micro_batch": call.micro_batch, "seq": call.seq})
    return pd.DataFrame(rows).set_index("id").join(frame, how="inner").reset_index()


def series(splits: Iterable[str] = ("fit", "holdout"), cal: Calibration | None = None) -> pd.DataFrame:
    """Every scaling series of ``splits`` (:data:`COLUMNS`), one row per larger GPU count against the fewest:
    ``measured_change_pct`` and ``predicted_change_pct``, the change of the rate per GPU (%, negative: each GPU
    does less per second at the larger count); ``gap_points``, predicted less measured (percentage points,
    positive: the model loses less than was measured); ``held_out_runs``, how many of the two runs are held out."""
    data = _runs(splits, cal)
    out = []
    for _, group in data.groupby(["series", "sequences_per_gpu", "micro_batch", "seq"], sort=True):
        if group["gpus"].nunique() < 2:
            continue
        group = group.sort_values("gpus")
        base = group.iloc[0]
        for _, run in group.iloc[1:].iterrows():
            measured = 100 * (base["measured_step_s"] / run["measured_step_s"] - 1)
            predicted = 100 * (base["predicted_step_s"] / run["predicted_step_s"] - 1)
            out.append({"series": base["series"], "model_id": base["model_id"], "system_id": base["system_id"],
                        "gpu": base["gpu"], "dtype": base["dtype"], "framework": base["framework"],
                        "stack": base["stack"], "from_gpus": int(base["gpus"]),
                        "to_gpus": int(run["gpus"]), "measured_change_pct": measured,
                        "predicted_change_pct": predicted, "gap_points": predicted - measured,
                        "held_out_runs": int((base["split"] == "holdout") + (run["split"] == "holdout"))})
    return pd.DataFrame(out, columns=COLUMNS)
