"""Sizes: bytes vs GB (1e9) vs GiB (2**30) must never be confused."""

import pytest

from multigpu.common.errors import InputError
from multigpu.common.units import GiB, format_size, parse_size


@pytest.mark.parametrize("text, expected", [
    ("4096", 4096), ("256MB", 256_000_000), ("1GiB", 2**30), ("1 GiB", 2**30), ("32KiB", 32 * 1024),
    ("1.5GB", 1_500_000_000), ("16gib", 16 * 2**30), ("8B", 8), (512, 512),
])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "GiB", "1XB", "-4", "0", "0.5", "1.5B", "ten MB"])
def test_parse_size_rejects(text):
    with pytest.raises(InputError):
        parse_size(text)


def test_gib_is_not_gb():
    assert parse_size("1GiB") - parse_size("1GB") == 73_741_824


@pytest.mark.parametrize("n_bytes, text", [(32 * 1024, "32KiB"), (16 * GiB, "16GiB"), (100, "100B"), (1.5 * 2**20, "1.5MiB")])
def test_format_size(n_bytes, text):
    assert format_size(n_bytes) == text
