"""The row metrics, declared once: name, meaning, unit, which way is better, which runs give it.

Every numeric column of a result row that is not a descriptive column (the
core columns of :mod:`hedgerow.experiment.rows`, ``param_*``, ``run_*`` and the
``churn_*`` options) is declared here as a :class:`Metric`.  The declaration
serves four readers:

* a spec's ``report.metrics`` is checked at load against it (an unknown name
  is refused with the nearest known names, :func:`unknown_metric`), and so is
  ``hedgerow report --metric``;
* the metrics table of ``docs/specs.md`` is generated from it
  (:func:`metrics_reference`);
* a test runs a small run of every kind of every registered protocol and checks
  that each numeric column of its rows is declared here, for the kind of run that
  gave it, so the table cannot drift from the row builders;
* a protocol from another package declares the columns only its rows carry in
  its class attribute ``metrics`` (:func:`statistics` for its build statistics);
  :func:`hedgerow.protocols.known_metrics` merges them with :data:`METRICS`.

Build statistics (the scalars a static build returns beside its overlay) are
declared once with :func:`statistics`: a ``build`` row carries each as
``stat_<name>``, a ``run`` row of a routing world (``vitis-*``) under its own
name.

Examples
--------
>>> METRICS["receive_rate"].better, METRICS["receive_rate"].kinds
('higher', ('run', 'churn'))
>>> METRICS["stat_gateways"].kinds, METRICS["gateways"].kinds
(('build',), ('run',))
>>> unknown_metric("recieve_rate", METRICS)
"unknown metric 'recieve_rate'; nearest: receive_rate, victim_receive_rate"
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "KINDS",
    "METRICS",
    "Metric",
    "metrics_reference",
    "statistics",
    "unknown_metric",
]

#: the kinds of run a metric may come from (:data:`hedgerow.scenarios.kinds.KINDS`)
KINDS = ("build", "run", "churn", "optimum")
_BETTER = ("higher", "lower", None)


@dataclass(frozen=True)
class Metric:
    """One metric column of result rows.

    Parameters
    ----------
    name : str
        The column name.
    doc : str
        One line: what it measures.
    unit : str
        Its unit (``""`` for a pure number, ``"share"`` for a fraction in [0, 1]).
    better : {"higher", "lower", None}
        Which way is better; ``None`` for a count or a description with no better way.
    kinds : tuple of str
        The kinds of run whose rows carry it (of :data:`KINDS`).

    Examples
    --------
    >>> Metric("hops", "hops of a copy", "hops", "lower", ("run",)).better
    'lower'
    >>> Metric("hops", "hops", better="down")
    Traceback (most recent call last):
    ...
    ValueError: metric hops: better must be higher, lower or None, got 'down'
    """

    name: str
    doc: str
    unit: str = ""
    better: str | None = None
    kinds: tuple[str, ...] = ("run",)

    def __post_init__(self) -> None:
        if self.better not in _BETTER:
            raise ValueError(f"metric {self.name}: better must be higher, lower or None, "
                             f"got {self.better!r}")
        bad = [k for k in self.kinds if k not in KINDS]
        if bad or not self.kinds:
            raise ValueError(f"metric {self.name}: kinds must be among {', '.join(KINDS)}, "
                             f"got {self.kinds!r}")


def statistics(**stats: tuple[str, str, str | None]) -> dict[str, Metric]:
    """Declare build statistics: ``name=(doc, unit, better)``.

    Each gives two metrics: ``stat_<name>`` in ``build`` rows and ``<name>`` in
    the ``run`` rows of a routing world.

    Examples
    --------
    >>> sorted(statistics(links=("links of the overlay", "links", None)))
    ['links', 'stat_links']
    """
    out: dict[str, Metric] = {}
    for name, (doc, unit, better) in stats.items():
        out[f"stat_{name}"] = Metric(f"stat_{name}", doc, unit, better, ("build",))
        out[name] = Metric(name, doc, unit, better, ("run",))
    return out


def _m(name: str, doc: str, unit: str = "", better: str | None = None,
       kinds: str = "run") -> Metric:
    return Metric(name, doc, unit, better, tuple(kinds.split()))


def _pct(prefix: str, doc: str, unit: str, better: str | None, kinds: str,
         stats: Iterable[str]) -> list[Metric]:
    names = {"mean": "mean", "p50": "median", "p90": "90th percentile", "p99": "99th percentile",
             "max": "maximum", "p25": "25th percentile", "p75": "75th percentile"}
    return [_m(f"{prefix}_{s}", f"{doc} ({names[s]})", unit, better, kinds) for s in stats]


_OVERLAY = "build run churn"
#: run rows, and the rows of a churn run on the contended network (``scenarios/churn_wire.py``)
_WIRED = "run churn"
_DECLARED: list[Metric] = [
    # ---------------------------------------------------------------- overlay structure
    _m("avg_degree", "mean node degree of the overlay", "links", "lower", _OVERLAY),
    _m("max_degree", "largest node degree", "links", "lower", _OVERLAY),
    _m("min_degree", "smallest node degree", "links", None, "build run"),
    _m("degree_ci95_lo", "95% interval of the mean degree, low end", "links", None, _OVERLAY),
    _m("degree_ci95_hi", "95% interval of the mean degree, high end", "links", None, _OVERLAY),
    _m("degree_p2_5", "2.5th percentile of node degrees", "links", None, "build run"),
    _m("degree_p97_5", "97.5th percentile of node degrees", "links", "lower", "build run"),
    _m("partitioned_topics", "topics whose subscribers are not connected among themselves",
       "topics", "lower", _OVERLAY),
    _m("topic_components", "connected components summed over topics (one per topic is ideal)",
       "components", "lower", _OVERLAY),
    _m("max_topic_diameter", "largest diameter of a topic's subscriber sub-graph", "hops",
       "lower", _OVERLAY),
    _m("avg_topic_diameter", "mean diameter of the topics' subscriber sub-graphs", "hops",
       "lower", "build run"),
    _m("max_topic_overlay_diameter", "largest hop distance between subscribers of a topic over "
       "the whole overlay", "hops", "lower", "build run"),
    _m("avg_topic_overlay_diameter", "mean over topics of the hop distance between subscribers "
       "over the whole overlay", "hops", "lower", "build run"),
    _m("control_messages", "control messages the protocol sent", "messages", "lower",
       "build run churn"),
    _m("quiescent", "1 when the build's message passing came to rest", "flag", "higher",
       "build run"),
    _m("build_seconds", "wall time of the build", "s", "lower", "build"),
    *(_m(f"messages_{t}", f"{t} messages sent by SpiderCast's build", "messages", "lower",
         "build")
      for t in ("CONNECT", "CONNECT-OK", "DISCONNECT", "DISCONNECT-OK", "LEAVE", "REDIRECT")),
    # ---------------------------------------------------------------- delivery (every epoch)
    _m("receive_rate", "share of interested (node, message) pairs that received the message",
       "share", "higher", _WIRED),
    _m("delay_mean_ms", "mean delay of a received message from its publication", "ms",
       "lower", _WIRED),
    _m("delay_p50_ms", "median delay of a received message", "ms", "lower", _WIRED),
    _m("delay_p90_ms", "90th percentile delay of a received message", "ms", "lower", _WIRED),
    _m("delay_p99_ms", "99th percentile delay of a received message", "ms", "lower", _WIRED),
    _m("hops_mean", "mean hops of a received message's first copy", "hops", "lower", _WIRED),
    _m("relay_copies", "copies received by nodes not interested in the message",
       "copies", "lower"),
    _m("relay_share", "share of copies received by uninterested nodes", "share", "lower"),
    _m("duplicates_per_message", "copies beyond the first, per message and receiver",
       "copies", "lower", _WIRED),
    _m("out_degree", "an adaptive protocol's out-degree budget", "links", None),
    _m("in_limit", "an adaptive protocol's incoming-link limit (0: none)", "links", None),
    _m("avg_score", "Topiary's mean neighbour score at the epoch's selection", "", None),
    # ---------------------------------------------------------------- attacks
    _m("victim_receive_rate", "receive rate of the attacked topic (topic attack), of the "
       "censored publisher's messages (sybil-censor) or at the eclipsed target (sybil-eclipse)",
       "share", "higher"),
    _m("victim_delay_mean_ms", "mean delay of the victims' received messages", "ms", "lower"),
    _m("attacker_slot_share", "share of honest nodes' out-link slots (GossipSub: mesh links) "
       "held by attackers",
       "share", "lower"),
    _m("honest_with_honest_neighbour", "share of honest nodes with at least one honest "
       "out-neighbour", "share", "higher"),
    _m("honest_with_honest_link", "share of honest nodes with a link to an honest node either "
       "way", "share", "higher"),
    _m("eclipse_streak_max", "longest run of epochs an honest node had only attacker "
       "out-neighbours (last 50 epochs)", "epochs", "lower"),
    _m("eclipse_streak_p99", "99th percentile of those eclipse streaks", "epochs", "lower"),
    _m("honest_exploit_peer_share", "share of honest adaptive nodes' exploitation slots held by "
       "honest peers", "share", "higher"),
    _m("attacker_exploit_share", "share of honest adaptive nodes' exploitation slots held by "
       "the fast relays", "share", "lower"),
    _m("withholding_attackers", "relays withholding blocks this epoch", "nodes", "lower"),
    _m("attacker_tenures", "attackers' tenures in exploitation slots, counted", "tenures", None),
    _m("attacker_tenure_mean_epochs", "mean tenure of an attacker in an exploitation slot",
       "epochs", "lower"),
    _m("attacker_tenure_p90_epochs", "90th percentile tenure of an attacker in a slot",
       "epochs", "lower"),
    _m("attacker_tenure_max_epochs", "longest tenure of an attacker in a slot", "epochs",
       "lower"),
    # ---------------------------------------------------------------- broadcast worlds
    *(_m(f"wasted_latency_{s}_ms", f"wasted latency of the adaptive nodes at 90% of the "
         f"publishing probability ({s})", "ms", "lower") for s in ("mean", "p25", "p50", "p75")),
    _m("t50_ms", "time for a block to reach half the nodes, pooled", "ms", "lower"),
    _m("t90_ms", "time for a block to reach 90% of the nodes, pooled", "ms", "lower"),
    _m("t99_ms", "time for a block to reach 99% of the nodes, pooled", "ms", "lower"),
    _m("t50_weight_ms", "time to reach half the publishing weight (Perigee's measure)", "ms",
       "lower"),
    _m("t90_weight_ms", "time to reach 90% of the publishing weight", "ms", "lower"),
    _m("duplicates_per_node", "copies beyond the first per node and block", "copies", "lower"),
    _m("dials_per_node", "new out-links dialled per node this epoch", "links", "lower"),
    _m("drops_per_node", "out-links dropped per node this epoch", "links", "lower"),
    _m("star_optimal", "1 when Fig. 2's adaptive node holds its optimal links", "flag",
       "higher"),
    _m("star_lambda_ms", "λ(e) of Fig. 2's adaptive node at this epoch", "ms", "lower"),
    # ---------------------------------------------------------------- churn of adaptive runs
    _m("online_nodes", "nodes online this epoch", "nodes", None),
    _m("churn_drops_per_node", "out-links to departed peers dropped per online node", "links",
       None),
    _m("churn_dials_per_node", "empty slots dialled again per online node", "links", "lower"),
    _m("dead_peers_selected", "selections of an offline peer this epoch", "selections",
       "lower"),
    # ---------------------------------------------------------------- bytes on the wire
    *(_m(f"{d}_{k}_{s}", f"{k} bytes {d} per node ({s})", "bytes", "lower", _WIRED)
      for d in ("sent", "received") for k in ("payload", "control")
      for s in ("mean", "p50", "p99", "max")),
    _m("control_byte_share", "share of the bytes sent that are control messages", "share",
       "lower", _WIRED),
    _m("duplicate_bytes", "payload bytes of duplicate copies", "bytes", "lower", _WIRED),
    _m("duplicate_byte_share", "share of payload bytes that were duplicates", "share", "lower",
       _WIRED),
    *_pct("uplink_utilisation", "busy share of a node's uplink over the epoch", "share",
          "lower", _WIRED, ("mean", "p50", "p99", "max")),
    _m("queueing_share", "share of a received copy's delay spent queued", "share", "lower",
       _WIRED),
    _m("copies_lost", "copies lost on the wire", "copies", "lower", _WIRED),
    _m("lost_share", "share of copies lost on the wire", "share", "lower", _WIRED),
    _m("message_bytes_mean", "mean payload size of the epoch's messages", "bytes", None,
       _WIRED),
    # ---------------------------------------------------------------- clock-driven (GossipSub)
    _m("heartbeats_after_warmup", "heartbeats a clock-driven protocol ran from the end of its "
       "warm-up", "heartbeats", None),
    _m("mesh_degree_mean", "mean mesh size over subscribed (node, topic) pairs and the "
       "heartbeats after the warm-up", "peers", None),
    *(_m(f"{k}_per_node_heartbeat", f"{k.upper()} messages sent per node per heartbeat after "
         "the warm-up", "messages", "lower")
      for k in ("ihave", "iwant", "graft", "prune", "idontwant")),
    _m("wire_messages", "messages a contended churn row sent (one per topic with an online "
       "subscriber)", "messages", None, "churn"),
    # ---------------------------------------------------------------- routing worlds (Vitis)
    _m("hit_ratio", "share of interested (event, subscriber) pairs reached", "share", "higher",
       "run churn"),
    _m("overhead", "share of a node's received events it relays without interest", "share",
       "lower", "run churn"),
    _m("overhead_copies", "uninterested copies per interested copy", "copies", "lower",
       "run churn"),
    _m("overhead_node_mean", "per-node overhead, mean", "share", "lower"),
    _m("overhead_node_p50", "per-node overhead, median", "share", "lower"),
    _m("overhead_node_p90", "per-node overhead, 90th percentile", "share", "lower"),
    _m("share_overhead_above_20", "share of nodes with overhead above 20%", "share", "lower"),
    _m("delay_hops", "mean hops of a routed event to a subscriber", "hops", "lower",
       "run churn"),
    _m("delay_hops_max", "mean over events of the largest hop count", "hops", "lower",
       "run churn"),
    _m("events", "events routed (one per topic with a subscriber)", "events", None,
       "run churn"),
    _m("metric_nodes", "nodes of the routed overlay", "nodes", None, "run churn"),
    _m("ring_correct", "share of nodes with correct ring successors", "share", "higher",
       "run churn"),
    _m("degree_mean", "mean total degree (links both ways)", "links", "lower"),
    _m("degree_max", "largest total degree", "links", "lower"),
    _m("out_degree_max", "largest out-degree", "links", "lower"),
    _m("share_degree_above_15", "share of nodes with total degree above 15", "share", "lower"),
    _m("share_degree_above_200", "share of nodes with total degree above 200", "share",
       "lower"),
    _m("rt", "routing-table size the protocol ran with", "entries", None),
    _m("cycles", "gossip cycles the protocol ran", "cycles", None),
    # ---------------------------------------------------------------- churn: snapshots
    _m("time_s", "simulated time of the row", "s", None, "churn"),
    _m("online", "nodes online", "nodes", None, "churn"),
    _m("measured", "nodes measured (online and settled)", "nodes", None, "churn"),
    _m("undercovered_nodes", "measured nodes missing a neighbour on some topic", "nodes",
       "lower", "churn"),
    _m("joins", "joins so far", "events", None, "churn"),
    _m("leaves", "leaves so far", "events", None, "churn"),
    _m("messages_per_op", "control messages per join or leave", "messages", "lower", "churn"),
    _m("lost_messages", "control messages lost to departed nodes", "messages", "lower",
       "churn"),
    _m("join_seconds_median", "median time for a joining node to get covered", "s", "lower",
       "churn"),
    _m("join_seconds_p99", "99th percentile time for a joining node to get covered", "s",
       "lower", "churn"),
    _m("connected_snapshots", "snapshots with every topic connected so far", "snapshots",
       "higher", "churn"),
    _m("cycle", "gossip cycle of the sample", "cycles", None, "churn"),
    _m("hit_ratio_min", "lowest hit ratio of the sample's events", "share", "higher", "churn"),
    # ---------------------------------------------------------------- churn: event by event
    _m("event", "index of the event in the run", "", None, "churn"),
    _m("trace_index", "index of the event in its trace", "", None, "churn"),
    _m("round", "churn round of the event", "", None, "churn"),
    _m("node", "the node that joined or left", "", None, "churn"),
    _m("messages", "control messages the event's repair sent", "messages", "lower", "churn"),
    _m("edges", "links of the overlay after the event", "links", None, "churn"),
    _m("edges_added", "links added by the event's repair", "links", "lower", "churn"),
    _m("edges_removed", "links removed by the event's repair", "links", None, "churn"),
    _m("repair_seconds", "wall time of the event's repair", "s", "lower", "churn"),
    _m("repair_cpu_seconds", "CPU time of the event's repair", "s", "lower", "churn"),
    _m("start_avg_degree", "mean degree of the overlay before the first event", "links",
       None, "churn"),
    _m("start_max_degree", "largest degree of the overlay before the first event", "links",
       None, "churn"),
    _m("violations", "mended-overlay invariants broken after the event", "violations",
       "lower", "churn"),
    *(_m(f"viol_{v}", f"invariant broken after the event: {doc}", "violations", "lower",
         "churn")
      for v, doc in (("self_loops", "self-loops"), ("offline_links", "links to offline nodes"),
                     ("partitioned_topics", "topics not connected"),
                     ("degree_bookkeeping", "degree counts that disagree with a recount"),
                     ("backups", "OMen backup sets"), ("coordination", "OMen coordination"),
                     ("shadow", "OMen shadow sets"), ("storage", "OMen stored state"))),
    *(_m(f"msg_{t}", f"{t} messages the event's repair sent", "messages", "lower", "churn")
      for t in ("new_link", "drop_link", "gossip", "link", "link-ok", "notify", "query",
                "report", "done")),
    _m("coordinator", "the node coordinating the event's repair (-1: none)", "", None,
       "churn"),
    _m("coordinators", "coordinators of the event's repair", "nodes", None, "churn"),
    _m("backup_size", "OMen backup set size of the event's node", "nodes", None, "churn"),
    _m("shadow_size", "OMen shadow set size of the event's node", "nodes", None, "churn"),
    _m("neighbour_size", "neighbours of the event's node", "nodes", None, "churn"),
    _m("repair_rounds", "message rounds of the event's repair", "rounds", "lower", "churn"),
    _m("lifecycle_cycles", "gossip cycles from the event to the end of its repair", "cycles",
       "lower", "churn"),
    _m("gossip_cycles", "T-Man gossip cycles run so far", "cycles", None, "churn"),
    _m("omen_repair_seconds", "driver wall time of OMen's repair life cycle", "s", "lower",
       "churn"),
    _m("view_mean", "mean OMen local view size", "entries", "lower", "churn"),
    _m("view_max", "largest OMen local view", "entries", "lower", "churn"),
    _m("view_below_5pct", "share of local views below 5% of the nodes", "share", "higher",
       "churn"),
    _m("view_below_10pct", "share of local views below 10% of the nodes", "share", "higher",
       "churn"),
    # ---------------------------------------------------------------- optimum (Goldfish Fig. 2)
    _m("star", "the adaptive node of the graph", "", None, "optimum"),
    _m("star_is_publisher", "1 when the adaptive node is a publisher", "flag", None,
       "optimum"),
    _m("non_optimal_epochs", "epochs the adaptive node's links were not optimal", "epochs",
       "lower", "optimum"),
    _m("non_optimal_epochs_in", "non-optimal epochs, in-limit reading", "epochs", "lower",
       "optimum"),
    _m("far_epochs", "epochs with λ(e) more than 5% above the optimum", "epochs", "lower",
       "optimum"),
    _m("far_epochs_in", "far epochs, in-limit reading", "epochs", "lower", "optimum"),
    _m("far_epochs_abs", "far epochs, absolute-margin reading", "epochs", "lower", "optimum"),
    *(_m(name, f"1 when the graph meets Fig. 2{fig}'s limit{how}", "flag", "higher",
         "optimum")
      for name, fig, how in (("fig2a_success", "a", ""), ("fig2a_success_in", "a",
                                                             ", in-limit reading"),
                             ("fig2b_success", "b", ""), ("fig2b_success_in", "b",
                                                             ", in-limit reading"),
                             ("fig2b_success_abs", "b", ", absolute-margin reading"))),
    _m("fig2a_success_found", "Fig. 2a's flag over the graphs that attain the optimum (the "
       "authors' denominator; empty otherwise)", "flag", "higher", "optimum"),
    _m("fig2b_success_close", "Fig. 2b's flag over the graphs that come within 5% in some "
       "epoch (the authors' denominator; empty otherwise)", "flag", "higher", "optimum"),
    _m("came_close", "1 when some epoch had λ(e)/λ(0) below 0.05", "flag", "higher",
       "optimum"),
    _m("lambda0_ms", "λ(e) of the adaptive node at the first epoch", "ms", None, "optimum"),
    _m("direct_ms", "λ(e) with direct links to every publisher", "ms", None, "optimum"),
    _m("found_optimum", "1 when some epoch was optimal", "flag", "higher", "optimum"),
    _m("optimal_at_end", "1 when the last epoch was optimal", "flag", "higher", "optimum"),
    _m("first_optimal_epoch", "first optimal epoch (-1: never)", "epochs", "lower",
       "optimum"),
    _m("publisher_full", "1 when a publisher had no incoming slot left at the start", "flag",
       None, "optimum"),
    _m("publisher_links_star", "publishers whose out-links include the adaptive node",
       "publishers", None, "optimum"),
    _m("sim_seconds", "wall time of the graph's simulation", "s", "lower", "optimum"),
]

#: the build statistics of the built-in protocols (``stat_<name>`` in build rows)
_STATISTICS = statistics(
    # SpiderCast and its baselines (message passing)
    events=("events the build's message passing processed (routing rows: events routed)",
            "events", None),
    rounds=("simulated time the build's message passing took", "rounds", "lower"),
    heartbeats=("heartbeats sent during the build", "messages", None),
    covered_nodes=("nodes with a neighbour on each of their topics", "nodes", "higher"),
    asymmetric_links=("links one end does not know", "links", "lower"),
    kr_final_mean=("mean random-coverage target Kr at the end", "", None),
    # random-graph, gossipsub, scribe
    out_degree=("out-links per node", "links", None),
    fallback_links=("GossipSub links made outside the topic meshes", "links", None),
    fanout=("children per Scribe tree node", "nodes", None),
    n_groups=("Scribe random groups", "groups", None),
    # the TCO engine (GM, MinMaxODA, LowODA)
    phi0=("initial potential Φ₀ of the greedy augmentation", "", None),
    decrements=("potential decrements of the augmentation", "", None),
    scans=("candidate scans of the augmentation", "", None),
    cache_hits=("candidate-cache hits of the augmentation", "", None),
    max_scans=("largest scan of one selection step", "", None),
    thresholds=("threshold levels the augmentation passed", "", None),
    edges_added=("links the augmentation added", "links", None),
    # Vitis, RVR, OPT
    clusters=("Vitis clusters (topic-connected groups)", "clusters", None),
    gateways=("Vitis gateway nodes", "nodes", None),
    relay_nodes=("nodes on a relay path without interest", "nodes", "lower"),
    relay_pairs=("relay paths built", "paths", None),
    in_degree_max=("largest in-degree", "links", "lower"),
    link_topic_rows=("(link, topic) rows of the forwarding links", "rows", None),
    lookup_failures=("greedy ring lookups that failed", "lookups", "lower"),
    lookup_hops_mean=("mean hops of a greedy ring lookup", "hops", "lower"),
    lookup_hops_max=("most hops of a greedy ring lookup", "hops", "lower"),
    ring_correct=("share of nodes with correct ring successors", "share", "higher"),
    ring_99_cycle=("first cycle with 99% of the ring correct", "cycles", "lower"),
    seconds_cycles=("wall time of the gossip cycles", "s", "lower"),
    seconds_profile_per_cycle=("wall time of a cycle's profile exchange", "s", "lower"),
    seconds_relays=("wall time of the relay paths", "s", "lower"),
    seconds_sampling_per_cycle=("wall time of a cycle's peer sampling", "s", "lower"),
    seconds_tman_per_cycle=("wall time of a cycle's T-Man exchange", "s", "lower"),
    relays=("RVR relay nodes in its trees", "nodes", "lower"),
    tree_links=("RVR tree links", "links", None),
    cycles=("gossip cycles run", "cycles", None),
    links_mean=("OPT's mean links per node", "links", "lower"),
    links_max=("OPT's most links of a node", "links", "lower"),
    uncovered_share=("share of (node, topic) pairs OPT left without a topic neighbour",
                     "share", "lower"),
    degree_mean=("mean total degree (links both ways)", "links", "lower"),
    degree_max=("largest total degree", "links", "lower"),
)


def _merge(*groups: Iterable[Metric]) -> dict[str, Metric]:
    out: dict[str, Metric] = {}
    for group in groups:
        for m in group:
            old = out.get(m.name)
            if old is not None:  # a statistic named as a metric: one entry, both kinds
                kinds = tuple(k for k in KINDS if k in old.kinds or k in m.kinds)
                m = Metric(old.name, old.doc, old.unit, old.better, kinds)
            out[m.name] = m
    return out


#: every metric of the built-in row builders and protocols, by column name
METRICS: dict[str, Metric] = _merge(_DECLARED, _STATISTICS.values())


def unknown_metric(name: str, known: Iterable[str]) -> str:
    """The one-line message for a metric name that is not declared.

    Parameters
    ----------
    name : str
        The name given.
    known : iterable of str
        The declared names (:data:`METRICS`, or
        :func:`hedgerow.protocols.known_metrics` with the plugins' ones).

    Examples
    --------
    >>> unknown_metric("avg_degre", METRICS)
    "unknown metric 'avg_degre'; nearest: avg_degree, max_degree, start_avg_degree"
    >>> unknown_metric("zzz", METRICS)
    "unknown metric 'zzz'; the metrics are listed in docs/specs.md"
    """
    near = difflib.get_close_matches(str(name), sorted(known), n=3, cutoff=0.6)
    if near:
        return f"unknown metric {name!r}; nearest: {', '.join(near)}"
    return f"unknown metric {name!r}; the metrics are listed in docs/specs.md"


def _md(text: str) -> str:
    return str(text).replace("|", "\\|")


def metrics_reference(metrics: Mapping[str, Metric] | None = None) -> str:
    """The metrics table of ``docs/specs.md`` (kept equal to it by a test).

    Examples
    --------
    >>> metrics_reference().splitlines()[0]
    '| metric | meaning | unit | better | runs |'
    """
    metrics = METRICS if metrics is None else metrics
    lines = ["| metric | meaning | unit | better | runs |", "|---|---|---|---|---|"]
    for name in sorted(metrics):
        m = metrics[name]
        lines.append(f"| `{name}` | {_md(m.doc)} | {_md(m.unit) or '-'} | {m.better or '-'} "
                     f"| {', '.join(m.kinds)} |")
    return "\n".join(lines) + "\n"
