"""The one progress-bar factory (rich, on stderr) used by builds, runs, sweeps and the CLI."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


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
