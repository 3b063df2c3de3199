"""The claims registry and the claims CLI: every check well-formed, CLI equal to the package."""

import json
from pathlib import Path

import pytest

from multigpu.cli.app import main
from multigpu.common.errors import InputError
from multigpu.evidence import claims

ROOT = Path(__file__).resolve().parents[1]


def test_every_check_is_well_formed():
    verdicts = claims.check_all()
    assert [v.id for v in verdicts] == sorted(v.id for v in verdicts)
    for v in verdicts:
        assert v.id in claims.seed_claims()
        assert v.verdict in claims.VERDICTS
        assert v.explanation and v.unit and v.seed_value
        assert (ROOT / f"{v.chapter}.ipynb").exists() or (ROOT / f"{v.chapter}.md").exists(), v.chapter
        if v.verdict == "not-checkable":
            assert "because" in v.explanation or "no number" in v.explanation


def test_seed_claims_are_the_articles_27():
    assert list(claims.seed_claims()) == [f"C{i:02d}" for i in range(1, 28)]


def test_unknown_claim_is_an_input_error():
    with pytest.raises(InputError):
        claims.check("C99")


def test_cli_json_matches_the_package(capsys):
    """The command in this process, after the package (its searches then come from the same memo: the
    process-level run of ``claims`` is tests/test_claims_appendix.py's)."""
    expected = [v.to_dict() for v in claims.check_all()]
    assert main(["claims", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == expected
    for row in rows:
        assert set(row) == {"id", "verdict", "seed_value", "model_value", "unit", "explanation", "chapter", "rule",
                            "confidence"}
