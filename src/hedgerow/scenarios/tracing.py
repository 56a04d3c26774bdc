"""Tracing a run: every copy of (a sample of) an epoch's messages, as :mod:`hedgerow.trace` rows.

The copies are those of the run itself: :class:`TraceObserver`, an epoch observer, has the
sampled messages sent again with the epoch's own graph, policy, link topics and silent nodes
(``Epoch.resend``), recording the arrival on every link (each message travels independently,
so its copies are exactly those of the epoch's run), and converts them chunk by chunk
(:func:`hedgerow.trace.copy_rows`), so memory stays at the dissemination engine's chunk
budget plus one chunk's rows.  The run's rows do not change.  :func:`world_meta` gives what a
replay needs to draw the world (its geometry and fingerprint).

Examples
--------
>>> import tempfile, pathlib
>>> from hedgerow.protocols import get_protocol
>>> from hedgerow.scenarios.epochs import run_protocol
>>> from hedgerow.scenarios.world import make_world
>>> from hedgerow.trace import TraceWriter, read_trace
>>> world = make_world("unit-square", seed=1, nodes=50, messages=20)
>>> with tempfile.TemporaryDirectory() as d:
...     tracer = Tracer(TraceWriter(pathlib.Path(d) / "t.parquet"), sample=5)
...     res = run_protocol(get_protocol("spidercast"), world, observers=[TraceObserver(tracer)])
...     _ = tracer.close(world)
...     df, meta = read_trace(pathlib.Path(d) / "t.parquet")
>>> df["message"].nunique(), meta["protocols"]["spidercast"]["links"] != []
(5, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hedgerow.trace import TraceWriter, copy_rows, sample_messages

__all__ = ["TraceObserver", "Tracer", "world_meta"]


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

    def describe(self, protocol: str, links: Any, params: dict[str, Any]) -> None:
        """Record ``protocol``'s links (an overlay, or ``(src, dst)`` arrays) and parameters."""
        if hasattr(links, "edges"):
            e = np.asarray(links.edges(), dtype=np.int64).reshape(-1, 2)
        else:
            e = np.column_stack([np.asarray(a, dtype=np.int64) for a in links]).reshape(-1, 2)
        if len(e):  # drawn as undirected links, each once
            e = np.unique(np.sort(e, axis=1), axis=0)
        self.writer.describe(protocol, {"links": e.tolist(), "params": params})

    def close(self, world: Any) -> Any:
        """Write the trace file with the world's metadata."""
        return self.writer.close({**world_meta(world), "subscribers": self.subscribers})


class TraceObserver:
    """An epoch observer that traces the run's chosen epochs into a :class:`Tracer`.

    It adds no column to the rows.  The links recorded for the replay are those of the last
    traced epoch.
    """

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer

    def start(self, run: Any) -> None:
        """Nothing to prepare."""

    def observe(self, run: Any, ep: Any) -> dict[str, Any]:
        if ep.publisher is None or ep.resend is None:
            return {}  # an epoch that sent nothing (routing worlds route their own events)
        if not self.tracer.wants(ep.number, run.epochs - 1):
            return {}
        from hedgerow.dissemination import edge_delays

        world = run.world
        ed = np.asarray(edge_delays(ep.indptr, ep.indices, world.latency), dtype=np.float64)
        self.tracer.record(run.proto.name, world, ep.number, ep.resend, ep.publisher,
                           ep.topic, ep.indptr, ep.indices, ed)
        links = ep.overlay if ep.overlay is not None else ep.links
        if links is not None:
            self.tracer.describe(run.proto.name, links, run.proto.get_params())
        return {}
