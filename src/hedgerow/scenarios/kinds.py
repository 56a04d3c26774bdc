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
                  cycle        one per sample of a named cycle scenario (``vitis-flash-crowd``)
``optimum``       goldfish     one: Goldfish V-B Fig. 2's flags for one graph
================  ===========  ==============================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hedgerow.errors import ParameterError
from hedgerow.protocols import get_protocol, protocol_class
from hedgerow.scenarios.run import check_run, simulate, structure
from hedgerow.scenarios.static import build_record
from hedgerow.world_settings import settings_in

__all__ = ["KINDS", "Kind"]

#: ``scenario.run`` keys that override the named scenario: the ``run`` section of the
#: world settings (``latency`` is read from ``scenario.latency``)
RUN_SETTINGS = tuple(k for k in settings_in("run") if k != "latency")


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
    """The protocol runs under churn (maintained or cycle); its parameters are valid."""
    from hedgerow.scenarios.churn_drivers import churn_shape
    from hedgerow.scenarios.churn_wire import wire_settings

    shape = churn_shape(scen["protocol"])
    _check_protocol(scen, shape)
    wire_settings(dict(scen.get("churn") or {}))  # the network's written forms, before any run
    if shape == "maintained" and float(_params(scen).get("membership", 1.0)) != 1.0:
        raise ParameterError("churn runs use full membership (section 3.8)", key="membership")


def _run_churn(scen: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per snapshot, event or sample: the driver of the protocol's capability."""
    from hedgerow.scenarios.churn_drivers import ChurnRequest, run_churn_request

    out = run_churn_request(scen["protocol"], ChurnRequest.from_spec(scen), seed=_seed(scen),
                            params=_params(scen))
    return out.rows


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
        # maintained or cycle: the churn driver is chosen by the protocol's capability
        # (hedgerow.scenarios.churn_drivers.CHURN_DRIVERS)
        Kind("churn", None, _check_churn, _run_churn),
        Kind("optimum", None, _check_optimum, _run_optimum),
    )
}
