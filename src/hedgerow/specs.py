"""Experiment specs: validated YAML that names an experiment, a base scenario and a sweep.

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

Every key is documented in ``docs/specs.md``.  :func:`load_spec` validates a
file with pydantic (unknown keys are errors) and raises
:class:`~hedgerow.errors.SpecError` whose message names the file, line and key
path and, where the values are a closed set, the allowed values.
:meth:`ExperimentSpec.expand` turns a spec into :class:`ResolvedRun` objects,
each with a stable :attr:`~ResolvedRun.run_id` (a hash of its canonical JSON).
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import itertools
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hedgerow.errors import HedgerowError, SpecError

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
    "grid_keys",
    "load_spec",
    "parse_spec",
    "run_id_of",
]

#: the keys a grid or a variant override may set (``NAME`` = any protocol parameter)
SETTABLE_KEYS = (
    "scenario.protocol",
    "scenario.params.NAME",
    "scenario.workload.nodes",
    "scenario.workload.topics",
    "scenario.workload.subs",
    "scenario.workload.popularity",
    "scenario.latency",
    "scenario.diameter",
    "scenario.run.name",
    "scenario.run.epochs",
    "scenario.run.topics",
    "scenario.run.interest",
    "scenario.run.attackers",
    "scenario.churn.lifetime",
    "scenario.churn.duration",
    "scenario.churn.snapshot_every",
    "scenario.churn.off_ratio",
    "scenario.churn.timeout",
)

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
        return self


class RunOptions(_Strict):
    """Arguments of :func:`hedgerow.scenarios.run_scenario` for ``kind: run``.

    The meaning of ``topics``, ``interest`` and ``attackers`` is the
    scenario's; ``None`` keeps the scenario's default.
    """

    name: str = Field(description="name of the epoch scenario")
    epochs: int | None = Field(None, ge=1, description="number of epochs")
    topics: int | float | str | None = None
    interest: int | float | str | None = None
    attackers: int | float | str | None = None


class ChurnOptions(_Strict):
    """Arguments of :func:`hedgerow.scenarios.churn.run_churn` for ``kind: churn``.

    Examples
    --------
    >>> ChurnOptions(lifetime=100).snapshot_every
    200.0
    """

    lifetime: float = Field(gt=0, description="mean online time λ (s)")
    duration: float = Field(1000.0, gt=0, description="simulated seconds")
    snapshot_every: float = Field(200.0, gt=0, description="snapshot period (s)")
    off_ratio: float = Field(0.25, gt=0, description="mean offline time / λ")
    timeout: float = Field(0.1, gt=0, description="seconds per connect_timeout")


def _protocol_registry() -> dict[str, Any]:
    from hedgerow.protocols import REGISTRY

    return REGISTRY


def _run_scenario_fn():
    """The lazily imported :func:`hedgerow.scenarios.run_scenario` (``None`` if missing)."""
    try:
        from hedgerow.scenarios import run_scenario
    except ImportError:
        return None
    return run_scenario


def _check_run_kind(scen: ScenarioSpec) -> None:
    """Validate a ``kind: run`` scenario with ``hedgerow.scenarios`` (without running it)."""
    import hedgerow.scenarios as sc

    names = getattr(sc, "protocol_names", None)
    if callable(names) and scen.protocol not in names():
        raise _KeyError(("protocol",), f"{scen.protocol!r} is not one of {', '.join(names())}")
    check = getattr(sc, "check_run", None)
    if not callable(check):
        return
    assert scen.run is not None
    try:
        check(
            scen.protocol,
            scen.run.name,
            epochs=scen.run.epochs,
            topics=scen.run.topics,
            interest=scen.run.interest,
            attackers=scen.run.attackers,
            params=dict(scen.params),
        )
    except HedgerowError as e:
        text = str(e)
        bad = [k for k in scen.params if f"parameter {k}" in text or repr(k) in text]
        path = ("params", bad[0]) if bad else ("run",)
        raise _KeyError(path, text) from None


def _scenario_names() -> list[str] | None:
    """Names of the epoch scenarios, if the scenarios package lists them."""
    try:
        import hedgerow.scenarios as sc
    except ImportError:
        return None
    for attr in ("scenario_names", "SCENARIOS", "REGISTRY"):
        obj = getattr(sc, attr, None)
        if callable(obj):
            try:
                return sorted(obj())
            except TypeError:
                continue
        if isinstance(obj, Mapping):
            return sorted(obj)
    return None


class ScenarioSpec(_Strict):
    """One run before the sweep varies it.

    Examples
    --------
    >>> s = ScenarioSpec(protocol="ringpt", workload={"nodes": 50, "topics": 10, "subs": 3})
    >>> s.kind, s.workload.nodes, s.seed
    ('build', 50, 0)
    """

    kind: Literal["build", "run", "churn"] = Field("build", description="build | run | churn")
    protocol: str = Field(description="protocol name")
    params: dict[str, Any] = Field(default_factory=dict, description="protocol parameters")
    workload: WorkloadSpec | None = Field(None, description="synthetic workload (kind build)")
    latency: str | None = Field(None, description="latency model name (kind run)")
    seed: int = Field(0, ge=0, description="seed of the run")
    diameter: bool = Field(True, description="compute topic diameters (kind build)")
    run: RunOptions | None = Field(None, description="epoch scenario options (kind run)")
    churn: ChurnOptions | None = Field(None, description="churn options (kind churn)")

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
        if (
            isinstance(data, dict)
            and data.get("kind", "build") in ("build", "churn")
            and data.get("workload") is None
        ):
            data = {**data, "workload": {}}
        return data

    def _check_overlay_protocol(self, names: list[str]) -> None:
        """Protocol and parameters of an overlay builder (kinds build and churn)."""
        registry = _protocol_registry()
        if self.protocol not in names:
            raise _KeyError(("protocol",), f"{self.protocol!r} is not one of {', '.join(names)}")
        if self.run is not None:
            raise _KeyError(("run",), "only used by kind run; remove it or set kind: run")
        if self.latency is not None:
            raise _KeyError(
                ("latency",), f"overlay builds (kind {self.kind}) use no latency model; remove it"
            )
        allowed = registry[self.protocol]._param_names()
        for k in self.params:
            if k not in allowed:
                raise _KeyError(
                    ("params", k),
                    f"unknown parameter of {self.protocol}; "
                    f"allowed: {', '.join(allowed) or '(none)'}",
                )

    @model_validator(mode="after")
    def _by_kind(self) -> ScenarioSpec:
        if self.kind != "churn" and self.churn is not None:
            raise _KeyError(("churn",), "only used by kind churn; remove it or set kind: churn")
        if self.kind == "build":
            self._check_overlay_protocol(sorted(_protocol_registry()))
        elif self.kind == "churn":
            from hedgerow.scenarios.churn import maintained_protocols

            self._check_overlay_protocol(maintained_protocols())
            if self.churn is None:
                raise _KeyError(
                    ("churn",), "kind churn needs scenario.churn with at least lifetime"
                )
            if float(self.params.get("membership", 1.0)) != 1.0:
                raise _KeyError(("params", "membership"), "churn runs use full membership")
        else:
            if self.workload is not None:
                raise _KeyError(
                    ("workload",),
                    "not used by kind run (the epoch scenario defines its workload; "
                    "set scenario.run.topics / scenario.run.interest)",
                )
            if self.run is None:
                raise _KeyError(("run",), "kind run needs scenario.run with at least name")
            fn = _run_scenario_fn()
            if fn is None:
                raise _KeyError(
                    ("kind",), "'run' needs hedgerow.scenarios.run_scenario, which is not installed"
                )
            names = _scenario_names()
            if names is not None and self.run.name not in names:
                raise _KeyError(
                    ("run", "name"), f"{self.run.name!r} is not one of {', '.join(names)}"
                )
            if self.latency is not None and "latency" not in inspect.signature(fn).parameters:
                raise _KeyError(
                    ("latency",),
                    "run_scenario takes no latency model (the scenario sets it); remove it",
                )
            _check_run_kind(self)
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


class ExperimentSpec(_Strict):
    """A validated experiment: base scenario, sweep and report defaults.

    Examples
    --------
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
        from hedgerow.reference import REFERENCES

        if v not in REFERENCES:
            raise ValueError(f"{v!r} is not one of {', '.join(sorted(REFERENCES))}")
        return v

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
        return _expand(self)


