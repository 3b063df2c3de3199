"""Argument types of the CLI: every number is checked for its sign and range when it is read.

A bad value is the one-line error ``error: --flag: <what is wrong>`` with exit
status 2 (argparse hands the message to the parser's ``error``).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _number(text: str, kind: type) -> float | int:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not {'a whole number' if kind is int else 'a number'}"
                                         ) from None
    if isinstance(value, float) and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"'{text}' is not a finite number")
    return value


def at_least(low: int) -> Callable[[str], int]:
    """A whole number >= ``low``."""
    def parse(text: str) -> int:
        value = _number(text, int)
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}; expected a whole number >= {low}")
        return value

    parse.__name__ = f"whole number >= {low}"
    return parse


def positive(text: str) -> float:
    """A finite number > 0."""
    value = _number(text, float)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not above 0; expected a positive number")
    return value


def fraction(text: str) -> float:
    """A number in (0, 1]."""
    value = _number(text, float)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not in (0, 1]; expected a fraction such as 0.8")
    return value


def level(text: str) -> float:
    """An interval's level: a number in (0, 1), such as 0.9."""
    value = _number(text, float)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not in (0, 1); expected an interval's level such as 0.9")
    return value


count = at_least(1)  #: a whole number >= 1 (GPUs, degrees, tokens, batches)
nonnegative_count = at_least(0)  #: a whole number >= 0 (--top 0: all)


#: what --model takes, everywhere
MODEL_HELP = ("model id (python -m multigpu models) or the path of a Hugging Face config.json (or its folder): "
              "llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, deepseek_v3, gpt_oss, glm4_moe, gpt2, "
              "gpt_neox, opt, bloom")
