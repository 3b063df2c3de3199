"""The CLI contract: --format table|json|csv, one-line errors with exit status 2."""

import json
import subprocess
import sys

from multigpu.cli import main
from multigpu.common.errors import InputError


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "multigpu", *args], capture_output=True, text=True)


def test_help_lists_subcommands():
    result = run("--help")
    assert result.returncode == 0
    assert "size" in result.stdout


def test_the_cli_starts_without_scipy_s_statistics_or_optimiser():
    """They are most of the time an interpreter took to import the CLI (1.5 s, now 0.7 s): the tests and an
    analyst's scripts start it many times. The commands that fit or rank import them when they run."""
    code = "import sys, multigpu.cli; print(sorted(m for m in ('scipy.stats', 'scipy.optimize') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "[]", result.stdout + result.stderr


def test_json_output_parses(capsys):
    assert main(["size", "1GiB", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == [{"size": "1GiB", "bytes": 2**30, "GB": 1.073741824, "GiB": 1.0}]


def test_csv_and_table_outputs(capsys):
    assert main(["size", "256MB", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["size,bytes,GB,GiB", "256MB,256000000,0.256,0.2384185791015625"]
    assert main(["size", "256MB"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["size", "bytes", "GB", "GiB"] and lines[2].split()[1] == "256000000"


def test_bad_input_is_one_line_and_exit_2():
    result = run("size", "12XB")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")


def test_unknown_command_and_bad_option_exit_2():
    for args in (["frobnicate"], ["size", "1GiB", "--format", "xml"]):
        result = run(*args)
        assert result.returncode == 2, args
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


def test_error_names_file_line_and_column():
    error = InputError("price must be positive", file="prices.csv", line=7, column="price_per_hour")
    assert str(error) == "prices.csv:7: column 'price_per_hour': price must be positive"
    assert str(InputError("unknown system 'x'")) == "unknown system 'x'"


def test_train_takes_the_fp8_recipe(capsys):
    """``--fp8-recipe current`` reads each FP8 operand once more for its amax, so the step is longer than under
    the default delayed scaling; a recipe not offered is a usage error (exit 2)."""
    job = ["train", "--model", "llama3.1-8b", "--system", "hgx-h100", "--gpus", "8", "--tp", "1", "--pp", "1",
           "--global-batch", "64", "--micro-batch", "1", "--seq", "8192", "--dtype", "fp8", "--format", "json"]
    steps = {}
    for recipe in ("delayed", "current"):
        assert main(job + ["--fp8-recipe", recipe]) == 0
        steps[recipe] = json.loads(capsys.readouterr().out)["step_time_s"]
    assert steps["current"] > steps["delayed"]
    assert main(job + ["--fp8-recipe", "mxfp8"]) == 2
    assert "mxfp8" in capsys.readouterr().err


def test_train_names_the_moe_dispatch_precision(capsys):
    """``--ep-dispatch fp8`` (DeepSeek-V3's FP8 dispatch) shortens an expert-parallel step and is named in the
    output; a precision not offered is a usage error (exit 2)."""
    job = ["train", "--model", "mixtral-8x7b", "--system", "hgx-h100", "--gpus", "64", "--tp", "1", "--pp", "1",
           "--global-batch", "256", "--micro-batch", "2", "--seq", "4096", "--ep", "8", "--dtype", "fp8",
           "--format", "json"]
    out = {}
    for dispatch in ("bf16", "fp8"):
        assert main(job + ["--ep-dispatch", dispatch]) == 0
        out[dispatch] = json.loads(capsys.readouterr().out)
        assert out[dispatch]["ep_dispatch"] == dispatch
    assert out["fp8"]["exposed_comm_s"]["ep"] < out["bf16"]["exposed_comm_s"]["ep"]
    assert main(job + ["--ep-dispatch", "fp4"]) == 2
    assert "fp4" in capsys.readouterr().err