def _variant_label(protocol: str, params: Mapping[str, Any]) -> str:
    if not params:
        return protocol
    inner = ",".join(
        f"{k}={canonical_json(v) if not isinstance(v, str) else v}" for k, v in params.items()
    )
    return f"{protocol}({inner})"


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
        """The JSON-able dict a worker needs to run it (see :func:`hedgerow.runner.run_one`)."""
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


class _KeyError(ValueError):
    """A validation error at a key path relative to the model being validated."""

    def __init__(self, path: tuple, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def _set_dotted(target: dict[str, Any], key: str, value: Any) -> None:
    """Set ``scenario.a.b`` in the scenario dict ``target`` (without the ``scenario.`` prefix)."""
    parts = key.split(".")[1:]
    node = target
    for p in parts[:-1]:
        if node.get(p) is None:
            node[p] = {}
        node = node[p]
    node[parts[-1]] = value


def _check_settable(key: str) -> None:
    parts = key.split(".")
    ok = (
        len(parts) >= 2
        and parts[0] == "scenario"
        and ((parts[1] == "params" and len(parts) == 3 and parts[2] != "") or key in SETTABLE_KEYS)
    )
    if not ok:
        raise ValueError(f"{key!r} is not a settable key; allowed: {', '.join(SETTABLE_KEYS)}")


def grid_keys(spec: ExperimentSpec) -> list[str]:
    """The dotted keys a spec's grid and variants vary (grid keys first).

    Examples
    --------
    >>> spec = parse_spec({"experiment": "e", "scenario": {"protocol": "ringpt"},
    ...                    "sweep": {"grid": {"scenario.workload.nodes": [50, 60]}}})
    >>> grid_keys(spec)
    ['scenario.workload.nodes']
    """
    keys = list(spec.sweep.grid)
    for v in spec.sweep.variants:
        for k in v.overrides:
            if k not in keys:
                keys.append(k)
    return keys


def _expand(spec: ExperimentSpec) -> list[ResolvedRun]:
    base = spec.scenario.model_dump(mode="json")
    grid = spec.sweep.grid
    for key in grid:
        try:
            _check_settable(key)
        except ValueError as e:
            raise SpecError(f"sweep.grid.{key}: {e}") from None
    variants: list[tuple[str | None, Variant | None]] = [(None, None)]
    if spec.sweep.variants:
        variants = [(f"sweep.variants[{i}]", v) for i, v in enumerate(spec.sweep.variants)]
        labels = [v.label for v in spec.sweep.variants]
        dup = {x for x in labels if labels.count(x) > 1}
        if dup:
            raise SpecError(f"sweep.variants: label {sorted(dup)[0]!r} is used twice")
    runs: list[ResolvedRun] = []
    seen: dict[str, str] = {}
    keys = list(grid)
    for where, variant in variants:
        start = copy.deepcopy(base)
        point: dict[str, Any] = {}
        if variant is not None:
            if variant.protocol is not None:
                start["protocol"] = variant.protocol
                point["scenario.protocol"] = variant.protocol
            if variant.params is not None:
                start["params"] = dict(variant.params)
            for k, v in variant.overrides.items():
                try:
                    _check_settable(k)
                except ValueError as e:
                    raise SpecError(f"{where}.overrides.{k}: {e}") from None
                if k in grid:
                    raise SpecError(
                        f"{where}.overrides.{k}: also swept by sweep.grid; set it in one place"
                    )
                _set_dotted(start, k, v)
                point[k] = v
            if variant.protocol is not None and "scenario.protocol" in grid:
                raise SpecError(f"{where}.protocol: also swept by sweep.grid.scenario.protocol")
        for values in itertools.product(*(grid[k] for k in keys)):
            resolved = copy.deepcopy(start)
            gpoint = dict(point)
            for k, v in zip(keys, values, strict=True):
                _set_dotted(resolved, k, v)
                gpoint[k] = v
            # validate once per grid point (seed does not change validity)
            try:
                scen = ScenarioSpec.model_validate(resolved)
            except ValidationError as e:
                raise SpecError(_point_error(e, where, variant, grid, values, gpoint)) from None
            resolved = scen.model_dump(mode="json")
            label = (
                variant.label
                if variant is not None
                else _variant_label(resolved["protocol"], resolved["params"])
            )
            for seed in spec.seeds():
                final = dict(resolved, seed=int(seed))
                rid = run_id_of({"experiment": spec.experiment, "label": label, "scenario": final})
                if rid in seen:
                    raise SpecError(
                        f"sweep: two runs resolve to the same scenario ({seen[rid]} and {label}, "
                        f"seed {seed}); remove the duplicate grid value or variant"
                    )
                seen[rid] = label
                runs.append(ResolvedRun(spec.experiment, label, final, dict(gpoint), rid))
    return runs


# --------------------------------------------------------------------------- errors
def _point_error(
    err: ValidationError,
    where: str | None,
    variant: Variant | None,
    grid: Mapping[str, list[Any]],
    values: tuple,
    gpoint: Mapping[str, Any],
) -> str:
    """Point an error of a resolved scenario at the sweep key that produced it."""
    loc, msg = _error_items(err, prefix=("scenario",))[0]
    dotted = _fmt_path(loc)
    for k, v in zip(grid, values, strict=True):
        # a parameter the swept protocol does not know is the protocol entry's fault
        by_protocol = k == "scenario.protocol" and dotted.startswith("scenario.params.")
        if dotted == k or dotted.startswith(k + ".") or by_protocol:
            idx = next(i for i, x in enumerate(grid[k]) if canonical_json(x) == canonical_json(v))
            return f"sweep.grid.{k}[{idx}]: {dotted}: {msg}"
    if variant is not None:
        if dotted.startswith("scenario.params.") and variant.params is not None:
            return f"{where}.params.{dotted.split('.', 2)[2]}: {msg}"
        if dotted == "scenario.protocol" and variant.protocol is not None:
            return f"{where}.protocol: {msg}"
        for k in variant.overrides:
            if dotted == k or dotted.startswith(k + "."):
                return f"{where}.overrides.{k}: {msg}"
    desc = ", ".join(f"{k}={canonical_json(v)}" for k, v in gpoint.items())
    context = f"{where or 'sweep'} ({desc})" if desc else "scenario"
    return f"{context}: {dotted}: {msg}" if desc else f"{dotted}: {msg}"


def _fmt_path(path: tuple) -> str:
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out or "(top level)"


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


def _clean_loc(loc: tuple) -> tuple:
    """Drop pydantic's union/function tags from an error location."""
    out = []
    for p in loc:
        if isinstance(p, str) and (
            p.startswith("function-") or p in ("int", "str", "float", "bool", "list[int]")
        ):
            continue
        out.append(p)
    return tuple(out)


def _error_items(err: ValidationError, prefix: tuple = ()) -> list[tuple[tuple, str]]:
    """``(key path, message)`` per pydantic error, unknown keys first."""
    items = []
    for e in err.errors(include_url=False):
        loc = prefix + _clean_loc(tuple(e["loc"]))
        ctx = e.get("ctx") or {}
        inner = ctx.get("error")
        etype = e["type"]
        if isinstance(inner, _KeyError):
            loc = loc + tuple(inner.path)
            msg = inner.message
        else:
            msg = e["msg"]
            if msg.startswith("Value error, "):
                msg = msg[len("Value error, ") :]
            if etype == "extra_forbidden":
                parent = next((str(p) for p in reversed(loc[:-1]) if isinstance(p, str)), "")
                allowed = _ALLOWED_FIELDS.get(parent if parent in _ALLOWED_FIELDS else "", [])
                msg = "unknown key" + (f"; allowed: {', '.join(allowed)}" if allowed else "")
            elif etype == "literal_error":
                expected = str(ctx.get("expected", "")).replace(" or ", ", ").replace("'", "")
                msg = f"{e['input']!r} is not one of {expected}"
            elif etype == "missing":
                msg = "required key is missing"
            elif etype == "string_pattern_mismatch":
                msg = (
                    f"{e['input']!r} is not a valid name (letters, digits and _ . + -, "
                    "starting with a letter or digit)"
                )
            elif etype.endswith("_type") or etype.endswith("_parsing"):
                msg = f"{msg}, got {e['input']!r}"
        items.append((loc, msg, etype != "extra_forbidden"))
    items.sort(key=lambda x: x[2])
    return [(loc, msg) for loc, msg, _ in items]


def _format_errors(err: ValidationError, prefix: tuple = ()) -> list[str]:
    """One ``key.path: message`` line per pydantic error."""
    return [f"{_fmt_path(loc)}: {msg}" for loc, msg in _error_items(err, prefix)]


def _key_lines(text: str) -> dict[tuple, int]:
    """Line number (1-based) of every key path in a YAML document; raises on duplicate keys."""
    lines: dict[tuple, int] = {}
    root = yaml.compose(text, Loader=yaml.SafeLoader)

    def walk(node: yaml.Node, path: tuple) -> None:
        if isinstance(node, yaml.MappingNode):
            seen: set = set()
            for k, v in node.value:
                key = k.value
                if key in seen:
                    raise SpecError(
                        f"line {k.start_mark.line + 1}: {_fmt_path((*path, key))}: duplicate key"
                    )
                seen.add(key)
                lines[(*path, key)] = k.start_mark.line + 1
                walk(v, (*path, key))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                lines[(*path, i)] = v.start_mark.line + 1
                walk(v, (*path, i))

    if root is not None:
        walk(root, ())
    return lines


def _line_for(message: str, lines: Mapping[tuple, int]) -> int | None:
    """The line of the longest key path that prefixes ``message``'s path."""
    path_text = message.split(": ", 1)[0].split(" (", 1)[0]
    best = None
    for path, line in lines.items():
        if path and (
            path_text == _fmt_path(path)
            or path_text.startswith(_fmt_path(path) + ".")
            or path_text.startswith(_fmt_path(path) + "[")
        ):
            if best is None or len(path) > best[0]:
                best = (len(path), line)
    return best[1] if best else None


def parse_spec(
    data: Any, *, source: str = "spec", lines: Mapping[tuple, int] | None = None
) -> ExperimentSpec:
    """Validate a spec given as a mapping; errors raise :class:`SpecError`.

    Parameters
    ----------
    data : mapping
        The parsed YAML.
    source : str
        File name used in error messages.
    lines : mapping, optional
        Key path -> line number, to point errors at a line.

    Examples
    --------
    >>> try:
    ...     parse_spec({"experiment": "e", "scenario": {"protocol": "ringpt",
    ...                 "workload": {"popularity": "zipf3"}}})
    ... except SpecError as e:
    ...     head, tail = str(e).split(" of ", 1)
    ...     print(head)
    ...     print("of", tail)
    spec: scenario.workload.popularity: 'zipf3' is not one
    of rss, zipf1, zipf2, nyse, uniform, zipf:ALPHA
    """
    lines = lines or {}

    def where(msg: str) -> str:
        line = _line_for(msg, lines)
        return f"{source}:{line}: {msg}" if line else f"{source}: {msg}"

    if not isinstance(data, Mapping):
        raise SpecError(
            f"{source}: a spec is a mapping with keys experiment, scenario, sweep, report"
        )
    try:
        spec = ExperimentSpec.model_validate(dict(data))
    except ValidationError as e:
        msgs = _format_errors(e)
        extra = (
            f" (and {len(msgs) - 1} more error{'s' if len(msgs) > 2 else ''})"
            if len(msgs) > 1
            else ""
        )
        raise SpecError(where(msgs[0]) + extra) from None
    try:
        spec.expand()
    except SpecError as e:
        raise SpecError(where(str(e))) from None
    return spec


def load_spec(path: str | Path) -> ExperimentSpec:
    """Read and validate a YAML spec file.

    Raises
    ------
    SpecError
        For a missing file, bad YAML or an invalid spec; the message names
        the file, the line and the key path.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"{p}: cannot read spec ({e.strerror})") from None
    try:
        data = yaml.safe_load(text)
        lines = _key_lines(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f":{mark.line + 1}" if mark is not None else ""
        raise SpecError(f"{p}{at}: not valid YAML ({getattr(e, 'problem', e)})") from None
    except SpecError as e:
        raise SpecError(f"{p}: {e}") from None
    return parse_spec(data, source=str(p), lines=lines)


def iter_dotted(mapping: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Flatten nested mappings to ``(dotted.key, value)`` pairs.

    Examples
    --------
    >>> list(iter_dotted({"a": {"b": 1}, "c": 2}))
    [('a.b', 1), ('c', 2)]
    """
    for k, v in mapping.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and v:
            yield from iter_dotted(v, key + ".")
        else:
            yield key, v
