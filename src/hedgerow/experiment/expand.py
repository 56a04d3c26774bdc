"""Expansion of an experiment spec: grid x variants x seeds -> resolved runs.

:func:`expand` applies each variant (protocol, params, overrides) to the base
scenario, then each point of the grid (dotted keys such as
``scenario.workload.nodes``, see :data:`SETTABLE_KEYS`), validates every
resolved scenario once per point, and gives one :class:`ResolvedRun` per seed
with its stable run id.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import ValidationError

from hedgerow.errors import SpecError
from hedgerow.experiment.errors import _point_error
from hedgerow.experiment.models import (
    ResolvedRun,
    ScenarioSpec,
    Variant,
    canonical_json,
    run_id_of,
)
from hedgerow.world_settings import SECTIONS, WORLD_SETTINGS

__all__ = ["SETTABLE_KEYS", "expand", "grid_keys", "iter_dotted"]

#: the keys a grid or a variant override may set (``NAME`` = any protocol parameter): the
#: spec's own keys, then every world setting's spec key unless its declaration says why not
#: (:data:`~hedgerow.world_settings.WORLD_SETTINGS`)
SETTABLE_KEYS = (
    "scenario.protocol",
    "scenario.params.NAME",
    "scenario.workload.nodes",
    "scenario.workload.topics",
    "scenario.workload.subs",
    "scenario.workload.popularity",
    "scenario.diameter",
    "scenario.run.name",
    "scenario.run.forwarding",
    "scenario.churn.scenario",
    *(path for s in WORLD_SETTINGS.values() if not s.sweep for path in s.spec_paths),
)


def _variant_label(protocol: str, params: Mapping[str, Any]) -> str:
    if not params:
        return protocol
    inner = ",".join(
        f"{k}={canonical_json(v) if not isinstance(v, str) else v}" for k, v in params.items()
    )
    return f"{protocol}({inner})"


def _without_absent_extras(resolved: dict[str, Any]) -> dict[str, Any]:
    """``resolved`` without the settings a section holds ``also`` (the network settings of
    ``scenario.churn``) that were not given: they enter a run's id only when set, so the ids of
    specs that never set them stay what they were before the section took them.

    Examples
    --------
    >>> _without_absent_extras({"churn": {"lifetime": 1.0, "size": None, "bandwidth": "5"}})
    {'churn': {'lifetime': 1.0, 'bandwidth': '5'}}
    """
    for section in SECTIONS:
        values = resolved.get(section)
        if isinstance(values, dict):
            resolved[section] = {
                k: v for k, v in values.items()
                if v is not None or k not in WORLD_SETTINGS or section not in WORLD_SETTINGS[k].also
            }
    return resolved


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


def grid_keys(spec: Any) -> list[str]:
    """The dotted keys a spec's grid and variants vary (grid keys first).

    Examples
    --------
    >>> from hedgerow.experiment import parse_spec
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


def expand(spec: Any) -> list[ResolvedRun]:
    """All runs of a spec (an :class:`~hedgerow.experiment.spec.ExperimentSpec`): variants x
    grid (in file order) x seeds, each validated.

    :meth:`ExperimentSpec.expand <hedgerow.experiment.spec.ExperimentSpec.expand>`
    calls this.

    Raises
    ------
    SpecError
        If a grid point or variant gives an invalid scenario (the message
        names the sweep key and the scenario key), or two runs coincide.

    Examples
    --------
    >>> from hedgerow.experiment import parse_spec
    >>> spec = parse_spec({"experiment": "e", "scenario": {"protocol": "ringpt"},
    ...                    "sweep": {"grid": {"scenario.workload.nodes": [50, 60]},
    ...                              "seeds": [0, 1]}})
    >>> [(r.scenario["workload"]["nodes"], r.scenario["seed"]) for r in expand(spec)]
    [(50, 0), (50, 1), (60, 0), (60, 1)]
    """
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
            resolved = _without_absent_extras(scen.model_dump(mode="json"))
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
