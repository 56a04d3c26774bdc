"""The world's settings, declared once: :data:`WORLD_SETTINGS`.

This module is pure data over :mod:`hedgerow.params` (it imports nothing
heavier), so that the spec models, the CLI and the docs can read it without
loading the simulator; the named scenarios over it are
:mod:`hedgerow.scenarios.world.catalogue`, where a text setting's form
(``onoff:F:ON:OFF``, ``unif:K``, a latency model's name) is read by the code
that uses it when a scenario is resolved.

Every setting a named scenario, a run, a sweep or a churn run can take is one
:class:`WorldSetting` here, written with the :mod:`hedgerow.params`
vocabulary (type, range or choices, default, unit, one-line doc) plus the
world family it belongs to, the scenario families it applies to and where a
spec holds it.  Everything else is generated from this table:

* the validation of a setting (:func:`check_setting`, and
  :func:`~hedgerow.scenarios.world.resolve_scenario`; a bad value names the
  setting, and the spec loader turns that into a key path such as
  ``scenario.run.rt``; the CLI names the option, ``--rt``);
* the pydantic models of a spec's ``scenario.run`` and ``scenario.churn``
  sections (:mod:`hedgerow.experiment.models`);
* the keys a sweep grid may vary (every setting unless ``sweep`` states why
  not);
* the options of ``hedgerow run``, ``compare``, ``churn`` and ``draw`` with
  their help (:func:`hedgerow.cli._common.setting_options`);
* the world-settings reference in ``docs/specs.md`` (:func:`settings_reference`).

Adding a world setting is one declaration below plus the code that uses it
(``docs/contributing.md`` walks through one).

Examples
--------
>>> s = WORLD_SETTINGS["rt"]
>>> s.family, s.spec_path, s.flag, s.param.describe()
('gossip', 'scenario.run.rt', '--rt', 'int >= 3 (entries), default 15')
>>> check_setting("rt", 2, owner="run")
Traceback (most recent call last):
...
hedgerow.errors.ParameterError: run: parameter rt must be >= 3, got 2
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hedgerow.errors import ParameterError
from hedgerow.params import Bool, Choice, Float, Int, Pairs, Param, Text

__all__ = [
    "ADAPTIVE_POOLS",
    "PLANES",
    "RELAY_ATTACKS",
    "SECTIONS",
    "SYBIL_ATTACKS",
    "WORLD_SETTINGS",
    "WorldSetting",
    "check_setting",
    "settings_in",
    "settings_reference",
]

#: the unit-square network's positions: continuous, or the Goldfish authors' integer grid
PLANES = ("continuous", "grid")
#: where adaptive nodes of a broadcast world may be drawn from
ADAPTIVE_POOLS = ("all", "non-publishers")
#: the attacks a fast-relay world switches between (withholding relays, the honest control;
#: the names :mod:`hedgerow.scenarios.attackers` sets up)
RELAY_ATTACKS = ("withhold", "relay")
#: the GossipSub v1.1 evaluation's sybils: anyone, one target eclipsed, one publisher censored;
#: and sybils that announce (IHAVE) and never serve (beyond the evaluation)
#: (:func:`hedgerow.scenarios.attackers.sybil_attack`)
SYBIL_ATTACKS = ("sybil", "sybil-eclipse", "sybil-censor", "sybil-liar")
#: the spec sections that hold world settings: ``run`` (a named scenario's settings; ``latency``
#: sits at ``scenario.latency``) and ``churn`` (a churn run's)
SECTIONS = ("run", "churn")


@dataclass(frozen=True)
class WorldSetting:
    """One world setting.

    Attributes
    ----------
    param : Param
        Type, range or choices, default, unit and doc (:mod:`hedgerow.params`).
    family : str
        The part of the world it sets: a workload family (``interest``,
        ``popularity``, ``broadcast``, ``correlated``, ``social``) or
        ``workload``, ``network``, ``traffic``, ``clock``, ``attack``,
        ``churn``, ``gossip``.
    section : {"run", "churn"}
        The spec section that holds it.
    also : tuple of str
        Further spec sections that hold it too (the network settings: a churn
        run measures its samples on the contended network as well).
    applies : tuple of str
        The scenario families it applies to (empty: every scenario); a
        scenario's families are its workload, ``attack`` when it has attackers,
        ``relay`` when they are fast relays and ``sybil`` when they are the
        GossipSub evaluation's sybils.
    excludes : tuple of str
        Scenario families it may not be used with.
    sweep : str
        Empty when a sweep grid may vary it; otherwise the reason it may not.
    cli : str
        Empty when the commands take it as an option; otherwise the reason
        they do not.
    """

    param: Param
    family: str
    section: str = "run"
    also: tuple[str, ...] = ()
    applies: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    sweep: str = ""
    cli: str = ""

    @property
    def name(self) -> str:
        return self.param.name

    @property
    def default(self) -> Any:
        return self.param.default

    @property
    def doc(self) -> str:
        return self.param.doc

    @property
    def spec_path(self) -> str:
        """Where a spec sets it (``scenario.run.rt``; ``scenario.latency`` for the network)."""
        if self.name == "latency":
            return "scenario.latency"
        return f"scenario.{self.section}.{self.name}"

    @property
    def spec_paths(self) -> tuple[str, ...]:
        """Every key a spec sets it at: :attr:`spec_path`, then one per section of ``also``."""
        return (self.spec_path, *(f"scenario.{s}.{self.name}" for s in self.also))

    @property
    def flag(self) -> str:
        """Its command-line option (``--snapshot-every``)."""
        return "--" + self.name.replace("_", "-")


def _declare(**settings: WorldSetting) -> dict[str, WorldSetting]:
    out = {}
    for name, s in settings.items():
        out[name] = WorldSetting(**{**s.__dict__, "param": s.param.bind(name)})
    return out


_KW_ONLY = "keyword arguments of the latency model: specs and the Python API only"
#: the settings only Lean Gossip's runner reads (the epoch loop refuses a world that sets them)
_LEAN = "run by hedgerow.scenarios.lean_gossip.run_lean_gossip, not by the epoch loop"
#: a setting a churn run takes as well (``scenario.churn.NAME``, ``hedgerow churn --NAME``)
_CHURN = ("churn",)

#: every world setting, by name (the name is the spec key in its section and the option name)
WORLD_SETTINGS: dict[str, WorldSetting] = _declare(
    # ---------------------------------------------------------------- workload
    topics=WorldSetting(Int(100, "number of topics", low=1, unit="topics"), "workload"),
    interest=WorldSetting(
        Float(0.2, "subscription probability of each (node, topic) pair", low=0.0, high=1.0,
              low_open=True),
        "interest",
    ),
    subs=WorldSetting(
        Int(10, "subscriptions per node", low=1, unit="topics"),
        "popularity", applies=("popularity", "correlated"),
    ),
    social=WorldSetting(
        Text(None, "the users of an ingested social sample: a named input (fb1k, fb4k, tw1k, "
             "tw10k, vitis-tw10k; ingested on first use) or an ingest output folder",
             metavar="NAME|DIR", optional=True),
        "social", excludes=("attack",),
    ),
    alpha=WorldSetting(
        Float(0.0, "publication-rate skew, power law (Vitis IV-D)", low=0.0, high=100.0),
        "correlated", applies=("correlated",),
    ),
    # ---------------------------------------------------------------- broadcast
    adaptive=WorldSetting(
        Int(0, "nodes that re-select their peers (0 = all)", low=0, unit="nodes"),
        "broadcast", applies=("broadcast",),
    ),
    adaptive_pool=WorldSetting(
        Choice("all", ADAPTIVE_POOLS, "where the adaptive nodes are drawn from"),
        "broadcast", applies=("broadcast",),
    ),
    publishers=WorldSetting(
        Text(None, "publishing law: K publishers with equal or exp(-k/10) probabilities "
             "(default: every node, equal)", metavar="unif:K|exp:K",
             optional=True),
        "broadcast", applies=("broadcast",),
    ),
    topology=WorldSetting(
        Text(None, "delays, node delays and publishing probabilities from a Goldfish-format "
             "topology JSON", metavar="FILE", optional=True),
        "broadcast", applies=("broadcast",),
    ),
    wasted=WorldSetting(
        Bool(True, "measure the wasted latency every epoch (all-pairs shortest paths)"),
        "broadcast", applies=("broadcast",),
    ),
    # ---------------------------------------------------------------- network
    nodes=WorldSetting(
        Int(None, "number of nodes, attackers included (sized networks; default: the "
            "scenario's, a data set's own size)", low=2, unit="nodes", optional=True),
        "network",
    ),
    latency=WorldSetting(
        Text(None, "latency model replacing the scenario's network (hedgerow.latency)",
             metavar="MODEL|file:PATH", optional=True),
        "network",
    ),
    latency_kw=WorldSetting(Pairs("keyword arguments of the latency model"), "network",
                            cli=_KW_ONLY),
    plane=WorldSetting(
        Choice("continuous", PLANES, "positions of a unit-square network: continuous, or the "
               "Goldfish authors' integer grid (one point per ms of the side) with every delay "
               "rounded up to a whole ms"),
        "network",
    ),
    proc_ms=WorldSetting(
        Float(None, "fixed node (processing) delay (default: drawn, mean 20 ms)", low=0.0,
              high=1e6, unit="ms", optional=True),
        "network",
    ),
    # ---------------------------------------------------------------- bytes on the wire
    bandwidth=WorldSetting(
        Text(None, "upload and download bandwidth of every node in Mbit/s (docs/network.md): "
             "one value for all (UP or UP:DOWN), classes with shares "
             "(NAME:SHARE:UP:DOWN,...), or a file of per-node 'upload download' lines "
             "(default: unlimited)", metavar="UP[:DOWN]|NAME:SHARE:UP:DOWN,...|file:PATH",
             optional=True),
        "network", also=_CHURN,
    ),
    download_queues=WorldSetting(
        Bool(False, "copies queue on the receiver's downlink (FIFO) as well as the sender's "
             "uplink"),
        "network", also=_CHURN,
    ),
    validation_ms=WorldSetting(
        Float(0.0, "constant validation delay before a node forwards a message it received",
              low=0.0, high=1e6, unit="ms"),
        "network", also=_CHURN,
    ),
    validation_ms_per_kb=WorldSetting(
        Float(0.0, "validation delay per KiB of the message, added to validation_ms", low=0.0,
              high=1e6, unit="ms/KiB"),
        "network", also=_CHURN,
    ),
    loss=WorldSetting(
        Float(0.0, "independent probability that a copy is lost (it still occupies the uplink)",
              low=0.0, high=1.0, high_open=True),
        "network", also=_CHURN,
    ),
    jitter_ms=WorldSetting(
        Float(0.0, "each copy's link delay gets a uniform draw in [0, jitter_ms)", low=0.0,
              high=1e6, unit="ms"),
        "network", also=_CHURN,
    ),
    size=WorldSetting(
        Text(None, "payload bytes of every message: one value (k = KiB, m = MiB suffixes), "
             "a uniform draw per message (uniform:LO:HI) or per topic (topic-uniform:LO:HI), "
             "a clipped lognormal draw per message (lognormal:MEDIAN:SIGMA[:LO:HI]), or one "
             "size per topic listed or in a file (default: 0, the uncontended model)",
             metavar="BYTES|uniform:LO:HI|topic-uniform:LO:HI|lognormal:MEDIAN:SIGMA|"
             "topic:S1,S2,...|file:PATH", optional=True),
        "traffic", also=_CHURN,
    ),
    publication=WorldSetting(
        Text(None, "when an epoch's messages are published: one Poisson process of RATE "
             "messages per second, one per topic or one per publisher, or one message every "
             "INTERVAL_MS, of the epoch or of each topic (default: all at instant 0)",
             metavar="poisson:RATE|poisson-topic:RATE|poisson-publisher:RATE|"
             "periodic:INTERVAL_MS|periodic-topic:INTERVAL_MS", optional=True),
        "traffic", also=_CHURN,
    ),
    control_size=WorldSetting(
        Float(0.0, "bytes of one control message's header; above 0 the protocols that "
              "maintain their overlay send their control traffic on the wire "
              "(docs/network.md; default 0: none)", low=0.0, high=1e9, unit="bytes"),
        "network",
    ),
    control_entry_size=WorldSetting(
        Float(18.0, "bytes of each entry a control message carries (a node descriptor: "
              "address, port, id, age), added to control_size", low=0.0, high=1e9,
              unit="bytes"),
        "network",
    ),
    control_period_ms=WorldSetting(
        Float(1000.0, "period of the maintenance rounds whose control messages go on the "
              "wire (a gossip cycle of Vitis and RVR, a heartbeat round of SpiderCast)",
              low=0.0, low_open=True, high=1e9, unit="ms"),
        "network",
    ),
    # ---------------------------------------------------------------- traffic and clock
    epochs=WorldSetting(Int(150, "epochs of adaptive protocols", low=1, unit="epochs"), "clock"),
    messages=WorldSetting(Int(1000, "messages per epoch", low=1, unit="messages"), "traffic"),
    ttl=WorldSetting(Int(1, "initial TTL of every message", low=0, unit="hops"), "traffic"),
    # ---------------------------------------------------------------- attack
    attackers=WorldSetting(
        Int(0, "attackers among the nodes", low=1, unit="nodes"), "attack", applies=("attack",),
    ),
    attack=WorldSetting(
        Param("choice", None, "fast relays that withhold while they hold exploit slots, or the "
              "honest control", choices=RELAY_ATTACKS, optional=True),
        "attack", applies=("relay",),
    ),
    attack_degree=WorldSetting(
        Int(20, "connections each sybil opens to honest nodes (to its target only in an "
            "eclipse)", low=1, unit="connections"),
        "attack", applies=("sybil",),
    ),
    attack_join_s=WorldSetting(
        Float(0.0, "when the sybils' connections open, from the start of the run", low=0.0,
              unit="s"),
        "attack", applies=("sybil",),
    ),
    attack_after_s=WorldSetting(
        Float(0.0, "when the sybils start dropping (before it they relay honestly: a covert "
              "flash)", low=0.0, unit="s"),
        "attack", applies=("sybil",),
    ),
    honest_join_s=WorldSetting(
        Float(0.0, "when the honest nodes' connections among themselves open (an attack at "
              "dawn: after the sybils')", low=0.0, unit="s"),
        "attack", applies=("sybil",),
    ),
    attacker_ips=WorldSetting(
        Int(0, "IP addresses the sybils share (GossipSub's P6 colocation; 0: one each)", low=0,
            unit="addresses"),
        "attack", applies=("sybil",),
    ),
    # ---------------------------------------------------------------- churn
    churn=WorldSetting(
        Text(None, "on/off churn between epochs: a fraction F of the nodes alternate online and "
             "offline sessions of mean ON and OFF epochs; or a replayed trace",
             metavar="onoff:F:ON:OFF|trace:NAME:HOURS", optional=True),
        "churn", applies=("broadcast",),
    ),
    lifetime=WorldSetting(
        Float(None, "mean online time λ of synthetic churn (offline: off_ratio x λ)", low=0.0,
              low_open=True, unit="s", optional=True),
        "churn", section="churn",
    ),
    events=WorldSetting(
        Int(None, "events replayed (a named churn scenario; default: all)", low=1,
            unit="events", optional=True),
        "churn", section="churn",
    ),
    duration=WorldSetting(
        Float(1000.0, "simulated time", low=0.0, low_open=True, unit="s"), "churn",
        section="churn",
    ),
    snapshot_every=WorldSetting(
        Float(200.0, "snapshot period", low=0.0, low_open=True, unit="s"), "churn",
        section="churn",
    ),
    off_ratio=WorldSetting(
        Float(0.25, "mean offline time / λ", low=0.0, low_open=True), "churn", section="churn",
    ),
    timeout=WorldSetting(
        Float(0.1, "time of one connect_timeout (one maintenance iteration)", low=0.0,
              low_open=True, unit="s"),
        "churn", section="churn",
    ),
    bimodal_churn=WorldSetting(
        Text(None, "bimodal churn within a run (Lean Gossip's): a fraction F of the nodes is "
             "churny; each tick of TICK_MS (default 100) an online churny node leaves with "
             "probability LEAVE, an offline one rejoins with probability REJOIN; the others "
             "never leave", metavar="F:LEAVE:REJOIN[:TICK_MS]", optional=True),
        "churn", sweep=_LEAN, cli=_LEAN,
    ),
    peer_table=WorldSetting(
        Text(None, "connections as Lean Gossip's peer tables: each node dials LO to HI "
             "(uniform) uniform others, every dial a connection both ways",
             metavar="LO:HI", optional=True),
        "network", sweep=_LEAN, cli=_LEAN,
    ),
    # ---------------------------------------------------------------- gossip
    rt=WorldSetting(
        Int(15, "routing-table size of the gossip protocols (Vitis, RVR, OPT)", low=3,
            unit="entries"),
        "gossip",
    ),
    cycles=WorldSetting(
        Int(100, "gossip cycles of the gossip protocols (Vitis, RVR, OPT)", low=1,
            unit="cycles"),
        "gossip",
    ),
)


def settings_in(section: str) -> dict[str, WorldSetting]:
    """The settings a spec section holds (``run`` or ``churn``), in table order.

    A setting held by another section ``also`` here comes first (the churn
    section's network settings).

    Examples
    --------
    >>> list(settings_in("churn"))[-6:]
    ['lifetime', 'events', 'duration', 'snapshot_every', 'off_ratio', 'timeout']
    >>> "bandwidth" in settings_in("churn"), "bandwidth" in settings_in("run")
    (True, True)
    """
    if section not in SECTIONS:
        raise ParameterError(f"unknown section {section!r}; allowed: {', '.join(SECTIONS)}")
    return {k: s for k, s in WORLD_SETTINGS.items() if s.section == section or section in s.also}


def check_setting(name: str, value: Any, *, owner: str = "scenario") -> Any:
    """``value`` of setting ``name`` checked and coerced (a :class:`ParameterError` names it)."""
    if name not in WORLD_SETTINGS:
        raise ParameterError(
            f"{owner}: unknown setting {name!r}; allowed: {', '.join(WORLD_SETTINGS)}", key=name
        )
    return WORLD_SETTINGS[name].param.validate(owner, value)


def settings_reference() -> str:
    """The world-settings table of ``docs/specs.md`` (kept equal to it by a test).

    Examples
    --------
    >>> settings_reference().splitlines()[0]
    '| setting | spec key | option | family | applies to | type and default | meaning |'
    """
    lines = [
        "| setting | spec key | option | family | applies to | type and default | meaning |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in WORLD_SETTINGS.items():
        applies = ", ".join(s.applies) or "all"
        if s.excludes:
            applies += f" (not {', '.join(s.excludes)})"
        option = f"`{s.flag}`" if not s.cli else "-"
        key = ", ".join(f"`{p}`" for p in s.spec_paths) + ("" if not s.sweep else " (not swept)")
        meaning = s.doc + (f"; {s.cli}" if s.cli else "") + (f"; {s.sweep}" if s.sweep else "")
        lines.append(
            f"| `{name}` | {key} | {option} | {s.family} | {applies} | {s.param.describe()} "
            f"| {meaning} |"
        )
    return "\n".join(lines) + "\n"
