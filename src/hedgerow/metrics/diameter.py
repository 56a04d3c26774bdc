"""Topic diameter: the maximum hop count between two subscribers of a topic.

Two readings, both exact:

* :func:`topic_diameters` — inside the topic-induced subgraph ``G_t`` (paths use
  subscribers only: the hop count of an event routed within its topic);
* :func:`topic_overlay_diameters` — in the whole overlay (paths may cross
  non-subscribers); one BFS per node.  The SpiderCast paper's reported values (maximum 6 for RSS
  and Uniform, 7 for Zipf(1), 8 for NYSE, up to 10K nodes) match this reading;
  ``docs/spidercast.md`` has the comparison.
"""

from __future__ import annotations

import numpy as np

from hedgerow.metrics._args import checked
from hedgerow.metrics._kernels import (
    topic_diameter_kernel,
    topic_kernel_args,
    topic_overlay_diameter_kernel,
)
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay


def topic_diameters(overlay: Overlay, instance: Instance) -> np.ndarray:
    """Hop diameter of each topic subgraph ``G_t``.

    For a partitioned topic this is the largest diameter among its components
    (the largest finite distance), so it stays meaningful for baselines that
    leave topics split.  Topics with fewer than two subscribers have diameter 0.
    The values are exact; each component needs only a few BFS thanks to
    eccentricity bounds (Takes and Kosters, 2011).

    Examples
    --------
    >>> from hedgerow.model import Instance, Overlay
    >>> inst = Instance.from_lists([[0], [0], [0], [0, 1]], n_topics=2)
    >>> ov = Overlay.from_edges(4, [(0, 1), (1, 2), (2, 3)])
    >>> topic_diameters(ov, inst).tolist()
    [3, 0]
    """
    checked("topic_diameters", overlay=overlay, instance=instance)
    return topic_diameter_kernel(*topic_kernel_args(overlay, instance))


def topic_overlay_diameters(overlay: Overlay, instance: Instance) -> np.ndarray:
    """Largest hop distance *in the whole overlay* between two subscribers of each topic.

    Unlike :func:`topic_diameters`, a shortest path may pass through nodes that
    do not subscribe to the topic.  Pairs in different overlay components are
    ignored (the largest finite distance is reported).  Topics with fewer than
    two subscribers give 0.  Exact: one BFS per node over the overlay (all
    topics of the source at once), in parallel.

    Examples
    --------
    >>> from hedgerow.model import Instance, Overlay
    >>> inst = Instance.from_lists([[0], [1], [0], [0, 1]], n_topics=2)
    >>> ov = Overlay.from_edges(4, [(0, 1), (1, 2), (2, 3)])
    >>> topic_diameters(ov, inst).tolist()  # inside G_0 node 0 is cut off; G_1 has no link
    [1, 0]
    >>> topic_overlay_diameters(ov, inst).tolist()  # through the overlay: 0-1-2-3 and 1-2-3
    [3, 2]
    """
    checked("topic_overlay_diameters", overlay=overlay, instance=instance)
    indptr, indices, _, _, masks, _ = topic_kernel_args(overlay, instance)
    return topic_overlay_diameter_kernel(
        indptr, indices, instance.sub_indptr, masks, instance.n_topics
    )
