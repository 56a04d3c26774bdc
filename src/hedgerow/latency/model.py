"""The :class:`LatencyModel`: one-way link delays (ms) between every pair of nodes.

A model is backed by exactly one of

* a dense ``(N, N)`` matrix of one-way delays (real data sets, files),
* planar positions and a scale (``delay = scale_ms * ||p_u - p_v||``), which
  needs no ``N x N`` storage and so scales to 10^5+ nodes,
* one constant (every distinct pair is ``ms`` apart).

Units are milliseconds throughout; delays are one-way (half a round trip).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hedgerow.errors import ParameterError

#: Largest dense matrix :meth:`LatencyModel.matrix` builds for a position model (float64 bytes).
MAX_DENSE_BYTES = 2 * 1024**3


class LatencyModel:
    """One-way delays, in milliseconds, between nodes ``0..n_nodes-1``.

    Build one with :func:`unit_square`, :func:`constant`, :func:`from_matrix`,
    :func:`hedgerow.latency.cities`, :func:`hedgerow.latency.perigee_matrix`,
    :func:`hedgerow.latency.from_matrix_file` or by name with
    :func:`hedgerow.latency.latency_model`.

    Parameters
    ----------
    n_nodes : int
        Number of nodes.
    name : str
        Short model name (``"unit-square"``, ``"cities"``, ...).
    matrix : numpy.ndarray, optional
        ``(n_nodes, n_nodes)`` one-way delays in ms (finite, non-negative).
    positions : numpy.ndarray, optional
        ``(n_nodes, 2)`` planar coordinates; the delay is ``scale_ms`` times
        the Euclidean distance.
    scale_ms : float, default 1.0
        Milliseconds per unit of distance (position models only).
    constant_ms : float, optional
        One delay for every pair of distinct nodes.
    group, group_matrix : numpy.ndarray, optional
        Given together: each node's group ``(n_nodes,)`` and the ``(G, G)``
        one-way delays between groups (its diagonal: two nodes of one group);
        a node is 0 ms from itself.  Nodes placed on a few sites (the 246
        cities) at any number of nodes, without a dense ``N x N`` matrix.
    labels : sequence of str, optional
        A name per node (e.g. the city).
    coords : numpy.ndarray, optional
        ``(n_nodes, 2)`` geographic ``(latitude, longitude)`` in degrees.
    info : dict, optional
        Provenance and counts (e.g. how many pairs were filled).

    Examples
    --------
    >>> import numpy as np
    >>> m = LatencyModel(3, name="toy", matrix=np.array([[0, 5, 9], [5, 0, 2], [9, 2, 0]]))
    >>> m.delay(np.array([0, 1]), np.array([2, 2])).tolist()
    [9.0, 2.0]
    >>> p = LatencyModel(2, name="line", positions=np.array([[0.0, 0.0], [3.0, 4.0]]), scale_ms=10)
    >>> float(p.delay(0, 1)), p.matrix().tolist()
    (50.0, [[0.0, 50.0], [50.0, 0.0]])
    >>> g = LatencyModel(3, name="sites", group=np.array([0, 1, 1]),
    ...                  group_matrix=np.array([[1.0, 30.0], [30.0, 1.0]]))
    >>> g.kind, g.matrix().tolist()
    ('groups', [[0.0, 30.0, 30.0], [30.0, 0.0, 1.0], [30.0, 1.0, 0.0]])
    """

    def __init__(
        self,
        n_nodes: int,
        *,
        name: str,
        matrix: np.ndarray | None = None,
        positions: np.ndarray | None = None,
        scale_ms: float = 1.0,
        constant_ms: float | None = None,
        group: np.ndarray | None = None,
        group_matrix: np.ndarray | None = None,
        labels: Any = None,
        coords: np.ndarray | None = None,
        info: dict | None = None,
    ) -> None:
        n = int(n_nodes)
        if n < 1:
            raise ParameterError(f"a latency model needs at least one node, got n_nodes={n_nodes}")
        if (group is None) != (group_matrix is None):
            raise ParameterError("a latency model's group and group_matrix come together")
        given = [x is not None for x in (matrix, positions, constant_ms, group_matrix)]
        if sum(given) != 1:
            raise ParameterError(
                "a latency model needs exactly one of matrix, positions, constant_ms, "
                "group_matrix"
            )
        self.n_nodes = n
        self.name = str(name)
        self._matrix: np.ndarray | None = None
        self.positions: np.ndarray | None = None
        self.scale_ms = float(scale_ms)
        self.constant_ms: float | None = None
        self.group: np.ndarray | None = None
        self.group_matrix: np.ndarray | None = None
        if group_matrix is not None:
            gm = np.array(group_matrix, dtype=np.float64)
            if gm.ndim != 2 or gm.shape[0] != gm.shape[1]:
                raise ParameterError(f"group_matrix must be square, got {gm.shape}")
            if not np.isfinite(gm).all() or (gm < 0).any():
                raise ParameterError("group_matrix entries must be finite and non-negative")
            grp = np.array(group, dtype=np.int64)
            if grp.shape != (n,):
                raise ParameterError(f"group must name a group for each of {n} nodes, "
                                     f"got shape {grp.shape}")
            if grp.size and (grp.min() < 0 or grp.max() >= gm.shape[0]):
                raise ParameterError(f"group names a group outside 0..{gm.shape[0] - 1}")
            gm.setflags(write=False)
            grp.setflags(write=False)
            self.group, self.group_matrix = grp, gm
        elif matrix is not None:
            m = np.array(matrix, dtype=np.float64)
            if m.shape != (n, n):
                raise ParameterError(f"latency matrix must be ({n}, {n}), got {m.shape}")
            if not np.isfinite(m).all() or (m < 0).any():
                raise ParameterError("latency matrix entries must be finite and non-negative")
            np.fill_diagonal(m, 0.0)
            m.setflags(write=False)
            self._matrix = m
        elif positions is not None:
            pos = np.array(positions, dtype=np.float64)
            if pos.ndim != 2 or pos.shape[0] != n:
                raise ParameterError(f"positions must be ({n}, dims), got {pos.shape}")
            if not np.isfinite(pos).all():
                raise ParameterError("positions must be finite")
            if not (np.isfinite(self.scale_ms) and self.scale_ms >= 0):
                raise ParameterError(f"scale_ms must be finite and non-negative, got {scale_ms}")
            pos.setflags(write=False)
            self.positions = pos
        else:
            c = float(constant_ms)  # type: ignore[arg-type]
            if not (np.isfinite(c) and c >= 0):
                raise ParameterError(f"constant delay must be finite and non-negative, got {c}")
            self.constant_ms = c
        self.labels: tuple[str, ...] | None = None
        if labels is not None:
            labs = tuple(str(x) for x in labels)
            if len(labs) != n:
                raise ParameterError(f"labels must name {n} nodes, got {len(labs)}")
            self.labels = labs
        self.coords: np.ndarray | None = None
        if coords is not None:
            c2 = np.array(coords, dtype=np.float64)
            if c2.shape != (n, 2):
                raise ParameterError(f"coords must be ({n}, 2) latitude/longitude, got {c2.shape}")
            c2.setflags(write=False)
            self.coords = c2
        self.info: dict = dict(info or {})

    # ------------------------------------------------------------------ queries
    @property
    def kind(self) -> str:
        """``"matrix"``, ``"positions"``, ``"groups"`` or ``"constant"``: what backs the model."""
        if self._matrix is not None:
            return "matrix"
        if self.group_matrix is not None:
            return "groups"
        if self.positions is not None:
            return "positions"
        return "constant"

    def _check_nodes(self, x: np.ndarray, what: str) -> None:
        if x.size and (x.min() < 0 or x.max() >= self.n_nodes):
            raise ParameterError(f"{what} names a node outside 0..{self.n_nodes - 1}")

    def delay(self, u: Any, v: Any) -> np.ndarray:
        """One-way delay in ms from ``u`` to ``v`` (arrays broadcast; 0 on ``u == v``).

        Examples
        --------
        >>> constant(4, 7.5).delay([0, 1, 2], [1, 1, 3]).tolist()
        [7.5, 0.0, 7.5]
        """
        uu = np.asarray(u, dtype=np.int64)
        vv = np.asarray(v, dtype=np.int64)
        self._check_nodes(uu, "u")
        self._check_nodes(vv, "v")
        if self._matrix is not None:
            return self._matrix[uu, vv]
        if self.group is not None and self.group_matrix is not None:
            uu, vv = np.broadcast_arrays(uu, vv)
            return np.where(uu == vv, 0.0, self.group_matrix[self.group[uu], self.group[vv]])
        if self.positions is not None:
            diff = self.positions[uu] - self.positions[vv]
            return self.scale_ms * np.sqrt(np.sum(diff * diff, axis=-1))
        uu, vv = np.broadcast_arrays(uu, vv)
        return np.where(uu == vv, 0.0, float(self.constant_ms))  # type: ignore[arg-type]

    def matrix(self) -> np.ndarray:
        """Dense ``(N, N)`` one-way delays in ms (a read-only view for matrix models).

        Raises :class:`~hedgerow.errors.ParameterError` when the matrix would
        exceed :data:`MAX_DENSE_BYTES` (use :meth:`delay` on index arrays instead).
        """
        if self._matrix is not None:
            return self._matrix
        n = self.n_nodes
        if n * n * 8 > MAX_DENSE_BYTES:
            raise ParameterError(
                f"a dense {n}x{n} matrix needs {n * n * 8 / 1e9:.1f} GB; use delay(u, v) instead"
            )
        if self.positions is not None:
            p = self.positions
            out = np.empty((n, n))
            # same arithmetic as delay(), block of rows by block of rows
            for a in range(0, n, 1024):
                diff = p[a : a + 1024, None, :] - p[None, :, :]
                out[a : a + 1024] = self.scale_ms * np.sqrt(np.sum(diff * diff, axis=-1))
            np.fill_diagonal(out, 0.0)
            return out
        if self.group is not None and self.group_matrix is not None:
            out = self.group_matrix[np.ix_(self.group, self.group)]
            np.fill_diagonal(out, 0.0)
            return out
        out = np.full((n, n), float(self.constant_ms))  # type: ignore[arg-type]
        np.fill_diagonal(out, 0.0)
        return out

    def is_symmetric(self) -> bool:
        """Whether ``delay(u, v) == delay(v, u)`` for every pair."""
        if self.group_matrix is not None:
            return bool(np.array_equal(self.group_matrix, self.group_matrix.T))
        if self._matrix is None:
            return True
        return bool(np.array_equal(self._matrix, self._matrix.T))

    def subset(self, nodes: Any, *, name: str | None = None) -> LatencyModel:
        """The model restricted to ``nodes`` (renumbered ``0..len(nodes)-1`` in the given order).

        Examples
        --------
        >>> import numpy as np
        >>> m = from_matrix(np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0]]), name="t")
        >>> m.subset([2, 0]).matrix().tolist()
        [[0.0, 2.0], [2.0, 0.0]]
        """
        idx = np.asarray(nodes, dtype=np.int64).ravel()
        self._check_nodes(idx, "subset")
        if len(np.unique(idx)) != len(idx):
            raise ParameterError("subset lists a node twice")
        common: dict[str, Any] = {
            "name": name or self.name,
            "labels": None if self.labels is None else [self.labels[i] for i in idx],
            "coords": None if self.coords is None else self.coords[idx],
            "info": {**self.info, "subset_of": self.n_nodes},
        }
        if self._matrix is not None:
            return LatencyModel(len(idx), matrix=self._matrix[np.ix_(idx, idx)], **common)
        if self.group is not None:
            return LatencyModel(len(idx), group=self.group[idx], group_matrix=self.group_matrix,
                                **common)
        if self.positions is not None:
            return LatencyModel(
                len(idx), positions=self.positions[idx], scale_ms=self.scale_ms, **common
            )
        return LatencyModel(len(idx), constant_ms=self.constant_ms, **common)

    def __repr__(self) -> str:
        return f"LatencyModel(name={self.name!r}, n_nodes={self.n_nodes}, kind={self.kind!r})"


# ---------------------------------------------------------------------- builders

#: Side of the unit square in ms (one unit of distance = 500 ms).  See :func:`unit_square`.
UNIT_SQUARE_SCALE_MS = 500.0


def unit_square(
    n_nodes: int,
    rng: np.random.Generator,
    *,
    scale_ms: float = UNIT_SQUARE_SCALE_MS,
    grid: int | None = None,
    ceil: bool = False,
) -> LatencyModel:
    """Nodes at uniform random points of the unit square; delay = Euclidean distance x ``scale_ms``.

    Topiary (section V-A) places 1000 nodes "at random locations within a unit
    square" with the link delay "the Euclidean distance between the nodes" and
    gives no unit.  We take the scale of its sibling paper Goldfish (same
    group; section V: a 500 x 500 plane whose distances are milliseconds, the
    code ``bx3/goldfish`` ``square_len=500``): one side of the square is
    500 ms, so delays lie in ``[0, 707]`` ms with a mean of about 261 ms.  This
    is also the scale at which Topiary's reported delays (about 180-250 ms
    for learned overlays, roughly half of a random overlay's) are reachable.

    Parameters
    ----------
    n_nodes : int
        Number of nodes.
    rng : numpy.random.Generator
        Source of the positions (e.g. ``RngStreams(seed).stream("latency")``).
    scale_ms : float, default 500.0
        Milliseconds per unit of distance (the side of the square).
    grid : int, optional
        Integer coordinates uniform in ``{0..grid-1}`` (each axis) instead of
        continuous ones; the square's side is still ``scale_ms``.  The Goldfish
        authors' generator draws ``grid=500`` on a 500 ms plane.
    ceil : bool, default False
        Round every delay up to a whole millisecond (the authors' ``ceil`` of
        the distance); the model becomes a dense matrix (positions kept in
        ``info["positions"]``).  Whole-ms delays create arrival ties.

    Examples
    --------
    >>> from hedgerow.model import RngStreams
    >>> m = unit_square(5, RngStreams(1).stream("latency"))
    >>> m.positions.shape, bool((m.matrix() <= 500 * 2**0.5).all())
    ((5, 2), True)
    >>> g = unit_square(5, RngStreams(1).stream("latency"), grid=500, ceil=True)
    >>> g.kind, bool((g.matrix() == np.round(g.matrix())).all())
    ('matrix', True)
    """
    n = int(n_nodes)
    if n < 1:
        raise ParameterError(f"unit_square needs n_nodes >= 1, got {n_nodes}")
    if rng is None:
        raise ParameterError("unit_square needs an rng (numpy Generator) for the positions")
    if grid is not None:
        g = int(grid)
        if g < 1:
            raise ParameterError(f"unit_square: grid must be >= 1, got {grid}", key="grid")
        pos = rng.integers(0, g, size=(n, 2)).astype(np.float64) / g
    else:
        pos = rng.random((n, 2))
    if ceil:
        diff = pos[:, None, :] - pos[None, :, :]
        dist = float(scale_ms) * np.sqrt(np.sum(diff * diff, axis=-1))
        # integer grids: compute the distance in grid units exactly before rounding up
        m = np.ceil(dist - 1e-9)
        return LatencyModel(
            n,
            name="unit-square",
            matrix=m,
            info={
                "scale_ms": float(scale_ms),
                "grid": grid,
                "ceil": True,
                "positions": pos.tolist(),
            },
        )
    return LatencyModel(
        n, name="unit-square", positions=pos, scale_ms=scale_ms, info={"scale_ms": float(scale_ms)}
    )


def constant(n_nodes: int, ms: float) -> LatencyModel:
    """Every pair of distinct nodes is ``ms`` milliseconds apart.

    Examples
    --------
    >>> constant(3, 10.0).matrix().tolist()
    [[0.0, 10.0, 10.0], [10.0, 0.0, 10.0], [10.0, 10.0, 0.0]]
    """
    return LatencyModel(int(n_nodes), name="constant", constant_ms=ms)


def from_matrix(matrix: Any, *, name: str = "matrix", **kw: Any) -> LatencyModel:
    """A model from a square array of one-way delays in ms (diagonal forced to 0).

    Examples
    --------
    >>> from_matrix([[0, 4], [4, 0]]).delay(1, 0).tolist()
    4.0
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ParameterError(f"a latency matrix must be square, got shape {m.shape}")
    return LatencyModel(m.shape[0], name=name, matrix=m, **kw)
