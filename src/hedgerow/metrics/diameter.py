"""Topic diameter: the maximum hop count between two subscribers inside ``G_t``."""

from __future__ import annotations

import numpy as np

from hedgerow.metrics._kernels import topic_diameter_kernel, topic_kernel_args
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
    return topic_diameter_kernel(*topic_kernel_args(overlay, instance))
