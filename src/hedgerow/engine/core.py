"""Deterministic event core: a heap of ``(time, priority, seq, action)``.

Order is fixed by time, then priority, then insertion sequence, so the same
inputs always replay the same way (SimPy's rule).  Actions are plain callables
with their arguments; there are no processes, generators or global state.

Time is kept in abstract *units*.  A scenario that thinks in seconds gives the
core ``seconds_per_unit`` and schedules through :meth:`Simulator.schedule_at_seconds`,
:meth:`Simulator.schedule_in_seconds` and :attr:`Simulator.now_seconds`, which
all convert with :meth:`Simulator.to_units` (``seconds / seconds_per_unit``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any


class Simulator:
    """Discrete-event loop.

    Parameters
    ----------
    seconds_per_unit : float, default 1.0
        Wall-clock seconds one time unit stands for (only the ``*_seconds``
        helpers use it; the loop itself counts units).

    Examples
    --------
    >>> sim = Simulator()
    >>> log = []
    >>> sim.schedule(2.0, log.append, "b")
    >>> sim.schedule(1.0, log.append, "a")
    >>> sim.schedule(1.0, log.append, "a2")
    >>> sim.run()
    3
    >>> log, sim.now
    (['a', 'a2', 'b'], 2.0)
    >>> sim = Simulator(seconds_per_unit=0.1)
    >>> sim.schedule_at_seconds(0.5, log.append, "c")
    >>> sim.run(), sim.now, sim.now_seconds
    (1, 5.0, 0.5)
    """

    __slots__ = ("_heap", "_seq", "events_run", "now", "seconds_per_unit")

    def __init__(self, *, seconds_per_unit: float = 1.0) -> None:
        if not seconds_per_unit > 0:
            raise ValueError(f"seconds_per_unit must be positive, got {seconds_per_unit}")
        self.seconds_per_unit = float(seconds_per_unit)
        self.now = 0.0
        self._heap: list[tuple[float, int, int, Callable[..., Any], tuple]] = []
        self._seq = 0
        self.events_run = 0

    def schedule(
        self, delay: float, action: Callable[..., Any], *args: Any, priority: int = 0
    ) -> None:
        """Run ``action(*args)`` ``delay`` time units from now (``delay >= 0``)."""
        if delay < 0:
            raise ValueError(f"cannot schedule into the past (delay={delay})")
        self._seq += 1
        heapq.heappush(self._heap, (self.now + delay, priority, self._seq, action, args))

    def schedule_at(
        self, time: float, action: Callable[..., Any], *args: Any, priority: int = 0
    ) -> None:
        """Run ``action(*args)`` at absolute ``time`` (not before now)."""
        delay = time - self.now
        self.schedule(delay if delay > 0.0 else 0.0, action, *args, priority=priority)

    # ------------------------------------------------------------ seconds
    def to_units(self, seconds: float) -> float:
        """``seconds`` in time units: ``seconds / seconds_per_unit`` (the one conversion)."""
        return seconds / self.seconds_per_unit

    @property
    def now_seconds(self) -> float:
        """The current time in seconds: ``now * seconds_per_unit``."""
        return self.now * self.seconds_per_unit

    def schedule_at_seconds(
        self, t_s: float, action: Callable[..., Any], *args: Any, priority: int = 0
    ) -> None:
        """:meth:`schedule_at` with the absolute time ``t_s`` in seconds."""
        self.schedule_at(self.to_units(t_s), action, *args, priority=priority)

    def schedule_in_seconds(
        self, delay_s: float, action: Callable[..., Any], *args: Any, priority: int = 0
    ) -> None:
        """:meth:`schedule` with the delay ``delay_s`` in seconds."""
        self.schedule(self.to_units(delay_s), action, *args, priority=priority)

    @property
    def pending(self) -> int:
        """Number of scheduled events not yet run."""
        return len(self._heap)

    def step(self) -> bool:
        """Run the next event; ``False`` when none is left."""
        if not self._heap:
            return False
        time, _, _, action, args = heapq.heappop(self._heap)
        self.now = time
        self.events_run += 1
        action(*args)
        return True

    def run(self, until: float | None = None, max_events: int | None = None) -> int:
        """Run events until the heap is empty, time ``until``, or ``max_events``.

        Returns the number of events run by this call.
        """
        heap = self._heap
        pop = heapq.heappop
        n = 0
        while heap:
            if until is not None and heap[0][0] > until:
                self.now = until
                break
            if max_events is not None and n >= max_events:
                break
            time, _, _, action, args = pop(heap)
            self.now = time
            action(*args)
            n += 1
        self.events_run += n
        return n
