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
    draw per topic, kept for the whole run; ``lognormal:MEDIAN:SIGMA`` a
    lognormal draw per message (``exp`` of a normal of mean ``ln MEDIAN`` and
    deviation ``SIGMA``), clipped to ``MEDIAN * exp(±4 SIGMA)`` or, with
    ``lognormal:MEDIAN:SIGMA:LO:HI``, to ``[LO, HI]``; ``topic:S1,S2,...``
    one size per topic, in topic order; ``file:PATH`` the same, one size per
    line (``#`` comments).  Drawn sizes are whole bytes (rounded down).
``publication``
    ``poisson:RATE``: the epoch's messages published as one Poisson process of
    ``RATE`` messages per second (in message order); ``poisson-topic:RATE``:
    each topic publishes as its own Poisson process of ``RATE`` messages per
    second, the epoch's messages of a topic taking its instants in message
    order; ``poisson-publisher:RATE``: the same per publisher;
    ``periodic:INTERVAL_MS``: the ``k``-th message of the epoch at
    ``k * INTERVAL_MS`` (slots, e.g. a block every 12,000 ms);
    ``periodic-topic:INTERVAL_MS``: the ``k``-th message of each topic at
    ``k * INTERVAL_MS`` (every topic publishes in the same slots, e.g. a block
    and its blobs together).

Examples
--------
>>> parse_size("128k"), parse_size("uniform:1k:2k")
(('const', 131072.0, 131072.0), ('uniform', 1024.0, 2048.0))
>>> parse_bandwidth("home:0.8:25:50,dc:0.2:1000:1000")
('classes', {'home': (0.8, 25.0, 50.0), 'dc': (0.2, 1000.0, 1000.0)})
>>> parse_bandwidth("25:50")
('uniform', (25.0, 50.0))
>>> parse_publication("poisson:2"), parse_publication("periodic:12000")
(('poisson', 2.0), ('periodic', 12000.0))
>>> parse_size("lognormal:128k:0.5:1k:1m")
('lognormal', 131072.0, 0.5, 1024.0, 1048576.0)
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
    "PUBLICATION_FORMS",
    "WIRE_SETTINGS",
    "epoch_control",
    "epoch_wire",
    "keyed_poisson_publication",
    "parse_bandwidth",
    "parse_publication",
    "parse_size",
    "publication_instants",
    "topic_sizes",
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


def parse_size(value: str) -> tuple[Any, ...]:
    """The form of a ``size`` setting (module docstring), kind first.

    ``("const", B, B)``, ``("uniform", LO, HI)``, ``("topic-uniform", LO, HI)``,
    ``("lognormal", MEDIAN, SIGMA, LO, HI)`` (the clip bounds) or
    ``("topic", S1, S2, ...)`` (from a list or a file, read here: a bad line is
    a :class:`~hedgerow.errors.DataError` naming the file and the line).
    """
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
    if text.startswith("lognormal:"):
        return _lognormal(text)
    if text.startswith("topic:"):
        items = text[6:].split(",")
        if not text[6:].strip():
            raise ParameterError("size: topic:S1,S2,... lists one size per topic", key="size")
        return ("topic", *(_bytes(x) for x in items))
    if text.startswith("file:"):
        return ("topic", *_read_sizes(text[5:]))
    v = _bytes(text)
    return "const", v, v


def _lognormal(text: str) -> tuple[Any, ...]:
    parts = text[len("lognormal:"):].split(":")
    if len(parts) not in (2, 4):
        raise ParameterError(f"size: lognormal:MEDIAN:SIGMA or lognormal:MEDIAN:SIGMA:LO:HI, "
                             f"got {text!r}", key="size")
    median = _bytes(parts[0])
    try:
        sigma = float(parts[1])
    except ValueError:
        sigma = float("nan")
    if not (median > 0 and np.isfinite(sigma) and sigma >= 0):
        raise ParameterError(f"size: lognormal needs a positive MEDIAN and a finite SIGMA >= 0, "
                             f"got {text!r}", key="size")
    if len(parts) == 4:
        lo, hi = _bytes(parts[2]), _bytes(parts[3])
        if lo > hi:
            raise ParameterError(f"size: LO must not exceed HI, got {text!r}", key="size")
    else:
        lo, hi = median * float(np.exp(-4.0 * sigma)), median * float(np.exp(4.0 * sigma))
    return "lognormal", median, sigma, lo, hi


def _read_sizes(path: str) -> list[float]:
    """One size per topic from a file: one ``BYTES`` per line (``k``/``m`` suffixes), ``#``
    comments and blank lines skipped."""
    if not path:
        raise ParameterError("size: file:PATH names a file", key="size")
    p = Path(path)
    if not p.is_file():
        raise DataError(f"size file {path}: not found")
    try:
        lines = p.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"size file {path}: {exc}") from None
    sizes = []
    for number, line in enumerate(lines, start=1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        try:
            sizes.append(_bytes(body))
        except ParameterError:
            raise DataError(f"size file {path}:{number}: {body!r} is not a number of bytes "
                            f"(k, m suffixes)") from None
    if not sizes:
        raise DataError(f"size file {path}: no sizes (one per topic, one a line)")
    return sizes


def topic_sizes(form: tuple[Any, ...], n_topics: int, streams: RngStreams) -> np.ndarray | None:
    """``(n_topics,)`` bytes of each topic for a per-topic ``size`` form, else ``None``.

    ``topic-uniform`` draws from stream ``"sizes"``; a list or a file must give
    exactly one size per topic.

    Examples
    --------
    >>> topic_sizes(parse_size("topic:1k,2k"), 2, RngStreams(0)).tolist()
    [1024.0, 2048.0]
    >>> topic_sizes(parse_size("topic:1k"), 3, RngStreams(0))
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: size: 1 sizes given for 3 topics (one per topic)
    """
    if form[0] == "topic-uniform":
        return np.floor(streams.stream("sizes").uniform(form[1], form[2], size=int(n_topics)))
    if form[0] != "topic":
        return None
    sizes = np.asarray(form[1:], dtype=np.float64)
    if len(sizes) != n_topics:
        raise ParameterError(f"size: {len(sizes)} sizes given for {n_topics} topics (one per "
                             f"topic)", key="size")
    return sizes


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


#: the forms of ``publication``: kind -> what its number is
PUBLICATION_FORMS = {
    "poisson": "RATE",
    "poisson-topic": "RATE",
    "poisson-publisher": "RATE",
    "periodic": "INTERVAL_MS",
    "periodic-topic": "INTERVAL_MS",
}


def parse_publication(value: str) -> tuple[str, float]:
    """``(kind, number)`` of a ``publication`` setting: ``poisson``, ``poisson-topic`` or
    ``poisson-publisher`` with a rate (messages per second), or ``periodic`` with an interval
    (ms) (module docstring)."""
    text = str(value).strip()
    kind, _, number = text.partition(":")
    if kind not in PUBLICATION_FORMS or not _:
        forms = ", ".join(f"{k}:{v}" for k, v in PUBLICATION_FORMS.items())
        raise ParameterError(f"publication: {forms}; got {text!r}", key="publication")
    try:
        v = float(number)
    except ValueError:
        v = float("nan")
    if not (np.isfinite(v) and v > 0):
        what = ("INTERVAL_MS must be a positive number of ms" if kind.startswith("periodic")
                else "RATE must be a positive number of messages per second")
        raise ParameterError(f"publication: {what}, got {number!r}", key="publication")
    return kind, v


def keyed_poisson_publication(
    key: np.ndarray, rate_per_s: float, rng: np.random.Generator
) -> np.ndarray:
    """Publication instants (ms) when every key (topic, publisher) is its own Poisson process.

    Each distinct key publishes as a Poisson process of ``rate_per_s``
    messages per second from instant 0; the messages of one key take its
    successive instants in message order.  One call to ``rng.exponential``
    draws every gap, keys in increasing order and each key's messages in
    order, so the instants are a function of the keys and the generator.

    Examples
    --------
    >>> import numpy as np
    >>> t = keyed_poisson_publication(np.array([1, 0, 1]), 10.0, np.random.default_rng(0))
    >>> bool(t[2] > t[0]), t.shape
    (True, (3,))
    """
    rate = float(rate_per_s)
    if not (np.isfinite(rate) and rate > 0):
        raise ParameterError(f"rate_per_s: must be positive, got {rate_per_s!r}")
    k = np.asarray(key, dtype=np.int64)
    order = np.argsort(k, kind="stable")
    gaps = rng.exponential(1000.0 / rate, size=len(k))
    total = np.cumsum(gaps)
    sk = k[order]
    first = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]]) if len(sk) else np.zeros(0, int)
    # each key's process starts at 0: subtract the running total before its first message
    before = np.r_[0.0, total][first]
    counts = np.diff(np.r_[first, len(sk)])
    out = np.empty(len(k))
    out[order] = total - np.repeat(before, counts)
    return out


