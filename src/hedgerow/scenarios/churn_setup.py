"""The setup every churn driver shares: the protocol checked, its streams, the control checked.

Three drivers run a protocol under churn (:func:`hedgerow.scenarios.churn.run_churn`,
snapshots of a maintained overlay; :func:`hedgerow.scenarios.events.run_events`, a
maintained overlay event by event; :func:`hedgerow.scenarios.gossip_churn.run_gossip_churn`,
a cycle-driven gossip protocol sampled every few cycles).  They differ in the engine's shape
(:class:`~hedgerow.protocols.engine_api.ChurnEngine` or
:class:`~hedgerow.protocols.engine_api.CycleEngine`) and in the control and observers; what
comes before is one function each here:

* :func:`churn_protocol` -- the protocol has the capability the driver runs, its
  parameters are valid against the instance (a one-line
  :class:`~hedgerow.errors.ParameterError` naming the key), and its random streams are
  :meth:`proto.streams(seed) <hedgerow.protocols.base.OverlayProtocol.streams>` (the one
  derivation, honouring ``stream_key``: a built overlay and the start of a churn run with
  the same seed draw the same numbers);
* :func:`churn_control` -- the control's ``(online0, events)`` fit the instance.

Examples
--------
>>> from hedgerow.workloads import make_instance
>>> inst = make_instance(nodes=40, topics=6, subs=2, seed=1)
>>> setup = churn_protocol("lowoda-inc", inst, capability="maintained", seed=3)
>>> setup.streams.seed == setup.proto.streams(3).seed, setup.protocol
(True, 'lowoda-inc')
>>> try:
...     churn_protocol("topiary", inst, capability="cycle", seed=3)
... except ParameterError as e:
...     print(e.key, "|", str(e).split(";")[0])
protocol | topiary does not run under this churn (it is adaptive)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.protocols import REGISTRY, capabilities, protocol_names
from hedgerow.protocols.base import OverlayProtocol
from hedgerow.scenarios.traces import EVENT_DTYPE

__all__ = ["ChurnProtocol", "churn_control", "churn_protocol"]


@dataclass(frozen=True)
class ChurnProtocol:
    """A protocol ready for a churn run.

    Attributes
    ----------
    protocol : str
        Its registered name.
    proto : OverlayProtocol
        The configured protocol.
    values : dict
        Its parameters, validated against the instance (what the run runs with).
    streams : RngStreams
        Its random streams for the run's seed (``proto.streams(seed)``).
    seed : int
        The run's seed.
    """

    protocol: str
    proto: OverlayProtocol
    values: dict[str, Any]
    streams: RngStreams
    seed: int


def churn_protocol(
    protocol: str,
    instance: Instance,
    *,
    capability: str,
    seed: int,
    params: Mapping[str, Any] | None = None,
) -> ChurnProtocol:
    """Check ``protocol`` for a churn run of ``capability`` on ``instance``; its streams.

    Raises :class:`ParameterError` (``key="protocol"``) when the protocol lacks the
    capability, (``key="seed"``) for a negative seed, and the parameter's own error
    (its name as ``key``) for a bad parameter.
    """
    if protocol not in REGISTRY or capability not in capabilities(REGISTRY[protocol]):
        names = ", ".join(protocol_names(capability))
        what = ("unknown protocol" if protocol not in REGISTRY else
                f"it is {'/'.join(capabilities(REGISTRY[protocol]))}")
        raise ParameterError(
            f"{protocol} does not run under this churn ({what}); {capability} protocols: {names}",
            key="protocol",
        )
    if not isinstance(seed, int | np.integer) or seed < 0:
        raise ParameterError(f"seed must be an integer >= 0, got {seed!r}", key="seed")
    proto = REGISTRY[protocol](**dict(params or {}))
    values = proto._validate(instance)
    return ChurnProtocol(protocol, proto, values, proto.streams(int(seed)), int(seed))


def churn_control(
    instance: Instance, online0: np.ndarray, events: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(online0, events)`` checked against ``instance``: a bool mask and sorted events.

    Examples
    --------
    >>> from hedgerow.workloads import make_instance
    >>> inst = make_instance(nodes=3, topics=2, subs=1, seed=1)
    >>> ev = np.array([(1.0, 5, 1)], dtype=EVENT_DTYPE)
    >>> churn_control(inst, np.ones(3, bool), ev)
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: the trace has node 5, but the workload has 3 nodes
    """
    on = np.asarray(online0, dtype=bool)
    if on.shape != (instance.n_nodes,):
        raise ParameterError(
            f"the churn's online mask has {on.shape[0] if on.ndim else 0} nodes, the workload"
            f" {instance.n_nodes}", key="trace")
    ev = np.asarray(events, dtype=EVENT_DTYPE)
    if len(ev) and int(ev["node"].max()) >= instance.n_nodes:
        raise ParameterError(
            f"the trace has node {int(ev['node'].max())}, but the workload has"
            f" {instance.n_nodes} nodes", key="trace")
    if len(ev) and int(ev["node"].min()) < 0:
        raise ParameterError(f"the trace has node {int(ev['node'].min())}", key="trace")
    if len(ev) > 1 and (np.diff(ev["time_s"]) < 0).any():
        raise ParameterError("the churn events are not in time order", key="trace")
    return on, ev
