"""Run kinds: the one table from a kind of run to its check and its function (Mesa's lesson).

A resolved run is a plain mapping (a spec's ``scenario`` section after the
sweep has set every key).  :data:`KINDS` maps its ``kind`` to

* ``check(scenario)`` -- validate without running: the protocol has the
  capability the kind needs and every parameter and setting is in range
  (a :class:`~hedgerow.errors.ParameterError` whose ``key`` names the
  parameter; the experiment layer turns it into a key path);
* ``run(scenario)`` -- the run's metric rows (one for ``build``, one per
  epoch for ``run``, one per snapshot for ``churn``), each with the world's
  ``world`` fingerprint.

================  ===========  ==============================================
kind              protocols    rows
================  ===========  ==============================================
``build``         any          one: the build record's metrics
``run``           any          one per epoch; the last also has the structure
``churn``         maintained   one per snapshot; with ``churn.scenario`` one per event
``optimum``       goldfish     one: Goldfish V-B Fig. 2's flags for one graph
================  ===========  ==============================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.protocols import get_protocol, protocol_class
from hedgerow.scenarios.run import check_run, simulate, structure
from hedgerow.scenarios.static import build_record
from hedgerow.scenarios.world import instance_fingerprint
from hedgerow.workloads import make_instance
from hedgerow.world_settings import WORLD_SETTINGS, settings_in

__all__ = ["KINDS", "Kind"]

#: ``scenario.run`` keys that override the named scenario: the ``run`` section of the
#: world settings (``latency`` is read from ``scenario.latency``)
RUN_SETTINGS = tuple(k for k in settings_in("run") if k != "latency")


def _churn_opt(opts: Mapping[str, Any], key: str) -> Any:
    """A ``scenario.churn`` value, or its declared default (:data:`WORLD_SETTINGS`)."""
    value = opts.get(key)
    return WORLD_SETTINGS[key].default if value is None else value


@dataclass(frozen=True)
class Kind:
    """A kind of run: which protocols it takes, how it is checked and run."""

    name: str
    capability: str | None
    check: Callable[[Mapping[str, Any]], None]
    run: Callable[[Mapping[str, Any]], list[dict[str, Any]]]


def _params(scen: Mapping[str, Any]) -> dict[str, Any]:
    return dict(scen.get("params") or {})


def _seed(scen: Mapping[str, Any]) -> int:
    return int(scen.get("seed", 0))


def _workload(scen: Mapping[str, Any]) -> Instance:
    wl = scen["workload"]
    return make_instance(
        nodes=wl["nodes"],
        topics=wl["topics"],
        subs=wl["subs"],
        popularity=wl["popularity"],
        seed=_seed(scen),
    )


# --------------------------------------------------------------------------- build
def _check_protocol(scen: Mapping[str, Any], capability: str | None) -> None:
    protocol_class(scen["protocol"], capability)
    get_protocol(scen["protocol"], **_params(scen)).checked()


def _check_build(scen: Mapping[str, Any]) -> None:
    _check_protocol(scen, None)


def _run_build(scen: Mapping[str, Any]) -> list[dict[str, Any]]:
    wl = scen["workload"]
    rec = build_record(
        scen["protocol"],
        nodes=wl["nodes"],
        topics=wl["topics"],
        subs=wl["subs"],
        popularity=wl["popularity"],
        seed=_seed(scen),
        params=_params(scen),
        diameter=bool(scen.get("diameter", True)),
    )
    row = {k: v for k, v in rec.items() if k not in ("protocol", "seed", "timings")}
    row.update(rec["timings"])
    row["warnings"] = "; ".join(rec["warnings"])
    return [row]


# --------------------------------------------------------------------------- run
def _settings(scen: Mapping[str, Any]) -> dict[str, Any]:
    opts = dict(scen.get("run") or {})
    out = {k: opts.get(k) for k in RUN_SETTINGS if opts.get(k) is not None}
    if scen.get("latency") is not None:
        out["latency"] = scen["latency"]
    return out


def _check_run(scen: Mapping[str, Any]) -> None:
    opts = scen.get("run") or {}
    check_run(
        scen["protocol"],
        opts["name"],
        params=_params(scen),
        forwarding=opts.get("forwarding"),
        **_settings(scen),
    )


def _run_epochs(scen: Mapping[str, Any]) -> list[dict[str, Any]]:
    opts = scen["run"]
    res = simulate(
        scen["protocol"],
        opts["name"],
        seed=_seed(scen),
        params=_params(scen),
        forwarding=opts.get("forwarding"),
        **_settings(scen),
    )
    fp = res.world.fingerprint()
    rows = [dict(r, world=fp) for r in res.rows]
    shape = structure(res.overlay, res.world, diameter=bool(scen.get("diameter", True)))
    rows[-1].update({k: v for k, v in shape.items() if k not in rows[-1]})
    control = res.stats.get("control_messages")
    rows[-1]["control_messages"] = None if control is None else int(control)
    return rows


# --------------------------------------------------------------------------- churn
def _check_churn(scen: Mapping[str, Any]) -> None:
    _check_protocol(scen, "maintained")
    if float(_params(scen).get("membership", 1.0)) != 1.0:
        raise ParameterError("churn runs use full membership (section 3.8)", key="membership")


def _run_events(scen: Mapping[str, Any], opts: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``churn.scenario``: a named churn scenario, one row per event (OMen's churn rounds)."""
    from hedgerow.scenarios.events import load_churn_scenario, run_events

    inst, online0, events = load_churn_scenario(opts["scenario"], seed=_seed(scen))
    res = run_events(
        scen["protocol"], inst, online0, events, seed=_seed(scen), params=_params(scen),
        n_events=opts.get("events"), timeout=float(_churn_opt(opts, "timeout")),
    )
    fp = instance_fingerprint(inst, seed=_seed(scen))
    out = []
    for row in res.rows:
        r = {"epoch": int(row["event"]), **row, "world": fp}
        r["start_max_degree"] = res.summary["start_max_degree"]
        r["start_avg_degree"] = res.summary["start_avg_degree"]
        out.append(r)
    return out


