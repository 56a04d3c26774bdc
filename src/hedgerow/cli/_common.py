"""Shared CLI helpers: one-line errors and ``-p name=value`` parsing."""

from __future__ import annotations

import sys

import click
from rich.console import Console

from hedgerow.errors import HedgerowError

stderr_console = Console(stderr=True)


class HedgerowGroup(click.Group):
    """A click group that turns :class:`HedgerowError` into one line and exit 2."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except HedgerowError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(2)


def parse_value(text: str):
    """Read a ``-p`` value as YAML scalar: ``3`` -> 3, ``0.5`` -> 0.5, ``true`` -> True."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if isinstance(value, (int, float, bool, str)) else text


def parse_params(items: tuple[str, ...]) -> dict[str, object]:
    """``("kg=3", "adaptive=true")`` -> ``{"kg": 3, "adaptive": True}``.

    Items without ``=`` raise a usage error.
    """
    out: dict[str, object] = {}
    for item in items:
        if "=" not in item:
            raise click.BadParameter(f"{item!r} is not name=value", param_hint="-p")
        k, v = item.split("=", 1)
        k = k.strip()
        if not k:
            raise click.BadParameter(f"{item!r} has an empty name", param_hint="-p")
        out[k] = parse_value(v.strip())
    return out