def _rank_within(key: np.ndarray) -> np.ndarray:
    """Each message's rank among the messages of its key, in message order.

    Examples
    --------
    >>> _rank_within(np.array([4, 2, 4, 4, 2])).tolist()
    [0, 0, 1, 2, 1]
    """
    order = np.argsort(key, kind="stable")
    sk = key[order]
    first = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]]) if len(sk) else np.zeros(0, int)
    counts = np.diff(np.r_[first, len(sk)])
    out = np.empty(len(key), dtype=np.int64)
    out[order] = np.arange(len(key)) - np.repeat(first, counts)
    return out


def publication_instants(
    form: tuple[str, float], topic: np.ndarray, publisher: np.ndarray | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """``(m,)`` publication instants (ms) of an epoch's messages under a ``publication`` form.

    Examples
    --------
    >>> import numpy as np
    >>> publication_instants(("periodic", 12000.0), np.zeros(3, int), None,
    ...                      np.random.default_rng(0)).tolist()
    [0.0, 12000.0, 24000.0]
    >>> publication_instants(("periodic-topic", 12000.0), np.array([0, 1, 0, 1]), None,
    ...                      np.random.default_rng(0)).tolist()
    [0.0, 0.0, 12000.0, 12000.0]
    """
    kind, v = form
    m = len(topic)
    if kind == "periodic":
        return np.arange(m, dtype=np.float64) * v
    if kind == "periodic-topic":
        return _rank_within(np.asarray(topic, dtype=np.int64)).astype(np.float64) * v
    if kind == "poisson":
        return poisson_publication(m, v, rng)
    if kind == "poisson-topic":
        return keyed_poisson_publication(np.asarray(topic), v, rng)
    if publisher is None:
        raise ParameterError("publication: poisson-publisher needs the messages' publishers",
                             key="publication")
    return keyed_poisson_publication(np.asarray(publisher), v, rng)


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
    sc: Any, seed: int, epoch: int, topic: np.ndarray, n_topics: int,
    publisher: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
    """Epoch ``epoch``'s ``(sizes, publication instants, generator)`` for messages of ``topic``
    (published by ``publisher``, which ``poisson-publisher`` needs).

    Stream ``"wire:E"`` draws, in order, the per-message sizes (``uniform``,
    ``lognormal``), the publication instants (``poisson`` forms), and is then
    handed to the kernel for its loss and jitter keys; per-topic sizes come
    from stream ``"sizes"`` (``topic-uniform``) or the setting itself, the
    same every epoch.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> sc = SimpleNamespace(size="uniform:100:200", publication="poisson:1000")
    >>> s, t, _ = epoch_wire(sc, 1, 0, np.array([0, 0, 1]), 2)
    >>> bool(((s >= 100) & (s <= 200)).all()), bool((np.diff(t) > 0).all())
    (True, True)
    >>> sc = SimpleNamespace(size="topic:1k,3k", publication="poisson-topic:1000")
    >>> s, t, _ = epoch_wire(sc, 1, 0, np.array([0, 0, 1]), 2)
    >>> s.tolist(), bool(t[1] > t[0])
    ([1024.0, 1024.0, 3072.0], True)
    """
    streams = RngStreams(seed)
    rng = streams.stream(f"wire:{int(epoch)}")
    m = len(topic)
    if sc.size is None:
        sizes = np.zeros(m)
    else:
        form = parse_size(sc.size)
        per_topic = topic_sizes(form, int(n_topics), streams)
        if per_topic is not None:
            sizes = per_topic[np.asarray(topic, dtype=np.int64)]
        elif form[0] == "const":
            sizes = np.full(m, form[1])
        elif form[0] == "uniform":
            sizes = np.floor(rng.uniform(form[1], form[2], size=m))
        else:  # lognormal
            _, median, sigma, lo, hi = form
            sizes = np.floor(np.clip(rng.lognormal(np.log(median), sigma, size=m), lo, hi))
    if sc.publication is None:
        published = np.zeros(m)
    else:
        published = publication_instants(parse_publication(sc.publication), topic, publisher,
                                         rng)
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
