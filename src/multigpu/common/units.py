"""Units: sizes in bytes, and the constants that keep GB and GiB apart.

GB = 1e9 bytes (what vendors and nccl-tests report as GB/s);
GiB = 2**30 bytes (what message sizes such as ``1GiB`` mean).
"""

from __future__ import annotations

import re

from multigpu.common.errors import InputError

KB, MB, GB, TB = 1e3, 1e6, 1e9, 1e12
KiB, MiB, GiB, TiB = 2**10, 2**20, 2**30, 2**40

_SIZE_UNITS: dict[str, float] = {
    "": 1, "B": 1,
    "KB": KB, "MB": MB, "GB": GB, "TB": TB,
    "KIB": KiB, "MIB": MiB, "GIB": GiB, "TIB": TiB,
}
_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_size(text: str | int) -> int:
    """Parse a size such as ``4096``, ``256MB`` (256e6) or ``1GiB`` (2**30) into bytes.

    Raises :class:`InputError` for anything else, or for a size that is not a
    whole, positive number of bytes.
    """
    if isinstance(text, int):
        value, unit = float(text), ""
    else:
        match = _SIZE_RE.match(text)
        if not match or match.group(2).upper() not in _SIZE_UNITS:
            raise InputError(f"size '{text}' is not a size; expected e.g. 4096, 256MB, 1GiB")
        value, unit = float(match.group(1)), match.group(2).upper()
    size = value * _SIZE_UNITS[unit]
    if size <= 0 or size != int(size):
        raise InputError(f"size '{text}' must be a positive whole number of bytes")
    return int(size)


def format_size(n_bytes: float) -> str:
    """Format a byte count with binary prefixes, as nccl-tests sizes are usually quoted (e.g. ``16MiB``)."""
    for unit, factor in (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n_bytes >= factor:
            value = n_bytes / factor
            return f"{value:g}{unit}"
    return f"{n_bytes:g}B"
