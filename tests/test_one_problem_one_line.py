"""One problem, one line: every bad file a user can hand the CLI (price files, Hugging Face config.json files,
nccl-tests logs) gets exactly as many ``error:`` lines as it has distinct problems, each naming the file (and the
line where there is one), exit status 2, nothing on stdout and never a traceback.

Several missing header columns are one problem (the file has no header row of its kind), and so are several
unnamed header cells. Bad arguments have their own table (tests/test_cli_bad_args.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from multigpu.cli import main

GOOD = (Path(__file__).parent / "data" / "prices" / "good.csv").read_text(encoding="utf-8").splitlines()
HEADER, ROW = GOOD[0], GOOD[1]
CELLS = HEADER.split(",")


def cell(row: str, column: str, value: str) -> str:
    """``row`` (a line of good.csv) with ``column`` set to ``value``."""
    parts = row.split(",")
    parts[CELLS.index(column)] = value
    return ",".join(parts)


def price_file(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


LLAMA = ('{"model_type":"llama","hidden_size":4096,"intermediate_size":14336,"num_attention_heads":%d,'
         '"num_key_value_heads":8,"num_hidden_layers":32,"vocab_size":128256}')
MANY_BAD_ROWS = price_file(HEADER, *(cell(ROW, "instance", f"i{i}").replace("31.92", "x") for i in range(25)))

# (name, file bytes, lines of error output, words the first line holds)
PRICE_FILES = [
    ("plain text", b"hello world\nthis is not a table\n", 1, "no header row with the required columns"),
    ("NUL bytes", b"\0" * 64, 1, "no header row with the required columns"),
    ("a CSV with other columns", b"a,b,c\n1,2,3\n", 1, "missing: provider, instance, gpu"),
    ("two columns of ten", b"provider,instance\nx,y\n", 1, "missing: gpu, gpus_per_instance"),
    ("empty", b"", 1, "is empty"),
    ("blank lines only", b"\n\n\n", 1, "is empty"),
    ("header only", price_file(HEADER), 1, "no rows"),
    ("Latin-1 text", price_file(HEADER, ROW.replace("Lambda", "Lambd\xe9")).replace(b"\xc3\xa9", b"\xe9"), 1,
     "not UTF-8"),
    ("UTF-16", price_file(HEADER, ROW).decode().encode("utf-16"), 1, "not UTF-8"),
    ("semicolons", price_file(HEADER.replace(",", ";"), ROW.replace(",", ";")), 1, "semicolons"),
    ("tabs", price_file(HEADER.replace(",", "\t"), ROW.replace(",", "\t")), 1, "tabs"),
    ("one column missing", price_file(HEADER.replace(",source", ""), ROW.replace(",https://example.com/pricing",
                                                                                 "")), 1, "'source': is missing"),
    ("a misspelt column", price_file(HEADER.replace("price_per_hour", "price_per_hr"), ROW), 1, "did you mean"),
    ("two unnamed header cells", price_file(HEADER + ",,", ROW + ",,"), 1, "has no name"),
    ("a column twice", price_file(HEADER + ",region", ROW + ",x"), 1, "appears twice"),
    ("a row with a cell too many", price_file(HEADER, ROW + ",extra"), 1, "cells, the header"),
    ("a decimal comma", price_file(HEADER, ROW.replace("31.92", "31,92")), 1, "decimal comma"),
    ("a bad price", price_file(HEADER, cell(ROW, "price_per_hour", "abc")), 1, "'abc' is not a number"),
    ("two bad cells in one row", price_file(HEADER, cell(cell(ROW, "price_per_hour", "abc"), "gpus_per_instance",
                                                         "0")), 2, "'0' is below 1"),
    ("bad cells on two rows", price_file(HEADER, cell(ROW, "observed", "2999-01-01"),
                                         cell(cell(ROW, "pricing", "spot"), "gpu", "H100")), 2, "in the future"),
    ("a duplicate offer", price_file(HEADER, ROW, ROW), 1, "duplicate offer"),
    ("25 bad rows (20 shown, then a count)", MANY_BAD_ROWS, 21, "'x' is not a number"),
]

CONFIGS = [
    ("text", b"not json", 1, "is not valid JSON"),
    ("empty", b"", 1, "is empty"),
    ("NUL bytes", b"\0" * 32, 1, "is not valid JSON"),
    ("an array", b"[1, 2]", 1, "holds an array"),
    ("no keys", b"{}", 1, "model_type: is missing"),
    ("an unknown model type", b'{"model_type": "mamba", "hidden_size": 1}', 1, "is not supported"),
    ("a negative width", (LLAMA % 32).replace("4096", "-4096").encode(), 1, "hidden_size: -4096"),
    ("heads that do not divide the width", (LLAMA % 30).encode(), 1, "does not divide the hidden size"),
    ("UTF-16", (LLAMA % 32).encode("utf-16"), 1, "not UTF-8"),
]

LOGS = [
    ("empty", b"", 1, "has no size rows"),
    ("text", b"hello\n", 1, "has no size rows"),
    ("NUL bytes", b"\0" * 100, 1, "has no size rows"),
    ("binary", bytes(range(256)) * 4, 1, "has no size rows"),
]

INFER = ["--system", "hgx-h100", "--tp", "1", "--batch", "1", "--input-tokens", "8", "--output-tokens", "8"]
CASES = ([("prices check", *c) for c in PRICE_FILES] + [("infer --model", *c) for c in CONFIGS]
         + [("validate --nccl-tests", *c) for c in LOGS])


def argv(command: str, path: str) -> list[str]:
    if command == "prices check":
        return ["prices", "check", path]
    if command == "infer --model":
        return ["infer", "--model", path, *INFER]
    return ["validate", "--system", "dgx-a100", "--nccl-tests", path]


def test_the_table_holds_at_least_30_bad_files():
    assert len(CASES) >= 30


@pytest.mark.parametrize("command, name, content, lines, words", CASES,
                         ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_each_bad_file_gets_one_line_per_problem(tmp_path, capsys, command, name, content, lines, words):
    path = tmp_path / ("config.json" if command == "infer --model" else "input.csv")
    path.write_bytes(content)
    assert main(argv(command, str(path))) == 2
    out, err = capsys.readouterr()
    got = err.splitlines()
    assert out == "" and "Traceback" not in err
    assert len(got) == lines, err
    assert all(line.startswith(f"error: {path}") for line in got[:20]), err
    assert words in got[0] or words in err, err
    assert path.read_bytes() == content  # an analyst's file is never modified
