"""Declarative protocol parameters, validated in one place.

Every protocol declares its parameters once, as a class-level mapping of
:class:`Param` objects (scikit-learn's ``_parameter_constraints`` lesson).  The
same declarations give the constructor and its defaults, the validation of
values (``ParameterError`` naming the protocol and the parameter), the CLI's
``-p`` help, the spec checks at load time, the reference in ``docs/specs.md``
and the invalid values that the conformance checks feed every protocol.

Examples
--------
>>> p = Int(3, "greedy coverage K_g", low=0)
>>> p.bind("kg").validate("spidercast", 4)
4
>>> p.bind("kg").validate("spidercast", True)
Traceback (most recent call last):
...
hedgerow.errors.ParameterError: spidercast: parameter kg must be a whole number, got True
>>> Float(0.5, "a share", low=0.0, high=1.0).bind("x").describe()
'float in [0, 1], default 0.5'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from hedgerow.admission import admit
from hedgerow.errors import ParameterError

__all__ = [
    "Bool",
    "Choice",
    "Float",
    "Int",
    "Pairs",
    "Param",
    "Text",
    "as_bool",
    "as_choice",
    "as_float",
    "as_instance",
    "as_int",
    "as_mapping",
    "as_names",
    "check_memory",
    "resident_bytes",
    "validate_params",
]

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


@dataclass(frozen=True)
class Param:
    """One declared parameter.

    Attributes
    ----------
    kind : {"int", "float", "bool", "choice", "text", "pairs"}
        The value's type (``text``: a string read by ``parse``; ``pairs``:
        keyword arguments, a mapping or ``(name, value)`` pairs).
    default : Any
        Default value (``None`` only where ``optional``).
    doc : str
        One line of documentation.
    low, high : float, optional
        Inclusive bounds of a number (``None`` = unbounded).
    low_open, high_open : bool
        Make ``low`` / ``high`` exclusive.
    choices : tuple of str
        Allowed values of a ``choice``.
    unit : str
        Unit of a number (``"s"``, ``"ms"``, ``"links"``), for the docs.
    optional : bool
        ``None`` is a valid value (meaning "derived", as the doc says).
    parse : callable, optional
        ``text``: ``parse(value)`` raises :class:`~hedgerow.errors.ParameterError`
        for a malformed value (its return value is ignored).
    metavar : str
        ``text``: the value's form in help (``unif:K|exp:K``).
    name : str
        Set by :meth:`bind` when the owning class is created.
    """

    kind: str
    default: Any
    doc: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()
    unit: str = ""
    optional: bool = False
    parse: Callable[[str], Any] | None = field(default=None, compare=False)
    metavar: str = ""
    name: str = ""

    def bind(self, name: str) -> Param:
        """This declaration under ``name``."""
        return replace(self, name=name)

    # ------------------------------------------------------------- checking
    def _fail(self, owner: str, what: str, value: Any) -> ParameterError:
        return ParameterError(
            f"{owner}: parameter {self.name} must be {what}, got {value!r}", key=self.name
        )

    def _bounds(self, owner: str, v: float, original: Any) -> None:
        lo_bad = self.low is not None and (v <= self.low if self.low_open else v < self.low)
        hi_bad = self.high is not None and (v >= self.high if self.high_open else v > self.high)
        if lo_bad or hi_bad:
            raise self._fail(owner, self.range_text(), original)

    def validate(self, owner: str, value: Any) -> Any:
        """``value`` coerced to this parameter's type, or a :class:`ParameterError`.

        ``owner`` (the protocol name) starts the message.  Booleans are not
        numbers; a float is a whole number only if it is integral; strings are
        accepted for booleans (``true/false/yes/no/1/0``) and numbers (as the
        CLI's ``-p`` may pass them).
        """
        if value is None:
            if self.optional:
                return None
            raise self._fail(owner, self.type_text(), value)
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            s = str(value).strip().lower()
            if s in _TRUE:
                return True
            if s in _FALSE:
                return False
            raise self._fail(owner, self.type_text(), value)
        if self.kind == "choice":
            if not isinstance(value, str) or value.strip().lower() not in self.choices:
                raise self._fail(owner, self.type_text(), value)
            return value.strip().lower()
        if self.kind == "text":
            if not isinstance(value, str) or not value.strip():
                raise self._fail(owner, self.type_text(), value)
            if self.parse is not None:
                try:
                    self.parse(value)
                except ParameterError as e:
                    raise ParameterError(
                        f"{owner}: parameter {self.name} must be {self.type_text()}, got "
                        f"{value!r} ({e})",
                        key=self.name,
                    ) from None
            return value
        if self.kind == "pairs":
            items = value.items() if isinstance(value, Mapping) else value
            try:
                pairs = tuple((str(k), v) for k, v in items)
            except (TypeError, ValueError):
                raise self._fail(owner, self.type_text(), value) from None
            return pairs
        if isinstance(value, bool):
            raise self._fail(owner, self.type_text(), value)
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise self._fail(owner, self.type_text(), value) from None
        if math.isnan(x):
            raise self._fail(owner, self.type_text(), value)
        if self.kind == "int":
            if not math.isfinite(x) or x != math.floor(x):
                raise self._fail(owner, self.type_text(), value)
            self._bounds(owner, x, value)
            return int(x)
        if not math.isfinite(x) and not (self.high is None and x > 0):
            raise self._fail(owner, self.range_text(), value)
        self._bounds(owner, x, value)
        return x

    # ------------------------------------------------------------- text
    def type_text(self) -> str:
        """``a whole number``, ``a number``, ``true or false``, ``one of a, b``."""
        if self.kind == "choice":
            return f"one of {', '.join(self.choices)}"
        if self.kind == "text":
            return self.metavar or "a text"
        return {"int": "a whole number", "float": "a number", "bool": "true or false",
                "pairs": "a mapping of names to values"}[self.kind]

    def range_text(self) -> str:
        """The allowed values in words, e.g. ``a whole number >= 1`` or ``in (1, inf)``."""
        if self.low is not None and self.high is not None:
            lo = "(" if self.low_open else "["
            hi = ")" if self.high_open else "]"
            return f"in {lo}{_num(self.low)}, {_num(self.high)}{hi}"
        if self.low is not None:
            return f"{'>' if self.low_open else '>='} {_num(self.low)}"
        if self.high is not None:
            return f"{'<' if self.high_open else '<='} {_num(self.high)}"
        return self.type_text()

    def describe(self) -> str:
        """Type, range or choices, unit and default in one phrase (CLI help, docs)."""
        if self.kind == "bool":
            text = "true/false"
        elif self.kind == "choice":
            text = "|".join(self.choices)
        elif self.kind in ("text", "pairs"):
            text = self.type_text()
        else:
            text = self.kind
            if self.low is not None or self.high is not None:
                text += " " + self.range_text()
        if self.unit:
            text += f" ({self.unit})"
        if self.optional:
            text += ", optional"
        return f"{text}, default {_default_text(self.default)}"

    def invalid_values(self) -> list[Any]:
        """Values this parameter must refuse (fed to every protocol by the conformance checks)."""
        if self.kind == "bool":
            return ["maybe", 2.5]
        if self.kind == "choice":
            return ["no-such-choice", 3]
        if self.kind == "text":
            return [3, ""] + (["no:such:form"] if self.parse is not None else [])
        if self.kind == "pairs":
            return [3]
        bad: list[Any] = ["abc", float("nan")]
        if self.kind == "int":
            bad += [True, 1.5]
        if self.low is not None:
            bad.append(self.low - 1 if not self.low_open else self.low)
        if self.high is not None:
            bad.append(self.high + 1 if not self.high_open else self.high)
        if not self.optional:
            bad.append(None)
        return bad


def _num(x: float) -> str:
    if math.isinf(x):
        return "inf"
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _default_text(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return _num(v)
    return "derived" if v is None else str(v)


def Int(
    default: int | None,
    doc: str,
    *,
    low: float | None = None,
    high: float | None = None,
    unit: str = "",
    optional: bool = False,
) -> Param:
    """A whole-number parameter in ``[low, high]``."""
    return Param("int", default, doc, low=low, high=high, unit=unit, optional=optional)


def Float(
    default: float | None,
    doc: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    unit: str = "",
    optional: bool = False,
) -> Param:
    """A real-number parameter in ``[low, high]`` (``low_open`` / ``high_open`` exclude the end)."""
    return Param(
        "float",
        default,
        doc,
        low=low,
        high=high,
        low_open=low_open,
        high_open=high_open,
        unit=unit,
        optional=optional,
    )


def Bool(default: bool, doc: str) -> Param:
    """A true/false parameter."""
    return Param("bool", default, doc)


def Choice(default: str, choices: tuple[str, ...], doc: str) -> Param:
    """A parameter taking one of ``choices``."""
    return Param("choice", default, doc, choices=tuple(choices))


def Text(
    default: str | None,
    doc: str,
    *,
    parse: Callable[[str], Any] | None = None,
    metavar: str = "",
    optional: bool = False,
) -> Param:
    """A string parameter in a written form, checked by ``parse`` (e.g. ``unif:K``).

    Examples
    --------
    >>> def law(v):
    ...     if not v.startswith("unif:"):
    ...         raise ParameterError("not unif:K")
    >>> Text(None, "law", parse=law, metavar="unif:K", optional=True).bind("p").validate("w", "x")
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: w: parameter p must be unif:K, got 'x' (not unif:K)
    """
    return Param("text", default, doc, parse=parse, metavar=metavar, optional=optional)


def Pairs(doc: str) -> Param:
    """Keyword arguments (a mapping, or ``(name, value)`` pairs), kept as a tuple of pairs.

    Examples
    --------
    >>> Pairs("latency keywords").bind("kw").validate("w", {"grid": 2})
    (('grid', 2),)
    """
    return Param("pairs", (), doc)


def validate_params(owner: str, decl: Mapping[str, Param], values: Mapping[str, Any]) -> dict:
    """Validate ``values`` against ``decl``: unknown names and bad values raise ``ParameterError``.

    Examples
    --------
    >>> validate_params("p", {"d": Int(6, "degree", low=1).bind("d")}, {"d": "4"})
    {'d': 4}
    >>> validate_params("p", {"d": Int(6, "degree", low=1).bind("d")}, {"x": 1})
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: p: unknown parameter 'x'; allowed: d
    """
    out = {}
    for k in values:
        if k not in decl:
            raise ParameterError(
                f"{owner}: unknown parameter {k!r}; allowed: {', '.join(decl) or '(none)'}", key=k
            )
    for k, p in decl.items():
        out[k] = p.validate(owner, values.get(k, p.default))
    return out


# --------------------------------------------------------------------------- one-off values
def as_int(owner: str, name: str, value: Any, *, minimum: int = 0) -> int:
    """A whole number ``>= minimum`` (booleans refused), or a :class:`ParameterError`.

    For arguments that are not declared protocol parameters (scenario options).

    Examples
    --------
    >>> as_int("scenario", "epochs", 3.0)
    3
    """
    return Int(None, name, low=minimum).bind(name).validate(owner, value)


def as_float(owner: str, name: str, value: Any, *, low: float, high: float) -> float:
    """A number in ``[low, high]``, or a :class:`ParameterError`."""
    return Float(None, name, low=low, high=high).bind(name).validate(owner, value)


def as_bool(owner: str, name: str, value: Any) -> bool:
    """``true/false/1/0/yes/no`` as a bool, or a :class:`ParameterError`."""
    return Bool(False, name).bind(name).validate(owner, value)


def as_choice(owner: str, name: str, value: Any, choices: tuple[str, ...]) -> str:
    """One of ``choices`` (case-insensitive), or a :class:`ParameterError`."""
    return Choice(choices[0], choices, name).bind(name).validate(owner, value)


def as_instance(owner: str, name: str, value: Any, cls: type | tuple[type, ...]) -> Any:
    """``value`` when it is a ``cls``, else a :class:`ParameterError` naming the argument.

    Examples
    --------
    >>> as_instance("overlay_summary", "overlay", "x", dict)
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: overlay_summary: overlay must be a dict, got str 'x'
    """
    if not isinstance(value, cls):
        kinds = cls if isinstance(cls, tuple) else (cls,)
        want = " or ".join(k.__name__ for k in kinds)
        raise ParameterError(f"{owner}: {name} must be a {want}, got {type(value).__name__} "
                             f"{_short(value)}", key=name)
    return value


def as_mapping(owner: str, name: str, value: Any) -> dict[str, Any]:
    """A mapping as a dict (``None`` -> ``{}``), or a :class:`ParameterError` naming it.

    Examples
    --------
    >>> as_mapping("simulate", "params", None)
    {}
    >>> as_mapping("simulate", "params", "eta=2")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: simulate: params must be a mapping such as {'eta': 2}, got ...
    """
    from collections.abc import Mapping

    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ParameterError(f"{owner}: {name} must be a mapping such as {{'eta': 2}}, got "
                             f"{type(value).__name__} {_short(value)}", key=name)
    return dict(value)


def as_names(owner: str, name: str, value: Any) -> list[str]:
    """A list of distinct names (not one string), or a :class:`ParameterError` naming it.

    Examples
    --------
    >>> as_names("compare", "protocols", ("a", "b"))
    ['a', 'b']
    >>> as_names("compare", "protocols", "spidercast")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: compare: protocols must be a list of names such as ...
    >>> as_names("compare", "protocols", ["a", "a"])
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: compare: protocols lists 'a' twice
    """
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ParameterError(f"{owner}: {name} must be a list of names such as "
                             f"['spidercast'], got {type(value).__name__} {_short(value)}",
                             key=name)
    names = list(value)
    seen: set[str] = set()
    for v in names:
        if not isinstance(v, str):
            raise ParameterError(f"{owner}: {name} must hold names (str), got "
                                 f"{type(v).__name__} {_short(v)}", key=name)
        if v in seen:
            raise ParameterError(f"{owner}: {name} lists {v!r} twice", key=name)
        seen.add(v)
    return names


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def available_memory_bytes() -> int:
    """Physical memory of this machine in bytes (0 when it cannot be read)."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 0


def resident_bytes() -> int:
    """Resident memory of this process in bytes (0 when it cannot be read).

    Examples
    --------
    >>> resident_bytes() >= 0
    True
    """
    import os

    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * int(os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def check_memory(what: str, needed_bytes: float, *, share: float = 0.8) -> None:
    """Refuse, before allocating, a size whose arrays would not fit in memory.

    Raises a :class:`ParameterError` stating the estimate when ``needed_bytes``,
    added to what the process already holds (:func:`resident_bytes`: the
    world a protocol is about to build in, for instance), exceeds ``share`` of
    the machine's physical memory.  Where runs share the machine through a
    memory ledger (a sweep's tasks, :mod:`hedgerow.admission`), the estimate is
    also reserved there, or :class:`~hedgerow.errors.MemoryDeferred` is raised
    when it fits alone but not beside the others' reservations.

    Examples
    --------
    >>> check_memory("a tiny run", 1024)
    >>> check_memory("nodes=10**12", 1e20)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: nodes=10**12 needs about ... GiB of memory; this machine has ...
    """
    total = available_memory_bytes()
    held = resident_bytes()
    if total and needed_bytes + held > share * total:
        raise ParameterError(
            f"{what} needs about {needed_bytes / 2**30:,.1f} GiB of memory; this machine has "
            f"{total / 2**30:,.1f} GiB and this process holds {held / 2**30:,.1f} GiB, more "
            f"than the {share:.0%} a run may take (use a smaller size)"
        )
    # runs sharing the machine (a sweep's tasks): reserve, or wait for memory to be released
    admit(what, needed_bytes, held_bytes=held, share=share)
