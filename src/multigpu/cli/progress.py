"""Progress on stderr for long CLI commands: a rich progress bar, and only when stderr is a terminal.

Piped or redirected output (a script, CI, ``2> log``) gets no progress at all,
so stderr holds only errors, warnings and notes.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

Update = Callable[[int, int], None]


@contextlib.contextmanager
def progress(what: str, stream=None) -> Iterator[Update | None]:
    """A ``progress(done, total)`` callback drawing a bar on ``stream`` (default stderr) while the block runs;
    None when the stream is not a terminal. The bar is removed when the block ends."""
    stream = sys.stderr if stream is None else stream
    if not (hasattr(stream, "isatty") and stream.isatty()):
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(file=stream), transient=True) as bar:
        task = bar.add_task(what, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
