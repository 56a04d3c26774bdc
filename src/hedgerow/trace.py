"""A trace of every copy a run sends: one Parquet row per copy, written and read back.

A protocol engineer who wants to know *why* a message was slow needs every copy: who sent it
to whom, when it left and arrived, whether it was the receiver's first copy or a duplicate,
and whether the receiver wanted it.  This module turns what the dissemination engine records
(:class:`~hedgerow.dissemination.Delivery` with ``edge_recv``, the arrival of the copy on
every CSR entry) into such rows, writes them to one Parquet file with the world's layout and
each protocol's overlay in the file's metadata (what :mod:`hedgerow.figures.replay` draws),
and reads them back.

Columns (:func:`schema`)
------------------------
``protocol``
    The protocol whose run sent the copy (one file may hold several protocols of one world).
``epoch``, ``message``
    The epoch and the message's index among that epoch's messages.
``topic``, ``publisher``
    The message's topic and publisher.
``sender``, ``receiver``
    The two ends of the link the copy travelled.
``send_ms``, ``arrival_ms``
    When the copy left the sender (its send time, after its processing delay) and reached the
    receiver, in ms from the message's publication.
``first``
    The receiver's first copy of the message (the one it forwards); otherwise a duplicate.
``hops``
    Hops of the receiver's first copy (``-1`` on duplicates).
``relay``
    The receiver does not subscribe to the topic (a relay copy).

Memory: a run traces a sample of each epoch's messages (``sample``); the copies of a chunk of
messages are converted at once and appended as a row group, so memory stays at the
dissemination engine's chunk budget plus one chunk's rows.

Examples
--------
A path ``0 - 1 - 2``, all subscribed, 10 ms links, 1 ms processing: the message from node 0
reaches 1 at 10 ms and 2 at 21 ms; node 1 does not send back to 0.

>>> import numpy as np
>>> from hedgerow.dissemination import MessageBatch, disseminate
>>> from hedgerow.model import Instance, Overlay
>>> inst = Instance.from_lists([[0], [0], [0]], n_topics=1)
>>> a = Overlay.from_edges(3, [(0, 1), (1, 2)]).undirected_csr()
>>> ed = np.full(a.nnz, 10.0)
>>> d = disseminate(a.indptr, a.indices, ed, np.ones(3), inst.masks,
...                 MessageBatch.create([0], [0]), policy="topic", record_edges=True)
>>> rows = copy_rows(d, a.indptr, a.indices, ed, inst.masks, message_ids=np.array([0]))
>>> rows["sender"].tolist(), rows["receiver"].tolist(), rows["arrival_ms"].tolist()
([0, 1], [1, 2], [10.0, 21.0])
>>> rows["send_ms"].tolist(), rows["first"].tolist(), rows["hops"].tolist()
([0.0, 11.0], [True, True], [1, 2])
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hedgerow.errors import DataError, ParameterError

__all__ = [
    "TraceWriter",
    "copy_rows",
    "first_arrivals",
    "read_trace",
    "sample_messages",
    "schema",
]

def schema() -> Any:
    """The columns of a trace, in order (pyarrow is imported on first use: a run that traces
    nothing never loads it)."""
    import pyarrow as pa

    return pa.schema([
        ("protocol", pa.dictionary(pa.int32(), pa.string())),
        ("epoch", pa.int32()),
        ("message", pa.int32()),
        ("topic", pa.int32()),
        ("publisher", pa.int32()),
        ("sender", pa.int32()),
        ("receiver", pa.int32()),
        ("send_ms", pa.float64()),
        ("arrival_ms", pa.float64()),
        ("first", pa.bool_()),
        ("hops", pa.int32()),
        ("relay", pa.bool_()),
    ])


def __getattr__(name: str) -> Any:
    if name == "SCHEMA":  # the columns of a trace, in order (``schema()``, made on first use)
        return schema()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: the metadata key of a trace file (JSON: world, layout, positions, each protocol's links)
META_KEY = b"hedgerow.trace"


def copy_rows(
    delivery: Any,
    indptr: np.ndarray,
    indices: np.ndarray,
    edge_delay: np.ndarray,
    masks: np.ndarray,
    *,
    message_ids: np.ndarray,
    entry_map: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """One row per copy of a delivery recorded with ``record_edges=True``.

    Parameters
    ----------
    delivery : Delivery
        Its ``edge_recv`` (``(k, entries)``) holds the arrival of the copy on every entry of
        the graph the messages used.
    indptr, indices, edge_delay : numpy.ndarray
        The full CSR graph and its one-way delays (ms per entry).
    masks : numpy.ndarray
        ``(n, words)`` uint64 subscriptions (``Instance.masks``).
    message_ids : numpy.ndarray
        ``(k,)`` the messages' indices in their epoch.
    entry_map : numpy.ndarray, optional
        Full-graph entry -> entry of the graph the messages used (``-1``: removed), as
        :func:`hedgerow.dissemination.chunks.disseminate_chunks` yields; identity if ``None``.

    Returns
    -------
    dict
        Column name -> array (:func:`schema` without ``protocol`` and ``epoch``).
    """
    er = delivery.edge_recv
    if er is None:
        raise ParameterError("a trace needs a delivery recorded with record_edges=True")
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    n = len(indptr) - 1
    full_sender = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    if entry_map is None:
        inv = np.arange(er.shape[1], dtype=np.int64)
    else:
        emap = np.asarray(entry_map, dtype=np.int64)
        inv = np.full(er.shape[1], -1, dtype=np.int64)
        kept = np.nonzero(emap >= 0)[0]
        inv[emap[kept]] = kept
    msg, local = np.nonzero(np.isfinite(er))
    entry = inv[local]
    sender = full_sender[entry]
    receiver = indices[entry]
    arrival = er[msg, local]
    send = arrival - np.asarray(edge_delay, dtype=np.float64)[entry]
    first = (delivery.parent[msg, receiver] == sender) & (
        delivery.arrival[msg, receiver] == arrival
    )
    hops = np.where(first, delivery.hops[msg, receiver], -1)
    topic = np.asarray(delivery.topic, dtype=np.int64)[msg]
    word, bit = topic // 64, (topic % 64).astype(np.uint64)
    subscribed = ((masks[receiver, word] >> bit) & np.uint64(1)).astype(bool)
    return {
        "message": np.asarray(message_ids, dtype=np.int32)[msg],
        "topic": topic.astype(np.int32),
        "publisher": np.asarray(delivery.publisher, dtype=np.int32)[msg],
        "sender": sender.astype(np.int32),
        "receiver": receiver.astype(np.int32),
        "send_ms": send,
        "arrival_ms": arrival,
        "first": first,
        "hops": hops.astype(np.int32),
        "relay": ~subscribed,
    }


def sample_messages(n_messages: int, sample: int | None, rng: np.random.Generator) -> np.ndarray:
    """Sorted indices of the messages a trace keeps: all, or ``sample`` drawn without replacement.

    Examples
    --------
    >>> sample_messages(5, None, np.random.default_rng(0)).tolist()
    [0, 1, 2, 3, 4]
    >>> len(sample_messages(100, 3, np.random.default_rng(0)))
    3
    """
    if sample is None or sample >= n_messages:
        return np.arange(n_messages, dtype=np.int64)
    if sample < 1:
        raise ParameterError(f"trace sample must be at least 1, got {sample}", key="trace_sample")
    return np.sort(rng.choice(n_messages, size=sample, replace=False)).astype(np.int64)


class TraceWriter:
    """Append copies to a trace file; the world's layout and the overlays go in its metadata.

    Rows are written as they come to ``PATH.part`` (one row group per call); :meth:`close`
    streams them, row group by row group, into ``PATH`` with the metadata, so a trace of any
    size is written with one row group in memory, and ``PATH`` appears only when complete.

    Parameters
    ----------
    path : str or Path
        The Parquet file to write (its folder must exist and be writable).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not str(path).strip() or not self.path.name:
            raise ParameterError(f"--trace {str(path)!r}: name a file to write", key="trace")
        if self.path.is_dir():
            raise ParameterError(f"--trace {self.path}: is a folder; name a file", key="trace")
        if not self.path.parent.is_dir():
            raise ParameterError(f"--trace {self.path}: folder {self.path.parent} does not exist",
                                 key="trace")
        if not os.access(self.path.parent, os.W_OK):
            raise ParameterError(f"--trace {self.path}: folder {self.path.parent} is not writable",
                                 key="trace")
        self._part = self.path.with_name(self.path.name + ".part")
        self._writer: Any = None
        self.meta: dict[str, Any] = {"protocols": {}}
        self.rows = 0

    def add(self, protocol: str, epoch: int, rows: Mapping[str, np.ndarray]) -> None:
        """Append one chunk of copies of ``protocol`` in ``epoch``."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns = schema()
        k = len(rows["sender"])
        if k == 0:
            return
        cols = {
            "protocol": pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(k, dtype=np.int32)), pa.array([protocol])
            ),
            "epoch": pa.array(np.full(k, epoch, dtype=np.int32)),
            **{name: pa.array(rows[name]) for name in columns.names[2:]},
        }
        table = pa.Table.from_pydict(cols, schema=columns)
        if self._writer is None:
            self._writer = pq.ParquetWriter(_local(self._part), columns, filesystem=_local_fs())
        self._writer.write_table(table)
        self.rows += k

    def describe(self, protocol: str, info: Mapping[str, Any]) -> None:
        """Record ``protocol``'s overlay links, parameters and anything else the replay shows."""
        self.meta["protocols"][protocol] = dict(info)

    def close(self, world: Mapping[str, Any]) -> Path:
        """Write ``PATH`` with ``world`` (geometry, fingerprint) and the protocols as metadata."""
        import pyarrow.parquet as pq

        meta = {**world, **self.meta}
        stamped = schema().with_metadata({META_KEY: json.dumps(meta, default=_plain).encode()})
        with pq.ParquetWriter(_local(self.path.with_name(self.path.name + ".tmp")), stamped,
                              filesystem=_local_fs()) as out:
            if self._writer is not None:
                self._writer.close()
                src = pq.ParquetFile(_local(self._part), filesystem=_local_fs())
                for i in range(src.num_row_groups):
                    out.write_table(src.read_row_group(i).cast(stamped))
            else:
                out.write_table(schema().empty_table().cast(stamped))
        os.replace(self.path.with_name(self.path.name + ".tmp"), self.path)
        if self._part.exists():
            self._part.unlink()
        return self.path

    def abort(self) -> None:
        """Drop what was written (a failed run leaves no trace file behind)."""
        if self._writer is not None:
            self._writer.close()
        for p in (self._part, self.path.with_name(self.path.name + ".tmp")):
            if p.exists():
                p.unlink()


