"""The claims tables' cells in Chinese (multigpu.book.claim_values): every claim's article value, model value
and unit, as the checks write them, comes out Chinese with the same numbers; English is left as it is."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from editions import CHINESE, NUMBER

from multigpu.book import claim_values, lang, tables
from multigpu.common.findings import Number, Sentence, msg, say
from multigpu.evidence import claims

#: English words a Chinese cell must not keep (names such as NVSwitch, FP8 or Llama are kept).
ENGLISH_WORDS = re.compile(r"\b(?:the|of|and|at|per|with|between|batch|bidirectional|year|years|GPUs|vs|mesh)\b")


@pytest.fixture(scope="module")
def verdicts() -> list[claims.Verdict]:
    return claims.check_all()


def _texts(verdicts: list[claims.Verdict]) -> list[tuple[str, str, str]]:
    return [(v.id, column, getattr(v, column)) for v in verdicts for column in ("seed_value", "model_value", "unit")
            if isinstance(getattr(v, column), str) and re.search(r"[A-Za-z]", getattr(v, column))]


def test_every_claim_cell_has_its_chinese_with_the_same_numbers(verdicts):
    texts = _texts(verdicts)
    assert len(texts) > 60
    with lang.using("zh"):
        for claim_id, column, text in texts:
            chinese = claim_values.translate(text)
            assert CHINESE.search(chinese), (claim_id, column, chinese)
            assert not ENGLISH_WORDS.search(chinese), (claim_id, column, chinese)
            assert sorted(NUMBER.findall(chinese)) == sorted(NUMBER.findall(text)), (claim_id, column, chinese)


def test_english_and_numbers_stay_as_they_are(verdicts):
    for _, _, text in _texts(verdicts):
        assert claim_values.translate(text) == text
    with lang.using("zh"):
        assert claim_values.translate(3.6) == 3.6 and claim_values.translate("2,016") == "2,016"


def _query(mesh: float, switch: float) -> Sentence:
    """C18's model value (the check's message) with other numbers."""
    return say(msg("{n_mesh} ms vs {n_switch} ms ({n_ratio}x)"), n_mesh=Number(mesh, ".0f"),
               n_switch=Number(switch, ".0f"), n_ratio=Number(mesh / switch, ".1f"))


def test_a_model_value_follows_its_numbers():
    """A model's value is a finding: other numbers give the same Chinese with those numbers; a text that is
    neither a finding nor a known message has no Chinese."""
    with lang.using("zh"):
        moved = claim_values.translate(_query(750, 300))
        assert moved == claim_values.translate(_query(750, 375)).replace("375", "300").replace("2.0", "2.5")
        with pytest.raises(LookupError):
            claim_values.translate("a sentence no template knows")


def test_tables_translate_the_claim_columns():
    frame = pd.DataFrame({"id": ["C18"], "verdict": ["misleading"], "seed_value": ["batching multiplies the "
                                                                                    "communication volume"],
                          "model_value": [_query(744, 377)], "unit": ["year"]})
    columns = claim_values.label_columns("verdict")
    english = tables.table_html(frame, key=["id"], csv_name="t", label_columns=columns)
    with lang.using("zh"):
        chinese = tables.table_html(frame, key=["id"], csv_name="t", label_columns=columns)
    assert "batching multiplies" in english and "744 ms vs 377 ms" in english
    assert "批处理" in chinese and "744 ms 对 377 ms" in chinese and "年份" in chinese
    assert lang.label("misleading", "zh") in chinese and "misleading" not in chinese
