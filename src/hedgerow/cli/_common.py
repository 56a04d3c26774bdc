"""Shared CLI helpers: one-line errors, ``-p name=value`` parsing, and the options of the
declared world settings (:func:`setting_options`, generated from
:data:`~hedgerow.world_settings.WORLD_SETTINGS`)."""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from hedgerow.errors import HedgerowError

stderr_console = Console(stderr=True)


class HedgerowGroup(click.Group):
    """A click group that turns a user's error into one line and exit 2.

    Click's usage errors (an option's wrong type, a missing argument) are one
    ``error:`` line as well, naming the command's help.

    :class:`HedgerowError` is the library's own; an :class:`OSError` met on a
    user's path (a folder that cannot be written, a disk that fills) is the
    last line of :mod:`hedgerow.userfiles`' boundary and is named the same way.
    """

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except HedgerowError as e:
            click.echo(f"error: {_one_line(e)}", err=True)
            sys.exit(2)
        except click.UsageError as e:  # a bad option or argument: one line too, with the help
            where = e.ctx.command_path if e.ctx is not None else "hedgerow"
            click.echo(f"error: {_one_line(e.format_message())} (see {where} -h)", err=True)
            sys.exit(2)
        except OSError as e:
            if type(e).__module__ not in ("builtins", "io"):
                raise
            where = f"{e.filename}: " if e.filename is not None else ""
            click.echo(f"error: {where}{e.strerror or _one_line(e)}", err=True)
            sys.exit(2)


def _one_line(e: BaseException | str) -> str:
    """An error's message on one line (a library's multi-line text folded)."""
    return " ".join(str(e).split("\n")).strip() or type(e).__name__


def parse_value(text: str):
    """Read a ``-p`` value as YAML scalar: ``3`` -> 3, ``0.5`` -> 0.5, ``true`` -> True."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if isinstance(value, (int, float, bool, str)) else text


def parse_params(items: tuple[str, ...]) -> dict[str, Any]:
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


#: the synthetic workload's defaults when ``--subs`` / ``--popularity`` are not given
WORKLOAD_DEFAULTS = {"topics": 100, "subs": "10", "popularity": "rss"}


def workload_options(*, topics_required: bool = True, nodes_required: bool = True):
    """The synthetic-workload options shared by ``build`` and ``churn``.

    ``--nodes``, ``--topics``, ``--subs``, ``--popularity`` and ``--seed``
    (SpiderCast section 3.1; see :func:`hedgerow.workloads.make_instance`).
    ``--subs`` and ``--popularity`` default to ``None`` so that a command can
    tell them given (:data:`WORKLOAD_DEFAULTS` fill them otherwise).
    """

    def wrap(f):
        opts = [
            click.option("--nodes", type=int, required=nodes_required, default=None,
                         help="Number of nodes."),
            click.option(
                "--topics",
                type=int,
                required=topics_required,
                default=None,
                help="Number of topics." + ("" if topics_required else " (default: 100)"),
            ),
            click.option(
                "--subs",
                default=None,
                help="Subscriptions per node: S or MIN:MAX (default: 10).",
            ),
            click.option(
                "--popularity",
                default=None,
                help="Topic popularity: rss, zipf1, zipf2, nyse, uniform or zipf:ALPHA "
                "(default: rss).",
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


def _setting_help(setting, *, scenario_default: bool) -> str:
    """An option's help from its declaration: doc, type or range, unit, default, families."""
    p = setting.param
    if p.kind in ("int", "float"):
        kind = p.kind + ("" if p.low is None and p.high is None else " " + p.range_text())
    elif p.kind == "choice":
        kind = "|".join(p.choices)
    else:
        kind = p.type_text()
    if p.unit:
        kind += f", {p.unit}"
    default = "the scenario's" if scenario_default else str(p.default)
    text = f"{setting.doc[0].upper()}{setting.doc[1:]} ({kind}; default: {default})."
    if setting.applies:
        text += f" Applies to {', '.join(setting.applies)} worlds."
    return text


