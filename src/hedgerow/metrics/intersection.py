"""Subscription similarity: top-d intersection ``tdi(d)`` (SpiderCast section 3.4)."""

from __future__ import annotations

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.metrics._args import checked
from hedgerow.metrics._kernels import tdi_kernel
from hedgerow.model.instance import Instance


def tdi(instance: Instance, d: int) -> float:
    """Top-``d`` intersection in percent.

    The intersection of nodes ``n`` and ``m`` is
    ``100 |n ∩ m| / min(|n|, |m|)``; ``tdi_n(d)`` averages it over the ``d``
    nodes with the highest intersection with ``n``, and ``tdi(d)`` averages
    ``tdi_n(d)`` over all nodes.  Cost is ``O(N^2)`` popcounts (numba).

    Examples
    --------
    >>> inst = Instance.from_lists([[0, 1], [0, 1], [2, 3], [0, 2]], n_topics=4)
    >>> tdi(inst, 1)
    75.0
    """
    checked("tdi", instance=instance)
    if d < 1:
        raise ParameterError(f"tdi needs d >= 1, got {d}")
    per_node = tdi_kernel(instance.masks, instance.n_subs.astype(np.int64), int(d))
    return float(per_node.mean())
