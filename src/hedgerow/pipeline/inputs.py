"""Prepare the named inputs of the churn scenarios: run each missing ingest job once.

The churn scenarios of :mod:`hedgerow.scenarios.events` read ingest outputs
(FB samples, follower graphs, Google churn samples) from
:func:`hedgerow.scenarios.events.inputs_dir`.  :func:`ensure_inputs` runs the
``hedgerow ingest`` job of every one not there yet, in one Spark session, and
leaves the existing ones untouched (an output folder is complete once its
``meta.json`` exists).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hedgerow.errors import ParameterError
from hedgerow.scenarios.events import INPUTS, input_folder
from hedgerow.scenarios.inputs import is_social_input

__all__ = ["ensure_inputs", "inputs_of", "missing_inputs"]


def missing_inputs(names) -> list[str]:
    """The named inputs among ``names`` whose folder is not complete."""
    return [n for n in names if not (input_folder(n) / "meta.json").exists()]


def inputs_of(scenario: Mapping[str, Any]) -> list[str]:
    """The named inputs a resolved run scenario reads: its churn scenario's, and a named
    ``social`` setting anywhere in it (``run.social``, ``workload.social``).

    Examples
    --------
    >>> inputs_of({"kind": "churn", "churn": {"scenario": "fb1k-google"}})
    ['fb1k', 'google1k']
    >>> inputs_of({"kind": "run", "run": {"name": "vitis-twitter", "social": "vitis-tw10k"}})
    ['vitis-tw10k']
    >>> inputs_of({"kind": "run", "run": {"name": "vitis-twitter", "social": "my/folder"}})
    []
    >>> inputs_of({"kind": "run", "run": {"name": "vitis-twitter"}})
    ['vitis-tw10k']
    """
    from hedgerow.scenarios.events import CHURN_SCENARIOS

    found: list[str] = []
    churn = scenario.get("churn")
    if isinstance(churn, Mapping) and churn.get("scenario") in CHURN_SCENARIOS:
        found += CHURN_SCENARIOS[churn["scenario"]].inputs()
    for part in scenario.values():
        if isinstance(part, Mapping):
            social = part.get("social")
            if social is None and part is scenario.get("run"):
                from hedgerow.scenarios.world import SCENARIOS

                named = SCENARIOS.get(str(scenario["run"].get("name")))  # part itself
                social = None if named is None else named.social  # the scenario's default
            if is_social_input(social):
                found.append(social)
    return list(dict.fromkeys(found))


def ensure_inputs(names, *, master: str | None = None, log=None,
                  spark: Any = None) -> dict[str, Path]:
    """Run the ingest job of each missing input in ``names``; returns every folder.

    ``spark``: a running session to use (a sweep's); default one for these jobs only.
    """
    for n in names:
        if n not in INPUTS:
            raise ParameterError(f"unknown input {n!r}; allowed: {', '.join(INPUTS)}")
    todo = missing_inputs(names)
    if todo:
        from hedgerow.pipeline.ingest.churn import ingest_churn
        from hedgerow.pipeline.ingest.follower_graph import ingest_follower_graph
        from hedgerow.pipeline.ingest.social import ingest_social
        jobs: dict[str, Callable[..., Any]] = {
            "social": ingest_social, "follower-graph": ingest_follower_graph, "churn": ingest_churn}
        with _session(spark, master) as spark:
            for n in todo:
                job, args = INPUTS[n]
                out = input_folder(n)
                out.parent.mkdir(parents=True, exist_ok=True)
                if log is not None:
                    log(f"preparing input {n}: hedgerow ingest {job} -> {out}")
                jobs[job](spark, str(out), force=True, **args)
    return {n: input_folder(n) for n in names}


@contextmanager
def _session(spark: Any, master: str | None) -> Iterator[Any]:
    if spark is not None:
        yield spark
        return
    from hedgerow.pipeline.session import job_session

    with job_session(master, app_name="hedgerow-churn-inputs") as own:
        yield own
