"""Message traffic: which messages an epoch publishes (Topiary sections II-A and V-A).

Each message's topic is uniform over the topics that have a subscriber and its
publisher is uniform among that topic's subscribers (publishers are
subscribers of the topic they publish on).  Used by the epoch loop of the
adaptive protocols and by the scenario runner for the static baselines.
"""

from __future__ import annotations

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance


def draw_messages(
    publishers: Instance, n_messages: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Draw an epoch of messages: topic uniform, publisher uniform among its subscribers.

    Topics without any possible publisher are never drawn (section II-A:
    publishers are subscribers of the topic).

    Parameters
    ----------
    publishers : Instance
        Who may publish on each topic (usually the subscription instance).
    n_messages : int
        Messages in the epoch.
    rng : numpy.random.Generator
        The stream to draw from.

    Returns
    -------
    publisher, topic : numpy.ndarray
        ``(n_messages,)`` int64 arrays.

    Examples
    --------
    >>> import numpy as np
    >>> inst = Instance.from_lists([[0], [0, 1], [1]], n_topics=3)
    >>> pub, top = draw_messages(inst, 6, np.random.default_rng(0))
    >>> sorted(set(top.tolist())) <= [0, 1], all(inst.intersection_size(p, p) > 0 for p in pub)
    (True, True)
    """
    sizes = publishers.topic_sizes
    live = np.flatnonzero(sizes > 0)
    if len(live) == 0:
        raise ParameterError("no topic has a subscriber; nobody can publish")
    topic = live[rng.integers(0, len(live), size=n_messages)]
    offset = (rng.random(n_messages) * sizes[topic]).astype(np.int64)
    offset = np.minimum(offset, sizes[topic] - 1)
    publisher = publishers.topic_nodes[publishers.topic_indptr[topic] + offset].astype(np.int64)
    return publisher, topic.astype(np.int64)
