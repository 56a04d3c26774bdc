"""The Goldfish adaptive protocol: observation, window, completion, selection, scheduler.

Paper: B. Xue, Y. Mao, S. Bojja Venkatakrishnan, S. Kannan, "Goldfish: Peer
selection using Matrix completion in unstructured P2P network", IEEE ICBC
2023 (§III system model, §IV the algorithm, §V-A defaults).

Every node keeps ``d_out`` outgoing links (``n_explore`` of them for
exploration, the rest for exploitation) and accepts at most ``in_limit``
incoming ones: a connection to a node that already has ``in_limit`` incoming
links is refused (§III, §V-A: "any pair of nodes need to respect both
constraint before setting up a connection").  Links carry traffic both ways;
every node floods its first copy to all peers but the sender (§III), so the
protocol forwards by ``"flood"``.

Only the scenario's *active* nodes adapt; the others are static and keep their
initial links (§III: "a static node which always keeps the same set of
connections").  The initial topology is random and respects both limits
(§V-A): ``d_out`` rounds in which every node, in a shuffled order, links to
one uniform node that still accepts.

Scheduler (§IV-A2, §V-A): the matrix covers the last ``window`` epochs;
completion runs every ``interval`` epochs once the window is full (with the
defaults: after epochs 2, 4, 6, ...); in the other epochs the node keeps its
exploit peers and only replaces its exploration peers ("pure exploration
epochs").  Adaptive nodes apply their choice one at a time in a random order
(stream ``goldfish:order``), each against the incoming counts left by the
previous ones.

Readings chosen (``docs/goldfish.md``):

1. Columns are all peers of the window, incoming and outgoing (the altruistic
   rule needs the † of incoming peers); rows are blocks.
2. Estimable vs ambiguous: see :mod:`hedgerow.protocols.goldfish.matrix`.
3. Eq. 1 is divided per row by its number of estimable cells
   (``row_normalise``, the authors' code); values are divided by the window's
   largest relative time before distances and completion.
4. The objective is convex; ``completion="mm"`` (default) reaches its optimum,
   ``completion="adam"`` is the paper's Adam (lr 1e-2, at most ``max_steps``
   steps, the authors' early stop) with a fresh stopping state per completion.
   ``completion="mm-fast"`` is ``mm`` with the settings ``FAST_MM`` of
   :mod:`~hedgerow.protocols.goldfish.complete`: a stopping step of 1e-4
   instead of 1e-5, a faster ``ε`` schedule, over-relaxed steps, windows above
   600 rows factored in :func:`~hedgerow.protocols.goldfish.order.md_order`'s
   order; a third of the MM steps, losses within 2e-3 of a converged solve
   instead of 1e-3.  The 1,000-node head-to-head runs it
   (``docs/goldfish.md``, "The fast completion").
5. A node's own blocks are all † (no first arrival to measure against).
6. Under churn (``AdaptiveProtocol.set_online``) a node offline in the epoch
   that ended is refused like a full one: a contributor of the window that
   has left is skipped for the next ranked subset.
7. Exploit slots left empty (fewer contributors than slots, or refusals) go
   to random peers not seen in the window; the exploration peer comes from the
   depleting pool, which also loses every peer seen in the window.

Examples
--------
>>> from hedgerow.scenarios.epochs import run_protocol
>>> from hedgerow.scenarios.world import world_for_instance
>>> from hedgerow.workloads import make_instance
>>> world = world_for_instance(make_instance(nodes=40, topics=2, subs=1), seed=1,
...                            messages=40, epochs=4)
>>> res = run_protocol(Goldfish(), world, keep_outs=True)
>>> int(res.outs[-1].shape[1]), bool((in_degrees(res.outs[-1]) <= 8).all())
(4, True)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numba
import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.params import Bool, Choice, Int
from hedgerow.protocols.base import AdaptiveProtocol, EpochView
from hedgerow.protocols.goldfish.complete import (
    FAST_MM,
    build_problem,
    completed,
    solve,
)
from hedgerow.protocols.goldfish.matrix import classify, window_matrix
from hedgerow.protocols.goldfish.observe import observe_chunk, peer_entries
from hedgerow.protocols.goldfish.select import DepletingPool, choose_exploits, rank_subsets

__all__ = ["Goldfish", "capped_random_out", "in_degrees"]


def in_degrees(out: np.ndarray) -> np.ndarray:
    """Incoming links of every node of an ``(n, d)`` out-link table.

    Examples
    --------
    >>> in_degrees(np.array([[1, 2], [2, -1], [-1, -1]])).tolist()
    [0, 1, 2]
    """
    o = out[out >= 0]
    return np.bincount(o, minlength=out.shape[0])


def capped_random_out(
    n: int, d: int, in_limit: int, rng: np.random.Generator
) -> np.ndarray:
    """A random start respecting ``d`` out and ``in_limit`` in (Goldfish §V-A).

    ``d`` rounds; in each, every node (shuffled order) links to one uniform
    node that is not itself, not yet its out-peer and below ``in_limit``.

    Examples
    --------
    >>> out = capped_random_out(10, 4, 4, np.random.default_rng(0))
    >>> bool((in_degrees(out) <= 4).all()), bool((out >= 0).all())
    (True, True)
    """
    out = np.full((n, d), -1, dtype=np.int64)
    indeg = np.zeros(n, dtype=np.int64)
    for j in range(d):
        for v in rng.permutation(n).tolist():
            ok = indeg < in_limit
            ok[v] = False
            ok[out[v, :j]] = False
            cand = np.flatnonzero(ok)
            if len(cand) == 0:
                continue
            u = int(cand[rng.integers(len(cand))])
            out[v, j] = u
            indeg[u] += 1
    # left-pack rows (a skipped round leaves a hole)
    order = np.argsort(out < 0, axis=1, kind="stable")
    return np.take_along_axis(out, order, axis=1)


class Goldfish(AdaptiveProtocol):
    """Goldfish (Xue et al., ICBC 2023): peer selection by KNN matrix completion.

    Out-link slots ``0 .. d_out - n_explore - 1`` hold the exploit peers and
    the last ``n_explore`` slots the exploration peers.

    Examples
    --------
    >>> Goldfish().out_degree(), Goldfish(d_out=8, n_explore=2).n_exploit
    (4, 6)
    """

    name = "goldfish"
    paper = "Xue, Mao, Bojja Venkatakrishnan, Kannan, Goldfish, IEEE ICBC 2023"
    forwarding = "flood"
    #: its selection does not read the loop's ``linked`` table
    needs_linked = False
    params = {
        "d_out": Int(4, "outgoing connections per node (V-A)", low=1, unit="links"),
        "n_explore": Int(1, "outgoing connections used for exploration (V-A)", low=0,
                         unit="links"),
        "in_limit": Int(8, "incoming connections a node accepts (V-A)", low=1, unit="links"),
        "window": Int(3, "epochs combined in one matrix (V-A)", low=1, unit="epochs"),
        "interval": Int(2, "epochs between completions (IV-A2)", low=1, unit="epochs"),
        "k": Int(2, "nearest rows per missing cell, K (V-A)", low=1),
        "completion": Choice("mm", ("mm", "mm-fast", "adam"),
                             "solver of eq. 1: converged majorise-minimise, the same with a "
                             "looser stop and its own row order (large worlds), or the paper's "
                             "Adam"),
        "max_steps": Int(2000, "Adam's step budget (V-A)", low=1),
        "row_normalise": Bool(True, "divide eq. 1's terms by the row's estimable cells "
                                    "(the authors' code)"),
    }
    quick_params = {"d_out": 3, "in_limit": 6}
    d_out: int  # bound by ``params``
    n_explore: int

    @property
    def n_exploit(self) -> int:
        """Exploit slots, ``d_out - n_explore``."""
        return int(self.d_out) - int(self.n_explore)

    def _check(self, values: dict[str, Any]) -> None:
        if values["n_explore"] >= values["d_out"]:
            raise ParameterError(
                f"{self.name}: parameter n_explore must be below d_out ({values['d_out']}), "
                f"got {values['n_explore']}",
                key="n_explore",
            )

    def _check_instance(self, values: dict[str, Any], instance: Instance) -> None:
        if values["d_out"] >= instance.n_nodes:
            raise ParameterError(
                f"{self.name}: parameter d_out must be below the number of nodes "
                f"({instance.n_nodes}), got {values['d_out']}",
                key="d_out",
            )
        if values["in_limit"] < values["d_out"]:
            raise ParameterError(
                f"{self.name}: parameter in_limit must be at least d_out ({values['d_out']}) "
                f"so every node can place its links, got {values['in_limit']}",
                key="in_limit",
            )

    def out_degree(self) -> int:
        return self.checked()["d_out"]

    def incoming_limit(self) -> int:
        return self.checked()["in_limit"]

    def degree_bound(self, instance: Instance) -> int:
        return self.out_degree()

    # ------------------------------------------------------------- adaptive interface
    def start(self, instance: Instance, streams: RngStreams, active: np.ndarray) -> np.ndarray:
        """Random capped start for every node; the active nodes adapt from here."""
        cfg = self._validate(instance)
        self.config_ = cfg
        n = instance.n_nodes
        self.nodes_ = np.flatnonzero(np.asarray(active, dtype=bool)).astype(np.int64)
        self.width_ = cfg["d_out"] + cfg["in_limit"]
        self.order_rng_ = streams.stream("goldfish:order")
        self.explore_rng_ = streams.stream("goldfish:explore")
        self.complete_rng_ = streams.stream("goldfish:complete")
        self.n_nodes_ = n
        #: node id -> its depleting pool
        self.pools_: dict[int, DepletingPool] = {}
        #: the last ``window`` epochs: (observing nodes, their peers, their observations)
        self.window_: deque[tuple[np.ndarray, np.ndarray, np.ndarray]] = deque(
            maxlen=cfg["window"]
        )
        self.epoch_ = -1
        self.last_run_: int | None = None
        #: per epoch: "run" (completion) or "acc" (pure exploration)
        self.modes_: list[str] = []
        #: completions run and their summed solver steps
        self.completions_ = 0
        return capped_random_out(n, cfg["d_out"], cfg["in_limit"], streams.stream("goldfish:init"))

    def begin_epoch(
        self, instance: Instance, out: np.ndarray, publisher: np.ndarray, topic: np.ndarray
    ) -> dict[str, Any]:
        """An empty observation table ``(messages, adaptive nodes, peer slots)``."""
        m = len(publisher)
        return {
            "nodes": self.nodes_.copy(),
            "rel": np.full((m, len(self.nodes_), self.width_), np.nan),
            "peers": None,
            "rev": None,
        }

    def observe(self, state: dict[str, Any], view: EpochView) -> None:
        """Relative arrival times from every peer of every adaptive node."""
        if state["peers"] is None:
            state["peers"], state["rev"] = peer_entries(
                view.indptr, view.indices, state["nodes"], self.width_
            )
        state["rel"][view.sel] = observe_chunk(
            view.arrival, view.edge_recv, view.entry_map, state["rev"], state["nodes"],
            view.publisher,
        )

    def mode(self, epoch: int) -> str:
        """``"run"`` when the epoch that just ended triggers a completion, else ``"acc"``."""
        w, itv = self.config_["window"], self.config_["interval"]
        if epoch < w - 1:
            return "acc"
        if self.last_run_ is None or epoch - self.last_run_ >= itv:
            return "run"
        return "acc"

    def node_matrix(self, v: int):
        """The window matrix of node ``v`` (:class:`WindowMatrix`); an epoch in which ``v`` was
        not observed adds its rows with no peer."""
        peers, rels = [], []
        for nodes, p, r in self.window_:
            i = int(np.searchsorted(nodes, v))
            if i < len(nodes) and nodes[i] == v:
                peers.append(p[i])
                rels.append(r[:, i])
            else:
                peers.append(np.full(p.shape[1], -1, dtype=np.int64))
                rels.append(np.full((r.shape[0], p.shape[1]), np.nan))
        return window_matrix(peers, rels)

    def rankings(self, nodes: Sequence[int]) -> list[tuple[list[tuple[int, ...]], np.ndarray]]:
        """Every node's completion, in the order of ``nodes``: its ranked exploit subsets
        (:func:`rank_subsets`) and its window's peers.

        A completion reads only its node's window, so with the ``mm`` solvers (no random
        stream) the nodes are completed on ``numba.get_num_threads()`` threads (the kernels
        release the GIL); the results are the serial ones bit for bit.  Adam draws its start
        from one stream and runs in order.
        """
        n_exp = self.n_exploit

        def one(v: int) -> tuple[list[tuple[int, ...]], np.ndarray]:
            wm, _cl, t_hat = self._complete(v)
            return rank_subsets(t_hat, wm.dagger, wm.peers, n_exp), wm.peers

        width = min(int(numba.get_num_threads()), len(nodes))
        if self.config_["completion"] == "adam" or width <= 1:
            out = [one(v) for v in nodes]
        else:
            with ThreadPoolExecutor(max_workers=width, thread_name_prefix="goldfish") as pool:
                out = list(pool.map(one, nodes))
        self.completions_ += len(nodes)
        return out

    def complete_node(self, v: int):
        """Classify and complete node ``v``'s window; returns ``(wm, classes, t_hat)``."""
        self.completions_ += 1
        return self._complete(v)

    def _complete(self, v: int):
        cfg = self.config_
        wm = self.node_matrix(v)
        cl = classify(wm, k=cfg["k"])
        prob = build_problem(wm, cl, row_normalise=cfg["row_normalise"])
        if cfg["completion"] == "mm-fast":
            sol = solve(prob, **FAST_MM)
        else:
            sol = solve(prob, method=cfg["completion"], rng=self.complete_rng_,
                        max_steps=cfg["max_steps"] if cfg["completion"] == "adam" else None)
        return wm, cl, completed(wm, cl, sol)

    def select(
        self,
        state: dict[str, Any],
        instance: Instance,
        out: np.ndarray,
        linked: np.ndarray,
        active: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """End of an epoch: completion and exploitation (run epochs), exploration always."""
        cfg = self.config_
        n = instance.n_nodes
        self.epoch_ += 1
        epoch = self.epoch_
        nodes = state["nodes"]
        peers = state["peers"]
        if peers is None:
            peers = np.full((len(nodes), self.width_), -1, dtype=np.int64)
        self.window_.append((nodes, peers, state["rel"]))
        mode = self.mode(epoch)
        self.modes_.append(mode)
        if mode == "run":
            self.last_run_ = epoch
        new_out = out.copy()
        indeg = in_degrees(out)
        lim = cfg["in_limit"]
        n_exp = self.n_exploit
        d = cfg["d_out"]
        act = np.asarray(active, dtype=bool)
        # churn (set_online): a node offline now is never dialled
        online = getattr(self, "online_", None)
        alive = np.ones(n, dtype=bool) if online is None else online
        movers = nodes[act[nodes]]
        order = [int(movers[i]) for i in self.order_rng_.permutation(len(movers)).tolist()]
        # the completions depend on the windows only: all of them first, then the choices,
        # one node at a time against the incoming counts left by the previous ones
        ranks = self.rankings(order) if mode == "run" else []
        for at, v in enumerate(order):
            cur = out[v][out[v] >= 0]
            indeg[cur] -= 1
            chosen: list[int] = []

            def accepts(u: int, v: int = v, chosen: list[int] = chosen) -> bool:
                return u != v and u not in chosen and indeg[u] < lim and alive[u]

            pool = self.pools_.setdefault(v, DepletingPool(n, v))
            if mode == "run":
                ranked, seen = ranks[at]
                chosen.extend(choose_exploits(ranked, n_exp, set(cur.tolist()), accepts))
                if len(chosen) < n_exp:
                    chosen.extend(self._random_fill(n, v, n_exp - len(chosen), seen, accepts))
                pool.mark(seen)
            else:
                chosen.extend(cur[:n_exp].tolist())
                pool.mark(peers[int(np.searchsorted(nodes, v))])
            pool.mark(chosen)
            chosen.extend(pool.draw(self.explore_rng_, d - len(chosen), exclude=chosen,
                                    accepts=accepts))
            row = np.full(d, -1, dtype=np.int64)
            row[: len(chosen)] = chosen[:d]
            new_out[v] = row
            indeg[row[row >= 0]] += 1
        # from now on only the re-selecting nodes need observations
        self.nodes_ = np.flatnonzero(act).astype(np.int64)
        return new_out, np.full(n, np.nan)

    def _random_fill(self, n: int, v: int, k: int, seen: np.ndarray, accepts) -> list[int]:
        """``k`` random accepting peers, outside the window's peers when possible."""
        got: list[int] = []
        inside = np.zeros(n, dtype=bool)
        inside[seen[seen >= 0]] = True
        for group in (np.flatnonzero(~inside), np.flatnonzero(inside)):
            cand = group.copy()
            self.explore_rng_.shuffle(cand)
            for u in cand.tolist():
                if len(got) == k:
                    return got
                if accepts(u) and u not in got:
                    got.append(u)
        return got

    def exploit_out(self, out: np.ndarray, adaptive: np.ndarray) -> np.ndarray:
        """The exploitation links (§V-C: latency is measured "using only exploitation edges"):
        the exploration slots of the ``adaptive`` nodes blanked (``-1``); static nodes keep all.

        Examples
        --------
        >>> g = Goldfish(d_out=2, n_explore=1)
        >>> g.exploit_out(np.array([[1, 2], [2, 0], [0, 1]]), np.array([True, False, False]))
        array([[ 1, -1],
               [ 2,  0],
               [ 0,  1]])
        """
        t = np.array(out, dtype=np.int64, copy=True)
        t[np.asarray(adaptive, dtype=bool), self.n_exploit:] = -1
        return t
