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


def workload_options(*, topics_required: bool = True):
    """The synthetic-workload options shared by ``build`` and ``churn``.

    ``--nodes``, ``--topics``, ``--subs``, ``--popularity`` and ``--seed``
    (SpiderCast section 3.1; see :func:`hedgerow.workloads.make_instance`).
    """

    def wrap(f):
        opts = [
            click.option("--nodes", type=int, required=True, help="Number of nodes."),
            click.option(
                "--topics",
                type=int,
                required=topics_required,
                default=None if topics_required else 100,
                show_default=not topics_required,
                help="Number of topics.",
            ),
            click.option(
                "--subs",
                default="10",
                show_default=True,
                help="Subscriptions per node: S or MIN:MAX.",
            ),
            click.option(
                "--popularity",
                default="rss",
                show_default=True,
                help="Topic popularity: rss, zipf1, zipf2, nyse, uniform or zipf:ALPHA.",
            ),
            click.option(
                "--seed",
                type=int,
                default=0,
                show_default=True,
                help="Seed of every random choice.",
            ),
        ]
        for opt in reversed(opts):
            f = opt(f)
        return f

    return wrap
