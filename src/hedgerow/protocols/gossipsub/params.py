"""GossipSub's parameters, declared once, their cross-parameter rules, and the presets.

The parameters of the three specification documents (libp2p/specs
``pubsub/gossipsub/gossipsub-v1.0.md`` "Parameters", ``gossipsub-v1.1.md``
"Overview of New Parameters", ``gossipsub-v1.2.md`` "Parameters") and the
ones an implementation must choose (go-libp2p-pubsub's ``gossipsub.go``
defaults), declared with the :mod:`hedgerow.params` vocabulary in
:data:`PARAMS` under the names of the case format shared with the anchor
(``D``, ``D_lo``, ``heartbeat_ms``, ...).  :func:`check_gossipsub` validates a
set of values and applies the rules across parameters; :data:`PRESETS` holds
the specification's defaults (``v1.0``, ``v1.1``, ``v1.2``) and Ethereum's
consensus-layer settings (``ethereum``), every value with its source;
:func:`score_preset` gives the matching peer-scoring parameters
(:mod:`~hedgerow.protocols.gossipsub.scoring`).

Sources (the versions read):

* libp2p/specs at 7740c07 (``gossipsub-v1.0.md``, ``-v1.1.md``, ``-v1.2.md``);
* go-libp2p-pubsub at 41b11d5 (``gossipsub.go`` defaults, ``score_params.go``);
* ChainSafe/js-libp2p-gossipsub at 2234bfa (``src/constants.ts``,
  ``src/score/peer-score-params.ts``, ``peer-score-thresholds.ts``);
* ethereum/consensus-specs at a08d8a6 (``specs/phase0/p2p-interface.md``,
  "Gossipsub Parameters");
* ChainSafe/lodestar at 6de0736 (``packages/beacon-node/src/network/gossip/
  gossipsub.ts`` and ``scoringParameters.ts``, which states it follows
  Lighthouse's ``gossipsub_scoring_parameters.rs``; ``network/options.ts``
  for the peer target).

Examples
--------
>>> values = check_gossipsub(preset("ethereum"))
>>> values["D"], values["D_lo"], values["heartbeat_ms"], values["seen_ttl_ms"]
(8, 6, 700.0, 768000.0)
>>> check_gossipsub({**preset("v1.1"), "D_lo": 7})
Traceback (most recent call last):
...
hedgerow.errors.ParameterError: gossipsub: parameter D must be in [D_lo, D_hi] = [7, 12], got 6
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hedgerow.errors import ParameterError
from hedgerow.params import Bool, Choice, Float, Int, Param, validate_params
from hedgerow.protocols.gossipsub.scoring import (
    PeerScoreParams,
    PeerScoreThresholds,
    TopicScoreParams,
    decay_convergence,
    decay_factor,
)

__all__ = [
    "ETHEREUM_TOPIC_KINDS",
    "PARAMS",
    "PRESETS",
    "VARIANTS",
    "check_gossipsub",
    "ethereum_score_params",
    "preset",
    "preset_sources",
    "presets_reference",
    "score_preset",
]

_OWNER = "gossipsub"

#: the protocol versions, in order
VARIANTS = ("v1.0", "v1.1", "v1.2")

_DECL: dict[str, Param] = {
    "variant": Choice("v1.1", VARIANTS, "protocol version (v1.1: scoring, PX, flood publishing; "
                      "v1.2: IDONTWANT)"),
    "D": Int(6, "mesh degree target per topic", low=0, unit="links"),
    "D_lo": Int(4, "mesh degree low watermark (graft below)", low=0, unit="links"),
    "D_hi": Int(12, "mesh degree high watermark (prune above)", low=0, unit="links"),
    "D_lazy": Int(6, "gossip (IHAVE) target per topic", low=0, unit="peers"),
    "D_score": Int(4, "mesh peers kept by score when pruning (v1.1)", low=0, unit="links"),
    "D_out": Int(2, "outbound mesh peers kept (v1.1)", low=0, unit="links"),
    "heartbeat_ms": Float(1000.0, "heartbeat interval", low=0.0, low_open=True, unit="ms"),
    "fanout_ttl_ms": Float(60_000.0, "lifetime of a topic's fanout after the last publish",
                           low=0.0, unit="ms"),
    "mcache_len": Int(5, "history windows kept in the message cache", low=1, unit="windows"),
    "mcache_gossip": Int(3, "history windows advertised in IHAVE", low=0, unit="windows"),
    "seen_ttl_ms": Float(120_000.0, "lifetime of a seen message id", low=0.0, low_open=True,
                         unit="ms"),
    "gossip_factor": Float(0.25, "share of eligible peers sent IHAVE when above D_lazy (v1.1)",
                           low=0.0, high=1.0),
    "prune_backoff_ms": Float(60_000.0, "no re-graft of a pruned peer before this (v1.1)",
                              low=0.0, unit="ms"),
    "unsubscribe_backoff_ms": Float(10_000.0, "backoff after unsubscribing (v1.1)", low=0.0,
                                    unit="ms"),
    "gossip_retransmission": Int(3, "IWANT answers per message per peer (v1.1)", low=0),
    "max_ihave_length": Int(5000, "message ids per IHAVE, and IHAVE ids accepted per peer per "
                            "heartbeat (v1.1)", low=1, unit="ids"),
    "max_ihave_messages": Int(10, "IHAVE messages accepted per peer per heartbeat (v1.1)",
                              low=1),
    "iwant_followup_ms": Float(3000.0, "a promised message not received by then is a P7 "
                               "penalty (v1.1)", low=0.0, unit="ms"),
    "opportunistic_graft_ticks": Int(60, "heartbeats between opportunistic grafts (v1.1)",
                                     low=1),
    "opportunistic_graft_peers": Int(2, "peers grafted opportunistically (v1.1)", low=0),
    "prune_peers": Int(16, "peers offered in a PRUNE's peer exchange (v1.1)", low=0),
    "peer_exchange": Bool(False, "PRUNEs carry peer records (PX) and their receivers take them "
                          "from peers scored at least the accept-PX threshold (v1.1; no "
                          "connection is opened, docs/gossipsub.md)"),
    "flood_publish": Bool(True, "publish own messages to every topic peer above the publish "
                          "threshold (v1.1)"),
    "idontwant_threshold": Int(None, "send IDONTWANT for messages of at least this size (v1.2; "
                               "derived: 1024 under v1.2, none before)", low=0, unit="bytes",
                               optional=True),
    "max_idontwant_messages": Int(1000, "IDONTWANT messages accepted per peer per heartbeat "
                                  "(v1.2; the JS implementation counts their ids)", low=1),
    "scoring": Bool(False, "peer scoring P1-P7 with the thresholds (v1.1)"),
    "graft_on_subscribe": Bool(False, "graft a peer as soon as its subscription arrives while "
                               "the mesh is below D_lo, as the JS implementation does "
                               "(docs/gossipsub.md); off: meshes form at the first heartbeat"),
    "heartbeat_phase": Choice("sync", ("sync", "random"), "when each node's heartbeats run: "
                              "sync, every node at k x heartbeat_ms; random, each node from "
                              "its own phase, uniform in one interval, as nodes that started "
                              "at different times (docs/gossipsub.md)"),
    "control_rpc": Choice("per-peer", ("per-peer", "per-message"), "how control messages "
                          "leave: per-peer, a heartbeat's IHAVEs, GRAFTs and PRUNEs to one peer "
                          "in one RPC (and the IWANT and PRUNEs answering one RPC in one), as "
                          "go-libp2p-pubsub and the JS implementation send them; per-message, "
                          "each in an RPC of its own (docs/gossipsub.md)"),
    "connections": Int(50, "connection target: peers each node keeps connected", low=1,
                       unit="peers"),
}

#: every GossipSub parameter, declared once (name -> bound :class:`~hedgerow.params.Param`)
PARAMS: dict[str, Param] = {k: p.bind(k) for k, p in _DECL.items()}


def _fail(key: str, what: str, value: Any) -> ParameterError:
    return ParameterError(f"{_OWNER}: parameter {key} must be {what}, got {value!r}", key=key)


def check_gossipsub(values: Mapping[str, Any], owner: str = _OWNER) -> dict[str, Any]:
    """Validate ``values`` (missing keys take their defaults) and the rules across parameters.

    Each value is checked against its declaration (type, range); then, as the
    specifications and go-libp2p-pubsub's ``validate`` state them:

    * ``D_lo <= D <= D_hi`` (v1.0), except the bootstrapper setting
      ``D = D_lo = D_hi = D_out = 0`` (v1.1, "Recommendations for Network
      Operators");
    * ``mcache_gossip <= mcache_len`` (go-libp2p-pubsub);
    * from v1.1: ``D_score <= D`` (the peers kept by score are among the ``D``
      kept), ``D_out < D_lo`` and ``D_out <= D / 2`` (v1.1, "Outbound Mesh
      Quotas");
    * v1.0 has no scoring and no flood publishing; IDONTWANT is v1.2's
      (``idontwant_threshold`` given before v1.2 is an error; under v1.2
      ``None`` becomes go-libp2p-pubsub's 1024 bytes).

    Returns
    -------
    dict
        Every parameter, validated, with the derived values filled in.

    Examples
    --------
    >>> v = check_gossipsub({"variant": "v1.2"})
    >>> v["idontwant_threshold"], v["D"]
    (1024, 6)
    >>> check_gossipsub({"D_out": 4})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: gossipsub: parameter D_out must be < D_lo (4) and <= D / 2 ...
    >>> check_gossipsub({"variant": "v1.0", "scoring": True})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: gossipsub: parameter scoring must be false under v1.0 ...
    """
    v = validate_params(owner, PARAMS, values)
    version = VARIANTS.index(v["variant"])
    bootstrapper = v["D"] == v["D_lo"] == v["D_hi"] == v["D_out"] == 0
    if not bootstrapper and not v["D_lo"] <= v["D"] <= v["D_hi"]:
        raise _fail("D", f"in [D_lo, D_hi] = [{v['D_lo']}, {v['D_hi']}]", v["D"])
    if v["mcache_gossip"] > v["mcache_len"]:
        raise _fail("mcache_gossip", f"<= mcache_len ({v['mcache_len']})", v["mcache_gossip"])
    if version >= 1:
        if v["D_score"] > v["D"]:
            raise _fail("D_score", f"<= D ({v['D']})", v["D_score"])
        if not bootstrapper and not (v["D_out"] < v["D_lo"] and 2 * v["D_out"] <= v["D"]):
            raise _fail("D_out", f"< D_lo ({v['D_lo']}) and <= D / 2 ({v['D'] / 2:g})",
                        v["D_out"])
    else:
        for key in ("scoring", "flood_publish"):
            if v[key]:
                what = "scoring is" if key == "scoring" else "flood publishing is"
                raise _fail(key, f"false under v1.0 ({what} v1.1's)", v[key])
    if version < 2 and v["idontwant_threshold"] is not None:
        raise _fail("idontwant_threshold", f"unset under {v['variant']} (IDONTWANT is v1.2's)",
                    v["idontwant_threshold"])
    if version == 2 and v["idontwant_threshold"] is None:
        v["idontwant_threshold"] = 1024
    return v


# --------------------------------------------------------------------------- presets
_SPEC10 = "gossipsub-v1.0.md, Parameters"
_SPEC11 = "gossipsub-v1.1.md, Overview of New Parameters"
_GO = "go-libp2p-pubsub gossipsub.go default (the specification leaves it open)"
_ETH = "consensus-specs phase0 p2p-interface.md, Gossipsub Parameters"
_LODESTAR = "Lodestar gossipsub.ts (the consensus specs leave it open)"
_JS = "js-libp2p-gossipsub constants.ts default, as run by Lodestar"
_OURS = "Hedgerow's choice: not a gossip parameter (libp2p's connection layer)"

# Each preset: name -> {parameter: (value, source)}.
_V10: dict[str, tuple[Any, str]] = {
    "variant": ("v1.0", "gossipsub-v1.0.md (/meshsub/1.0.0)"),
    "D": (6, _SPEC10),
    "D_lo": (4, _SPEC10),  # go-libp2p-pubsub now defaults to 5; the JS implementation keeps 4
    "D_hi": (12, _SPEC10),
    "D_lazy": (6, _SPEC10 + " (D_lazy defaults to D)"),
    "D_score": (4, "unused before v1.1; go-libp2p-pubsub default"),
    "D_out": (2, "unused before v1.1; go-libp2p-pubsub default"),
    "heartbeat_ms": (1000.0, _SPEC10 + " (1 second)"),
    "fanout_ttl_ms": (60_000.0, _SPEC10 + " (60 seconds)"),
    "mcache_len": (5, _SPEC10),
    "mcache_gossip": (3, _SPEC10),
    "seen_ttl_ms": (120_000.0, _SPEC10 + " (2 minutes)"),
    "gossip_factor": (0.25, "unused before v1.1 (IHAVE to D_lazy peers)"),
    "prune_backoff_ms": (60_000.0, "unused before v1.1; go-libp2p-pubsub default"),
    "unsubscribe_backoff_ms": (10_000.0, "unused before v1.1; go-libp2p-pubsub default"),
    "gossip_retransmission": (3, "unused before v1.1 (every IWANT answered)"),
    "max_ihave_length": (5000, "unused before v1.1; go-libp2p-pubsub default"),
    "max_ihave_messages": (10, "unused before v1.1; go-libp2p-pubsub default"),
    "iwant_followup_ms": (3000.0, "unused before v1.1; go-libp2p-pubsub default"),
    "opportunistic_graft_ticks": (60, "unused before v1.1; go-libp2p-pubsub default"),
    "opportunistic_graft_peers": (2, "unused before v1.1; go-libp2p-pubsub default"),
    "prune_peers": (16, "unused before v1.1 (no peer exchange)"),
    "peer_exchange": (False, "no peer exchange before v1.1"),
    "flood_publish": (False, "gossipsub-v1.0.md: publish to the mesh or fanout"),
    "idontwant_threshold": (None, "no IDONTWANT before v1.2"),
    "max_idontwant_messages": (1000, "unused before v1.2; go-libp2p-pubsub default"),
    "scoring": (False, "no scoring before v1.1"),
    "graft_on_subscribe": (False, "Hedgerow's default: meshes form at the first heartbeat (the "
                           "specifications leave it open)"),
    "heartbeat_phase": ("sync", "Hedgerow's default, which keeps earlier runs' numbers (the "
                        "specifications leave it open; deployed nodes start at different "
                        "times: random)"),
    "control_rpc": ("per-peer", "go-libp2p-pubsub gossipsub.go (sendGraftPrune, flush: one "
                    "RPC per peer, gossip piggybacked); the specifications leave it open"),
    "connections": (50, _OURS),
}

_V11: dict[str, tuple[Any, str]] = {
    **_V10,
    "variant": ("v1.1", "gossipsub-v1.1.md (/meshsub/1.1.0)"),
    "D_score": (4, _SPEC11 + " (4 or 5 for a D of 6)"),
    "D_out": (2, _SPEC11 + " (2 for a D of 6)"),
    "gossip_factor": (0.25, _SPEC11),
    "prune_backoff_ms": (60_000.0, _SPEC11 + " (1 minute)"),
    "unsubscribe_backoff_ms": (10_000.0, _SPEC11 + " (10 seconds)"),
    "gossip_retransmission": (3, _GO),
    "max_ihave_length": (5000, _GO),
    "max_ihave_messages": (10, _GO),
    "iwant_followup_ms": (3000.0, _GO),
    "opportunistic_graft_ticks": (60, "gossipsub-v1.1.md, Opportunistic Grafting (1 minute); "
                                  "go-libp2p-pubsub default"),
    "opportunistic_graft_peers": (2, "gossipsub-v1.1.md, Opportunistic Grafting"),
    "prune_peers": (16, "gossipsub-v1.1.md, PRUNE Backoff and Peer Exchange; "
                    "go-libp2p-pubsub default"),
    "peer_exchange": (False, "go-libp2p-pubsub default (WithPeerExchange, off unless set; the "
                      "specification recommends it on bootstrappers)"),
    "flood_publish": (True, _SPEC11),
    "scoring": (False, "go-libp2p-pubsub scores only when the application gives parameters"),
}

_V12: dict[str, tuple[Any, str]] = {
    **_V11,
    "variant": ("v1.2", "gossipsub-v1.2.md (/meshsub/1.2.0)"),
    "idontwant_threshold": (1024, "go-libp2p-pubsub default (gossipsub-v1.2.md leaves the "
                            "policy to implementations; the JS implementation's is 512)"),
    "max_idontwant_messages": (1000, "go-libp2p-pubsub default (gossipsub-v1.2.md, Parameters, "
                               "gives none)"),
}

_ETHEREUM: dict[str, tuple[Any, str]] = {
    **_V12,
    "variant": ("v1.2", "Lodestar runs js-libp2p-gossipsub with /meshsub/1.2.0"),
    "D": (8, _ETH),
    "D_lo": (6, _ETH),
    "D_hi": (12, _ETH),
    "D_lazy": (6, _ETH),
    "D_score": (4, _JS),
    "D_out": (2, _JS),
    "heartbeat_ms": (700.0, _ETH + " (0.7 s)"),
    "fanout_ttl_ms": (60_000.0, _ETH + " (60 s)"),
    "mcache_len": (6, _ETH),
    "mcache_gossip": (3, _ETH),
    # SLOT_DURATION_MS * SLOTS_PER_EPOCH * 2 // 1000 s = 12,000 * 32 * 2 ms
    "seen_ttl_ms": (768_000.0, _ETH + " (two epochs of 32 slots of 12 s)"),
    "gossip_factor": (0.25, _JS),
    "prune_backoff_ms": (60_000.0, _JS),
    "unsubscribe_backoff_ms": (10_000.0, _JS),
    "gossip_retransmission": (3, _JS),
    "max_ihave_length": (5000, _JS),
    "max_ihave_messages": (10, _JS),
    "iwant_followup_ms": (12_000.0, _LODESTAR + " (12 s for its I/O lag)"),
    "opportunistic_graft_ticks": (60, _JS),
    "opportunistic_graft_peers": (2, _JS),
    "prune_peers": (16, _JS),
    "peer_exchange": (False, "js-libp2p-gossipsub doPX default (off); Lodestar gossipsub.ts "
                      "does not set it"),
    "flood_publish": (True, _LODESTAR),
    "idontwant_threshold": (16_829, _LODESTAR + " (idontwantMinDataSize)"),
    "max_idontwant_messages": (512, _JS),
    "scoring": (True, "Lodestar and Lighthouse score peers (score_preset('ethereum'))"),
    "graft_on_subscribe": (True, _JS.replace(" default", "") + ": a subscribing peer is "
                           "grafted at once while the mesh is below D_lo"),
    "control_rpc": ("per-peer", "js-libp2p-gossipsub gossipsub.ts (sendGraftPrune, flush; "
                    "sendRpc piggybacks the peer's pending gossip and control)"),
    "connections": (100, "Lodestar network/options.ts (targetPeers)"),
}

#: the presets: name -> {parameter: (value, source)}
PRESETS: dict[str, dict[str, tuple[Any, str]]] = {
    "v1.0": _V10, "v1.1": _V11, "v1.2": _V12, "ethereum": _ETHEREUM,
}


def _preset_entry(name: str) -> dict[str, tuple[Any, str]]:
    if name not in PRESETS:
        raise ParameterError(f"{_OWNER}: unknown preset {name!r}; allowed: "
                             f"{', '.join(PRESETS)}", key="preset")
    return PRESETS[name]


def preset(name: str) -> dict[str, Any]:
    """The parameter values of a preset (a new dict: ``v1.0``, ``v1.1``, ``v1.2``, ``ethereum``).

    Examples
    --------
    >>> preset("v1.0")["flood_publish"], preset("v1.2")["idontwant_threshold"]
    (False, 1024)
    >>> preset("eth2")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: gossipsub: unknown preset 'eth2'; allowed: v1.0, v1.1, ...
    """
    return {k: value for k, (value, _) in _preset_entry(name).items()}


def preset_sources(name: str) -> dict[str, str]:
    """Where each value of a preset comes from.

    Examples
    --------
    >>> preset_sources("ethereum")["D"]
    'consensus-specs phase0 p2p-interface.md, Gossipsub Parameters'
    """
    return {k: source for k, (_, source) in _preset_entry(name).items()}


def presets_reference() -> str:
    """The presets as one Markdown table (pasted into ``docs/gossipsub.md``; a test compares).

    Examples
    --------
    >>> presets_reference().splitlines()[0]
    '| parameter | meaning | v1.0 | v1.1 | v1.2 | ethereum | source (v1.2) | source (ethereum) |'
    """
    names = list(PRESETS)
    head = ("| parameter | meaning | " + " | ".join(names)
            + " | source (v1.2) | source (ethereum) |")
    lines = [head, "|" + "---|" * (len(names) + 4)]
    for key, p in PARAMS.items():
        cells = [_cell(PRESETS[n][key][0]) for n in names]
        unit = f" ({p.unit})" if p.unit else ""
        lines.append(f"| `{key}` | {p.doc}{unit} | " + " | ".join(cells)
                     + f" | {PRESETS['v1.2'][key][1]} | {PRESETS['ethereum'][key][1]} |")
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:g}"
    return f"{value:,}" if isinstance(value, int) else str(value)


# --------------------------------------------------------------------------- scoring presets
# consensus-specs constants (phase0 beacon-chain.md, validator.md, p2p-interface.md)
_SLOTS_PER_EPOCH = 32
_SLOT_MS = 12_000.0
_ATTESTATION_SUBNET_COUNT = 64
_TARGET_COMMITTEE_SIZE = 128
_MAX_COMMITTEES_PER_SLOT = 64
_TARGET_AGGREGATORS_PER_COMMITTEE = 16

# Lodestar scoringParameters.ts (after Lighthouse): topic weights and the score budget
_MAX_IN_MESH_SCORE = 10.0
_MAX_FIRST_MESSAGE_DELIVERIES_SCORE = 40.0
_ETH_TOPIC_WEIGHT = {
    "beacon_block": 0.5,
    "beacon_aggregate_and_proof": 0.5,
    "beacon_attestation": 1.0 / _ATTESTATION_SUBNET_COUNT,
    "voluntary_exit": 0.05,
    "proposer_slashing": 0.05,
    "attester_slashing": 0.05,
    "bls_to_execution_change": 0.05,
}
#: the Ethereum topic kinds :func:`ethereum_score_params` knows
ETHEREUM_TOPIC_KINDS = tuple(_ETH_TOPIC_WEIGHT)
_MAX_POSITIVE_SCORE = (_MAX_IN_MESH_SCORE + _MAX_FIRST_MESSAGE_DELIVERIES_SCORE) * (
    _ETH_TOPIC_WEIGHT["beacon_block"] + _ETH_TOPIC_WEIGHT["beacon_aggregate_and_proof"]
    + _ETH_TOPIC_WEIGHT["beacon_attestation"] * _ATTESTATION_SUBNET_COUNT
    + 4 * 0.05)
_ETH_THRESHOLDS = PeerScoreThresholds(gossip=-4000.0, publish=-8000.0, graylist=-16000.0,
                                      accept_px=100.0, opportunistic_graft=5.0)


def _committees_per_slot(active: int) -> int:
    per_slot = active // _SLOTS_PER_EPOCH // _TARGET_COMMITTEE_SIZE
    return max(1, min(_MAX_COMMITTEES_PER_SLOT, per_slot))


def _aggregators_per_slot(active: int) -> int:
    # Lodestar's expectedAggregatorCountPerSlot, line for line
    committees_per_epoch = _committees_per_slot(active) * _SLOTS_PER_EPOCH
    smaller = active // committees_per_epoch
    large_per_epoch = active - smaller * committees_per_epoch
    small_per_epoch = committees_per_epoch - large_per_epoch
    mod_smaller = max(1, smaller // _TARGET_AGGREGATORS_PER_COMMITTEE)
    mod_larger = max(1, (smaller + 1) // _TARGET_AGGREGATORS_PER_COMMITTEE)
    small_agg = int(smaller / mod_smaller * small_per_epoch)
    large_agg = int((smaller + 1) / mod_larger * large_per_epoch)
    return max(1, (small_agg + large_agg) // _SLOTS_PER_EPOCH)


def _eth_topic(kind: str, active: int, current_slot: int | None) -> TopicScoreParams:
    epoch_ms = _SLOT_MS * _SLOTS_PER_EPOCH
    dz = 0.01

    def factor(ms: float) -> float:
        return decay_factor(ms, _SLOT_MS, dz)

    weight = _ETH_TOPIC_WEIGHT[kind]
    multiple_bursts = _committees_per_slot(active) >= 2 * _ATTESTATION_SUBNET_COUNT / \
        _SLOTS_PER_EPOCH
    mesh: tuple[int, float, float] | None = None   # (decay slots, cap factor, activation ms)
    if kind in ("voluntary_exit", "bls_to_execution_change"):
        rate, first_decay_ms = 4 / _SLOTS_PER_EPOCH, epoch_ms * 100
    elif kind in ("attester_slashing", "proposer_slashing"):
        rate, first_decay_ms = 1 / 5 / _SLOTS_PER_EPOCH, epoch_ms * 100
    elif kind == "beacon_block":
        rate, first_decay_ms = 1.0, epoch_ms * 20
        mesh = (_SLOTS_PER_EPOCH * 5, 3.0, epoch_ms)
    elif kind == "beacon_aggregate_and_proof":
        rate, first_decay_ms = float(_aggregators_per_slot(active)), epoch_ms
        mesh = (_SLOTS_PER_EPOCH * 2, 4.0, epoch_ms)
    else:  # beacon_attestation, one of 64 subnets
        rate = active / _ATTESTATION_SUBNET_COUNT / _SLOTS_PER_EPOCH
        first_decay_ms = epoch_ms if multiple_bursts else epoch_ms * 4
        mesh = (_SLOTS_PER_EPOCH * (4 if multiple_bursts else 16), 16.0,
                _SLOT_MS * (_SLOTS_PER_EPOCH / 2 + 1) if multiple_bursts else epoch_ms)
    quantum = _SLOT_MS
    tim_cap = 3600 / (quantum / 1000)
    first_decay = factor(first_decay_ms)
    first_cap = decay_convergence(first_decay, 2 * rate / 8)   # 8 = Lodestar's GOSSIP_D
    kw: dict[str, float] = dict(
        topic_weight=weight, time_in_mesh_weight=10 / tim_cap, time_in_mesh_quantum_ms=quantum,
        time_in_mesh_cap=tim_cap, first_deliveries_weight=40 / first_cap,
        first_deliveries_decay=first_decay, first_deliveries_cap=first_cap,
        invalid_deliveries_weight=-_MAX_POSITIVE_SCORE / weight,
        invalid_deliveries_decay=factor(epoch_ms * 50),
        mesh_deliveries_weight=0.0, mesh_deliveries_threshold=0.0, mesh_deliveries_decay=0.0,
        mesh_deliveries_cap=0.0, mesh_deliveries_window_ms=0.0, mesh_deliveries_activation_ms=0.0,
        mesh_failure_penalty_decay=0.0, mesh_failure_penalty_weight=0.0,
    )
    if mesh is not None:
        decay_slots, cap_factor, activation = mesh
        md = factor(_SLOT_MS * decay_slots)
        threshold = decay_convergence(md, rate / 50) * md
        w3 = -_MAX_POSITIVE_SCORE / (weight * threshold * threshold)
        kw.update(mesh_deliveries_decay=md, mesh_deliveries_threshold=threshold,
                  mesh_deliveries_cap=max(cap_factor * threshold, 2.0),
                  mesh_deliveries_activation_ms=activation, mesh_deliveries_window_ms=12_000.0,
                  mesh_failure_penalty_decay=md, mesh_deliveries_weight=w3,
                  mesh_failure_penalty_weight=w3)
        if current_slot is not None and decay_slots >= current_slot:
            # a young chain: Lodestar switches the mesh-delivery penalty off
            kw.update(mesh_deliveries_threshold=0.0, mesh_deliveries_weight=0.0)
    return TopicScoreParams(**kw)


def ethereum_score_params(topic_kinds: Sequence[str], *, active_validators: int = 1_000_000,
                          current_slot: int | None = None) -> PeerScoreParams:
    """Ethereum's peer-scoring parameters as Lodestar computes them (after Lighthouse).

    Parameters
    ----------
    topic_kinds : sequence of str
        The kind of each topic id (one of :data:`ETHEREUM_TOPIC_KINDS`).
    active_validators : int
        Active validators, which set the attestation and aggregate rates
        (about 10⁶ on mainnet in 2025).
    current_slot : int, optional
        The chain's slot; below a topic's mesh decay window Lodestar turns
        the mesh-delivery penalty off.  ``None``: a mature chain.

    Examples
    --------
    >>> p = ethereum_score_params(["beacon_block"])
    >>> round(p.topic_score_cap, 9), p.decay_interval_ms, p.ip_colocation_factor_threshold
    (55.0, 12000.0, 3)
    >>> round(p.topics[0].first_deliveries_cap, 3), p.topics[0].time_in_mesh_cap
    (34.869, 300.0)
    >>> ethereum_score_params(["blocks"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: gossipsub: topic_kinds[0] must be one of beacon_block, ...
    """
    for i, kind in enumerate(topic_kinds):
        if kind not in _ETH_TOPIC_WEIGHT:
            raise ParameterError(f"{_OWNER}: topic_kinds[{i}] must be one of "
                                 f"{', '.join(ETHEREUM_TOPIC_KINDS)}, got {kind!r}",
                                 key="topic_kinds")
    if isinstance(active_validators, bool) or not isinstance(active_validators, int) \
            or active_validators < 1:
        raise ParameterError(f"{_OWNER}: active_validators must be a whole number >= 1, got "
                             f"{active_validators!r}", key="active_validators")
    epoch_ms = _SLOT_MS * _SLOTS_PER_EPOCH
    bp_decay = decay_factor(epoch_ms * 10, _SLOT_MS, 0.01)
    bp_threshold = 6.0
    target = decay_convergence(bp_decay, 10 / _SLOTS_PER_EPOCH) - bp_threshold
    cap = _MAX_POSITIVE_SCORE * 0.5
    return PeerScoreParams(
        topics=tuple(_eth_topic(k, active_validators, current_slot) for k in topic_kinds),
        topic_score_cap=cap, app_specific_weight=1.0,
        ip_colocation_factor_weight=-cap, ip_colocation_factor_threshold=3,
        behaviour_penalty_weight=_ETH_THRESHOLDS.gossip / (target * target),
        behaviour_penalty_threshold=bp_threshold, behaviour_penalty_decay=bp_decay,
        decay_interval_ms=_SLOT_MS, decay_to_zero=0.01, retain_score_ms=epoch_ms * 100,
    )


#: the GossipSub v1.1 evaluation's thresholds (``libp2p/gossipsub-hardening``,
#: ``scripts/configs/1k-*.json``)
HARDENING_THRESHOLDS = PeerScoreThresholds(gossip=-4000.0, publish=-5000.0, graylist=-10000.0,
                                           accept_px=0.0, opportunistic_graft=0.0)


def hardening_score_params(n_topics: int, *, colocation: bool = False) -> PeerScoreParams:
    """The score parameters of the GossipSub v1.1 evaluation, every topic its ``blocks`` topic.

    From the saved configurations of its test plans (``libp2p/gossipsub-hardening``,
    ``scripts/configs/1k-*.json``, the same in every attack): topic weight
    0.25; P1 0.0027 per 1 s in the mesh, capped at 3,600; P2 0.664, decay
    0.9916, cap 1,500; P3 -0.25, decay 0.997, cap 400, threshold 10,
    activation 1 min, window 5 ms; P3b -0.25, decay 0.997; P4 -99, decay
    0.9994; P6 weight 0 (threshold 1); decay every 1 s, to zero below 0.01,
    scores kept 30 s.  The configurations set no topic score cap, P5 or P7,
    so these are go-libp2p-pubsub's zero values (no cap, weights 0).
    ``colocation`` takes its IP-colocation configuration
    (``1k-attack-colocation.json``): P6 weight -10, threshold 1.

    Examples
    --------
    >>> p = hardening_score_params(1)
    >>> p.topics[0].mesh_deliveries_threshold, p.topic_score_cap, p.behaviour_penalty_weight
    (10.0, 0.0, 0.0)
    >>> hardening_score_params(1, colocation=True).ip_colocation_factor_weight
    -10.0
    """
    tp = TopicScoreParams(
        topic_weight=0.25, time_in_mesh_weight=0.0027, time_in_mesh_quantum_ms=1000.0,
        time_in_mesh_cap=3600.0, first_deliveries_weight=0.664, first_deliveries_decay=0.9916,
        first_deliveries_cap=1500.0, mesh_deliveries_weight=-0.25, mesh_deliveries_decay=0.997,
        mesh_deliveries_cap=400.0, mesh_deliveries_threshold=10.0,
        mesh_deliveries_window_ms=5.0, mesh_deliveries_activation_ms=60000.0,
        mesh_failure_penalty_weight=-0.25, mesh_failure_penalty_decay=0.997,
        invalid_deliveries_weight=-99.0, invalid_deliveries_decay=0.9994)
    return PeerScoreParams(
        topics=(tp,) * n_topics, topic_score_cap=0.0, app_specific_weight=0.0,
        ip_colocation_factor_weight=-10.0 if colocation else 0.0,
        ip_colocation_factor_threshold=1,
        behaviour_penalty_weight=0.0, behaviour_penalty_decay=0.0, decay_interval_ms=1000.0,
        decay_to_zero=0.01, retain_score_ms=30000.0)


def score_preset(name: str, n_topics: int, *,
                 topic_kinds: Sequence[str] | None = None,
                 active_validators: int = 1_000_000) -> tuple[PeerScoreParams, PeerScoreThresholds]:
    """The peer-scoring parameters and thresholds that go with a preset, for ``n_topics`` topics.

    ``v1.1`` and ``v1.2`` (the specifications give no values) take the JS
    implementation's defaults (``defaultPeerScoreParams``, every topic
    ``defaultTopicScoreParams``, ``defaultPeerScoreThresholds``); ``ethereum``
    takes :func:`ethereum_score_params` with ``topic_kinds`` (default: every
    topic a ``beacon_block`` topic, the block world) and Lighthouse's
    thresholds as Lodestar sets them.  ``v1.0`` has no scoring.

    Examples
    --------
    >>> params, thresholds = score_preset("ethereum", 2)
    >>> len(params.topics), thresholds.gossip, thresholds.graylist
    (2, -4000.0, -16000.0)
    >>> score_preset("v1.0", 1)
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: gossipsub: preset v1.0 has no peer scoring (scoring is v1.1's)
    """
    _preset_entry(name)
    if isinstance(n_topics, bool) or not isinstance(n_topics, int) or n_topics < 0:
        raise ParameterError(f"{_OWNER}: n_topics must be a whole number >= 0, got "
                             f"{n_topics!r}", key="n_topics")
    if name == "v1.0":
        raise ParameterError(f"{_OWNER}: preset v1.0 has no peer scoring (scoring is v1.1's)",
                             key="preset")
    if name == "ethereum":
        kinds = list(topic_kinds) if topic_kinds is not None else ["beacon_block"] * n_topics
        if len(kinds) != n_topics:
            raise ParameterError(f"{_OWNER}: topic_kinds must name {n_topics} topics, got "
                                 f"{len(kinds)}", key="topic_kinds")
        return (ethereum_score_params(kinds, active_validators=active_validators),
                _ETH_THRESHOLDS)
    return PeerScoreParams(topics=(TopicScoreParams(),) * n_topics), PeerScoreThresholds()
