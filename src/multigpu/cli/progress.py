"""Progress on stderr for long CLI commands."""

from __future__ import annotations

import time
from typing import Any


class Progress:
    """A progress callback for :func:`offer_costs` that writes to ``stream`` only once ``after_s`` seconds
    have passed (so fast runs stay silent), and ends its line when done."""

    def __init__(self, stream: Any, after_s: float = 2.0, what: str = "offers") -> None:
        self.stream, self.after_s, self.what = stream, after_s, what
        self.start = time.monotonic()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if time.monotonic() - self.start < self.after_s and not self.shown:
            return
        self.shown = True
        end = "\n" if done == total else ""
        self.stream.write(f"\rcost: {done}/{total} {self.what} evaluated{end}")
        self.stream.flush()
