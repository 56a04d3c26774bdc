"""Publishing probabilities for broadcast worlds (Goldfish section V-A, V-C).

In a broadcast world every node wants every message; each message has one
publisher drawn i.i.d. from fixed per-node publishing probabilities that sum
to 1 (Goldfish section V-A: "Only one publisher generates one message in each
round, and each node has a fixed publishing probability, together sum to 1").

Laws (:func:`publisher_probabilities`, spec strings as the CLI takes them):

``unif:K``
    ``K`` distinct publishers, drawn uniformly, each with probability ``1/K``
    (Table II "unif" rows; Fig. 2 uses ``unif:3``).
``exp:K``
    ``K`` distinct publishers in random order, the ``k``-th (``k = 0..K-1``)
    with probability proportional to ``exp(-k / 10)``.  The paper says "80%
    probability is concentrated on 20 nodes" (section V-C); the authors' code
    (``bx3/goldfish``, the exponential mining law it calls with beta 1 and
    epsilon 1.5e4) reduces to a decay length of 10 publishers, which puts
    86.5% on the top 20 of 100.  We follow the code: it produced Table II.
explicit
    A sequence of ``n`` non-negative numbers, normalised to sum 1.

The same seed gives the same publisher sequence whatever the protocol: a world
draws messages from its own ``"messages"`` stream (:func:`draw_publishers`),
which no protocol touches.

Examples
--------
>>> import numpy as np
>>> p = publisher_probabilities("exp:100", 100, np.random.default_rng(0))
>>> round(float(np.sort(p)[::-1][:20].sum()), 3), int((p > 0).sum())
(0.865, 100)
>>> p = publisher_probabilities("unif:3", 10, np.random.default_rng(0))
>>> sorted(set(np.round(p, 4).tolist()))
[0.0, 0.3333]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hedgerow.errors import ParameterError

__all__ = [
    "EXP_DECAY_PUBLISHERS",
    "PUBLISHER_LAWS",
    "draw_publishers",
    "parse_publishers",
    "publisher_probabilities",
]

#: laws accepted in ``law:K`` specs
PUBLISHER_LAWS = ("unif", "exp")
#: decay length (publishers) of the ``exp`` law: p_k proportional to exp(-k / 10)
EXP_DECAY_PUBLISHERS = 10.0


def parse_publishers(spec: str) -> tuple[str, int]:
    """``"exp:100"`` -> ``("exp", 100)``; a one-line error names the spec otherwise.

    Examples
    --------
    >>> parse_publishers("unif:32")
    ('unif', 32)
    >>> parse_publishers("zipf:3")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: publishers: law 'zipf' unknown in 'zipf:3'; allowed: unif, exp
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise ParameterError(
            f"publishers must be LAW:K with LAW in {', '.join(PUBLISHER_LAWS)}, got {spec!r}",
            key="publishers",
        )
    law, _, k = spec.partition(":")
    law = law.strip()
    if law not in PUBLISHER_LAWS:
        raise ParameterError(
            f"publishers: law {law!r} unknown in {spec!r}; allowed: {', '.join(PUBLISHER_LAWS)}",
            key="publishers",
        )
    try:
        count = int(k)
    except ValueError:
        raise ParameterError(
            f"publishers: K must be an integer in {spec!r}", key="publishers"
        ) from None
    if count < 1:
        raise ParameterError(f"publishers: K must be >= 1 in {spec!r}", key="publishers")
    return law, count


def publisher_probabilities(spec: Any, n_nodes: int, rng: np.random.Generator) -> np.ndarray:
    """Per-node publishing probabilities ``(n_nodes,)`` summing to 1.

    Parameters
    ----------
    spec : str or sequence of float
        ``"unif:K"``, ``"exp:K"`` or ``n_nodes`` explicit weights.
    n_nodes : int
        Nodes in the world.
    rng : numpy.random.Generator
        Draws which nodes publish (and the order of the ``exp`` law).

    Examples
    --------
    >>> publisher_probabilities([1, 0, 3], 3, np.random.default_rng(0)).tolist()
    [0.25, 0.0, 0.75]
    """
    n = int(n_nodes)
    if not isinstance(spec, str):
        w = np.asarray(spec, dtype=np.float64).ravel()
        if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise ParameterError(
                f"publishers: explicit probabilities must be {n} non-negative numbers with a "
                "positive sum",
                key="publishers",
            )
        return w / w.sum()
    law, k = parse_publishers(spec)
    if k > n:
        raise ParameterError(
            f"publishers: {spec!r} asks for {k} publishers among {n} nodes", key="publishers"
        )
    pubs = rng.choice(n, size=k, replace=False)
    if law == "unif":
        weights = np.full(k, 1.0 / k)
    else:
        weights = np.exp(-np.arange(k) / EXP_DECAY_PUBLISHERS)
        weights /= weights.sum()
    p = np.zeros(n)
    p[pubs] = weights
    return p


def draw_publishers(probs: np.ndarray, n_messages: int, rng: np.random.Generator) -> np.ndarray:
    """``n_messages`` i.i.d. publishers drawn from ``probs`` (int64).

    Inverse-CDF sampling on one uniform per message, so a message's publisher
    depends only on its own draw.

    Examples
    --------
    >>> p = np.array([0.0, 0.5, 0.5])
    >>> out = draw_publishers(p, 1000, np.random.default_rng(1))
    >>> sorted(set(out.tolist())), abs(float((out == 1).mean()) - 0.5) < 0.05
    ([1, 2], True)
    """
    cdf = np.cumsum(np.asarray(probs, dtype=np.float64))
    u = rng.random(int(n_messages)) * cdf[-1]
    idx = np.searchsorted(cdf, u, side="right")
    return np.minimum(idx, len(cdf) - 1).astype(np.int64)
