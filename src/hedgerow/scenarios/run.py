"""Run any registered protocol on a named scenario, and put several side by side.

:func:`simulate` is ``hedgerow run``: one protocol on one world, a row per
epoch.  :func:`compare` is ``hedgerow compare``: several protocols on the
*same* world (one seed, one fingerprint), a row per protocol with the
structure, delivery and cost metrics of every overlay.

A protocol runs with the values its scenario states for it
(``Scenario.protocol_params``, :func:`~hedgerow.scenarios.world.protocol_params`)
and the caller's ``params``; a value given twice (a world setting and the
parameter it is bound to) is an error naming both.  Every row carries
``params``, the parameter values the protocol actually ran with (and, for an
adaptive protocol, ``out_degree`` and ``in_limit``, what its parameters amount
to: Perigee's preset included).

Examples
--------
>>> rows = run_scenario("random-graph", "cities", topics=10, messages=50)
>>> len(rows), rows[0]["epoch"]
(1, 0)
>>> table = compare(["ringpt", "random-graph"], "cities", topics=10, messages=50)
>>> [r["protocol"] for r in table], table[0]["world"] == table[1]["world"]
(['ringpt', 'random-graph'], True)
>>> table[1]["params"]["d"]  # random-graph runs with the scenario's degree budget
5
>>> run_scenario("topiary", "moon")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
hedgerow.errors.ParameterError: unknown scenario 'moon'; allowed: cities, ...
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.metrics import overlay_summary
from hedgerow.metrics.routing import ROUTING_KEYS
from hedgerow.model.overlay import Overlay
from hedgerow.params import as_instance, as_int, as_mapping, as_names
from hedgerow.protocols import get_protocol
from hedgerow.protocols.base import AdaptiveProtocol, OverlayProtocol
from hedgerow.scenarios.epochs import RunResult, forwarding_policy, run_protocol
from hedgerow.scenarios.observers import BYTES_KEYS, CLOCK_KEYS, EpochObserver
from hedgerow.scenarios.routing import ROUTING_EXTRA
from hedgerow.scenarios.tracing import TraceObserver, Tracer
from hedgerow.scenarios.world import (
    World,
    check_bound_settings,
    make_world,
    protocol_params,
    resolve_scenario,
)
from hedgerow.trace import TraceWriter

__all__ = [
    "BROADCAST_KEYS",
    "COMPARE_KEYS",
    "check_run",
    "compare",
    "make_protocol",
    "ran_with",
    "run_scenario",
    "simulate",
]

#: the columns of a head-to-head row, in order
COMPARE_KEYS = (
    "protocol",
    "world",
    "avg_degree",
    "max_degree",
    "partitioned_topics",
    "topic_components",
    "max_topic_diameter",
    "max_topic_overlay_diameter",
    "receive_rate",
    "delay_mean_ms",
    "delay_p50_ms",
    "delay_p90_ms",
    "delay_p99_ms",
    "hops_mean",
    "relay_share",
    "duplicates_per_message",
    "control_messages",
    "epochs",
)


#: the extra columns of a head-to-head row on a broadcast world (last epoch)
BROADCAST_KEYS = (
    "wasted_latency_mean_ms",
    "wasted_latency_p25_ms",
    "wasted_latency_p50_ms",
    "wasted_latency_p75_ms",
    "t50_ms",
    "t90_ms",
    "t99_ms",
    "t50_weight_ms",
    "t90_weight_ms",
    "duplicates_per_node",
)
#: keys of the last epoch a comparison row carries when the world has churn or fast relays
BEYOND_KEYS = (
    "online_nodes",
    "churn_drops_per_node",
    "churn_dials_per_node",
    "dials_per_node",
    "drops_per_node",
    "dead_peers_selected",
    "honest_exploit_peer_share",
    "attacker_exploit_share",
    "withholding_attackers",
    "attacker_tenures",
    "attacker_tenure_mean_epochs",
    "attacker_tenure_p90_epochs",
    "attacker_tenure_max_epochs",
)


def ran_with(proto: OverlayProtocol) -> dict[str, Any]:
    """What a row records of the protocol: ``params`` (the checked values it ran with) and,
    for an adaptive protocol, ``out_degree`` and ``in_limit`` (its effective budgets).

    Examples
    --------
    >>> from hedgerow.protocols import get_protocol
    >>> r = ran_with(get_protocol("perigee", preset="goldfish"))
    >>> r["params"]["preset"], r["out_degree"], r["in_limit"]
    ('goldfish', 4, 8)
    """
    out: dict[str, Any] = {"params": proto.checked()}
    if isinstance(proto, AdaptiveProtocol):
        out["out_degree"] = int(proto.out_degree())
        out["in_limit"] = int(proto.incoming_limit())
    return out


def make_protocol(
    name: str, world: World, params: Mapping[str, Any] | None = None
) -> OverlayProtocol:
    """Protocol ``name`` with the values the world's scenario states for it, then ``params``.

    The parameters are validated against the world's instance; the error names
    the protocol and the parameter (a value given twice names both).
    """
    proto = get_protocol(name, **protocol_params(world.scenario, name, params))
    proto._validate(world.instance)
    return proto


def check_run(
    protocol: str,
    scenario: str,
    *,
    params: Mapping[str, Any] | None = None,
    forwarding: str | None = None,
    alone: bool = True,
    **settings: Any,
) -> None:
    """Validate a run's names, settings, forwarding and parameters without building its world.

    ``alone``: the protocol runs by itself, so a setting the scenario hands only to
    other protocols is an error (:func:`~hedgerow.scenarios.world.check_bound_settings`;
    :func:`compare` checks its protocols together).
    """
    sc = resolve_scenario(scenario, **settings)
    if alone:
        check_bound_settings(sc, [protocol])
    proto = get_protocol(protocol, **protocol_params(sc, protocol, params))
    forwarding_policy(proto, forwarding)  # the instance: a parameter may set its policy
    values = proto.checked()
    if sc.nodes and "d" in values and values["d"] >= sc.nodes:
        raise ParameterError(
            f"{protocol}: parameter d must be below the number of nodes ({sc.nodes}),"
            f" got {values['d']}",
            key="d",
        )


def simulate(
    protocol: str,
    scenario: str,
    *,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    forwarding: str | None = None,
    on_epoch: Callable[[dict[str, Any]], None] | None = None,
    trace: str | Path | None = None,
    trace_sample: int | None = None,
    trace_epochs: str = "last",
    **settings: Any,
) -> RunResult:
    """Run ``protocol`` on the named ``scenario``: rows, scores and final overlay.

    ``settings`` override the scenario (any setting of the ``run`` section of
    :data:`~hedgerow.scenarios.world.WORLD_SETTINGS`); ``params`` are the
    protocol's.  Every row carries :func:`ran_with` (``params`` ...).  With ``trace``
    (a Parquet file), every copy of ``trace_sample`` messages (all when ``None``) of the last
    epoch (``trace_epochs="all"``: of every epoch) is written there
    (:mod:`hedgerow.trace`; rows unchanged).
    """
    as_instance("simulate", "protocol", protocol, str)
    as_instance("simulate", "scenario", scenario, str)
    params = as_mapping("simulate", "params", params) or None
    sc = resolve_scenario(scenario, **settings)
    check_bound_settings(sc, [protocol])
    protocol_params(sc, protocol, params)  # a value given twice fails before the world is made
    world = make_world(sc, seed=seed)
    proto = make_protocol(protocol, world, params)
    record = ran_with(proto)

    def stamp(row: dict[str, Any]) -> None:
        row.update(record)
        if on_epoch is not None:
            on_epoch(row)

    tracer = _tracer(trace, trace_sample, trace_epochs)
    with _tracing(tracer, world):
        res = run_protocol(proto, world, forwarding=forwarding, on_epoch=stamp,
                           observers=_trace_observers(tracer))
    for row in res.rows:
        row.update(record)
    return res


def _tracer(trace: str | Path | None, sample: int | None, epochs: str) -> Tracer | None:
    """The run's :class:`Tracer` (its file's folder checked before any work), or ``None``."""
    if trace is None:
        return None
    if epochs not in ("last", "all"):
        raise ParameterError(f"trace_epochs must be last or all, got {epochs!r}",
                             key="trace_epochs")
    if sample is not None:
        sample = as_int("trace", "trace_sample", sample, minimum=1)
    return Tracer(TraceWriter(trace), sample=sample, epochs=epochs)


def _trace_observers(tracer: Tracer | None) -> list[EpochObserver]:
    # TraceObserver is an epoch observer by duck type (the tracing module imports no observer)
    return [] if tracer is None else [cast(EpochObserver, TraceObserver(tracer))]


@contextmanager
def _tracing(tracer: Tracer | None, world: World) -> Iterator[None]:
    """Close the trace when the runs end, or leave no file behind when one fails."""
    if tracer is None:
        yield
        return
    try:
        yield
    except BaseException:
        tracer.writer.abort()
        raise
    tracer.close(world)


def run_scenario(protocol: str, scenario: str, **kwargs: Any) -> list[dict[str, Any]]:
    """The rows of :func:`simulate` (one JSON-serialisable dict per epoch)."""
    return simulate(protocol, scenario, **kwargs).rows


def structure(overlay: Overlay, world: World, *, diameter: bool = True) -> dict[str, Any]:
    """Structure metrics of an overlay on its undirected closure (links carry traffic both ways)."""
    closure = overlay
    if overlay.directed:
        closure = Overlay.from_edges(overlay.n_nodes, overlay.edges(), directed=False)
    return overlay_summary(closure, world.instance, diameter=diameter)


def compare(
    protocols: list[str],
    scenario: str,
    *,
    seed: int = 0,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    forwarding: str | None = None,
    diameter: bool = True,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    trace: str | Path | None = None,
    trace_sample: int | None = None,
    trace_epochs: str = "last",
    **settings: Any,
) -> list[dict[str, Any]]:
    """Run every protocol of ``protocols`` on one world; one row per protocol.

    Parameters
    ----------
    protocols : list of str
        Registered protocol names.
    scenario : str
        A scenario name (:data:`hedgerow.scenarios.SCENARIOS`).
    seed : int, default 0
        The world's seed (and each protocol's).
    params : dict, optional
        ``protocol name -> its parameters``.
    forwarding : str, optional
        One dissemination policy for all (default: each protocol's own).
    diameter : bool, default True
        Compute the topic diameters.
    on_row : callable, optional
        Called with each row as soon as it is ready.
    trace : str or Path, optional
        A Parquet file receiving every copy of the protocols' last epoch
        (:mod:`hedgerow.trace`; one file for all, a ``protocol`` column apart); rows unchanged.
    trace_sample : int, optional
        Messages traced per epoch (all when ``None``): bounds a large run's trace.
    trace_epochs : {"last", "all"}, default "last"
        Which epochs are traced.
    **settings
        Scenario overrides (the ``run`` section of
        :data:`~hedgerow.scenarios.world.WORLD_SETTINGS`).

    Returns
    -------
    list of dict
        Keys :data:`COMPARE_KEYS` (``None`` where a metric does not apply),
        on a contended world the byte columns
        :data:`~hedgerow.scenarios.observers.BYTES_KEYS` of the last epoch,
        plus ``params`` (and ``out_degree``, ``in_limit``: :func:`ran_with`) and
        ``seconds`` (wall time of the protocol's run).
    """
    protocols = as_names("compare", "protocols", protocols)
    as_instance("compare", "scenario", scenario, str)
    if not protocols:
        raise ParameterError("compare needs at least one protocol", key="protocols")
    params = as_mapping("compare", "params", params)
    for name, given in params.items():
        as_mapping("compare", f"params[{name!r}]", given)
    for name in params:
        if name not in protocols:
            raise ParameterError(f"parameters given for {name!r}, which is not compared")
    for name in protocols:  # the instances: a parameter may set the policy (OPT's forward)
        check_run(name, scenario, params=params.get(name), forwarding=forwarding, alone=False,
                  **settings)
    sc = resolve_scenario(scenario, **settings)
    check_bound_settings(sc, protocols)
    tracer = _tracer(trace, trace_sample, trace_epochs)
    world = make_world(sc, seed=seed)
    with _tracing(tracer, world):
        return _compare_rows(protocols, world, params, forwarding, diameter, on_row, tracer)


def _compare_rows(
    protocols: list[str],
    world: World,
    params: Mapping[str, Mapping[str, Any]],
    forwarding: str | None,
    diameter: bool,
    on_row: Callable[[dict[str, Any]], None] | None,
    tracer: Tracer | None,
) -> list[dict[str, Any]]:
    fp = world.fingerprint()
    rows = []
    for name in protocols:
        proto = make_protocol(name, world, params.get(name))
        t0 = time.perf_counter()
        res = run_protocol(proto, world, forwarding=forwarding,
                           observers=_trace_observers(tracer))
        seconds = time.perf_counter() - t0
        last = res.rows[-1]
        shape = structure(res.overlay, world, diameter=diameter)
        row: dict[str, Any] = {"protocol": name, "world": fp}
        for key in COMPARE_KEYS[2:]:
            row[key] = last.get(key, shape.get(key))
        if world.publisher_probs is not None:
            for key in BROADCAST_KEYS:
                row[key] = last.get(key)
        control = res.stats.get("control_messages")
        row["control_messages"] = None if control is None else int(control)
        if world.contended:
            for key in BYTES_KEYS:
                row[key] = last.get(key)
        for key in (*ROUTING_KEYS, *ROUTING_EXTRA, *BEYOND_KEYS, *CLOCK_KEYS):
            if key in last:
                row[key] = last[key]
        row["epochs"] = len(res.rows)
        row.update(ran_with(proto))
        row["seconds"] = round(seconds, 3)
        for k, v in row.items():
            if isinstance(v, np.generic):
                row[k] = v.item()
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows
