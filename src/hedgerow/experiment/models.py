"""The models of an experiment spec's sections, the run-id hash and the key-path error.

:class:`ScenarioSpec` (one run before the sweep varies it) with its sections
:class:`WorkloadSpec`, :class:`RunOptions` and :class:`ChurnOptions` (the last
two generated from the declared world settings,
:data:`~hedgerow.world_settings.WORLD_SETTINGS`), the sweep's
:class:`Variant` and :class:`SweepSpec`, :class:`ReportSpec`,
:class:`ResolvedRun` and the run id (:func:`canonical_json`, :func:`run_id_of`).
:class:`hedgerow.experiment.spec.ExperimentSpec` puts them together.

The validators raise :class:`_KeyError` to name the key at fault;
:mod:`hedgerow.experiment.errors` turns it into a ``key.path: message`` line.
Imports run one way: ``models`` <- ``errors`` <- ``expand`` <- ``spec``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from hedgerow.errors import HedgerowError

__all__ = [
    "ChurnOptions",
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

_NAME_RE = r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$"


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: the form that run ids hash.

    Examples
    --------
    >>> canonical_json({"b": 1, "a": [1.0, "x"]})
    '{"a":[1.0,"x"],"b":1}'
    """
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def run_id_of(payload: Mapping[str, Any]) -> str:
    """The stable id of a run: the first 16 hex digits of SHA-256 of its canonical JSON.

    Examples
    --------
    >>> run_id_of({"experiment": "x", "label": "y", "scenario": {"seed": 0}})
    'f8dffdb2f6d8987f'
    """
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()[:16]


