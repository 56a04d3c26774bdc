"""Experiments without a JVM: specs, their expansion into runs, one run -> tidy rows.

One job per module:

* :mod:`~hedgerow.experiment.models`: the pydantic models of a spec's sections
  (``scenario.run`` and ``scenario.churn`` generated from the declared world
  settings), :class:`ResolvedRun` and the stable run id (:func:`run_id_of`);
* :mod:`~hedgerow.experiment.spec`: :class:`ExperimentSpec`, the whole spec;
* :mod:`~hedgerow.experiment.expand`: grid x variants x seeds -> resolved runs;
* :mod:`~hedgerow.experiment.errors`: validation errors as ``key.path: message``;
* :mod:`~hedgerow.experiment.load`: YAML -> spec, errors at ``FILE:LINE: key.path``;
* :mod:`~hedgerow.experiment.run`: one resolved run -> tidy rows (:func:`run_one`);
* :mod:`~hedgerow.experiment.rows`: the tidy-row schema (pyarrow);
* :mod:`~hedgerow.experiment.reference`: the papers' published values.

Nothing here imports :mod:`pyspark`, :mod:`hedgerow.pipeline` or
:mod:`hedgerow.cli`; the protocols, scenarios and churn engine are imported
only when a spec is validated or a run executes.

Examples
--------
>>> from hedgerow.experiment import parse_spec, run_one
>>> spec = parse_spec({"experiment": "doc", "scenario": {"protocol": "ringpt",
...     "diameter": False, "workload": {"nodes": 60, "topics": 8, "subs": 2}}})
>>> [run] = spec.expand()
>>> [row] = run_one(run)
>>> row["status"], row["run_id"] == run.run_id
('ok', True)
"""

from __future__ import annotations

from hedgerow.experiment.expand import SETTABLE_KEYS, grid_keys, iter_dotted
from hedgerow.experiment.load import load_spec, parse_spec
from hedgerow.experiment.reference import REFERENCES, Reference, get_reference
from hedgerow.experiment.run import base_row, execute, failed_rows, run_one
from hedgerow.experiment.spec import (
    ChurnOptions,
    ExperimentSpec,
    ReportSpec,
    ResolvedRun,
    RunOptions,
    ScenarioSpec,
    SweepSpec,
    Variant,
    WorkloadSpec,
    canonical_json,
    run_id_of,
)

__all__ = [
    "REFERENCES",
    "SETTABLE_KEYS",
    "ChurnOptions",
    "ExperimentSpec",
    "Reference",
    "ReportSpec",
    "ResolvedRun",
    "RunOptions",
    "ScenarioSpec",
    "SweepSpec",
    "Variant",
    "WorkloadSpec",
    "base_row",
    "canonical_json",
    "execute",
    "failed_rows",
    "get_reference",
    "grid_keys",
    "iter_dotted",
    "load_spec",
    "parse_spec",
    "run_id_of",
    "run_one",
]
