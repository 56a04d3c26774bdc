"""The results folder of a sweep: committed row files, finished runs, manifests.

Layout of an output directory ``DIR``::

    DIR/rows/<run_id>.parquet        one small file per finished run (tidy rows)
    DIR/rows/.tmp-*                  files being written (ignored by readers)
    DIR/_manifests/<experiment>.json the spec, the run ids and the swept keys

A run's rows are written to ``DIR/rows/.tmp-...`` and renamed to
``DIR/rows/<run_id>.parquet`` (atomic, :func:`write_rows`), so a reader sees a
run completely or not at all and a run never has two files.  Nothing here
imports Spark: the sweep driver (:mod:`hedgerow.pipeline.sweep`), the report
(:mod:`hedgerow.pipeline.report`) and ``hedgerow sweep --dry-run`` share it.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hedgerow.errors import HedgerowError
from hedgerow.experiment import ExperimentSpec, ResolvedRun, grid_keys
from hedgerow.experiment.rows import column_for_key

__all__ = [
    "finished_run_ids",
    "finished_runs",
    "read_manifest",
    "row_files",
    "rows_dir",
    "stale_run_ids",
    "write_manifest",
    "write_rows",
]

ROWS = "rows"
MANIFESTS = "_manifests"
TMP_PREFIX = ".tmp-"


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


def finished_runs(out: str | Path, *, experiment: str | None = None) -> dict[str, set[str]]:
    """For each run id with an ``ok`` row in ``DIR``: the code fingerprints of those rows.

    Rows written before the ``code`` column existed give ``"unknown"``.  One
    pass over the row files serves both :func:`finished_run_ids` and
    :func:`stale_run_ids`.

    Examples
    --------
    >>> import tempfile
    >>> finished_runs(tempfile.mkdtemp())
    {}
    """
    import pyarrow.parquet as pq

    codes: dict[str, set[str]] = {}
    for f in row_files(out):
        try:
            cols = ["run_id", "status"] + (["experiment"] if experiment else [])
            if "code" in pq.read_schema(f).names:
                cols.append("code")
            t = pq.read_table(f, columns=cols).to_pydict()
        except Exception as e:  # a foreign or damaged file
            raise HedgerowError(f"{f}: not a readable result file ({e})") from None
        n = len(t["run_id"])
        made_by = t.get("code", [None] * n)
        exp = t.get("experiment", [None] * n)
        for i, rid in enumerate(t["run_id"]):
            if t["status"][i] == "ok" and (experiment is None or exp[i] == experiment):
                codes.setdefault(rid, set()).add(made_by[i] or "unknown")
    return codes


def finished_run_ids(out: str | Path, *, experiment: str | None = None) -> set[str]:
    """Run ids that have at least one ``ok`` row in ``DIR``.

    Examples
    --------
    >>> import tempfile
    >>> finished_run_ids(tempfile.mkdtemp())
    set()
    """
    return set(finished_runs(out, experiment=experiment))


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
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


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
    d = rows_dir(out)
    if not d.is_dir():
        return
    now = time.time()
    for p in d.iterdir():
        if p.name.startswith(TMP_PREFIX):
            with contextlib.suppress(OSError):
                if now - p.stat().st_mtime > older_than:
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
    return json.loads(path.read_text(encoding="utf-8"))
