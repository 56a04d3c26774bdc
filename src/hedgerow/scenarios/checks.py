"""Conformance checks for every registered protocol, grouped by capability.

scikit-learn's ``check_estimator`` lesson: the checks are a library, run by
the test suite over the whole registry (``tests/scenarios/test_checks.py``)
and usable on a protocol under development, built in or in its own package;
its public face is :mod:`hedgerow.testing`::

    from hedgerow.testing import check_protocol
    check_protocol("spidercast")          # raises AssertionError naming the failed check

Each check is a function of a protocol class; :func:`protocol_checks` lists
those that apply to it (by its declared capabilities).  Checks use the
class's ``quick_params`` and small worlds so the whole suite stays fast.

=================  ============================================================
capability         checks
=================  ============================================================
every protocol     parameters: declared, defaults valid, round trip, clone,
                   unknown names refused, every invalid value refused with a
                   one-line ``ParameterError`` naming the parameter
static             builds from quick parameters; same seed, same overlay; no
                   self-loop or unknown node; symmetric when undirected;
                   declared degree bound; topic connectivity where claimed;
                   link topics (``link_topics_``) that name overlay links, where
                   declared (``labels_links``, required by ``"mesh"``);
                   runs through the epoch loop (one row); every numeric build
                   statistic a declared metric (``metrics``)
every capability   one run on a bandwidth-limited world (:data:`LIMITED_WIRE`):
                   the byte columns in every row; bytes sent = received +
                   lost, each copy its message's size; control bytes sent =
                   received (the protocol's control traffic on the wire); no
                   uplink busy longer than the run; no negative queueing
adaptive           out-degree <= d after every epoch; never a link to itself
                   or an unknown node; same seed, identical epochs
maintained         after churn stops: symmetric links, no link to an offline
                   node, counts consistent with a recount; topic-connected
                   where claimed, once the overlay settled
clock              the engine is a ``ClockEngine``; same seed, identical
                   arrivals, control counts and bytes; after every heartbeat
                   the bounds the protocol declares hold
                   (``heartbeat_bounds``); every first copy came from a
                   connected peer and every data link is a connection; counts
                   consistent with a recount (copies = deliveries +
                   duplicates + lost; bytes sent = received + lost, payload
                   and control)
cycle              the engine is a ``CycleEngine``; joins come online and get
                   links, leaves go offline; no self-loop, unknown node or
                   link to an offline node, in the overlay or the forwarding
                   links; online count equal to a recount of the control;
                   same seed, same state after k cycles
=================  ============================================================
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, cast

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.metrics import partitioned_topics, topic_components
from hedgerow.metrics.registry import METRICS
from hedgerow.model.overlay import Overlay
from hedgerow.protocols import REGISTRY, protocol_class
from hedgerow.protocols.base import (
    AdaptiveProtocol,
    ClockProtocol,
    CycleProtocol,
    MaintainedProtocol,
    OverlayProtocol,
    StaticProtocol,
)
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.world import world_for_instance
from hedgerow.workloads import make_instance

__all__ = ["as_protocol_class", "check_protocol", "protocol_checks"]

Check = Callable[[type[OverlayProtocol]], None]

#: a protocol name as the command line takes it (``--protocols a,b``, ``-p name.key=value``)
_NAME = re.compile(r"[a-z][a-z0-9_-]*")


def _quick(cls: type[OverlayProtocol], **extra: Any) -> OverlayProtocol:
    return cls(**{**cls.quick_params, **extra})


def _instance(seed: int = 3):
    return make_instance(nodes=60, topics=8, subs="2:3", popularity="rss", seed=seed)


@contextmanager
def _registered(cls: type[OverlayProtocol]) -> Iterator[None]:
    """``cls`` registered under its name while a check runs the protocol by name.

    A protocol under development (or a configured instance's class) need not be
    registered yet; the previous entry, if any, comes back afterwards.
    """
    before = REGISTRY[cls.name] if cls.name in REGISTRY else None
    REGISTRY[cls.name] = cls
    try:
        yield
    finally:
        if before is None:
            del REGISTRY[cls.name]
        else:
            REGISTRY[cls.name] = before


# --------------------------------------------------------------------------- every protocol
def check_declared_params(cls: type[OverlayProtocol]) -> None:
    """A usable name and a paper; every parameter declared with a doc line; defaults and quick
    values valid."""
    assert isinstance(cls.name, str) and _NAME.fullmatch(cls.name), (
        f"{cls.__name__}: name {cls.name!r} is not a protocol name (lower-case letters, digits,"
        " '-', '_', starting with a letter)"
    )
    if cls.name in REGISTRY:
        assert issubclass(cls, REGISTRY[cls.name]), (
            f"{cls.__name__}: the name {cls.name!r} is registered for another class"
        )
    assert cls.paper, f"{cls.name}: no paper cited"
    for k, p in cls.params.items():
        assert p.doc, f"{cls.name}: parameter {k} has no doc line"
        assert p.name == k, f"{cls.name}: parameter {k} bound as {p.name!r}"
    cls().checked()
    quick = _quick(cls)
    quick.checked()
    # the tags of the quick instance: a parameter may change them (OPT's forward)
    assert quick.forwarding != "mesh" or quick.labels_links, (
        f"{cls.name}: forwards by 'mesh' but does not label its links (labels_links)"
    )


def check_param_round_trip(cls: type[OverlayProtocol]) -> None:
    """get_params / set_params / clone round trip; unknown names refused."""
    proto = _quick(cls)
    clone = proto.clone()
    assert clone.get_params() == proto.get_params(), f"{cls.name}: clone changed parameters"
    assert set(proto.get_params()) == set(cls.params), f"{cls.name}: get_params != declared"
    try:
        proto.set_params(no_such_parameter=1)
    except ParameterError as e:
        assert "no_such_parameter" in str(e), f"{cls.name}: error does not name the parameter"
    else:
        raise AssertionError(f"{cls.name}: an unknown parameter was accepted")


def check_invalid_values(cls: type[OverlayProtocol]) -> None:
    """Every declared parameter refuses its invalid values with a one-line error naming it."""
    for k, p in cls.params.items():
        for bad in p.invalid_values():
            proto = _quick(cls, **{k: bad})
            try:
                proto.check_params()
            except ParameterError as e:
                text = str(e)
                assert "\n" not in text, f"{cls.name}.{k}={bad!r}: error is not one line"
                assert k in text, f"{cls.name}.{k}={bad!r}: error does not name {k}: {text}"
            else:
                raise AssertionError(f"{cls.name}: parameter {k} accepted invalid {bad!r}")


# --------------------------------------------------------------------------- static
def _overlay_ok(cls: type[OverlayProtocol], ov: Overlay, inst: Any, proto: Any) -> None:
    n = inst.n_nodes
    assert ov.n_nodes == n, f"{cls.name}: overlay has {ov.n_nodes} nodes, instance {n}"
    e = ov.edges()
    if len(e):
        assert (e[:, 0] != e[:, 1]).all(), f"{cls.name}: self-loop"
        assert e.min() >= 0 and e.max() < n, f"{cls.name}: link to an unknown node"
    assert ov.directed == cls.directed, f"{cls.name}: directed tag does not match the overlay"
    if not ov.directed:
        assert ov.is_symmetric(), f"{cls.name}: undirected overlay is not symmetric"
    bound = proto.degree_bound(inst)
    if bound is not None:
        assert (ov.degree() <= np.asarray(bound)).all(), f"{cls.name}: degree bound exceeded"


def check_static_build(cls: type[OverlayProtocol]) -> None:
    """Builds from quick parameters: valid overlay, deterministic, connected where claimed."""
    inst = _instance()
    # duck-typed like ``_overlay_ok``: a plugin's build sets ``link_topics_`` when it labels links
    a: Any = _quick(cls)
    b: Any = _quick(cls)
    ov = a.build(inst, seed=5)
    _overlay_ok(cls, ov, inst, a)
    again = b.build(inst, seed=5)
    assert np.array_equal(ov.edges(), again.edges()), f"{cls.name}: same seed, other overlay"
    if cls.claims_topic_connected:
        assert partitioned_topics(ov, inst) == 0, f"{cls.name}: claims connectivity, split topics"
    if a.labels_links:
        _link_topics_ok(cls, ov, inst, a.link_topics_)
        assert np.array_equal(a.link_topics_, b.link_topics_), (
            f"{cls.name}: same seed, other link topics"
        )


def check_build_statistics_declared(cls: type[OverlayProtocol]) -> None:
    """Each numeric statistic a build returns is a declared metric (``stat_<name>`` in a build
    row): in :data:`hedgerow.metrics.registry.METRICS` or the class's own ``metrics``."""
    proto: Any = _quick(cls)
    proto.build(_instance(), seed=5)
    known = {**METRICS, **cls.metrics}
    rest = ("control_messages", "messages", "quiescent")
    missing = sorted(
        f"stat_{k}" for k, v in proto.stats_.items()
        if k not in rest and isinstance(v, (int, float, np.number)) and f"stat_{k}" not in known
    )
    assert not missing, (
        f"{cls.name}: build statistics not declared as metrics: {', '.join(missing)} (declare "
        "them in the class attribute metrics, with hedgerow.metrics.registry.statistics)"
    )


def _link_topics_ok(cls: type[OverlayProtocol], ov: Overlay, inst: Any, lt: Any) -> None:
    lt = np.asarray(lt)
    assert lt.ndim == 2 and lt.shape[1] == 3 and lt.dtype == np.int64, (
        f"{cls.name}: link_topics_ is not a (k, 3) int64 array"
    )
    if not len(lt):
        return
    assert lt[:, 2].min() >= -1 and lt[:, 2].max() < inst.n_topics, (
        f"{cls.name}: link_topics_ names an unknown topic"
    )
    a = ov.csr()
    present = np.asarray(a[lt[:, 0], lt[:, 1]]).ravel() != 0
    if not ov.directed:
        present |= np.asarray(a[lt[:, 1], lt[:, 0]]).ravel() != 0
    assert present.all(), f"{cls.name}: link_topics_ names a link the overlay does not have"


def check_static_in_epoch_loop(cls: type[OverlayProtocol]) -> None:
    """A static protocol runs through the scenario's epoch loop as one epoch."""
    world = world_for_instance(_instance(), seed=2, messages=40, epochs=3)
    res = run_protocol(_quick(cls), world)
    assert len(res.rows) == 1, f"{cls.name}: a static protocol reported {len(res.rows)} epochs"
    assert 0.0 <= res.rows[0]["receive_rate"] <= 1.0


# --------------------------------------------------------------------------- adaptive
def check_adaptive_epochs(cls: type[OverlayProtocol]) -> None:
    """Out-degree <= d after every epoch, no self or unknown link, same seed same epochs."""
    world = world_for_instance(_instance(), seed=2, messages=40, epochs=4)
    proto = cast(AdaptiveProtocol, _quick(cls))
    d = proto.out_degree()
    outs: list[np.ndarray] = []

    class Spy(type(proto)):  # type: ignore[misc]  # a base known only at run time
        def select(self, *args: Any, **kw: Any):  # records the out-links every epoch selects
            new_out, score = super().select(*args, **kw)
            outs.append(np.array(new_out))
            return new_out, score

    spy = Spy(**proto.get_params())
    res = run_protocol(spy, world)
    assert len(res.rows) == 4 and len(outs) == 4, f"{cls.name}: wrong number of epochs"
    n = world.n_nodes
    for e, out in enumerate(outs):
        assert out.shape == (n, d), f"{cls.name}: epoch {e} out-link table shape {out.shape}"
        filled = out >= 0
        assert (out[filled] < n).all(), f"{cls.name}: epoch {e}: link to an unknown node"
        assert not (out == np.arange(n)[:, None]).any(), f"{cls.name}: epoch {e}: self link"
        for row in out:
            got = row[row >= 0]
            assert len(set(got.tolist())) == len(got), f"{cls.name}: epoch {e}: repeated link"
    again = run_protocol(_quick(cls), world)
    assert again.rows == res.rows, f"{cls.name}: same seed, different epochs"


# --------------------------------------------------------------------------- maintained
def check_maintained_churn(cls: type[OverlayProtocol]) -> None:
    """After churn stops the engine is consistent; connected where claimed once settled."""
    from hedgerow.protocols.checks_maintained import check_maintained
    from hedgerow.scenarios.churn import run_churn

    inst = make_instance(nodes=120, topics=12, subs="2:3", popularity="rss", seed=4)
    params = {k: v for k, v in cls.quick_params.items() if k != "membership"}
    with _registered(cls):
        res = run_churn(
            cls.name, inst, lifetime=15.0, duration=30.0, snapshot_every=15.0, seed=4,
            params=params,
        )
    engine = res.engine
    assert engine is not None, f"{cls.name}: the churn run kept no engine"
    engine.run_until(engine.sim.now + 500.0)
    problems = check_maintained(engine)
    assert not problems, f"{cls.name}: after churn: {problems[:3]}"
    if cls.claims_topic_connected:
        online = np.asarray(engine.online, dtype=bool)
        e = engine.overlay().edges()
        if len(e):
            e = e[online[e[:, 0]] & online[e[:, 1]]]
        live = Overlay.from_edges(engine.n, e)
        # offline nodes have no live link: components holding an online subscriber are
        # exactly the components among the online subscribers
        comps = topic_components(live, engine.subscriptions(), measured=online)
        split = int((comps > 1).sum())
        assert split == 0, f"{cls.name}: {split} topics split among online nodes after churn"


# --------------------------------------------------------------------------- bytes on the wire
#: the bandwidth-limited world of :func:`check_bandwidth_limited`: two classes, 16 KiB messages
#: published 50 per second, 2% of copies lost, control messages of 64 bytes + 18 per entry
LIMITED_WIRE: dict[str, Any] = {
    "bandwidth": "home:0.7:8:16,dc:0.3:100:100",
    "size": "16k",
    "publication": "poisson:50",
    "validation_ms": 1.0,
    "loss": 0.02,
    "control_size": 64.0,
}


def check_bandwidth_limited(cls: type[OverlayProtocol]) -> None:
    """One run on a bandwidth-limited world: rows carry the byte columns, bytes are conserved
    (sent = received + lost, every copy of its message's size; every control byte sent is
    received), uplinks busy at most the span.  The world sends control messages, so a
    protocol's ``control_traffic`` runs too."""
    from hedgerow.scenarios.observers import BYTES_KEYS, EpochObserver

    world = world_for_instance(_instance(), seed=2, messages=30, epochs=2, **LIMITED_WIRE)
    wires: list[Any] = []

    class Keep(EpochObserver):
        def observe(self, run: Any, ep: Any) -> dict[str, Any]:
            wires.append(ep.rec.wire)
            return {}

    with _registered(cls):
        res = run_protocol(_quick(cls), world, observers=[Keep()])
    assert res.rows, f"{cls.name}: no row on a bandwidth-limited world"
    for row in res.rows:
        missing = [k for k in BYTES_KEYS if k not in row]
        assert not missing, f"{cls.name}: byte columns missing: {missing[:3]}"
        assert row["receive_rate"] is None or 0.0 <= row["receive_rate"] <= 1.0
    for d in wires:
        sent = float(np.sum(d.copies * d.size))
        assert np.isclose(d.sent_bytes.sum(), sent), f"{cls.name}: bytes sent != copies x size"
        got = d.received_bytes.sum() + float(np.sum(d.lost * d.size))
        assert np.isclose(got, sent), f"{cls.name}: bytes received + lost != bytes sent"
        assert np.isclose(d.control_received_bytes.sum(), d.control_sent_bytes.sum()), (
            f"{cls.name}: control bytes received != control bytes sent"
        )
        first, last = d.span
        assert (d.uplink_busy <= (last - first) + 1e-6).all(), (
            f"{cls.name}: an uplink busy longer than the run"
        )
        assert (d.queue_delay >= 0).all(), f"{cls.name}: negative queueing"


# --------------------------------------------------------------------------- clock
def _clock_run(cls: type[OverlayProtocol], seed: int, *, check_bounds: bool) -> Any:
    """A clock engine on a 60-node instance, 30 messages of 2 KiB over 2 s after the warm-up,
    run heartbeat by heartbeat (the declared bounds checked after each when asked)."""
    from hedgerow.dissemination.contended import Network
    from hedgerow.protocols.engine_api import ClockEngine, Publications

    inst = _instance()
    world = world_for_instance(inst, seed=2, messages=30)
    proto = cast(ClockProtocol, _quick(cls))
    publisher, topic = next(world.traffic())
    warm = proto.warmup_time()
    when = warm + np.linspace(0.0, 2000.0, len(publisher))
    pubs = Publications.create(publisher, topic, when, 2048.0)
    net = Network.uniform(inst.n_nodes, upload=20.0, validation_ms=1.0)
    eng = proto.clock_engine(inst, net, world.latency, world.proc, pubs, proto.streams(seed))
    assert isinstance(eng, ClockEngine), f"{cls.name}: the engine is not a ClockEngine"
    end = float(when.max()) + proto.drain_time()
    k = 1
    while k * eng.heartbeat_ms <= end:
        eng.run_until(k * eng.heartbeat_ms)
        if check_bounds:
            broken = proto.heartbeat_bounds(eng)
            assert not broken, f"{cls.name}: after heartbeat {k}: {broken[0]}"
        k += 1
    # up to just before the next heartbeat: what the last one sent has arrived
    eng.run_until((k - 0.01) * eng.heartbeat_ms)
    assert eng.heartbeats == k - 1, f"{cls.name}: {eng.heartbeats} heartbeats, expected {k - 1}"
    return eng, pubs, inst


def check_clock_engine(cls: type[OverlayProtocol]) -> None:
    """Determinism, the declared bounds after every heartbeat, no message to a peer that is
    not connected, and counts that a recount confirms."""
    with _registered(cls):
        eng, _, inst = _clock_run(cls, 5, check_bounds=True)
        again, _, _ = _clock_run(cls, 5, check_bounds=False)
    d, d2 = eng.delivery(), again.delivery()
    assert np.array_equal(d.arrival, d2.arrival), f"{cls.name}: same seed, other arrivals"
    sent, sent2 = eng.control_sent(), again.control_sent()
    assert sent.keys() == sent2.keys() and all(
        np.array_equal(sent[k], sent2[k]) for k in sent), f"{cls.name}: same seed, other control"
    b, b2 = eng.byte_counters(), again.byte_counters()
    assert all(np.array_equal(b[k], b2[k]) for k in b), f"{cls.name}: same seed, other bytes"
    conn = eng.connections_overlay()
    links = {tuple(e) for e in np.asarray(conn.edges()).tolist()}
    links |= {(w, v) for v, w in links}
    m_idx, node = np.nonzero(d.parent >= 0)
    for m, w in zip(m_idx.tolist(), node.tolist(), strict=True):
        assert (int(d.parent[m, w]), w) in links, (
            f"{cls.name}: message {m} reached {w} from {d.parent[m, w]}, not a connection")
    for u, v, _t in np.asarray(eng.link_topics()).tolist():
        assert (u, v) in links, f"{cls.name}: a data link {u}-{v} that is not a connection"
    # recounts: every copy is a first delivery, a duplicate or lost (the run drained, and
    # nothing was sent since the last heartbeat)
    got = np.isfinite(d.arrival).sum(axis=1) - 1  # the publisher has it without a copy
    assert np.array_equal(d.copies, got + d.duplicates + d.lost), (
        f"{cls.name}: copies != deliveries + duplicates + lost")
    assert np.isclose(d.sent_bytes.sum(), float(np.sum(d.copies * d.size))), (
        f"{cls.name}: payload bytes sent != copies x size")
    assert np.isclose(d.received_bytes.sum() + float(np.sum(d.lost * d.size)),
                      d.sent_bytes.sum()), f"{cls.name}: payload received + lost != sent"
    assert np.isclose(b["control_received"].sum() + b["control_lost"].sum(),
                      b["control_sent"].sum()), f"{cls.name}: control received + lost != sent"
    for k, v in sent.items():
        assert (np.asarray(v) >= 0).all() and len(v) == inst.n_nodes, (
            f"{cls.name}: control counts of {k} are not one count per node")


# --------------------------------------------------------------------------- cycle
def _cycle_links_ok(cls: type[OverlayProtocol], eng: Any, n_topics: int, when: str) -> None:
    online = np.asarray(eng.online, dtype=bool)
    n = eng.n
    e = eng.overlay().edges()
    if len(e):
        assert (e[:, 0] != e[:, 1]).all(), f"{cls.name}: {when}: self-loop"
        assert e.min() >= 0 and e.max() < n, f"{cls.name}: {when}: link to an unknown node"
        assert online[e].all(), f"{cls.name}: {when}: link to an offline node"
    lt = np.asarray(eng.link_topics())
    assert lt.ndim == 2 and lt.shape[1] == 3 and lt.dtype == np.int64, (
        f"{cls.name}: {when}: link_topics() is not a (k, 3) int64 array")
    if len(lt):
        assert (lt[:, 0] != lt[:, 1]).all(), f"{cls.name}: {when}: forwarding self-loop"
        assert lt[:, :2].min() >= 0 and lt[:, :2].max() < n, (
            f"{cls.name}: {when}: forwarding link to an unknown node")
        assert online[lt[:, :2]].all(), f"{cls.name}: {when}: forwarding link to an offline node"
        assert lt[:, 2].min() >= -1 and lt[:, 2].max() < n_topics, (
            f"{cls.name}: {when}: forwarding link of an unknown topic")
    ring = float(eng.ring_correct())
    assert 0.0 <= ring <= 1.0, f"{cls.name}: {when}: ring_correct {ring} outside [0, 1]"


def _cycle_run(cls: type[OverlayProtocol], inst: Any, seed: int, k: int = 6) -> Any:
    """The scripted churn of :func:`check_cycle_engine`; returns the engine and its states."""
    from hedgerow.protocols.engine_api import CycleEngine

    n = inst.n_nodes
    proto = _quick(cls)
    assert isinstance(proto, CycleProtocol), f"{cls.name}: not a CycleProtocol"
    eng = proto.cycle_engine(inst, proto.streams(seed))
    assert isinstance(eng, CycleEngine), f"{cls.name}: cycle_engine() is not a CycleEngine"
    assert eng.n == n, f"{cls.name}: engine has {eng.n} nodes, instance {n}"
    on = np.arange(n) % 5 != 0
    eng.start(on)
    assert np.array_equal(eng.online, on), f"{cls.name}: start() did not set who is online"
    states = []
    for _ in range(k):
        eng.cycle()
    _cycle_links_ok(cls, eng, inst.n_topics, f"after {k} cycles")
    states.append((eng.overlay().edges(), np.asarray(eng.link_topics())))
    leavers = np.flatnonzero(on)[:: 6]
    eng.leave(leavers)
    on[leavers] = False
    assert not eng.online[leavers].any(), f"{cls.name}: leave() left nodes online"
    eng.cycle()
    _cycle_links_ok(cls, eng, inst.n_topics, "after leaves")
    joiners = np.flatnonzero(~on)[:6]
    eng.join(joiners)
    on[joiners] = True
    assert eng.online[joiners].all(), f"{cls.name}: join() did not bring nodes online"
    for _ in range(k):
        eng.cycle()
    _cycle_links_ok(cls, eng, inst.n_topics, "after joins")
    assert int(eng.online.sum()) == int(on.sum()), (
        f"{cls.name}: {int(eng.online.sum())} nodes online, the control says {int(on.sum())}")
    e = eng.overlay().edges()
    linked = np.zeros(n, bool)
    if len(e):
        linked[e.ravel()] = True
    assert linked[joiners].all(), f"{cls.name}: a joined node has no link after {k} cycles"
    states.append((e, np.asarray(eng.link_topics())))
    return states


def check_cycle_engine(cls: type[OverlayProtocol]) -> None:
    """Joins, leaves and cycles keep a valid overlay; same seed, same state after k cycles."""
    inst = make_instance(nodes=80, topics=10, subs="2:4", popularity="rss", seed=6)
    a = _cycle_run(cls, inst, seed=5)
    b = _cycle_run(cls, inst, seed=5)
    for (ea, la), (eb, lb) in zip(a, b, strict=True):
        assert np.array_equal(ea, eb) and np.array_equal(la, lb), (
            f"{cls.name}: same seed, other state after the same cycles")


# --------------------------------------------------------------------------- registry
_EVERY: tuple[Check, ...] = (check_declared_params, check_param_round_trip, check_invalid_values)
_BY_CAPABILITY: dict[type, tuple[Check, ...]] = {
    StaticProtocol: (check_static_build, check_build_statistics_declared,
                     check_static_in_epoch_loop, check_bandwidth_limited),
    AdaptiveProtocol: (check_adaptive_epochs, check_bandwidth_limited),
    MaintainedProtocol: (check_maintained_churn, check_bandwidth_limited),
    CycleProtocol: (check_cycle_engine,),
    ClockProtocol: (check_clock_engine, check_bandwidth_limited),
}


def protocol_checks(cls: type[OverlayProtocol]) -> Iterator[Check]:
    """The checks that apply to ``cls`` (every protocol's, then each capability's; a check
    two capabilities share runs once)."""
    seen: set[Check] = set()
    for check in (*_EVERY, *(c for base, checks in _BY_CAPABILITY.items()
                             if issubclass(cls, base) for c in checks)):
        if check not in seen:
            seen.add(check)
            yield check


def as_protocol_class(protocol: Any) -> type[OverlayProtocol]:
    """The class the checks run on: a registered name, a protocol class, or an instance.

    An instance is checked with its own parameter values: the class returned
    derives from the instance's and takes them as its ``quick_params``.

    Raises :class:`ParameterError` for an unknown name or an object that is no protocol.

    Examples
    --------
    >>> from hedgerow.protocols import get_protocol
    >>> as_protocol_class("ringpt").name
    'ringpt'
    >>> as_protocol_class(get_protocol("spidercast", kg=2)).quick_params["kg"]
    2
    """
    if isinstance(protocol, str):
        return protocol_class(protocol)
    if isinstance(protocol, type) and issubclass(protocol, OverlayProtocol):
        return protocol
    if isinstance(protocol, OverlayProtocol):
        cls = type(protocol)
        return type(
            cls.__name__,
            (cls,),
            {"quick_params": protocol.get_params(), "__module__": cls.__module__,
             "__doc__": cls.__doc__},
        )
    raise ParameterError(
        "a protocol to check is a registered name, a protocol class or an instance;"
        f" got {type(protocol).__name__}"
    )


def check_protocol(protocol: Any) -> list[str]:
    """Run every applicable check on ``protocol``; returns the names of the checks run.

    ``protocol`` is a registered name, a protocol class (registered or not) or
    an instance (checked with its parameter values, :func:`as_protocol_class`).
    Raises ``AssertionError`` at the first failure, naming the protocol.
    """
    cls = as_protocol_class(protocol)
    done = []
    for check in protocol_checks(cls):
        check(cls)
        done.append(check.__name__)
    return done
