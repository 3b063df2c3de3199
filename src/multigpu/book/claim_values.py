"""The cells of the claims tables in the current language: each claim's value as the article states it, the
model's or catalogue's value and its unit, as :mod:`multigpu.evidence.claims` writes them in English.

A fixed text (the article's value, a unit) is a message of its own (:data:`ARTICLE_VALUES`, :data:`UNITS`; the
chapters' modules hold some more); a value the model computes as a sentence is a
:class:`~multigpu.common.findings.Sentence`, rendered from its finding, so both editions show the same numbers.
Every table of claims (chapters 1-5, the claims appendix) reads its cells here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from multigpu.book import glue, lang
from multigpu.book.lang import N_
from multigpu.common.findings import Sentence

#: The article's values (``Verdict.seed_value``), as the checks quote them, that are not bare numbers.
ARTICLE_VALUES = (
    N_("3.6 TB/s per Rubin GPU"), N_("more than 14x PCIe Gen6"),
    N_("900 / 1800 / 3600 GB/s; one generation per year"), N_("2018; 8 GPUs; 300 GB/s between every pair"),
    N_("NVSwitch has a built-in SHARP engine for in-network reduction and multicast"),
    N_("72 GPUs x 3.6 TB/s; 260 TB/s aggregate"),
    N_("any GPU communication runs at full peak bandwidth, no structural bottleneck"),
    N_("900 GB/s split into 7 links of about 128 GB/s"),
    N_("any two GPUs keep the full 900 GB/s however many GPUs there are"),
    N_("2 GPUs: 900 vs 128 GB/s; at 8 GPUs point-to-point is limited further"),
    N_("about 20 GB per query (8K input, 256 output tokens)"), N_("batching multiplies the communication volume"),
    N_("ring all-reduce needs 2N-2 steps"), N_("ring all-reduce latency grows roughly linearly with N"),
    N_("at small batch, communication can take longer than computation"),
    N_("1.3-1.5x at 30-50 tokens/s per user; 1.5x at batch 32"),
    N_("156 ms at 128 GB/s and 22 ms at 900 GB/s: under 1/7"),
    N_("MultiShot: 2 communication steps whatever the GPU count"), N_("up to 3.6 exaFLOPS of AI compute"),
    N_("without fast interconnect, scaling efficiency decays quickly"),
    N_("similar at batch 1; 1.5x at batch 32"),
    N_("30 tokens/s/user: 1 GPU cannot; point-to-point TP=2 batch 6 about 80; NVSwitch TP=2 batch 9 about 115 "
       "tokens/s/GPU"),
    N_("NVLink instances: higher hourly price, often lower total job cost"),
    N_("NVLink/NVSwitch inside a node, InfiniBand HDR between nodes"),
)
#: The units of the claims of chapters 1 and 3 (chapter 2's are ``ch02_topology.UNIT_LABELS``; chapters 4 and
#: 5 hold those of the cost and guide claims).
UNITS = (
    N_("year"), N_("TB/s bidirectional"), N_("x (bidirectional / bidirectional)"),
    N_("GB/s per GPU (bidirectional); years"), N_("GB (1e9 bytes) sent per GPU per query, BF16, TP=2"),
    N_("ratio, batch 32 against batch 1 (Llama 3.1 70B decode, TP=2, BF16)"),
    N_("all-reduce time / compute time of one decode step, batch 1 (Llama 3.1 70B, 8x A100 PCIe, TP=8)"),
    N_("NVSwitch / point-to-point throughput per GPU (Llama 3.1 70B, H200, TP=2, 8K/256)"),
    N_("ms of all-reduce per Llama 3.1 70B query served alone, mesh vs NVSwitch H200, TP=2, BF16"),
    N_("EFLOPS (Vera Rubin NVL72, NVFP4, vendor peak)"),
    N_("% tensor-parallel scaling efficiency at 8 GPUs (Llama 3.1 8B, 8x A100 PCIe)"),
    N_("tokens/s per GPU at 30 tokens/s per user (Llama 3.1 70B, H200, 8K/256)"),
)
def translate(text: object) -> object:
    """A claims-table cell in the current language: a model's value that is a sentence rendered from its
    finding (:func:`multigpu.book.glue.say`), a fixed text by its message, numbers and texts without a letter as
    they are. Outside English a fixed text without a translation is a LookupError (add its message)."""
    if isinstance(text, str) and not isinstance(text, Sentence) and not re.search(r"[A-Za-z]", text):
        return text
    return glue.say(text)


def label_columns(*names: str) -> dict[str, Callable[[str], object]]:
    """A page's translated columns (``label_columns`` of :mod:`multigpu.book.tables`): ``names``, each cell a
    message (:func:`multigpu.book.lang.label`), and the claims' ``seed_value``, ``model_value`` and ``unit``
    (:func:`translate`, which also knows every message)."""
    return {**dict.fromkeys(names, lang.label), **dict.fromkeys(("seed_value", "model_value", "unit"), translate)}
