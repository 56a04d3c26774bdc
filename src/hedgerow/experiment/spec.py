"""Experiment specs: the validated models of a YAML experiment, and stable run ids.

A spec file has four top-level sections::

    experiment: spidercast-fig12        # name of the experiment (required)
    reference: spidercast-fig12         # optional: paper values to print beside ours
    scenario:                           # the base run
      kind: build                       # build (an overlay builder) | run (an epoch scenario)
                                        # | churn (an overlay kept under churn)
      protocol: spidercast
      params: {kg: 3, kr: 0}
      workload: {nodes: 1000, topics: 100, subs: 10, popularity: rss}
      seed: 0
    sweep:                              # what varies
      grid:
        scenario.workload.nodes: [1000, 2000]
      seeds: [0, 1, 2]
      variants:
        - {label: "similarity(10,0)", protocol: similarity, params: {similar: 10, random: 0}}
    report: {metrics: [avg_degree], by: [label, nodes], pivot: nodes}

Every key is documented in ``docs/specs.md``.  This module holds
:class:`ExperimentSpec`, the whole spec; the models of its sections, the
resolved run and the run-id hash are in :mod:`hedgerow.experiment.models`
(re-exported here).  Reading a file is :func:`hedgerow.experiment.load.load_spec`;
turning a spec into runs is :func:`hedgerow.experiment.expand.expand` (also
:meth:`ExperimentSpec.expand`); validation errors become key-path messages in
:mod:`hedgerow.experiment.errors`.
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from hedgerow.experiment.expand import expand
from hedgerow.experiment.models import (
    _NAME_RE,
    ChurnOptions,
    ReportSpec,
    ResolvedRun,
    RunOptions,
    ScenarioSpec,
    SweepSpec,
    Variant,
    WorkloadSpec,
    _KeyError,
    _Strict,
    canonical_json,
    run_id_of,
)

__all__ = [
    "ChurnOptions",
    "ExperimentSpec",
    "ReportSpec",
    "ResolvedRun",
    "RunOptions",
    "ScenarioSpec",
    "SweepSpec",
    "Variant",
    "WorkloadSpec",
    "canonical_json",
    "run_id_of",
]


class ExperimentSpec(_Strict):
    """A validated experiment: base scenario, sweep and report defaults.

    Examples
    --------
    >>> from hedgerow.experiment import parse_spec
    >>> spec = parse_spec({
    ...     "experiment": "demo",
    ...     "scenario": {"protocol": "ringpt", "workload": {"nodes": 60, "topics": 10, "subs": 3}},
    ...     "sweep": {"grid": {"scenario.workload.nodes": [60, 80]}, "seeds": [0, 1]},
    ... })
    >>> runs = spec.expand()
    >>> len(runs), runs[0].scenario["workload"]["nodes"], runs[-1].scenario["seed"]
    (4, 60, 1)
    >>> runs[0].run_id == spec.expand()[0].run_id
    True
    """

    experiment: str = Field(pattern=_NAME_RE, description="experiment name")
    description: str = ""
    reference: str | None = None
    scenario: ScenarioSpec
    sweep: SweepSpec = Field(default_factory=SweepSpec)
    report: ReportSpec = Field(default_factory=ReportSpec)

    @field_validator("reference")
    @classmethod
    def _reference(cls, v: str | None) -> str | None:
        if v is None:
            return v
        from hedgerow.experiment.reference import REFERENCES

        if v not in REFERENCES:
            raise ValueError(f"{v!r} is not one of {', '.join(sorted(REFERENCES))}")
        return v

    @model_validator(mode="after")
    def _metrics_of_this_kind(self) -> ExperimentSpec:
        # a declared metric that no row of this spec's kind carries could never be reported
        from hedgerow.protocols import known_metrics

        known = known_metrics()
        kind = self.scenario.kind
        for i, name in enumerate(self.report.metrics):
            kinds = known[name].kinds  # every name is declared (ReportSpec checked it)
            if kind not in kinds:
                raise _KeyError(("report", "metrics", i),
                                f"metric {name!r} comes from rows of kind {', '.join(kinds)}, "
                                f"not from this spec's kind {kind!r}")
        return self

    # ------------------------------------------------------------------ expansion
    def seeds(self) -> list[int]:
        """The seeds of the sweep (``scenario.seed`` when ``sweep.seeds`` is absent)."""
        return list(self.sweep.seeds) if self.sweep.seeds is not None else [self.scenario.seed]

    def expand(self) -> list[ResolvedRun]:
        """All runs: variants x grid (in file order) x seeds, each validated.

        Raises
        ------
        SpecError
            If a grid point or variant gives an invalid scenario (the message
            names the sweep key and the scenario key), or two runs coincide.
        """
        return expand(self)
