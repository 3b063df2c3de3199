"""Every command that takes a model accepts each form its ``--help`` names: a catalogue id, the path of a
Hugging Face ``config.json``, or the folder holding one.

The config is Meta's published Llama 3.1 8B ``config.json`` (tests/data/hf/llama3.1-8b, source in its README),
the catalogue row ``llama3.1-8b`` the same model: both forms must give the same numbers (the config's model counts
8.03B parameters, as the catalogue's does), so each test checks a value, not only that the command ran.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from multigpu.cli import main

CONFIG = Path(__file__).resolve().parent / "data" / "hf" / "llama3.1-8b" / "config.json"

COMMANDS = {
    "train": (["train", "--system", "hgx-h100", "--gpus", "8", "--tp", "2", "--pp", "1", "--global-batch", "64",
               "--micro-batch", "1"], "--model", "step_time_s"),
    "infer": (["infer", "--system", "hgx-h100", "--tp", "2", "--batch", "8", "--input-tokens", "512",
               "--output-tokens", "128"], "--model", "tpot_s"),
    "search": (["search", "--system", "hgx-h100", "--gpus", "8", "--global-batch", "64"], "--model", "best.step_time_s"),
    "recommend --train": (["recommend", "--tokens", "1e9", "--max-gpus", "16"], "--train", "cost_usd"),
    "recommend --serve": (["recommend", "--tokens-per-s-per-user", "20", "--requests-per-s", "1"], "--serve",
                          "cost_per_million_tokens_usd"),
}


def _value(capsys, argv: list[str], field: str) -> float:
    """``field`` (``a.b`` for a nested one) of the first row of the command's JSON output."""
    assert main([*argv, "--format", "json"]) == 0, argv
    out = json.loads(capsys.readouterr().out)
    row = out[0] if isinstance(out, list) else out
    for part in field.split("."):
        row = row[part]
    assert isinstance(row, float) and row > 0, (argv, field, row)
    return row


@pytest.fixture(scope="module")
def forms(tmp_path_factory) -> dict[str, str]:
    """The model as a catalogue id, and as an analyst's copy of the config in a folder whose name the catalogue
    does not have (a model read from a file must never be looked up again by its name)."""
    folder = tmp_path_factory.mktemp("configs") / "my-llama"
    folder.mkdir()
    (folder / "config.json").write_bytes(CONFIG.read_bytes())
    return {"catalogue id": "llama3.1-8b", "config.json": str(folder / "config.json"), "its folder": str(folder)}


@pytest.mark.parametrize("command", COMMANDS)
def test_each_model_form_gives_the_catalogue_models_numbers(command, forms, capsys):
    argv, flag, field = COMMANDS[command]
    results = {form: _value(capsys, [*argv, flag, value], field) for form, value in forms.items()}
    for form, got in results.items():
        assert got == pytest.approx(results["catalogue id"], rel=1e-3), (command, form)


def test_an_unknown_model_or_missing_file_is_one_line_and_exit_2(capsys):
    for value in ("llama-nope", "/no/such/config.json"):
        assert main(["infer", "--model", value, "--system", "hgx-h100", "--tp", "1", "--batch", "1",
                     "--input-tokens", "8", "--output-tokens", "8"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: "), err
