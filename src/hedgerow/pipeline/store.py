"""The results folder of a sweep: committed row files, finished runs, manifests.

Layout of an output directory ``DIR``::

    DIR/rows/<run_id>.parquet        one small file per finished run (tidy rows)
    DIR/rows/.tmp-*                  files being written (ignored by readers)
    DIR/_manifests/<experiment>.json the spec, the run ids and the swept keys
    DIR/_lock                        who is sweeping into DIR now (pid, host, start)
    DIR/_logs/<command>-<time>.log   Spark's and the JVM's output of a quiet run

A run's rows are written to ``DIR/rows/.tmp-...`` and renamed to
``DIR/rows/<run_id>.parquet`` (atomic, :func:`write_rows`), so a reader sees a
run completely or not at all and a run never has two files.  Nothing here
imports Spark: the sweep driver (:mod:`hedgerow.pipeline.sweep`), the report
(:mod:`hedgerow.pipeline.report`) and ``hedgerow sweep --dry-run`` share it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import socket
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from hedgerow.errors import HedgerowError
from hedgerow.experiment import ExperimentSpec, ResolvedRun, grid_keys
from hedgerow.experiment.rows import column_for_key

__all__ = [
    "UnreadableFile",
    "check_writable",
    "finished_run_ids",
    "finished_runs",
    "read_manifest",
    "row_files",
    "rows_dir",
    "stale_run_ids",
    "sweep_lock",
    "write_manifest",
    "write_rows",
]

ROWS = "rows"
MANIFESTS = "_manifests"
TMP_PREFIX = ".tmp-"
LOCK = "_lock"
#: free space below which a sweep does not start (a run's file is a few KiB to MiB)
MIN_FREE_BYTES = 64 * 2**20


class UnreadableFile(HedgerowError):
    """A file under ``DIR/rows`` that is not a readable result file (corrupt or foreign)."""


_SCHEMAS: dict[tuple[str, int, int], Any] = {}


def file_schema(path: Path) -> Any:
    """The Arrow schema of a Parquet file, read once per (path, mtime, size) in a process."""
    import pyarrow.parquet as pq

    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _SCHEMAS:
        _SCHEMAS[key] = pq.read_schema(path)
    return _SCHEMAS[key]


def check_row_file(path: Path) -> None:
    """Raise :class:`UnreadableFile` unless ``path`` is a Parquet file with result rows."""
    try:
        names = file_schema(path).names
    except Exception as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise UnreadableFile(f"{path}: not a readable Parquet file ({first})") from None
    missing = [c for c in ("run_id", "status", "experiment") if c not in names]
    if missing:
        raise UnreadableFile(
            f"{path}: not a Hedgerow result file (no column {', '.join(missing)})"
        )


def good_row_files(
    out: str | Path, warn: Callable[[str], None] | None = None
) -> list[Path]:
    """Committed row files that can be read; each other file is named once through ``warn``."""
    good = []
    for f in row_files(out):
        try:
            check_row_file(f)
        except UnreadableFile as e:
            if warn is not None:
                warn(f"{e}; skipped (move it out of {rows_dir(out)})")
            continue
        good.append(f)
    return good


def rows_dir(out: str | Path) -> Path:
    """``DIR/rows``: the Parquet dataset of a sweep output directory."""
    return Path(out) / ROWS


def row_files(out: str | Path) -> list[Path]:
    """Committed row files under ``DIR/rows`` (temporary files excluded)."""
    d = rows_dir(out)
    if not d.is_dir():
        return []
    return sorted(
        p for p in d.iterdir() if p.suffix == ".parquet" and not p.name.startswith((".", "_"))
    )


def finished_runs(
    out: str | Path,
    *,
    experiment: str | None = None,
    warn: Callable[[str], None] | None = None,
) -> dict[str, set[str]]:
    """For each run id with an ``ok`` row in ``DIR``: the code fingerprints of those rows.

    Rows written before the ``code`` column existed give ``"unknown"``.  One
    pass over the row files serves both :func:`finished_run_ids` and
    :func:`stale_run_ids`.  A corrupt or foreign file is skipped and named
    through ``warn`` (its run, if it was one, counts as not finished and is
    run again, replacing the file).

    Examples
    --------
    >>> import tempfile
    >>> finished_runs(tempfile.mkdtemp())
    {}
    """
    import pyarrow.parquet as pq

    codes: dict[str, set[str]] = {}
    for f in good_row_files(out, warn):
        try:
            cols = ["run_id", "status"] + (["experiment"] if experiment else [])
            if "code" in pq.read_schema(f).names:
                cols.append("code")
            t = pq.read_table(f, columns=cols).to_pydict()
        except Exception as e:  # damaged after the footer was read
            if warn is not None:
                warn(f"{f}: not a readable Parquet file ({str(e).splitlines()[0]}); skipped")
            continue
        n = len(t["run_id"])
        made_by = t.get("code", [None] * n)
        exp = t.get("experiment", [None] * n)
        for i, rid in enumerate(t["run_id"]):
            if t["status"][i] == "ok" and (experiment is None or exp[i] == experiment):
                codes.setdefault(rid, set()).add(made_by[i] or "unknown")
    return codes


def finished_run_ids(
    out: str | Path,
    *,
    experiment: str | None = None,
    warn: Callable[[str], None] | None = None,
) -> set[str]:
    """Run ids that have at least one ``ok`` row in ``DIR``.

    Examples
    --------
    >>> import tempfile
    >>> finished_run_ids(tempfile.mkdtemp())
    set()
    """
    return set(finished_runs(out, experiment=experiment, warn=warn))


def stale_run_ids(out: str | Path, code: str) -> set[str]:
    """Finished run ids none of whose ``ok`` rows was made by code ``code``.

    Rows written before the ``code`` column existed count as other code.

    Examples
    --------
    >>> import tempfile
    >>> stale_run_ids(tempfile.mkdtemp(), "abc")
    set()
    """
    return _stale(finished_runs(out), code)


def _stale(codes: dict[str, set[str]], code: str) -> set[str]:
    return {rid for rid, made_by in codes.items() if code not in made_by}


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{TMP_PREFIX}{uuid.uuid4().hex}-{path.name}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise HedgerowError(_os_error_text(path, e)) from None


def _os_error_text(path: Path, e: OSError) -> str:
    if e.errno == errno.ENOSPC:
        return f"{path}: no space left on the device; free some space or use another --out"
    if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"{path}: cannot write ({e.strerror}); use a writable --out"
    return f"{path}: cannot write ({e.strerror or e})"


def check_writable(out: str | Path, *, min_free: int = MIN_FREE_BYTES) -> None:
    """Check before any run that ``out`` can be created and written and has free space.

    Raises
    ------
    HedgerowError
        One line naming the folder: read-only, not a folder, or a full disk.

    Examples
    --------
    >>> import tempfile
    >>> check_writable(tempfile.mkdtemp(), min_free=0)
    """
    out = Path(out)
    try:
        rows_dir(out).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        text = _os_error_text(out, e).replace("cannot write", "cannot create")
        raise HedgerowError(text) from None
    probe = rows_dir(out) / f"{TMP_PREFIX}probe-{uuid.uuid4().hex}"
    try:
        with open(probe, "wb") as fh:
            fh.write(b"\0" * 4096)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as e:
        raise HedgerowError(_os_error_text(out, e)) from None
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    free = shutil.disk_usage(out).free
    if free < min_free:
        raise HedgerowError(
            f"{out}: only {free / 2**20:.0f} MiB free on its device (a sweep needs at least "
            f"{min_free / 2**20:.0f} MiB); free some space or use another --out"
        )


def _holder_text(path: Path) -> str:
    try:
        h = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return "another process"
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(h.get("started", 0)))
    return (
        f"hedgerow {h.get('command', 'sweep')} pid {h.get('pid')} on {h.get('host')} "
        f"since {started}"
    )


@contextlib.contextmanager
def sweep_lock(out: str | Path, command: str = "sweep") -> Iterator[Path]:
    """Hold ``DIR/_lock`` for the whole sweep: one writer per results folder.

    An advisory ``flock`` that the kernel releases when the holder exits in any
    way (``kill -9`` included), so a killed sweep never leaves a stale lock.
    The file names the holder (pid, host, start time) for the error a second
    writer gets.  Under the lock no other sweep writes into ``DIR``, so every
    leftover ``.tmp-*`` file is from a dead writer and is removed.

    Raises
    ------
    HedgerowError
        ``DIR is in use by hedgerow sweep pid N on HOST since T``.
    """
    path = Path(out) / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise HedgerowError(
                f"{out} is in use by {_holder_text(path)}; wait for it to end or use "
                "another --out (the lock goes away by itself when that process exits)"
            ) from None
        info = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time(),
                "command": command}  # fmt: skip
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        _clean_stale_tmp(out, older_than=0.0)
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)


def write_rows(out: str | Path, run_id: str, rows: list[Mapping[str, Any]]) -> Path:
    """Commit a run's rows as ``DIR/rows/<run_id>.parquet`` (temp file + atomic rename).

    A later attempt of the same run replaces the file, so a run never has two files.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hedgerow.experiment.rows import to_arrow

    d = rows_dir(out)
    d.mkdir(parents=True, exist_ok=True)
    sink = pa.BufferOutputStream()
    pq.write_table(to_arrow(list(rows)), sink, compression="zstd")
    final = d / f"{run_id}.parquet"
    _atomic_write_bytes(final, sink.getvalue().to_pybytes())
    return final