def _run_churn(scen: Mapping[str, Any]) -> list[dict[str, Any]]:
    from hedgerow.scenarios.churn import run_churn

    opts = dict(scen["churn"])
    if opts.get("scenario"):
        return _run_events(scen, opts)
    inst = _workload(scen)
    res = run_churn(
        scen["protocol"],
        inst,
        lifetime=float(opts["lifetime"]),
        duration=float(_churn_opt(opts, "duration")),
        snapshot_every=float(_churn_opt(opts, "snapshot_every")),
        off_ratio=float(_churn_opt(opts, "off_ratio")),
        timeout=float(_churn_opt(opts, "timeout")),
        seed=_seed(scen),
        params=_params(scen),
        diameter=bool(scen.get("diameter", True)),
    )
    fp = instance_fingerprint(inst, seed=_seed(scen))
    rows = []
    for i, row in enumerate(res.rows):
        out = {"epoch": i, **row, "world": fp}
        for k in ("join_seconds_median", "join_seconds_p99", "connected_snapshots"):
            out[k] = res.summary[k]
        rows.append(out)
    return rows


# --------------------------------------------------------------------------- optimum
def _check_optimum(scen: Mapping[str, Any]) -> None:
    if scen["protocol"] != "goldfish":
        raise ParameterError("kind optimum (Goldfish Fig. 2) runs protocol goldfish only",
                             key="protocol")
    _check_run(scen)


def _run_optimum(scen: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One Fig. 2 graph (:func:`hedgerow.scenarios.optimum.fig2_graph`): one row."""
    from hedgerow.scenarios.optimum import fig2_graph

    opts = dict(scen.get("run") or {})
    row = fig2_graph(
        _seed(scen),
        pool=opts.get("adaptive_pool") or "non-publishers",
        epochs=int(opts.get("epochs") or 300),
        params=_params(scen),
        scenario=opts.get("name") or "goldfish-random",
    )
    return [row]


#: kind name -> Kind
KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("build", None, _check_build, _run_build),
        Kind("run", None, _check_run, _run_epochs),
        Kind("churn", "maintained", _check_churn, _run_churn),
        Kind("optimum", None, _check_optimum, _run_optimum),
    )
}
