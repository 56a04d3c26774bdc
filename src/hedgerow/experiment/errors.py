"""Validation errors of experiment specs as ``key.path: message`` text.

Validators of the models in :mod:`hedgerow.experiment.models` raise
:class:`~hedgerow.experiment.models._KeyError` to name the key at fault below
the field they check; :func:`_format_errors` turns a pydantic :class:`~pydantic.ValidationError`
into one ``key.path: message`` line per error (unknown keys first, with the
allowed keys), and :func:`_point_error` points an error of a resolved grid
point at the sweep entry that produced it (``sweep.grid.KEY[i]``,
``sweep.variants[i].params.NAME``, ...).

This module reads the models (the allowed keys per section,
:func:`~hedgerow.experiment.spec.canonical_json`); the models do not import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from hedgerow.experiment.models import _ALLOWED_FIELDS, Variant, _KeyError, canonical_json


def _point_error(
    err: ValidationError,
    where: str | None,
    variant: Variant | None,
    grid: Mapping[str, list[Any]],
    values: tuple,
    gpoint: Mapping[str, Any],
) -> str:
    """Point an error of a resolved scenario at the sweep key that produced it."""
    loc, msg = _error_items(err, prefix=("scenario",))[0]
    dotted = _fmt_path(loc)
    for k, v in zip(grid, values, strict=True):
        # a parameter the swept protocol does not know is the protocol entry's fault
        by_protocol = k == "scenario.protocol" and dotted.startswith("scenario.params.")
        if dotted == k or dotted.startswith(k + ".") or by_protocol:
            idx = next(i for i, x in enumerate(grid[k]) if canonical_json(x) == canonical_json(v))
            return f"sweep.grid.{k}[{idx}]: {dotted}: {msg}"
    if variant is not None:
        if dotted.startswith("scenario.params.") and variant.params is not None:
            return f"{where}.params.{dotted.split('.', 2)[2]}: {msg}"
        if dotted == "scenario.protocol" and variant.protocol is not None:
            return f"{where}.protocol: {msg}"
        for k in variant.overrides:
            if dotted == k or dotted.startswith(k + "."):
                return f"{where}.overrides.{k}: {msg}"
    desc = ", ".join(f"{k}={canonical_json(v)}" for k, v in gpoint.items())
    context = f"{where or 'sweep'} ({desc})" if desc else "scenario"
    return f"{context}: {dotted}: {msg}" if desc else f"{dotted}: {msg}"


def _fmt_path(path: tuple) -> str:
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out or "(top level)"


def _clean_loc(loc: tuple) -> tuple:
    """Drop pydantic's union/function tags from an error location."""
    out = []
    for p in loc:
        if isinstance(p, str) and (
            p.startswith("function-") or p in ("int", "str", "float", "bool", "list[int]")
        ):
            continue
        out.append(p)
    return tuple(out)


def _error_items(err: ValidationError, prefix: tuple = ()) -> list[tuple[tuple, str]]:
    """``(key path, message)`` per pydantic error, unknown keys first."""
    items = []
    for e in err.errors(include_url=False):
        loc = prefix + _clean_loc(tuple(e["loc"]))
        ctx = e.get("ctx") or {}
        inner = ctx.get("error")
        etype = e["type"]
        if isinstance(inner, _KeyError):
            loc = loc + tuple(inner.path)
            msg = inner.message
        else:
            msg = e["msg"]
            if msg.startswith("Value error, "):
                msg = msg[len("Value error, ") :]
            if etype == "extra_forbidden":
                parent = next((str(p) for p in reversed(loc[:-1]) if isinstance(p, str)), "")
                allowed = _ALLOWED_FIELDS.get(parent if parent in _ALLOWED_FIELDS else "", [])
                msg = "unknown key" + (f"; allowed: {', '.join(allowed)}" if allowed else "")
            elif etype == "literal_error":
                expected = str(ctx.get("expected", "")).replace(" or ", ", ").replace("'", "")
                msg = f"{e['input']!r} is not one of {expected}"
            elif etype == "missing":
                msg = "required key is missing"
            elif etype == "string_pattern_mismatch":
                msg = (
                    f"{e['input']!r} is not a valid name (letters, digits and _ . + -, "
                    "starting with a letter or digit)"
                )
            elif etype.endswith("_type") or etype.endswith("_parsing"):
                msg = f"{msg}, got {e['input']!r}"
        items.append((loc, msg, etype != "extra_forbidden"))
    items.sort(key=lambda x: x[2])
    return [(loc, msg) for loc, msg, _ in items]


def _format_errors(err: ValidationError, prefix: tuple = ()) -> list[str]:
    """One ``key.path: message`` line per pydantic error."""
    return [f"{_fmt_path(loc)}: {msg}" for loc, msg in _error_items(err, prefix)]
