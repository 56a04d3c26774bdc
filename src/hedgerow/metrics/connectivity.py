"""Topic connectivity: components of each topic-induced subgraph ``G_t``."""

from __future__ import annotations

import numpy as np

from hedgerow.metrics._args import checked
from hedgerow.metrics._kernels import (
    measured_component_counts,
    topic_component_counts,
    topic_kernel_args,
)
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay


def topic_components(
    overlay: Overlay, instance: Instance, *, measured: np.ndarray | None = None
) -> np.ndarray:
    """Number of connected components of ``G_t`` for every topic ``t``.

    ``G_t`` is the subgraph induced by the subscribers of ``t``; a topic with no
    subscriber has 0 components.  Directed overlays are read as undirected.

    Parameters
    ----------
    overlay : Overlay
        The overlay.
    instance : Instance
        Who subscribes to what (same nodes as ``overlay``).
    measured : numpy.ndarray, optional
        Bool mask of the *measured* nodes: count only the components of ``G_t``
        (still induced by all subscribers, so paths may cross unmeasured ones)
        that hold at least one measured subscriber; a topic without one gives 0.
        A churn snapshot uses it to leave out nodes that have just joined.

    Examples
    --------
    >>> from hedgerow.model import Instance, Overlay
    >>> inst = Instance.from_lists([[0], [0, 1], [0], [1]], n_topics=2)
    >>> ov = Overlay.from_edges(4, [(0, 1), (1, 2), (2, 3)])
    >>> topic_components(ov, inst).tolist()
    [1, 2]
    >>> topic_components(ov, inst, measured=np.array([True, False, False, False])).tolist()
    [1, 0]
    """
    checked("topic_components", overlay=overlay, instance=instance)
    args = topic_kernel_args(overlay, instance)
    if measured is None:
        return topic_component_counts(*args)
    mask = np.asarray(measured, dtype=np.bool_)
    if mask.shape != (instance.n_nodes,):
        raise ValueError(f"measured must be a bool mask of {instance.n_nodes} nodes")
    return measured_component_counts(*args, mask)  # type: ignore[call-arg]  # numba dispatcher


def partitioned_topics(overlay: Overlay, instance: Instance) -> int:
    """Number of topics whose subgraph ``G_t`` has more than one component."""
    checked("partitioned_topics", overlay=overlay, instance=instance)
    return int((topic_components(overlay, instance) > 1).sum())


def total_topic_components(overlay: Overlay, instance: Instance) -> int:
    """Sum of components over all topic subgraphs (= number of topics when all connected)."""
    checked("total_topic_components", overlay=overlay, instance=instance)
    return int(topic_components(overlay, instance).sum())