def _local_fs() -> Any:
    """pyarrow's local file system: a local path is never read as a URI (a file named
    ``unif:0`` is a file)."""
    import pyarrow.fs as pafs

    return pafs.LocalFileSystem()


def _local(path: Path) -> str:
    """The absolute form pyarrow takes as a local path whatever its name holds."""
    return str(Path(path).absolute())


def _plain(value: Any) -> Any:
    """numpy scalars and arrays in the metadata as plain JSON values."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def read_trace(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """``(rows as a pandas DataFrame, metadata)`` of a trace file.

    Raises
    ------
    DataError
        One line naming the file when it is missing or not a trace.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = Path(path)
    try:
        f = pq.ParquetFile(_local(p), filesystem=_local_fs())
        raw = (f.schema_arrow.metadata or {}).get(META_KEY)
        if raw is None:
            raise DataError(f"{p} is not a hedgerow trace (no {META_KEY.decode()} metadata)")
        meta = json.loads(raw)
        df = f.read().to_pandas()
    except (OSError, pa.ArrowInvalid, json.JSONDecodeError) as e:
        raise DataError(f"{p}: cannot read a trace: {str(e).splitlines()[0]}") from None
    df["protocol"] = df["protocol"].astype(str)
    return df, meta


def first_arrivals(df: Any) -> Any:
    """The first copy of every (protocol, epoch, message, receiver): its arrival and hops.

    The publisher is not in a trace (it receives no copy); a receiver never reached has no row.
    """
    cols = ["protocol", "epoch", "message", "topic", "publisher", "receiver", "arrival_ms",
            "hops", "relay"]
    return df.loc[df["first"], cols].reset_index(drop=True)