def _check_jsonable(value: Any, where: str = "value") -> Any:
    """Reject values that do not survive canonical JSON (objects, NaN, tuples as keys ...)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: {value!r} is not a finite number")
        return value
    if isinstance(value, list):
        return [_check_jsonable(v, where) for v in value]
    if isinstance(value, dict):
        for k in value:
            if not isinstance(k, str):
                raise ValueError(f"{where}: key {k!r} is not a string")
        return {k: _check_jsonable(v, where) for k, v in value.items()}
    raise ValueError(f"{where}: {value!r} is not a number, string, boolean, list or mapping")


class _KeyError(ValueError):
    """A validation error at a key path relative to the model being validated.

    The validators below raise it; :mod:`hedgerow.experiment.errors` turns it
    into a ``key.path: message`` line.
    """

    def __init__(self, path: tuple, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


# --------------------------------------------------------------------------- models
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _popularity_names() -> list[str]:
    from hedgerow.workloads.popularity import POPULARITY

    return [*POPULARITY, "zipf:ALPHA"]


class WorkloadSpec(_Strict):
    """A synthetic workload (SpiderCast section 3.1); used by ``kind: build``.

    Examples
    --------
    >>> WorkloadSpec(nodes=500).model_dump()
    {'nodes': 500, 'topics': 100, 'subs': 10, 'popularity': 'rss'}
    """

    nodes: int = Field(1000, ge=1, description="number of nodes")
    topics: int = Field(100, ge=1, description="number of topics")
    subs: int | str = Field(10, description="subscriptions per node: S or 'MIN:MAX'")
    popularity: str = Field("rss", description="topic popularity distribution")

    @field_validator("subs")
    @classmethod
    def _subs(cls, v: int | str) -> int | str:
        from hedgerow.workloads.subscriptions import parse_subs

        try:
            lo, hi = parse_subs(v)
        except HedgerowError as e:
            raise ValueError(f"{v!r} is not S or 'MIN:MAX' with 1 <= MIN <= MAX ({e})") from None
        return lo if lo == hi else f"{lo}:{hi}"

    @field_validator("popularity")
    @classmethod
    def _popularity(cls, v: str) -> str:
        from hedgerow.workloads.popularity import POPULARITY

        if v in POPULARITY:
            return v
        if v.startswith("zipf:"):
            try:
                alpha = float(v.split(":", 1)[1])
            except ValueError:
                alpha = -1.0
            if alpha >= 0 and math.isfinite(alpha):
                return v
        raise ValueError(f"{v!r} is not one of {', '.join(_popularity_names())}")

    @model_validator(mode="after")
    def _subs_fit(self) -> WorkloadSpec:
        hi = int(str(self.subs).split(":")[-1])
        if hi > self.topics:
            raise ValueError(f"subs {self.subs!r} exceeds topics {self.topics}")
        from hedgerow.params import check_memory
        from hedgerow.workloads.subscriptions import instance_bytes

        check_memory(f"a workload of {self.nodes:,} nodes, {self.topics:,} topics and {hi} "
                     "subscriptions", instance_bytes(self.nodes, self.topics, hi))
        return self


def _setting_field(name: str) -> Any:
    """The pydantic field of world setting ``name``: its default (``run``: ``None``, the
    named scenario's) and its doc."""
    from hedgerow.world_settings import WORLD_SETTINGS

    s = WORLD_SETTINGS[name]
    default = s.default if s.section == "churn" else None
    return (Any, Field(default, description=f"{s.doc} ({s.param.describe()})"))


def _check_world_settings(cls: type[BaseModel], values: Any) -> Any:
    """Each world setting of a section checked by its declaration (``before`` validator)."""
    from hedgerow.world_settings import check_setting

    if not isinstance(values, dict):
        return values
    out = dict(values)
    for name, value in values.items():
        # _settings: set on the models _section_model creates
        if name in cls.model_fields and name in cls._settings and value is not None:  # type: ignore[attr-defined]
            try:
                out[name] = check_setting(name, value)
            except HedgerowError as e:
                msg = str(e)
                cut = msg.find(f"parameter {name} ")
                raise _KeyError((name,), msg[cut + len(f"parameter {name} "):]
                                if cut >= 0 else msg) from None
    return out


def _section_model(
    section: str, model_name: str, doc: str, explicit: dict[str, Any]
) -> type[BaseModel]:
    """The model of spec section ``section``: ``explicit`` fields, then one field per world
    setting of the section (:data:`~hedgerow.world_settings.WORLD_SETTINGS`)."""
    from hedgerow.world_settings import settings_in

    names = [k for k in settings_in(section) if k != "latency"]
    fields = {**explicit, **{k: _setting_field(k) for k in names}}
    # pydantic's stubs type neither a classmethod validator nor create_model's __validators__
    validators = {"_world": model_validator(mode="before")(classmethod(_check_world_settings))}  # type: ignore[arg-type]
    model = create_model(model_name, __base__=_Strict, __doc__=doc, __validators__=validators,  # type: ignore[arg-type]
                         **fields)
    model._settings = frozenset(names)  # type: ignore[attr-defined]  # read by the validator
    return model


#: ``scenario.run`` (kind run): the named scenario and its world settings
RunOptions = _section_model(
    "run",
    "RunOptions",
    """Settings of the named scenario for ``kind: run`` (:func:`hedgerow.scenarios.simulate`).

    ``name`` and ``forwarding`` are written here; every other key is a world
    setting of the ``run`` section, generated from
    :data:`~hedgerow.world_settings.WORLD_SETTINGS` (``None`` keeps
    the scenario's value).

    Examples
    --------
    >>> RunOptions(name="vitis-random", rt=30).rt
    30
    """,
    {
        "name": (str, Field(description="name of the scenario (hedgerow.scenarios.SCENARIOS)")),
        "forwarding": (
            Literal["ttl", "topic", "flood", "mesh"] | None,
            Field(None, description="dissemination policy (default: the protocol's own)"),
        ),
    },
)


def _one_source(self: Any) -> Any:  # a ChurnOptions (created at import: its fields are dynamic)
    if (self.lifetime is None) == (self.scenario is None):
        raise ValueError("give exactly one of lifetime (synthetic churn) and scenario")
    if self.scenario is not None:
        from hedgerow.scenarios.events import CHURN_SCENARIOS

        if self.scenario not in CHURN_SCENARIOS:
            raise ValueError(f"unknown churn scenario {self.scenario!r}; allowed: "
                             f"{', '.join(sorted(CHURN_SCENARIOS))}")
    return self


#: ``scenario.churn`` (kind churn): a named churn scenario or synthetic churn, and its settings
ChurnOptions = _section_model(
    "churn",
    "ChurnOptions",
    """Arguments of :func:`hedgerow.scenarios.churn.run_churn` for ``kind: churn``.

    ``scenario`` (a named churn scenario) is written here; every other key is
    a world setting of the ``churn`` section, generated from
    :data:`~hedgerow.world_settings.WORLD_SETTINGS`.

    Examples
    --------
    >>> ChurnOptions(lifetime=100).snapshot_every
    200.0
    """,
    {
        "scenario": (
            str | None,
            Field(None, description="named churn scenario replayed event by event (fb1k-google,"
                  " ...); one row per event instead of snapshots"),
        ),
    },
)
ChurnOptions = create_model(
    "ChurnOptions", __base__=ChurnOptions, __doc__=ChurnOptions.__doc__,
    __validators__={"_one_source": model_validator(mode="after")(_one_source)},  # type: ignore[dict-item]
)


def _social_exists(social: Any) -> None:
    """A ``run.social`` that names no prepared input must be an existing folder (at load)."""
    if social is None:
        return
    from hedgerow.scenarios.inputs import is_social_input

    if not is_social_input(social) and not Path(str(social)).is_dir():
        raise _KeyError(("run", "social"), f"{social!r} is neither a named social input nor an "
                        "existing folder (an output of hedgerow ingest social)")


def _kind_check(scen: ScenarioSpec) -> None:
    """Check a scenario with its kind's check (:data:`hedgerow.scenarios.kinds.KINDS`).

    The protocol must have the capability the kind needs; a bad parameter or
    setting becomes a key path (``params.kg``, ``run.epochs``, ``latency``).
    """
    from hedgerow.protocols import protocol_class
    from hedgerow.scenarios.kinds import KINDS, RUN_SETTINGS

    kind = KINDS[scen.kind]
    try:
        cls = protocol_class(scen.protocol, kind.capability)
    except HedgerowError as e:
        raise _KeyError(("protocol",), str(e)) from None
    try:
        kind.check(scen.model_dump())
    except HedgerowError as e:
        key = getattr(e, "key", None)
        if key in cls.params or key in scen.params:
            path: tuple = ("params", key)
        elif key in ("latency", "protocol"):
            path = (key,)
        elif key in (*RUN_SETTINGS, "name", "forwarding") and scen.run is not None:
            path = ("run", key)
        else:
            path = ("params",) if scen.kind != "run" else ("run",)
        raise _KeyError(path, str(e)) from None


class ScenarioSpec(_Strict):
    """One run before the sweep varies it.

    Examples
    --------
    >>> s = ScenarioSpec(protocol="ringpt", workload={"nodes": 50, "topics": 10, "subs": 3})
    >>> s.kind, s.workload.nodes, s.seed
    ('build', 50, 0)
    """

    kind: Literal["build", "run", "churn", "optimum"] = Field(
        "build", description="build | run | churn | optimum (Goldfish Fig. 2)"
    )
    protocol: str = Field(description="protocol name")
    params: dict[str, Any] = Field(default_factory=dict, description="protocol parameters")
    workload: WorkloadSpec | None = Field(None, description="synthetic workload (kind build)")
    latency: str | None = Field(
        None, description="latency model replacing the scenario's network (kind run)"
    )
    seed: int = Field(0, ge=0, description="seed of the run")
    diameter: bool = Field(True, description="compute topic diameters (kind build)")
    # dynamically created pydantic models: valid types at run time, variables to the checker
    run: RunOptions | None = Field(None, description="epoch scenario options (kind run)")  # type: ignore[valid-type]
    churn: ChurnOptions | None = Field(None, description="churn options (kind churn)")  # type: ignore[valid-type]

    @field_validator("params")
    @classmethod
    def _params_json(cls, v: dict[str, Any]) -> dict[str, Any]:
        return _check_jsonable(v, "params")

    @field_validator("latency")
    @classmethod
    def _latency(cls, v: str | None) -> str | None:
        if v is None or v.startswith("file:"):
            return v
        from hedgerow.latency import LATENCY_MODELS

        if v not in LATENCY_MODELS:
            raise ValueError(f"{v!r} is not one of {', '.join((*LATENCY_MODELS, 'file:PATH'))}")
        return v

    @model_validator(mode="before")
    @classmethod
    def _default_workload(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        named = isinstance(data.get("churn"), dict) and data["churn"].get("scenario")
        if data.get("kind") == "churn" and named:
            if data.get("workload") is not None:
                raise _KeyError(
                    ("workload",),
                    f"not used with churn.scenario {named!r}, which brings its own workload; "
                    "remove one",
                )
            return data
        if data.get("kind", "build") in ("build", "churn") and data.get("workload") is None:
            data = {**data, "workload": {}}
        return data

    @model_validator(mode="after")
    def _by_kind(self) -> ScenarioSpec:
        if self.kind != "churn" and self.churn is not None:
            raise _KeyError(("churn",), "only used by kind churn; remove it or set kind: churn")
        if self.kind not in ("run", "optimum") and self.run is not None:
            raise _KeyError(("run",), "only used by kind run; remove it or set kind: run")
        if self.kind != "run" and self.latency is not None:
            raise _KeyError(
                ("latency",),
                f"kind {self.kind} has no network; remove it or set kind: run",
            )
        if self.kind == "churn" and self.churn is None:
            raise _KeyError(("churn",), "kind churn needs scenario.churn with at least lifetime")
        if self.kind in ("run", "optimum"):
            if self.workload is not None:
                raise _KeyError(
                    ("workload",),
                    "not used by kind run (the named scenario defines its workload; "
                    "set scenario.run.topics / scenario.run.interest)",
                )
            if self.run is None:
                raise _KeyError(("run",), "kind run needs scenario.run with at least name")
            _social_exists(getattr(self.run, "social", None))
        _kind_check(self)
        return self


class Variant(_Strict):
    """A named point of a sweep: a protocol with its own parameters.

    ``params`` (when given) *replaces* ``scenario.params``; ``overrides`` sets
    any other settable dotted key.
    """

    label: str = Field(min_length=1, description="row label, e.g. 'similarity(10,0)'")
    protocol: str | None = None
    params: dict[str, Any] | None = None
    overrides: dict[str, Any] = Field(default_factory=dict)

    @field_validator("params", "overrides")
    @classmethod
    def _json(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if v is None else _check_jsonable(v, "variant")


class SweepSpec(_Strict):
    """What varies: a grid over dotted keys, named variants and seeds."""

    grid: dict[str, list[Any]] = Field(default_factory=dict)
    seeds: list[int] | None = None
    variants: list[Variant] = Field(default_factory=list)

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: list[int] | None) -> list[int] | None:
        if v is not None:
            if not v:
                raise ValueError("needs at least one seed")
            bad = [s for s in v if s < 0]
            if bad:
                raise ValueError(f"seeds must be >= 0, got {bad[0]}")
            if len(set(v)) != len(v):
                raise ValueError("lists a seed twice")
        return v

    @field_validator("grid")
    @classmethod
    def _grid(cls, v: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for key, values in v.items():
            if not values:
                raise _KeyError((key,), "needs at least one value")
            _check_jsonable(values, key)
        return v


class ReportSpec(_Strict):
    """Defaults of ``hedgerow report`` for this experiment."""

    metrics: list[str] = Field(default_factory=list)
    by: list[str] = Field(default_factory=list)
    pivot: str | None = None
    #: ``kind: run`` / ``churn``: epochs (snapshots) to report (negative: from each run's
    #: end; ``[0, -1]``)
    epochs: list[int] = Field(default_factory=list)

    @field_validator("metrics")
    @classmethod
    def _metrics_declared(cls, v: list[str]) -> list[str]:
        # every name a row builder emits is declared (hedgerow.metrics.registry), a
        # protocol's own in its class; an undeclared one could never be reported
        from hedgerow.metrics.registry import unknown_metric
        from hedgerow.protocols import known_metrics

        known = known_metrics()
        for i, name in enumerate(v):
            if name not in known:
                raise _KeyError((i,), unknown_metric(name, known))
        return v

    @model_validator(mode="after")
    def _pivot_in_by(self) -> ReportSpec:
        from hedgerow.experiment.rows import column_for_key

        if self.pivot is None or self.pivot == "metric" or not self.by:
            return self  # metric: one column per metric, the report's own layout
        if column_for_key(self.pivot) not in {column_for_key(b) for b in self.by}:
            raise ValueError(f"pivot {self.pivot!r} is not among by ({', '.join(self.by)}); "
                             "add it to by, or use pivot: metric")
        return self


@dataclass(frozen=True)
class ResolvedRun:
    """One fully resolved run of an experiment.

    Attributes
    ----------
    experiment : str
        Experiment name.
    label : str
        The variant label (or ``protocol(k=v,...)`` without variants).
    scenario : dict
        The resolved scenario (JSON-able, every default filled in).
    point : dict
        The dotted keys the sweep set for this run (grid and variant), for reporting.
    run_id : str
        :func:`run_id_of` of experiment, label and scenario.
    """

    experiment: str
    label: str
    scenario: dict[str, Any]
    point: dict[str, Any]
    run_id: str

    def payload(self) -> dict[str, Any]:
        """The JSON-able dict a worker needs to run it (:func:`hedgerow.experiment.run_one`)."""
        return {
            "run_id": self.run_id,
            "experiment": self.experiment,
            "label": self.label,
            "scenario": self.scenario,
            "point": self.point,
        }

    @property
    def cost(self) -> float:
        """A rough relative cost used to start expensive runs first."""
        wl = self.scenario.get("workload") or {}
        return float(wl.get("nodes", 1)) * float(wl.get("topics", 1) or 1) ** 0.25


#: the keys each section of a spec allows, named in "unknown key" errors
_ALLOWED_FIELDS = {
    "": ["experiment", "description", "reference", "scenario", "sweep", "report"],
    "scenario": list(ScenarioSpec.model_fields),
    "workload": list(WorkloadSpec.model_fields),
    "run": list(RunOptions.model_fields),
    "churn": list(ChurnOptions.model_fields),
    "sweep": list(SweepSpec.model_fields),
    "report": list(ReportSpec.model_fields),
    "variants": list(Variant.model_fields),
}
