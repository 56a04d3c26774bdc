"""The world's network of bytes: bandwidth, message sizes and publication instants.

The settings ``bandwidth``, ``download_queues``, ``validation_ms``,
``validation_ms_per_kb``, ``loss``, ``jitter_ms``, ``size`` and
``publication`` (:data:`~hedgerow.world_settings.WORLD_SETTINGS`) are read
here; ``docs/network.md`` gives the model.  A world none of them sets has no
network (:func:`world_network` returns ``None``) and disseminates exactly as
before; any of them makes the world *contended*: every epoch's messages are
simulated together by :func:`~hedgerow.dissemination.disseminate_contended`.

Random streams (from ``RngStreams(seed)``, so no other stream moves):
``"bandwidth"`` (which nodes fall in which bandwidth class), ``"sizes"``
(per-topic sizes), ``"wire:E"`` for epoch ``E`` (that epoch's per-message
sizes, then its publication instants, then the loss and jitter keys) and
``"control:E"`` (the phases and partners of that epoch's maintenance rounds,
:func:`epoch_control`, only when ``control_size`` is above 0).

Written forms
-------------
``bandwidth``
    ``UP`` (both directions) or ``UP:DOWN`` in Mbit/s (``inf`` = unlimited);
    classes ``NAME:SHARE:UP:DOWN,...`` (e.g. ``home:0.8:25:50,dc:0.2:1000:1000``);
    ``file:PATH``, one ``upload download`` line per node (``#`` comments).
``size``
    bytes, with an optional ``k`` (KiB) or ``m`` (MiB) suffix (``128k``);
    ``uniform:LO:HI`` a uniform draw per message; ``topic-uniform:LO:HI`` one
    draw per topic, kept for the whole run.
``publication``
    ``poisson:RATE``: the epoch's messages published as a Poisson process of
    ``RATE`` messages per second (in message order).

Examples
--------
>>> parse_size("128k"), parse_size("uniform:1k:2k")
(('const', 131072.0, 131072.0), ('uniform', 1024.0, 2048.0))
>>> parse_bandwidth("home:0.8:25:50,dc:0.2:1000:1000")
('classes', {'home': (0.8, 25.0, 50.0), 'dc': (0.2, 1000.0, 1000.0)})
>>> parse_bandwidth("25:50")
('uniform', (25.0, 50.0))
>>> parse_publication("poisson:2")
2.0
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hedgerow.dissemination.contended import ControlBatch, Network, poisson_publication
from hedgerow.errors import DataError, ParameterError
from hedgerow.latency import LatencyModel
from hedgerow.model.rng import RngStreams
from hedgerow.protocols.control import ControlRounds

__all__ = [
    "WIRE_SETTINGS",
    "epoch_control",
    "epoch_wire",
    "parse_bandwidth",
    "parse_publication",
    "parse_size",
    "world_network",
]

#: the settings that make a world contended (any of them away from its default)
WIRE_SETTINGS = (
    "bandwidth",
    "download_queues",
    "validation_ms",
    "validation_ms_per_kb",
    "loss",
    "jitter_ms",
    "size",
    "publication",
    "control_size",
    "control_entry_size",
    "control_period_ms",
)

_SUFFIX = {"k": 1024.0, "m": 1024.0 * 1024.0}


def _bytes(text: str) -> float:
    t = text.strip().lower()
    mult = _SUFFIX.get(t[-1:], 1.0)
    body = t[:-1] if t[-1:] in _SUFFIX else t
    try:
        v = float(body) * mult
    except ValueError:
        raise ParameterError(f"size: {text!r} is not a number of bytes (k, m suffixes)",
                             key="size") from None
    if not (np.isfinite(v) and v >= 0):
        raise ParameterError(f"size: bytes must be finite and non-negative, got {text!r}",
                             key="size")
    return v


def parse_size(value: str) -> tuple[str, float, float]:
    """``(kind, low, high)`` of a ``size`` setting; ``kind`` is ``const``, ``uniform`` or
    ``topic-uniform`` (module docstring)."""
    text = str(value).strip()
    for kind in ("topic-uniform", "uniform"):
        if text.startswith(kind + ":"):
            parts = text[len(kind) + 1:].split(":")
            if len(parts) != 2:
                raise ParameterError(f"size: {kind}:LO:HI, got {text!r}", key="size")
            lo, hi = _bytes(parts[0]), _bytes(parts[1])
            if lo > hi:
                raise ParameterError(f"size: LO must not exceed HI, got {text!r}", key="size")
            return kind, lo, hi
    v = _bytes(text)
    return "const", v, v


def _mbps(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ParameterError(f"bandwidth: {text!r} is not a rate in Mbit/s",
                             key="bandwidth") from None
    if not v > 0:
        raise ParameterError(f"bandwidth: rates must be positive (Mbit/s), got {text!r}",
                             key="bandwidth")
    return v


def parse_bandwidth(value: str) -> tuple[str, Any]:
    """``("uniform", (up, down))``, ``("classes", {name: (share, up, down)})`` or
    ``("file", path)`` of a ``bandwidth`` setting (module docstring)."""
    text = str(value).strip()
    if text.startswith("file:"):
        path = text[5:]
        if not path:
            raise ParameterError("bandwidth: file:PATH names a file", key="bandwidth")
        return "file", path
    parts = text.split(":")
    if len(parts) <= 2 and "," not in text:
        up = _mbps(parts[0])
        return "uniform", (up, _mbps(parts[1]) if len(parts) == 2 else up)
    classes: dict[str, tuple[float, float, float]] = {}
    for item in text.split(","):
        fields = item.strip().split(":")
        if len(fields) != 4 or not fields[0]:
            raise ParameterError(
                f"bandwidth: classes are NAME:SHARE:UP:DOWN separated by commas, got {item!r}",
                key="bandwidth",
            )
        name = fields[0]
        if name in classes:
            raise ParameterError(f"bandwidth: class {name!r} given twice", key="bandwidth")
        try:
            share = float(fields[1])
        except ValueError:
            share = -1.0
        if not (np.isfinite(share) and share >= 0):
            raise ParameterError(f"bandwidth: share of class {name!r} must be a non-negative "
                                 f"number, got {fields[1]!r}", key="bandwidth")
        classes[name] = (share, _mbps(fields[2]), _mbps(fields[3]))
    if sum(c[0] for c in classes.values()) <= 0:
        raise ParameterError("bandwidth: the class shares sum to 0", key="bandwidth")
    return "classes", classes


def parse_publication(value: str) -> float:
    """The rate (messages per second) of a ``publication`` setting ``poisson:RATE``."""
    text = str(value).strip()
    if not text.startswith("poisson:"):
        raise ParameterError(f"publication: poisson:RATE, got {text!r}", key="publication")
    try:
        rate = float(text[8:])
    except ValueError:
        rate = float("nan")
    if not (np.isfinite(rate) and rate > 0):
        raise ParameterError(f"publication: RATE must be a positive number of messages per "
                             f"second, got {text[8:]!r}", key="publication")
    return rate


def _read_rates(path: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    p = Path(path)
    if not p.is_file():
        raise DataError(f"bandwidth file {path}: not found")
    try:
        rows = np.loadtxt(p, dtype=np.float64, comments="#", ndmin=2)
    except ValueError as exc:
        raise DataError(f"bandwidth file {path}: {exc}") from None
    if rows.shape != (n, 2):
        raise DataError(f"bandwidth file {path}: needs {n} lines of 'upload download' (Mbit/s), "
                        f"got shape {rows.shape}")
    if not (rows > 0).all():
        raise DataError(f"bandwidth file {path}: rates must be positive (Mbit/s)")
    return rows[:, 0].copy(), rows[:, 1].copy()


def contended(sc: Any) -> bool:
    """Whether a scenario sets any of :data:`WIRE_SETTINGS` away from its default."""
    return bool(
        sc.bandwidth is not None or sc.download_queues or sc.validation_ms
        or sc.validation_ms_per_kb or sc.loss or sc.jitter_ms or sc.size is not None
        or sc.publication is not None or getattr(sc, "control_size", 0.0) > 0
    )


def world_network(sc: Any, n: int, streams: RngStreams) -> Network | None:
    """The :class:`~hedgerow.dissemination.Network` of a world of ``n`` nodes (``None`` when
    the scenario sets none of :data:`WIRE_SETTINGS`); classes drawn from stream
    ``"bandwidth"``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> sc = SimpleNamespace(bandwidth="a:1:10:20,b:1:100:200", download_queues=False,
    ...                      validation_ms=1.0, validation_ms_per_kb=0.5, loss=0.0,
    ...                      jitter_ms=0.0, size=None, publication=None)
    >>> net = world_network(sc, 4, RngStreams(0))
    >>> sorted(net.upload.tolist()), net.validation_ms_per_byte
    ([10.0, 10.0, 100.0, 100.0], 0.00048828125)
    """
    if not contended(sc):
        return None
    kw: dict[str, Any] = {
        "download_queues": bool(sc.download_queues),
        "validation_ms": float(sc.validation_ms),
        "validation_ms_per_byte": float(sc.validation_ms_per_kb) / 1024.0,
        "loss": float(sc.loss),
        "jitter_ms": float(sc.jitter_ms),
    }
    if sc.bandwidth is None:
        return Network.uniform(n, **kw)
    kind, spec = parse_bandwidth(sc.bandwidth)
    if kind == "uniform":
        return Network.uniform(n, spec[0], spec[1], **kw)
    if kind == "classes":
        return Network.from_classes(n, spec, streams.stream("bandwidth"), **kw)
    up, down = _read_rates(spec, n)
    return Network(up, down, **kw)


def epoch_wire(
    sc: Any, seed: int, epoch: int, topic: np.ndarray, n_topics: int
) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
    """Epoch ``epoch``'s ``(sizes, publication instants, generator)`` for messages of ``topic``.

    Stream ``"wire:E"`` draws, in order, the per-message sizes (``uniform``),
    the publication instants (``publication``), and is then handed to the
    kernel for its loss and jitter keys; per-topic sizes come from stream
    ``"sizes"``, the same every epoch.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> sc = SimpleNamespace(size="uniform:100:200", publication="poisson:1000")
    >>> s, t, _ = epoch_wire(sc, 1, 0, np.array([0, 0, 1]), 2)
    >>> bool(((s >= 100) & (s <= 200)).all()), bool((np.diff(t) > 0).all())
    (True, True)
    """
    streams = RngStreams(seed)
    rng = streams.stream(f"wire:{int(epoch)}")
    m = len(topic)
    if sc.size is None:
        sizes = np.zeros(m)
    else:
        kind, lo, hi = parse_size(sc.size)
        if kind == "const":
            sizes = np.full(m, lo)
        elif kind == "uniform":
            sizes = np.floor(rng.uniform(lo, hi, size=m))
        else:
            per_topic = np.floor(streams.stream("sizes").uniform(lo, hi, size=int(n_topics)))
            sizes = per_topic[np.asarray(topic, dtype=np.int64)]
    if sc.publication is None:
        published = np.zeros(m)
    else:
        published = poisson_publication(m, parse_publication(sc.publication), rng)
    return np.ascontiguousarray(sizes, dtype=np.float64), published, rng


def epoch_control(
    sc: Any,
    seed: int,
    epoch: int,
    published: np.ndarray,
    latency: LatencyModel,
    traffic: Callable[[ControlRounds], ControlBatch | None],
) -> ControlBatch | None:
    """Epoch ``epoch``'s control messages, sized and with their latencies (``None``: none).

    ``traffic`` is the protocol's
    :meth:`~hedgerow.protocols.base.OverlayProtocol.control_traffic`; it is
    asked only when ``control_size`` is above 0, with the epoch's
    :class:`~hedgerow.protocols.control.ControlRounds`: rounds every
    ``control_period_ms`` while the epoch publishes (until its last
    publication instant), phases and partners from stream ``"control:E"``.
    Each message gets ``control_size + control_entry_size * entries`` bytes
    and the latency model's one-way delay from its sender to its receiver.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from hedgerow.latency import constant
    >>> from hedgerow.protocols.control import exchange
    >>> sc = SimpleNamespace(control_size=64.0, control_entry_size=18.0,
    ...                      control_period_ms=1000.0)
    >>> def ask(rounds):  # node 0 asks node 1 once, with 2 entries; 1 answers with 3
    ...     return exchange(np.array([0]), np.array([1]), np.array([5.0]), 2, 3)
    >>> cb = epoch_control(sc, 1, 0, np.array([0.0, 900.0]), constant(2, 7.0), ask)
    >>> cb.nbytes.tolist(), cb.delay.tolist(), cb.answers.tolist()
    ([100.0, 118.0], [7.0, 7.0], [-1, 0])
    >>> sc.control_size = 0.0
    >>> epoch_control(sc, 1, 0, np.array([0.0]), constant(2, 7.0), ask) is None
    True
    """
    if not sc.control_size > 0:
        return None
    rng = RngStreams(seed).stream(f"control:{int(epoch)}")
    until = float(np.max(published)) if len(published) else 0.0
    batch = traffic(ControlRounds(float(sc.control_period_ms), until, rng))
    if batch is None or not len(batch):
        return None
    delay = latency.delay(batch.sender, batch.receiver)
    return batch.sized(float(sc.control_size), float(sc.control_entry_size)).with_delay(
        np.asarray(delay, dtype=np.float64))
