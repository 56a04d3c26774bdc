"""Prepare the named inputs of the churn scenarios: run each missing ingest job once.

The churn scenarios of :mod:`hedgerow.scenarios.events` read ingest outputs
(FB samples, follower graphs, Google churn samples) from
:func:`hedgerow.scenarios.events.inputs_dir`.  :func:`ensure_inputs` runs the
``hedgerow ingest`` job of every one not there yet, in one Spark session, and
leaves the existing ones untouched (an output folder is complete once its
``meta.json`` exists).
"""

from __future__ import annotations

from pathlib import Path

from hedgerow.errors import ParameterError
from hedgerow.scenarios.events import INPUTS, input_folder

__all__ = ["ensure_inputs", "missing_inputs"]


def missing_inputs(names) -> list[str]:
    """The named inputs among ``names`` whose folder is not complete."""
    return [n for n in names if not (input_folder(n) / "meta.json").exists()]


def ensure_inputs(names, *, master: str | None = None, log=None) -> dict[str, Path]:
    """Run the ingest job of each missing input in ``names``; returns every folder."""
    for n in names:
        if n not in INPUTS:
            raise ParameterError(f"unknown input {n!r}; allowed: {', '.join(INPUTS)}")
    todo = missing_inputs(names)
    if todo:
        from hedgerow.pipeline.ingest.churn import ingest_churn
        from hedgerow.pipeline.ingest.follower_graph import ingest_follower_graph
        from hedgerow.pipeline.ingest.social import ingest_social
        from hedgerow.pipeline.session import job_session

        jobs = {"social": ingest_social, "follower-graph": ingest_follower_graph,
                "churn": ingest_churn}
        with job_session(master, app_name="hedgerow-churn-inputs") as spark:
            for n in todo:
                job, args = INPUTS[n]
                out = input_folder(n)
                out.parent.mkdir(parents=True, exist_ok=True)
                if log is not None:
                    log(f"preparing input {n}: hedgerow ingest {job} -> {out}")
                jobs[job](spark, str(out), force=True, **args)
    return {n: input_folder(n) for n in names}
