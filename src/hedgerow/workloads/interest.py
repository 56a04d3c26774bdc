"""The topic-interest-rate workload of Topiary section V-A.

"A topic interest rate of x% means each node randomly subscribes to each
topic with a probability of x/100 (randomness is independent across topics
and nodes)."  The paper then excludes configurations where a node could end up
with no topic ("to ensure nodes have at least one interested topic ... we do
not consider the case of small topic interest rates under a small topic
size"); we keep every configuration valid by giving a node that drew no topic
one uniformly random topic (at 100 topics and 10% interest this happens with
probability ``0.9^100 ≈ 3e-5`` per node).
"""

from __future__ import annotations

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance


def interest_bytes(n_nodes: int, n_topics: int, interest: float) -> float:
    """Estimated peak bytes of :func:`interest_instance`: the dense draw, then the CSR.

    The draw holds an ``(n_nodes, n_topics)`` float64 matrix and its bool and
    int8 copies; the instance holds about ``interest * n_nodes * n_topics``
    subscriptions in CSR and CSC (8-byte indices) plus a bit mask per node.

    Examples
    --------
    >>> interest_bytes(1000, 100, 0.2) < 2**21
    True
    """
    cells = float(n_nodes) * float(n_topics)
    dense = cells * (8 + 1 + 1)
    subs = float(interest) * cells * (8 + 1 + 8 + 8)
    masks = 8.0 * n_nodes * ((n_topics + 63) // 64)
    return dense + subs + masks


def interest_instance(
    n_nodes: int, n_topics: int, interest: float, rng: np.random.Generator
) -> Instance:
    """Each node subscribes to each topic independently with probability ``interest``.

    Parameters
    ----------
    n_nodes, n_topics : int
        Sizes.
    interest : float
        Per-(node, topic) subscription probability, in ``(0, 1]``.
    rng : numpy.random.Generator
        The workload stream.

    Examples
    --------
    >>> import numpy as np
    >>> inst = interest_instance(1000, 100, 0.2, np.random.default_rng(0))
    >>> round(float(inst.n_subs.mean()), 0), int(inst.n_subs.min()) >= 1
    (20.0, True)
    """
    if n_nodes < 2:
        raise ParameterError(f"a scenario needs at least 2 nodes, got {n_nodes}")
    if n_topics < 1:
        raise ParameterError(f"topics must be >= 1, got {n_topics}")
    if not (0.0 < interest <= 1.0):
        raise ParameterError(f"interest must be in (0, 1], got {interest}")
    sub = rng.random((n_nodes, n_topics)) < interest
    empty = ~sub.any(axis=1)
    if empty.any():
        sub[np.flatnonzero(empty), rng.integers(0, n_topics, size=int(empty.sum()))] = True
    return Instance.from_matrix(sub.astype(np.int8), meta={"interest": float(interest)})


def _set_subscription(instance: Instance, nodes: np.ndarray, topic: int, value: bool) -> Instance:
    """A copy of ``instance`` where whether ``nodes`` subscribe to ``topic`` is ``value``."""
    m = instance.matrix.toarray().astype(bool)
    m[np.asarray(nodes, dtype=np.int64), int(topic)] = value
    return Instance.from_matrix(m.astype(np.int8), meta=dict(instance.meta))


def with_topic(instance: Instance, nodes: np.ndarray, topic: int) -> Instance:
    """A copy of ``instance`` where ``nodes`` also subscribe to ``topic``.

    Examples
    --------
    >>> inst = Instance.from_lists([[1], [0], [1]], n_topics=2)
    >>> with_topic(inst, np.array([0, 2]), 0).subscribers(0).tolist()
    [0, 1, 2]
    """
    return _set_subscription(instance, nodes, topic, True)


def without_topic(instance: Instance, nodes: np.ndarray, topic: int) -> Instance:
    """A copy of ``instance`` where ``nodes`` do not subscribe to ``topic``.

    Topics must keep at least one subscriber somewhere; a node left with no
    topic keeps an empty row (only used as a publisher table).

    Examples
    --------
    >>> inst = Instance.from_lists([[0, 1], [0], [1]], n_topics=2)
    >>> without_topic(inst, np.array([0]), 0).subscribers(0).tolist()
    [1]
    """
    return _set_subscription(instance, nodes, topic, False)
