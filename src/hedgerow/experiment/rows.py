"""The tidy row schema of sweep results, shared by pandas, pyarrow and Spark.

One row per run (``kind: build``) or per run and epoch (``kind: run``).
Columns come in three groups:

core columns (:data:`CORE_COLUMNS`, fixed names and types)
    ``run_id, attempt_id, experiment, label, kind, protocol, seed, nodes,
    topics, subs, popularity, latency, scenario, epoch, status, error,
    traceback, wall_seconds, cpu_seconds, peak_rss_mib, finished_at, host,
    code, spec_json, point_json``
    (``code`` is :func:`hedgerow.fingerprint.code_fingerprint` of the code that
    made the row).
parameter columns
    ``param_<name>`` for each protocol parameter, ``run_<name>`` for each
    epoch-scenario option and ``churn_<name>`` for each churn option, stored
    as **strings** (``3``, ``0.5``, ``true``, ``rss``) so files written by
    different protocols always merge; the exact values are in ``spec_json``.
metric columns
    every other column: numbers and booleans as ``double``, text as
    ``string``.  Nested metrics are flattened with ``_`` (``degree_ci95``
    becomes ``degree_ci95_lo`` / ``degree_ci95_hi``).

This module imports no Spark; it is used by :mod:`hedgerow.experiment.run` (in
workers) and by the driver when it writes Parquet files
(:mod:`hedgerow.pipeline.store`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

__all__ = [
    "CORE_COLUMNS",
    "METRIC_ORDER",
    "column_for_key",
    "flatten_metrics",
    "is_metric_column",
    "param_text",
    "to_arrow",
]

#: fixed columns and their Arrow types
CORE_COLUMNS: dict[str, pa.DataType] = {
    "run_id": pa.string(),
    "attempt_id": pa.string(),
    "experiment": pa.string(),
    "label": pa.string(),
    "kind": pa.string(),
    "protocol": pa.string(),
    "seed": pa.int64(),
    "nodes": pa.int64(),
    "topics": pa.int64(),
    "subs": pa.string(),
    "popularity": pa.string(),
    "latency": pa.string(),
    "scenario": pa.string(),
    "epoch": pa.int64(),
    "status": pa.string(),
    "error": pa.string(),
    "traceback": pa.string(),
    "wall_seconds": pa.float64(),
    "cpu_seconds": pa.float64(),
    "peak_rss_mib": pa.float64(),
    "finished_at": pa.float64(),
    "host": pa.string(),
    "code": pa.string(),
    "spec_json": pa.string(),
    "point_json": pa.string(),
}

#: overlay metrics in the order of ``hedgerow build``'s JSON
METRIC_ORDER = (
    "avg_degree",
    "max_degree",
    "min_degree",
    "degree_ci95_lo",
    "degree_ci95_hi",
    "degree_p2_5",
    "degree_p97_5",
    "partitioned_topics",
    "topic_components",
    "max_topic_diameter",
    "avg_topic_diameter",
    "max_topic_overlay_diameter",
    "avg_topic_overlay_diameter",
    "control_messages",
    "build_seconds",
)

#: columns that describe *how* a run went, not what it measured
_NOT_METRICS = {"wall_seconds", "cpu_seconds", "peak_rss_mib", "finished_at", "build_seconds"}


def param_text(value: Any) -> str | None:
    """The string stored in a ``param_*`` column.

    Examples
    --------
    >>> param_text(3), param_text(0.5), param_text(True), param_text("rss"), param_text([1, 2])
    ('3', '0.5', 'true', 'rss', '[1,2]')
    """
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def column_for_key(key: str) -> str:
    """The result column of a spec key (dotted, with or without ``scenario.``).

    Examples
    --------
    >>> column_for_key("scenario.workload.nodes"), column_for_key("params.kr")
    ('nodes', 'param_kr')
    >>> column_for_key("scenario.run.epochs"), column_for_key("scenario.run.name")
    ('run_epochs', 'scenario')
    >>> column_for_key("label")
    'label'
    """
    parts = key.split(".")
    if parts[0] == "scenario" and len(parts) > 1:
        parts = parts[1:]
    if len(parts) == 2 and parts[0] == "workload":
        return parts[1]
    if len(parts) == 2 and parts[0] == "params":
        return f"param_{parts[1]}"
    if len(parts) == 2 and parts[0] == "run":
        return "scenario" if parts[1] == "name" else f"run_{parts[1]}"
    return "_".join(parts)


def is_metric_column(name: str) -> bool:
    """Whether a result column holds a measured value.

    Examples
    --------
    >>> is_metric_column("avg_degree"), is_metric_column("param_kg"), is_metric_column("seed")
    (True, False, False)
    """
    return (
        name not in CORE_COLUMNS
        and not name.startswith(("param_", "run_", "churn_"))
        and name not in _NOT_METRICS
    )


def _flatten_into(out: dict[str, Any], name: str, value: Any) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten_into(out, f"{name}_{k}", v)
    elif isinstance(value, (list, tuple)):
        if (
            len(value) == 2
            and name.endswith("ci95")
            and all(isinstance(v, (int, float)) for v in value)
        ):
            out[f"{name}_lo"], out[f"{name}_hi"] = float(value[0]), float(value[1])
        else:
            out[name] = json.dumps(list(value), default=_json_default, separators=(",", ":"))
    else:
        out[name] = _scalar(value)


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        try:
            value = value.item()
        except (TypeError, ValueError):
            return str(value)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        f = float(value)
        return f if math.isfinite(f) else None
    if hasattr(value, "tolist"):
        return json.dumps(value.tolist(), separators=(",", ":"))
    return str(value)


def flatten_metrics(metrics: Mapping[str, Any], *, reserved: Iterable[str] = ()) -> dict[str, Any]:
    """Flatten a metric dict into metric columns (numbers become floats).

    Names that collide with ``reserved`` (core columns) get a ``metric_``
    prefix.

    Examples
    --------
    >>> flatten_metrics({"avg_degree": 3, "degree_ci95": [2.5, 3.5], "ok": True})
    {'avg_degree': 3.0, 'degree_ci95_lo': 2.5, 'degree_ci95_hi': 3.5, 'ok': 1.0}
    >>> flatten_metrics({"seed": 4}, reserved={"seed"})
    {'metric_seed': 4.0}
    """
    reserved = set(reserved)
    out: dict[str, Any] = {}
    for k, v in metrics.items():
        _flatten_into(out, f"metric_{k}" if k in reserved else str(k), v)
    return out


def _column_type(name: str, values: list[Any]) -> pa.DataType:
    if name in CORE_COLUMNS:
        return CORE_COLUMNS[name]
    if name.startswith(("param_", "run_")):
        return pa.string()
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.float64()
    if not present:
        return pa.float64()
    return pa.string()


def _coerce(name: str, typ: pa.DataType, value: Any) -> Any:
    if value is None:
        return None
    if pa.types.is_string(typ):
        return value if isinstance(value, str) else param_text(value)
    if pa.types.is_integer(typ):
        return int(value)
    if pa.types.is_floating(typ):
        f = float(value)
        return f if math.isfinite(f) else None
    return value


def to_arrow(rows: list[Mapping[str, Any]]) -> pa.Table:
    """An Arrow table of tidy rows: core columns first with fixed types, then the rest sorted.

    Examples
    --------
    >>> t = to_arrow([{"run_id": "a", "seed": 1, "avg_degree": 3.0, "param_kg": "3"}])
    >>> t.schema.field("seed").type, t.schema.field("avg_degree").type, t.num_columns
    (DataType(int64), DataType(double), 27)
    """
    names: list[str] = list(CORE_COLUMNS)
    extra = sorted({k for r in rows for k in r if k not in CORE_COLUMNS})
    order = {m: i for i, m in enumerate(METRIC_ORDER)}
    extra.sort(
        key=lambda n: (
            0 if n.startswith("param_") else 1 if n.startswith("run_") else 2,
            order.get(n, len(order)),
            n,
        )
    )
    names += extra
    arrays = []
    fields = []
    for name in names:
        values = [r.get(name) for r in rows]
        typ = _column_type(name, values)
        arrays.append(pa.array([_coerce(name, typ, v) for v in values], type=typ))
        fields.append(pa.field(name, typ))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
