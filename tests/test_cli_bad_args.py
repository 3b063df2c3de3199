"""Every sub-command, with bad arguments: one clear line on stderr, exit status 2, nothing on stdout, never a
traceback (issue 17). A bad number names its flag first: ``error: --flag: ...``."""

from __future__ import annotations

import pytest

from multigpu.cli import build_parser, main

M, S = ("--model", "llama3.1-8b"), ("--system", "dgx-a100")
TRAIN = ("train", *M, *S, "--gpus", "8", "--tp", "1", "--pp", "2", "--global-batch", "64", "--micro-batch", "1")
INFER = ("infer", *M, *S, "--tp", "1", "--batch", "1", "--input-tokens", "128", "--output-tokens", "16")
SEARCH = ("search", *M, *S, "--gpus", "8", "--global-batch", "64")
COLL = ("collective", "--op", "allreduce", *S, "--gpus", "8", "--bytes", "1GiB")
EP = ("ep", "--model", "deepseek-v3", "--system", "hgx-h800", "--gpus", "16", "--nodes", "2", "--tokens", "128")
REC_T = ("recommend", "--train", "llama3.2-1b", "--tokens", "2e10", "--max-gpus", "8")
REC_S = ("recommend", "--serve", "llama3.1-8b", "--tokens-per-s-per-user", "30", "--requests-per-s", "1")


def swap(base: tuple[str, ...], flag: str, value: str) -> tuple[str, ...]:
    """``base`` with ``flag`` set to ``value`` (added if absent)."""
    args = list(base)
    if flag in args:
        args[args.index(flag) + 1] = value
        return tuple(args)
    return (*args, flag, value)


BAD = [
    # numbers out of range, named by their flag
    (swap(TRAIN, "--interleave", "0"), "--interleave:"),
    (swap(TRAIN, "--tp", "-2"), "--tp:"),
    (swap(TRAIN, "--gpus", "0"), "--gpus:"),
    (swap(TRAIN, "--global-batch", "x"), "--global-batch:"),
    (swap(TRAIN, "--micro-batch", "0"), "--micro-batch:"),
    (swap(TRAIN, "--seq", "0"), "--seq:"),
    (swap(TRAIN, "--ep", "0"), "--ep:"),
    (swap(TRAIN, "--zero", "4"), "--zero:"),
    (swap(INFER, "--output-tokens", "-1"), "--output-tokens:"),
    (swap(INFER, "--output-tokens", "0"), "--output-tokens:"),
    (swap(INFER, "--batch", "0"), "--batch:"),
    (swap(INFER, "--input-tokens", "1.5"), "--input-tokens:"),
    (swap(SEARCH, "--top", "-1"), "--top:"),
    (swap(SEARCH, "--gpus", "-8"), "--gpus:"),
    (swap(COLL, "--gpus", "0"), "--gpus:"),
    (swap(COLL, "--nodes", "0"), "--nodes:"),
    (swap(COLL, "--bytes", "-5"), "size"),
    (swap(COLL, "--bytes", "lots"), "size"),
    (swap(REC_T, "--tokens", "1e-3"), "--tokens:"),
    (swap(REC_T, "--tokens", "abc"), "tokens"),
    (swap(REC_T, "--seq", "0"), "--seq:"),
    (swap(REC_T, "--max-gpus", "0"), "--max-gpus:"),
    (swap(REC_T, "--deadline-h", "-1"), "--deadline-h:"),
    (swap(REC_T, "--budget", "nan"), "--budget:"),
    (swap(REC_T, "--top", "-1"), "--top:"),
    (swap(REC_S, "--tokens-per-s-per-user", "0"), "--tokens-per-s-per-user:"),
    (swap(REC_S, "--requests-per-s", "inf"), "--requests-per-s:"),
    (swap(REC_S, "--output-tokens", "0"), "--output-tokens:"),
    (("cost", "--workload", "train-llama3.2-1b", "--utilisation", "0"), "--utilisation:"),
    (("cost", "--workload", "train-llama3.2-1b", "--utilisation", "1.5"), "--utilisation:"),
    (("size", "-1"), "size"),
    # unknown ids and choices
    (swap(TRAIN, "--model", "gpt-9"), "unknown model"),
    (swap(TRAIN, "--system", "nope"), "nope"),
    (swap(COLL, "--op", "allsum"), "--op:"),
    (swap(EP, "--kernel", "pplx"), "--kernel:"),
    (swap(EP, "--model", "llama3.1-8b"), "no experts"),
    (swap(EP, "--nodes", "3"), "evenly"),
    (swap(EP, "--imbalance", "0.5"), "imbalance"),
    (("cost", "--workload", "train-nothing"), "unknown workload"),
    (("claims", "C99"), "C99"),
    (("gpus", "--format", "xml"), "--format:"),
    (("prices", "check", "no/such/file.csv"), "no/such/file.csv"),
    (("prices",), "prices"),
    (("prices", "diff", "only-one.csv"), "prices diff"),
    (("report", "--out", "x", "--prices", "no/such.csv"), "no/such.csv"),
    (("validate", "--system", "dgx-a100", "--nccl-tests", "no/such.log"), "no/such.log"),
    (("validate", "--system", "dgx-a100", "--nccl-tests", "x.log", "--gpus", "0"), "--gpus:"),
    (("recommend",), "recommend"),
    (("nonsense",), "nonsense"),
    # layouts that do not divide
    (swap(TRAIN, "--tp", "3"), "tp"),
    (swap(TRAIN, "--pp", "5"), "pp"),
]


@pytest.mark.parametrize("args, words", BAD, ids=[" ".join(a[:1] + a[-2:]) for a, _ in BAD])
def test_bad_arguments_are_one_line_and_exit_2(capsys, args, words):
    assert main(list(args)) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert words in err, err
    assert "Traceback" not in err


def test_every_sub_command_is_in_the_table():
    parser = build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)
    tried = {args[0] for args, _ in BAD}
    assert commands - tried <= {"links", "systems", "size"} | {"models"}, commands - tried


@pytest.mark.parametrize("args", [TRAIN, INFER, SEARCH, COLL, EP, ("models",), ("size", "1GiB")])
def test_the_good_versions_of_the_table_run(capsys, args):
    assert main(list(args)) == 0
    assert capsys.readouterr().err == ""