def _clean_stale_tmp(out: str | Path, older_than: float = 3600.0) -> None:
    now = time.time()
    for d in (rows_dir(out), Path(out) / MANIFESTS):
        if not d.is_dir():
            continue
        for p in d.iterdir():
            if p.name.startswith(TMP_PREFIX):
                with contextlib.suppress(OSError):
                    if now - p.stat().st_mtime >= older_than:
                        p.unlink()


def _manifest_path(out: str | Path, experiment: str) -> Path:
    return Path(out) / MANIFESTS / f"{experiment}.json"


def write_manifest(out: str | Path, spec: ExperimentSpec, runs: list[ResolvedRun]) -> Path:
    """Record the spec, its runs and swept keys in ``DIR/_manifests/<experiment>.json``."""
    keys = grid_keys(spec)
    manifest = {
        "experiment": spec.experiment,
        "kind": spec.scenario.kind,
        "reference": spec.reference,
        "swept_keys": keys,
        "swept_columns": [column_for_key(k) for k in keys],
        "report": spec.report.model_dump(mode="json"),
        "spec": spec.model_dump(mode="json"),
        "runs": [{"run_id": r.run_id, "label": r.label, "point": r.point} for r in runs],
        "written_at": time.time(),
    }
    path = _manifest_path(out, spec.experiment)
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write_bytes(path, json.dumps(manifest, indent=1, sort_keys=True).encode("utf-8"))
    return path


def read_manifest(out: str | Path, experiment: str) -> dict[str, Any] | None:
    """The manifest of ``experiment`` in ``DIR`` (``None`` if it was never swept there)."""
    path = _manifest_path(out, experiment)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise HedgerowError(
            f"{path}: corrupt manifest ({type(e).__name__}); delete it and rerun "
            f"hedgerow sweep SPEC --out {out} to write it again"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("runs", []), list):
        raise HedgerowError(
            f"{path}: not a Hedgerow manifest; delete it and rerun hedgerow sweep SPEC --out {out}"
        )
    return data
