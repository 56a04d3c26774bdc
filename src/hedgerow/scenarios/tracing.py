"""Tracing a run: every copy of (a sample of) an epoch's messages, as :mod:`hedgerow.trace` rows.

The copies are those of the run itself: the sampled messages are disseminated again with the
epoch's own graph, policy, link topics and silent nodes, recording the arrival on every link
(each message travels independently, so its copies are exactly those of the epoch's run), and
converted chunk by chunk (:func:`hedgerow.trace.copy_rows`), so memory stays at the
dissemination engine's chunk budget.  :func:`world_meta` gives what a replay needs to draw the
world (its geometry, subscribers of the traced topics, fingerprint).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hedgerow.trace import TraceWriter, copy_rows, sample_messages

__all__ = ["Tracer", "world_meta"]


def world_meta(world: Any) -> dict[str, Any]:
    """The world's part of a trace's metadata: fingerprint, scenario, seed and geometry."""
    lat = world.latency
    coords = getattr(lat, "coords", None)
    positions = getattr(lat, "positions", None)
    return {
        "world": world.fingerprint(),
        "scenario": world.scenario.name,
        "seed": int(world.seed),
        "n_nodes": int(world.n_nodes),
        "coords": None if coords is None else np.round(np.asarray(coords, float), 4).tolist(),
        "positions": None if positions is None
        else np.round(np.asarray(positions, float)[:, :2], 5).tolist(),
    }


class Tracer:
    """Records the copies of sampled messages of chosen epochs into a :class:`TraceWriter`.

    Parameters
    ----------
    writer : TraceWriter
    sample : int, optional
        Messages traced per epoch (drawn from the ``"trace"`` stream of the run's seed);
        all when ``None``.
    epochs : {"last", "all"}
        Which epochs are traced.
    """

    def __init__(self, writer: TraceWriter, *, sample: int | None = None,
                 epochs: str = "last") -> None:
        self.writer = writer
        self.sample = sample
        self.epochs = epochs
        self.subscribers: dict[str, list[int]] = {}

    def wants(self, epoch: int, last_epoch: int) -> bool:
        """Whether ``epoch`` is traced."""
        return self.epochs == "all" or epoch == last_epoch

    def record(self, protocol: str, world: Any, epoch: int, disseminate: Any,
               publisher: np.ndarray, topic: np.ndarray, indptr: np.ndarray,
               indices: np.ndarray, edge_delay: np.ndarray) -> None:
        """Trace ``epoch``: ``disseminate(ids, on_chunk)`` re-sends messages ``ids`` of the epoch
        with ``record_edges=True`` and hands each chunk ``(sel, delivery, entry_map)`` over."""
        from hedgerow.model import RngStreams

        rng = RngStreams(world.seed).stream(f"trace:{epoch}")
        ids = sample_messages(len(publisher), self.sample, rng)
        masks = world.instance.masks

        def on_chunk(sel: np.ndarray, dl: Any, emap: np.ndarray) -> None:
            rows = copy_rows(dl, indptr, indices, edge_delay, masks, message_ids=ids[sel],
                             entry_map=emap)
            self.writer.add(protocol, epoch, rows)

        disseminate(ids, on_chunk)
        inst = world.instance
        for t in np.unique(topic[ids]).tolist():
            self.subscribers.setdefault(str(t), np.asarray(inst.subscribers(t)).tolist())

    def describe(self, protocol: str, overlay: Any, params: dict[str, Any]) -> None:
        """Record ``protocol``'s final overlay links and parameters for the replay."""
        e = np.asarray(overlay.edges(), dtype=np.int64).reshape(-1, 2)
        if overlay.directed and len(e):
            e = np.unique(np.sort(e, axis=1), axis=0)
        self.writer.describe(protocol, {"links": e.tolist(), "params": params,
                                        "directed": bool(overlay.directed)})

    def close(self, world: Any) -> Any:
        """Write the trace file with the world's metadata."""
        return self.writer.close({**world_meta(world), "subscribers": self.subscribers})
