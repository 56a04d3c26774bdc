"""The one progress-bar factory (rich, on stderr) used by builds, runs, sweeps and the CLI, and
the notice that kernels are being compiled."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

#: what :func:`compile_notice` prints, once, when a run starts compiling kernels
COMPILE_NOTICE = "hedgerow: compiling kernels, once (later runs load them from the cache)"


def progress_bar(
    label: str | None = None,
    *,
    enabled: bool = True,
    status: bool = False,
    remaining: bool = False,
    transient: bool = True,
):
    """A :class:`rich.progress.Progress` drawing on stderr.

    Parameters
    ----------
    label : str, optional
        Fixed text before the bar; ``None`` shows each task's description.
    enabled : bool
        ``False`` gives a bar that draws nothing.
    status : bool
        Add a column showing each task's ``status`` field.
    remaining : bool
        Add an estimated-time-remaining column.
    transient : bool
        Remove the bar when it finishes.

    Examples
    --------
    >>> with progress_bar("demo", enabled=False) as bar:
    ...     task = bar.add_task("demo", total=2)
    ...     bar.advance(task)
    """
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = [
        TextColumn(label if label is not None else "[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
    ]
    if status:
        columns.append(TextColumn("{task.fields[status]}"))
    columns.append(TimeElapsedColumn())
    if remaining:
        columns.append(TimeRemainingColumn())
    return Progress(
        *columns, console=Console(stderr=True), transient=transient, disable=not enabled
    )


@contextmanager
def build_progress(
    label: str, total: int, *, enabled: bool
) -> Iterator[Callable[[int, int], None] | None]:
    """Yield an ``update(done, total)`` callback drawing a bar, or ``None`` when disabled."""
    if not enabled:
        yield None
        return
    with progress_bar(f"{label}: nodes covered") as bar:
        task = bar.add_task(label, total=total)

        def update(done: int, total_: int) -> None:
            bar.update(task, completed=done, total=total_)

        yield update


@contextmanager
def compile_notice(stream: TextIO | None = None) -> Iterator[None]:
    """Say once, on a terminal, that numba is compiling kernels, while the block runs.

    A protocol's first run compiles every kernel it reaches (up to about 100 s for GossipSub;
    ``docs/performance.md``, "What a first run costs"), and nothing else moves on the screen
    meanwhile. numba announces a compilation only when its cache has no entry to load, so the
    notice appears on a first run and never on the runs after it. It is written only when the
    stream is a terminal: a redirected or captured stream (tests, sweep workers, a log file) is
    left as it is, and standard output, where ``--json`` writes, is never written.

    Parameters
    ----------
    stream : file-like, optional
        Where the notice goes; default: ``sys.stderr`` as it is when the compilation starts
        (under a live progress bar, rich's proxy, which prints the line above the bar).

    Examples
    --------
    >>> import io
    >>> with compile_notice(io.StringIO()):  # not a terminal: nothing is written
    ...     pass
    """
    if not (stream if stream is not None else sys.stderr).isatty():
        yield  # nobody watches: numba is not even imported for this
        return
    from numba.core import event

    said = False

    class _Notice(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            nonlocal said
            if not said:
                said = True
                out = stream if stream is not None else sys.stderr
                out.write(COMPILE_NOTICE + "\n")
                out.flush()

        def on_end(self, ev: event.Event) -> None:
            pass

    with event.install_listener("numba:compile", _Notice()):
        yield
