"""Overlay protocols, one module per protocol, and the one registry of them all.

A protocol declares its capabilities by the base classes it derives from
(:mod:`hedgerow.protocols.base`) and its parameters in ``params``
(:mod:`hedgerow.params`); help texts, spec checks, the conformance checks
(:mod:`hedgerow.testing`) and the parameter reference of ``docs/specs.md``
(:func:`params_reference`) read both from here.

The registry holds the built-in protocols and those of separately installed
packages that declare an entry point in the group ``hedgerow.protocols``
(:data:`ENTRY_POINT_GROUP`): the entry point's name is the registry name and
must equal the class's ``name``; its value is the class
(``"my_pkg.module:MyProtocol"``).  Plugins are found once, the first time the
registry is asked for a name that is not built in or for the whole list, so
``import hedgerow`` and runs of built-in protocols never import them.  A plugin
that cannot be imported, whose name is taken or malformed, or whose object is
not a protocol class is left out with a one-line reason
(:func:`plugin_errors`); asking for it by name raises that reason as a
:class:`ParameterError`, and the built-in protocols are unaffected.  See
``docs/contributing.md`` ("A protocol in its own package").

Examples
--------
>>> "spidercast" in protocol_names(capability="maintained")
True
>>> protocol_origin("spidercast")
'built-in'
>>> from hedgerow.model import Instance
>>> get_protocol("ringpt").build(
...     Instance.from_lists([[0], [0], [0]], n_topics=1)).n_edges
3
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hedgerow.errors import ParameterError
from hedgerow.metrics.registry import METRICS, Metric
from hedgerow.protocols.base import (
    CAPABILITIES,
    AdaptiveProtocol,
    MaintainedProtocol,
    OverlayProtocol,
    StaticProtocol,
    capabilities,
)
from hedgerow.protocols.baselines.complete import CompleteGraph
from hedgerow.protocols.baselines.gossipsub import GossipSubSplit
from hedgerow.protocols.baselines.opt import OPT
from hedgerow.protocols.baselines.perigee import Perigee
from hedgerow.protocols.baselines.random_graph import RandomGraph
from hedgerow.protocols.baselines.ringpt import RingPerTopic
from hedgerow.protocols.baselines.rvr import RVR
from hedgerow.protocols.baselines.scribe import ScribeRandom, ScribeTopic
from hedgerow.protocols.baselines.similarity import RandomOverlay, Similarity
from hedgerow.protocols.goldfish import Goldfish
from hedgerow.protocols.gossipsub import GossipSub
from hedgerow.protocols.omen import Omen, OmenG
from hedgerow.protocols.spidercast import SpiderCast
from hedgerow.protocols.tco.repair import LowODAInc, LowODARe
from hedgerow.protocols.tco.static import GreedyMerge, LowODA, MinMaxODA
from hedgerow.protocols.topiary import Topiary
from hedgerow.protocols.vitis import Vitis

if TYPE_CHECKING:  # pragma: no cover
    import importlib.metadata

#: name -> class of the protocols that ship with Hedgerow (the key is the class's ``name``)
BUILTIN: dict[str, type[OverlayProtocol]] = {
    cls.name: cls
    for cls in (
        SpiderCast,
        Similarity,
        RandomOverlay,
        RingPerTopic,
        Topiary,
        RandomGraph,
        CompleteGraph,
        GossipSubSplit,
        GossipSub,
        ScribeRandom,
        ScribeTopic,
        Goldfish,
        Perigee,
        GreedyMerge,
        MinMaxODA,
        LowODA,
        LowODARe,
        LowODAInc,
        Omen,
        OmenG,
        OPT,
        RVR,
        Vitis,
    )
}


#: the entry-point group in which other packages register protocols
ENTRY_POINT_GROUP = "hedgerow.protocols"

#: what a protocol name may look like (it is typed in ``--protocols a,b`` and ``-p name.key=v``)
_NAME = re.compile(r"[a-z][a-z0-9_-]*")


@dataclass(frozen=True)
class PluginInfo:
    """Where a protocol registered through an entry point comes from.

    Attributes
    ----------
    name : str
        The entry point's (and the registry's) name.
    value : str
        The entry point's value, ``"module:Class"``.
    distribution : str
        The installed distribution that declares it (``"?"`` when unknown).
    version : str
        That distribution's version (``"?"`` when unknown).
    """

    name: str
    value: str
    distribution: str
    version: str

    def label(self) -> str:
        """``plugin 'name' (distribution version)``, the prefix of every message about it."""
        return f"plugin {self.name!r} ({self.distribution} {self.version})"


def _discover() -> Iterable[importlib.metadata.EntryPoint]:
    """The installed entry points of :data:`ENTRY_POINT_GROUP`."""
    import importlib.metadata  # here: discovery runs once, on first need

    return importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)


def _info(ep: importlib.metadata.EntryPoint) -> PluginInfo:
    dist = getattr(ep, "dist", None)
    name = (dist.metadata["Name"] if dist is not None else None) or "?"
    version = (dist.version if dist is not None else None) or "?"
    return PluginInfo(ep.name, ep.value, name, version)


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def _load_plugin(ep: importlib.metadata.EntryPoint) -> type[OverlayProtocol]:
    """The protocol class of entry point ``ep``; a one-line ``ValueError`` says why not."""
    try:
        obj = ep.load()
    except Exception as e:  # any failure of third-party code is the plugin's error
        raise ValueError(f"cannot be imported ({_one_line(e)})") from None
    if not (isinstance(obj, type) and issubclass(obj, OverlayProtocol)):
        what = obj.__name__ if isinstance(obj, type) else type(obj).__name__
        raise ValueError(
            f"{ep.value} is not a subclass of hedgerow.protocols.OverlayProtocol (got {what})"
        )
    if not capabilities(obj):
        raise ValueError(
            f"{ep.value} declares no capability (derive from the class of one of"
            f" {', '.join(CAPABILITIES)} in hedgerow.protocols.base)"
        )
    abstract = getattr(obj, "__abstractmethods__", None)
    if abstract:
        missing = ", ".join(sorted(abstract))
        raise ValueError(f"{ep.value} is abstract (does not implement {missing})")
    if obj.name != ep.name:
        raise ValueError(
            f"{ep.value} is named {obj.name!r}; the entry point's name must equal the class's name"
        )
    return obj


class _Registry(MutableMapping[str, type[OverlayProtocol]]):
    """The built-in protocols, then the plugins, loaded once on first need.

    A mapping ``name -> class``.  Looking up a built-in name never loads the
    plugins; iterating, counting or looking up any other name does (once).
    """

    def __init__(self, builtin: dict[str, type[OverlayProtocol]]) -> None:
        self._data = dict(builtin)
        self._loaded = False
        self.plugins: dict[str, PluginInfo] = {}
        self.errors: dict[str, str] = {}

    def load(self) -> None:
        """Discover and load the plugins (once; again after :meth:`reset`)."""
        if self._loaded:
            return
        self._loaded = True  # before loading: a plugin reading the registry does not recurse
        eps = sorted(
            _discover(),
            key=lambda ep: (ep.name, _info(ep).distribution, ep.value),
        )
        claims: dict[str, list[importlib.metadata.EntryPoint]] = {}
        for ep in eps:
            claims.setdefault(ep.name, []).append(ep)
        for name, group in claims.items():
            for ep in group:
                info = _info(ep)
                reason = self._refusal(ep, group)
                if reason is None:
                    try:
                        cls = _load_plugin(ep)
                    except ValueError as e:
                        reason = str(e)
                    else:
                        self._data[name] = cls
                        self.plugins[name] = info
                        continue
                self.errors[name] = f"{info.label()}: {reason}"

    def _refusal(
        self, ep: importlib.metadata.EntryPoint, group: list[importlib.metadata.EntryPoint]
    ) -> str | None:
        """Why ``ep`` is refused before importing it, or ``None``."""
        if not _NAME.fullmatch(ep.name):
            return (
                f"name {ep.name!r} is not a protocol name (lower-case letters, digits, '-', '_';"
                " starting with a letter)"
            )
        if ep.name in BUILTIN:
            return f"name {ep.name!r} clashes with the built-in protocol {ep.name!r}"
        if len(group) > 1:
            others = [_info(o) for o in group if o is not ep]
            names = ", ".join(f"{o.distribution} {o.version} ({o.value})" for o in others)
            return f"name {ep.name!r} is also registered by {names}; neither is loaded"
        return None

    @property
    def loaded(self) -> bool:
        """Whether the plugins have been looked for."""
        return self._loaded

    def reset(self) -> None:
        """Forget the plugins (the next use discovers them again); the built-ins stay."""
        self._data = {k: v for k, v in self._data.items() if k not in self.plugins}
        self._loaded = False
        self.plugins = {}
        self.errors = {}

    def __getitem__(self, name: str) -> type[OverlayProtocol]:
        try:
            return self._data[name]
        except KeyError:
            if self._loaded:
                raise
        self.load()
        return self._data[name]

    def __contains__(self, name: object) -> bool:
        if name in self._data:
            return True
        self.load()
        return name in self._data

    def __iter__(self) -> Iterator[str]:
        self.load()
        return iter(list(self._data))

    def __len__(self) -> int:
        self.load()
        return len(self._data)

    def __setitem__(self, name: str, cls: type[OverlayProtocol]) -> None:
        self._data[name] = cls

    def __delitem__(self, name: str) -> None:
        del self._data[name]

    def __repr__(self) -> str:
        return f"<protocol registry: {len(self)} protocols, {len(self.plugins)} from plugins>"


#: name -> protocol class, for every protocol: the built-ins, then the plugins (a mapping)
REGISTRY = _Registry(BUILTIN)


def plugin_errors() -> list[str]:
    """One line per installed plugin that was left out: the plugin, its distribution, why.

    Examples
    --------
    >>> isinstance(plugin_errors(), list)
    True
    """
    REGISTRY.load()
    return [REGISTRY.errors[n] for n in sorted(REGISTRY.errors)]


def known_metrics() -> dict[str, Metric]:
    """Every declared metric: :data:`hedgerow.metrics.registry.METRICS` and each registered
    protocol's own ``metrics`` (a plugin's included), by column name.

    A spec's ``report.metrics`` and ``hedgerow report --metric`` are checked against it.

    Examples
    --------
    >>> known = known_metrics()
    >>> known["receive_rate"].better, known["stat_gateways"].kinds
    ('higher', ('build',))
    """
    out = dict(METRICS)
    for name in sorted(REGISTRY):
        for key, m in REGISTRY[name].metrics.items():
            out.setdefault(key, m)
    return out


def protocol_origin(name: str) -> str:
    """``'built-in'``, ``'plugin <distribution> <version>'`` for a plugin's protocol, or
    ``'added at run time'`` for a class put in :data:`REGISTRY` by hand.

    Raises :class:`ParameterError` for a name that is not registered.
    """
    cls = protocol_class(name)
    if BUILTIN.get(name) is cls:
        return "built-in"
    info = REGISTRY.plugins.get(name)
    if info is None:
        return "added at run time"
    return f"plugin {info.distribution} {info.version}"


def protocol_names(capability: str | None = None) -> list[str]:
    """Registered protocol names, sorted; only those with ``capability`` when given.

    Raises :class:`ParameterError` for an unknown capability.
    """
    if capability is None:
        return sorted(REGISTRY)
    if capability not in CAPABILITIES:
        raise ParameterError(
            f"unknown capability {capability!r}; allowed: {', '.join(CAPABILITIES)}"
        )
    return sorted(n for n, cls in REGISTRY.items() if capability in capabilities(cls))


def protocol_class(name: str, capability: str | None = None) -> type[OverlayProtocol]:
    """The class registered as ``name`` (with ``capability`` when given).

    The error lists the allowed names.
    """
    if isinstance(name, str) and name not in REGISTRY and name in REGISTRY.errors:
        raise ParameterError(REGISTRY.errors[name])
    if not isinstance(name, str) or name not in REGISTRY:
        raise ParameterError(f"unknown protocol {name!r}; allowed: {', '.join(protocol_names())}")
    cls = REGISTRY[name]
    if capability is not None and capability not in capabilities(cls):
        allowed = ", ".join(protocol_names(capability))
        raise ParameterError(
            f"{name} is not a {capability} protocol (it is {', '.join(capabilities(cls))});"
            f" {capability} protocols: {allowed}"
        )
    return cls


def get_protocol(name: str, capability: str | None = None, **params: Any) -> OverlayProtocol:
    """An unbuilt protocol ``name`` with ``params`` set.

    Raises :class:`ParameterError` for an unknown protocol or parameter.
    """
    return protocol_class(name, capability)(**params)


def protocol_help(capability: str | None = None) -> str:
    """One line per protocol: name, capabilities and parameters (for ``--help`` texts)."""
    lines = []
    for n in protocol_names(capability):
        cls = REGISTRY[n]
        ps = ", ".join(cls.params) or "no parameters"
        lines.append(f"{n} [{'/'.join(capabilities(cls))}]: {ps}")
    return "\n".join(lines)


def params_reference() -> str:
    """The parameter reference of the built-in protocols, as Markdown (``docs/specs.md``).

    One table per protocol, generated from the declarations, so the docs
    cannot drift from the code (a test compares ``docs/specs.md`` with it).
    Installed plugins are left out: ``docs/specs.md`` documents Hedgerow
    itself, and a plugin documents its own protocols (``hedgerow protocols
    NAME`` prints any protocol's parameters).

    Examples
    --------
    >>> params_reference().splitlines()[0]
    '#### `complete` (static)'
    """
    out = []
    for n in sorted(BUILTIN):
        cls = BUILTIN[n]
        out.append(f"#### `{n}` ({', '.join(capabilities(cls))})")
        if not cls.params:
            out.append("No parameters.")
            continue
        rows = ["| parameter | type, range, default | meaning |", "|---|---|---|"]
        for k, p in cls.params.items():
            rows.append(f"| `{k}` | {_md(p.describe())} | {_md(p.doc)} |")
        out.append("\n".join(rows))
    return "\n\n".join(out) + "\n"


def _md(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


__all__ = [
    "BUILTIN",
    "CAPABILITIES",
    "ENTRY_POINT_GROUP",
    "REGISTRY",
    "AdaptiveProtocol",
    "MaintainedProtocol",
    "OverlayProtocol",
    "PluginInfo",
    "StaticProtocol",
    "capabilities",
    "get_protocol",
    "known_metrics",
    "params_reference",
    "plugin_errors",
    "protocol_class",
    "protocol_help",
    "protocol_names",
    "protocol_origin",
]