def setting_option(setting, *, scenario_default: bool = True):
    """The click option of one declared world setting (``--rt``, ``--wasted/--no-wasted``).

    Every option defaults to ``None`` (not given): the command fills the
    scenario's value or the declared default, and can tell a value the user
    gave from one it did not.
    """
    p = setting.param
    helptext = _setting_help(setting, scenario_default=scenario_default)
    if p.kind == "bool":
        flag = f"{setting.flag}/--no-{setting.flag[2:]}"
        return click.option(flag, setting.name, default=None, help=helptext)
    kw: dict = {"default": None, "help": helptext}
    if p.kind == "int":
        kw["type"] = int
    elif p.kind == "float":
        kw["type"] = float
    elif p.kind == "choice":
        kw["type"] = click.Choice(list(p.choices))
    else:
        kw["metavar"] = p.metavar or "TEXT"
    return click.option(setting.flag, setting.name, **kw)


def cli_settings(section: str) -> tuple[str, ...]:
    """The world settings of ``section`` that the commands take as options (in table order)."""
    from hedgerow.world_settings import settings_in

    return tuple(k for k, s in settings_in(section).items() if not s.cli)


def setting_options(section: str):
    """One option per declared world setting of ``section`` (``run`` or ``churn``).

    The command receives them as one ``settings`` dict (``None`` = not given);
    a bad value is a one-line error naming the option (``--rt: ...``).
    """
    from hedgerow.world_settings import WORLD_SETTINGS

    names = cli_settings(section)

    def wrap(f):
        @functools.wraps(f)
        def collect(*args, **kwargs):
            settings = {k: kwargs.pop(k) for k in names}
            _check_options(settings)
            return f(*args, settings=settings, **kwargs)

        for name in reversed(names):
            collect = setting_option(WORLD_SETTINGS[name],
                                     scenario_default=section == "run")(collect)
        return collect

    return wrap


def _check_options(settings: dict) -> None:
    """Each given setting checked by its declaration; the error names the option."""
    from hedgerow.errors import ParameterError
    from hedgerow.world_settings import WORLD_SETTINGS, check_setting

    for k, v in settings.items():
        if v is None:
            continue
        try:
            settings[k] = check_setting(k, v)
        except ParameterError as e:
            msg = str(e)
            cut = msg.find(f"parameter {k} ")
            tail = msg[cut + len(f"parameter {k} "):] if cut >= 0 else msg
            raise ParameterError(f"{WORLD_SETTINGS[k].flag}: {tail}", key=k) from None


#: the scenario overrides of ``run``, ``compare`` and ``draw``: one ``--option`` per world
#: setting of the ``run`` section with an option (generated, :func:`setting_options`)
SCENARIO_OVERRIDES = cli_settings("run")


def trace_options(f):
    """``--trace FILE``, ``--trace-sample K``, ``--trace-epochs last|all``, handed to the command
    as ``trace`` (the keyword arguments of :func:`hedgerow.scenarios.run.compare`)."""

    @functools.wraps(f)
    def gather(*args, trace, trace_sample, trace_epochs, **kwargs):
        opts = {} if trace is None else {"trace": trace, "trace_sample": trace_sample,
                                          "trace_epochs": trace_epochs}
        return f(*args, trace=opts, **kwargs)

    for option in reversed((
        click.option("--trace", default=None, metavar="FILE",
                     help="Write every copy of the traced messages to this Parquet file "
                     "(hedgerow replay draws it)."),
        click.option("--trace-sample", type=click.IntRange(min=1), default=None, metavar="K",
                     help="Trace K messages per traced epoch, drawn from the seed (default: "
                     "all); bounds a large run's trace."),
        click.option("--trace-epochs", type=click.Choice(["last", "all"]), default="last",
                     show_default=True, help="Which epochs are traced."),
    )):
        gather = option(gather)
    return gather


def scenario_options(f):
    """``--scenario``, ``--seed`` and the world settings shared by ``run``, ``compare`` and
    ``draw`` (:func:`setting_options`), handed to the command as ``settings``.

    A named social input (given, or the scenario's default) is ingested once here.
    """

    @functools.wraps(f)
    def prepare(*args, **kwargs):
        from hedgerow.scenarios.world import SCENARIOS

        social = kwargs["settings"].get("social")
        named = SCENARIOS.get(kwargs.get("scenario"))
        _prepare_social(social if social is not None or named is None else named.social)
        return f(*args, **kwargs)

    wrapped = setting_options("run")(prepare)
    wrapped = click.option("--seed", type=int, default=0, show_default=True,
                           help="The run's seed.")(wrapped)
    return click.option(
        "--scenario", "-s", required=True,
        help="Named scenario, the world every protocol runs in (listed below).",
    )(wrapped)


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
