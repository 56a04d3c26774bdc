"""Progress reporting for long builds (a rich bar on stderr)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def build_progress(
    label: str, total: int, *, enabled: bool
) -> Iterator[Callable[[int, int], None] | None]:
    """Yield an ``update(done, total)`` callback drawing a bar, or ``None`` when disabled."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn(f"{label}: nodes covered"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    with bar:
        task = bar.add_task(label, total=total)

        def update(done: int, total_: int) -> None:
            bar.update(task, completed=done, total=total_)

        yield update
