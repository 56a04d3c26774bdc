"""Memory admission of runs that share one machine: a ledger of what each run has reserved.

:func:`hedgerow.params.check_memory` refuses a run that would not fit in the
machine alone.  Runs that share a machine (the tasks of a sweep on two cores)
can each fit alone and still not fit together: two 10 GiB runs on a 24 GiB
machine, each checked before the other has allocated, would both start and
one of them would be killed.  So a sweep names a **ledger** file in the
environment variable ``HEDGEROW_MEMORY_LEDGER`` (see
:func:`hedgerow.pipeline.sweep.worker_env`), and every estimate checked while
it is set also goes through :func:`admit`:

* under an exclusive lock on the ledger, the run's process reads what this
  machine has available now (``MemAvailable``) and what the other runs on
  this host have reserved but not yet taken (their reservation less their
  resident memory, never below zero);
* it is admitted when its own estimate still fits, keeping back the same
  headroom as ``check_memory`` (a fifth of the machine):
  ``needed <= available - headroom - still_to_come(others)``; its reservation
  (what it holds plus the estimate) is then written beside theirs;
* otherwise it raises :class:`~hedgerow.errors.MemoryDeferred` *before it
  allocates*: the sweep runs it again when one of the runs holding memory
  has ended (:mod:`hedgerow.pipeline.sweep`).

A process keeps its largest reservation until :func:`release` (the sweep
releases after every run); entries of processes that no longer exist are
dropped when the ledger is next read, so a run killed half-way frees its
reservation.  Entries are kept per host name, so a ledger on a file system
that several machines share still counts each machine's memory alone.
Without the variable (single runs, tests), nothing is written and nothing is
deferred.  Where the system does not say how much memory is available (no
``/proc/meminfo``), runs are admitted on ``check_memory``'s test alone.

Examples
--------
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "ledger.json")
>>> admit("a small run", 1024, path=path)
>>> reservations(path)[os.getpid()] > 1024
True
>>> release(path=path)
>>> os.getpid() in reservations(path)
False
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from hedgerow.errors import MemoryDeferred

__all__ = [
    "LEDGER_ENV",
    "admit",
    "available_now_bytes",
    "ledger_path",
    "release",
    "reservations",
    "room_bytes",
]

#: the environment variable naming the ledger file (set by a sweep for its workers)
LEDGER_ENV = "HEDGEROW_MEMORY_LEDGER"


def ledger_path() -> str | None:
    """The ledger file named by ``HEDGEROW_MEMORY_LEDGER``, or ``None`` (no admission)."""
    return os.environ.get(LEDGER_ENV) or None


def available_now_bytes() -> int | None:
    """What the system says it can give without swapping (``MemAvailable``), or ``None``.

    Examples
    --------
    >>> b = available_now_bytes()
    >>> b is None or b > 0
    True
    """
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _physical() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 0


def _resident(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * int(os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


@contextlib.contextmanager
def _locked(path: str) -> Iterator[IO[str]]:
    import fcntl

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield f
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _read(f: IO[str]) -> dict[str, dict[str, int]]:
    f.seek(0)
    text = f.read()
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError:  # a ledger cut by a crash: start it again
        return {}
    return data if isinstance(data, dict) else {}


def _write(f: IO[str], data: dict[str, dict[str, int]]) -> None:
    f.seek(0)
    f.truncate()
    f.write(json.dumps(data, sort_keys=True))
    f.flush()


def _live_entries(data: dict[str, dict[str, int]]) -> dict[str, int]:
    """This host's entries, those of ended processes dropped (in place)."""
    host = socket.gethostname()
    mine = {k: int(v) for k, v in (data.get(host) or {}).items() if _alive(int(k))}
    data[host] = mine
    return mine


def reservations(path: str | None = None) -> dict[int, int]:
    """The reservations of this host's live processes in the ledger, in bytes, by process id.

    Examples
    --------
    >>> import os, tempfile
    >>> reservations(os.path.join(tempfile.mkdtemp(), "none.json"))
    {}
    """
    path = path or ledger_path()
    if not path or not Path(path).exists():
        return {}
    with _locked(path) as f:
        return {int(k): v for k, v in _live_entries(_read(f)).items()}


def room_bytes(path: str | None = None, *, share: float = 0.8) -> float | None:
    """What a new run on this machine may reserve now, or ``None`` where the system does not say.

    ``MemAvailable`` less the headroom ``(1 - share) x physical memory`` and less what the
    ledger's live runs have reserved but not yet taken: the test of :func:`admit`.

    Examples
    --------
    >>> import os, tempfile
    >>> room = room_bytes(os.path.join(tempfile.mkdtemp(), "ledger.json"))
    >>> room is None or isinstance(room, float)
    True
    """
    free = available_now_bytes()
    total = _physical()
    if free is None or not total:
        return None
    path = path or ledger_path()
    to_come = sum(max(0, v - _resident(pid)) for pid, v in reservations(path).items()) \
        if path else 0
    return float(free - (1.0 - share) * total - to_come)


def admit(what: str, needed_bytes: float, *, held_bytes: int | None = None,
          share: float = 0.8, path: str | None = None) -> None:
    """Reserve ``needed_bytes`` more for this process, or raise ``MemoryDeferred``.

    No-op without a ledger (``path`` or ``HEDGEROW_MEMORY_LEDGER``).  ``held_bytes``
    is what the process holds now (default its resident memory); the reservation is
    ``held + needed``, kept at the largest this process asked for until
    :func:`release`.  The test, with ``headroom = (1 - share) x physical memory``::

        needed <= MemAvailable - headroom - sum(max(0, reserved - resident) of the others)

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "ledger.json")
    >>> admit("a run of 10**15 bytes", 1e15, path=path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.MemoryDeferred: a run of 10**15 bytes needs about ... GiB ...
    """
    path = path or ledger_path()
    if not path:
        return
    held = _resident(os.getpid()) if held_bytes is None else int(held_bytes)
    me = str(os.getpid())
    with _locked(path) as f:
        data = _read(f)
        entries = _live_entries(data)
        others = {k: v for k, v in entries.items() if k != me}
        to_come = sum(max(0, v - _resident(int(k))) for k, v in others.items())
        free = available_now_bytes()
        total = _physical()
        if free is not None and total:
            room = free - (1.0 - share) * total - to_come
            if needed_bytes > room:
                _write(f, data)
                raise MemoryDeferred(
                    f"{what} needs about {needed_bytes / 2**30:,.1f} GiB more; this machine "
                    f"has {free / 2**30:,.1f} GiB available, {len(others)} other run"
                    f"{'s' * (len(others) != 1)} on it will take {to_come / 2**30:,.1f} GiB "
                    f"more, and {(1.0 - share) * total / 2**30:,.1f} GiB is kept free: "
                    "it runs when memory is released"
                )
        entries[me] = max(int(entries.get(me, 0)), held + int(needed_bytes))
        _write(f, data)


def release(path: str | None = None) -> None:
    """Drop this process's reservation (a run has ended); no-op without a ledger."""
    path = path or ledger_path()
    if not path or not Path(path).exists():
        return
    me = str(os.getpid())
    with _locked(path) as f:
        data = _read(f)
        entries = _live_entries(data)
        entries.pop(me, None)
        _write(f, data)
