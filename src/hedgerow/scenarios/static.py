"""Build one overlay on a workload and measure it: the one record of ``hedgerow build``
and of a ``kind: build`` sweep row.

:func:`build` is the Python API for any registered protocol: a static
protocol builds on the instance; an adaptive one runs its epochs on a world
made around the instance (:func:`~hedgerow.scenarios.world.world_for_instance`)
and returns its final overlay.

A result that breaks the protocol's own promise is flagged, not hidden
(:func:`promise_warnings`): a build stopped at ``max_rounds`` before
quiescence, or a protocol that claims topic connectivity leaving topics
partitioned (with the setting that helps).

Examples
--------
>>> from hedgerow.workloads import make_instance
>>> inst = make_instance(nodes=100, topics=10, subs=3, seed=1)
>>> ov, stats = build("ringpt", inst)
>>> ov.is_symmetric(), stats["control_messages"]
(True, 0)
>>> r = build_record("ringpt", nodes=100, topics=10, subs="3", popularity="rss", seed=1)
>>> r["protocol"], r["partitioned_topics"], r["warnings"]
('ringpt', 0, [])
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, cast

from hedgerow.errors import ParameterError
from hedgerow.metrics import overlay_summary
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.params import as_int
from hedgerow.protocols import get_protocol
from hedgerow.protocols.base import AdaptiveProtocol, OverlayProtocol, StaticProtocol
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.world import instance_fingerprint, world_for_instance
from hedgerow.workloads import make_instance

__all__ = ["build", "build_record", "promise_warnings"]


def build(
    name: str,
    instance: Instance,
    *,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
    epochs: int = 150,
    messages: int = 1000,
) -> tuple[Overlay, dict[str, Any]]:
    """Build protocol ``name`` on ``instance``; returns ``(overlay, stats)``.

    Parameters
    ----------
    name : str
        Any registered protocol.
    instance : Instance
        The subscriptions.
    seed : int, default 0
        The run's seed.
    params : dict, optional
        The protocol's parameters.
    progress : callable, optional
        ``progress(done, total)`` while a static build runs.
    epochs, messages : int, default 150, 1000
        An adaptive protocol's epochs and messages per epoch (Topiary V-A), on a
        unit-square network around ``instance``.
    """
    seed = as_int("build", "seed", seed, minimum=0)
    if not isinstance(instance, Instance):
        raise ParameterError(
            f"build: instance must be a hedgerow Instance, got {type(instance).__name__}"
        )
    if params is not None and not isinstance(params, Mapping):
        raise ParameterError(f"build: params must be a mapping, got {type(params).__name__}")
    proto = get_protocol(name, **dict(params or {}))
    return _build(proto, instance, seed, progress, epochs=epochs, messages=messages)


def _build(
    proto: OverlayProtocol,
    instance: Instance,
    seed: int,
    progress: Callable[[int, int], None] | None,
    *,
    epochs: int = 150,
    messages: int = 1000,
) -> tuple[Overlay, dict[str, Any]]:
    if isinstance(proto, StaticProtocol):
        overlay = proto.build(instance, seed=seed, progress=progress)
        return overlay, dict(proto.stats_)
    if isinstance(proto, AdaptiveProtocol):
        world = world_for_instance(instance, seed=seed, epochs=epochs, messages=messages)
        res = run_protocol(proto, world)
        last = res.rows[-1]
        stats = {
            "epochs": len(res.rows),
            "receive_rate": last["receive_rate"],
            "delay_mean_ms": last["delay_mean_ms"],
        }
        return res.overlay, stats
    raise ParameterError(f"{proto.name} can neither build nor adapt an overlay")  # pragma: no cover


def promise_warnings(proto: OverlayProtocol, record: Mapping[str, Any]) -> list[str]:
    """One-line warnings where a run broke the protocol's own promise."""
    out = []
    if record.get("quiescent") is False:
        out.append(
            f"{proto.name}: the build stopped at max_rounds before quiescence; raise -p max_rounds"
        )
    if proto.claims_topic_connected and record.get("partitioned_topics", 0):
        hint = f"; try {proto.connectivity_hint}" if proto.connectivity_hint else ""
        if record.get("quiescent") is False:
            hint = " (the build did not finish)"
        out.append(
            f"{proto.name}: {record['partitioned_topics']} topics partitioned although the "
            f"protocol claims topic connectivity{hint}"
        )
    return out


def build_record(
    protocol: str,
    *,
    nodes: int | None,
    topics: int | None,
    subs: Any = 10,
    popularity: str = "rss",
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    diameter: bool = True,
    progress: Callable[[int, int], None] | None = None,
    instance: Instance | None = None,
) -> dict[str, Any]:
    """Build ``protocol`` on a synthetic workload and return the flat record.

    Keys: ``protocol, params, nodes, topics, subs, popularity, seed``, the
    :func:`~hedgerow.metrics.overlay_summary` metrics, ``control_messages``,
    ``messages`` (by kind), ``quiescent``, ``warnings`` and ``timings``
    (``build_seconds``; the only key that differs between two runs of one seed).
    ``instance``, when given, replaces the synthetic workload (e.g. a social sample).
    """
    seed = as_int("build", "seed", seed, minimum=0)
    proto = get_protocol(protocol, **dict(params or {}))
    proto.check_params()
    if instance is not None:
        inst = instance
    else:
        # make_instance refuses a missing nodes or topics itself (ParameterError)
        inst = make_instance(nodes=cast(int, nodes), topics=cast(int, topics), subs=subs,
                             popularity=popularity, seed=seed)
    t0 = time.perf_counter()
    overlay, stats = _build(proto, inst, seed, progress)
    seconds = time.perf_counter() - t0
    measured = overlay
    if overlay.directed:
        measured = Overlay.from_edges(overlay.n_nodes, overlay.edges(), directed=False)
    record: dict[str, Any] = {
        "protocol": protocol,
        "params": proto.checked(),
        "nodes": inst.n_nodes,
        "topics": inst.n_topics,
        "subs": inst.meta.get("subs", "social"),
        "popularity": popularity if instance is None else inst.meta.get("popularity", "social"),
        "seed": seed,
        "world": instance_fingerprint(inst, seed=seed),
        **overlay_summary(measured, inst, diameter=diameter),
        "control_messages": int(stats.get("control_messages", 0)),
        "messages": dict(stats.get("messages", {})),
        "quiescent": bool(stats.get("quiescent", True)),
    }
    for k, v in stats.items():
        if k not in ("control_messages", "messages", "quiescent") and k not in record:
            record[f"stat_{k}"] = v
    record["warnings"] = promise_warnings(proto, record)
    record["timings"] = {"build_seconds": round(seconds, 4)}
    return record
