"""Shared CLI helpers: one-line errors and ``-p name=value`` parsing."""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

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


def workload_options(*, topics_required: bool = True, nodes_required: bool = True):
    """The synthetic-workload options shared by ``build`` and ``churn``.

    ``--nodes``, ``--topics``, ``--subs``, ``--popularity`` and ``--seed``
    (SpiderCast section 3.1; see :func:`hedgerow.workloads.make_instance`).
    """

    def wrap(f):
        opts = [
            click.option("--nodes", type=int, required=nodes_required, default=None,
                         help="Number of nodes."),
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


class ProtocolCommand(click.Command):
    """A command whose help ends with the registered protocols (capability ``self.capability``).

    The list is generated from :data:`hedgerow.protocols.REGISTRY` when help
    is shown, never written by hand.
    """

    def __init__(
        self, *args, capability: str | tuple[str, ...] | None = None, scenarios: bool = False,
        **kwargs
    ) -> None:
        super().__init__(*args, **kwargs)
        self.capability = capability
        self.scenarios = scenarios

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from hedgerow.protocols import REGISTRY, capabilities, protocol_names

        rows = []
        caps = self.capability if isinstance(self.capability, tuple) else (self.capability,)
        for name in sorted({n for c in caps for n in protocol_names(c)}):
            cls = REGISTRY[name]
            ps = ", ".join(cls.params) or "no parameters"
            rows.append((name, f"[{'/'.join(capabilities(cls))}] -p {ps}"))
        with formatter.section("Protocols (parameters: hedgerow protocols NAME)"):
            formatter.write_dl(rows)
        if self.scenarios:
            from hedgerow.scenarios.world import SCENARIOS

            with formatter.section("Scenarios"):
                formatter.write_dl([(n, s.description) for n, s in sorted(SCENARIOS.items())])
        super().format_epilog(ctx, formatter)


def print_json(obj: object) -> None:
    """One JSON document on stdout, keys in a stable order (two runs of a seed compare equal)."""
    import json

    click.echo(json.dumps(obj, sort_keys=False, allow_nan=False, default=_json_default))


def _json_default(value: object) -> object:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


#: the scenario overrides of ``run`` and ``compare``: one ``--option`` of :func:`scenario_options`
#: each, handed to the command as one ``settings`` dict (``None`` = the scenario's value)
SCENARIO_OVERRIDES = (
    "epochs", "topics", "interest", "attackers", "messages", "ttl", "social", "adaptive",
    "publishers", "topology", "nodes", "rt", "cycles", "alpha", "churn", "attack",
)


def scenario_options(f):
    """``--scenario``, ``--seed`` and the scenario overrides shared by ``run`` and ``compare``.

    The command receives ``scenario``, ``seed`` and ``settings``: the overrides
    of :data:`SCENARIO_OVERRIDES` by name, ready for ``check_run`` and
    ``resolve_scenario``.
    """
    opts = [
        click.option(
            "--scenario", "-s", required=True,
            help="Named scenario, the world every protocol runs in (listed below).",
        ),
        click.option("--seed", type=int, default=0, show_default=True, help="The run's seed."),
        click.option("--epochs", type=int, default=None, help="Epochs of adaptive protocols."),
        click.option("--topics", type=int, default=None, help="Number of topics."),
        click.option("--interest", type=float, default=None,
                     help="Subscription probability per (node, topic) (interest workloads)."),
        click.option("--attackers", type=int, default=None, help="Attackers (attack scenarios)."),
        click.option("--messages", type=int, default=None, help="Messages per epoch."),
        click.option("--ttl", type=int, default=None, help="Initial TTL of every message."),
        click.option(
            "--social", default=None, metavar="DIR",
            help="Workload: the users of an ingested social sample: an ingest output folder, or "
            "a named input (fb1k, fb4k, tw1k, tw10k, vitis-tw10k), ingested on first use.",
        ),
        click.option("--adaptive", type=int, default=None, metavar="N",
                     help="Broadcast worlds: N nodes re-select their peers (0 = all)."),
        click.option("--publishers", default=None, metavar="unif:K|exp:K",
                     help="Broadcast worlds: K publishers, equal or exp(-k/10) probabilities."),
        click.option("--topology", default=None, metavar="FILE",
                     help="Broadcast worlds: delays, node delays and publishing probabilities "
                     "from a Goldfish-format topology JSON."),
        click.option("--nodes", type=int, default=None, help="Number of nodes (sized networks)."),
        click.option("--rt", type=int, default=None,
                     help="Routing-table size of protocols declaring rt (Vitis, RVR, OPT)."),
        click.option("--cycles", type=int, default=None,
                     help="Gossip cycles of protocols declaring cycles (Vitis, RVR, OPT)."),
        click.option("--alpha", type=float, default=None,
                     help="Publication-rate skew, power law (correlated workloads, Vitis IV-D)."),
        click.option("--churn", default=None, metavar="onoff:F:ON:OFF",
                     help="Broadcast worlds: a fraction F of the nodes alternate online and "
                     "offline sessions of mean ON and OFF epochs."),
        click.option("--attack", default=None, type=click.Choice(["withhold", "relay"]),
                     help="Fast-relay worlds (goldfish-withhold): relays that withhold while "
                     "they hold exploit slots, or the honest control."),
    ]

    @functools.wraps(f)
    def collect(*args, **kwargs):
        settings = {k: kwargs.pop(k) for k in SCENARIO_OVERRIDES}
        _prepare_social(settings.get("social"))
        return f(*args, settings=settings, **kwargs)

    for opt in reversed(opts):
        collect = opt(collect)
    return collect


def _prepare_social(social: str | None) -> None:
    """A named social input (``--social fb1k``, ``vitis-tw10k``...): ingested once, then cached."""
    from hedgerow.scenarios.inputs import is_social_input

    if is_social_input(social):
        from hedgerow.pipeline.inputs import ensure_inputs

        ensure_inputs([social], log=lambda m: click.echo(m, err=True))


def log_path(out: Path, command: str) -> Path:
    """``OUT/_logs/<command>-<UTC time>.log``: where a quiet command's Spark output goes."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return out / "_logs" / f"{command}-{stamp}.log"
