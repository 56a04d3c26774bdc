"""``hedgerow churn``: keep an overlay under churn and print periodic snapshots."""

from __future__ import annotations

import json
import math

import click

from hedgerow.cli._common import (
    WORKLOAD_DEFAULTS,
    ProtocolCommand,
    parse_params,
    setting_options,
    stderr_console,
    workload_options,
)


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@click.command("churn", cls=ProtocolCommand, capability="maintained")
@click.argument("protocol")
@workload_options(topics_required=False, nodes_required=False)
@click.option(
    "--scenario",
    default=None,
    metavar="NAME",
    help="Named churn scenario, replayed event by event (fb1k-google, tw1k-google, ...); it "
    "brings its own workload and churn.",
)
@setting_options("churn")
@click.option(
    "--trace",
    type=click.Path(file_okay=False),
    default=None,
    help="Replay a join/leave trace (an output folder of `hedgerow ingest churn`).",
)
@click.option(
    "--speedup", type=float, default=None, help="Trace seconds per second (default: 1)."
)
@click.option(
    "-p", "params", multiple=True, metavar="NAME=VALUE", help="Protocol parameter (repeatable)."
)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON line per snapshot, then a summary line."
)
@click.option("--no-timings", is_flag=True,
              help="Leave the wall-clock fields (wall_seconds, repair_seconds...) out of the "
                   "output, so that two runs of a seed print the same bytes.")
def churn_cmd(
    protocol,
    nodes,
    topics,
    subs,
    popularity,
    seed,
    scenario,
    settings,
    trace,
    speedup,
    params,
    as_json,
    no_timings,
):
    """Run PROTOCOL's overlay under churn (SpiderCast section 3.8) and snapshot it.

    PROTOCOL is any maintained protocol (listed below).  With --scenario
    NAME the named workload x churn pair is replayed event by event (OMen's
    churn rounds) with the invariants checked after each event; --json then
    prints one line per event.  Otherwise each node is online
    for Exp(λ) seconds and offline for Exp(off_ratio x λ), and rejoins with a new
    interest; or the join/leave events of --trace are replayed.
    Every --snapshot-every seconds the overlay of the nodes online for over
    2 s is measured: degree, partitioned topics, under-covered nodes, and the
    control messages per join/leave so far.  The churn settings' options and
    defaults come from the declared world settings.

    \b
    Example:
      hedgerow churn spidercast --nodes 1250 --lifetime 100 --duration 1000 --seed 1
      hedgerow churn lowoda-inc --scenario fb1k-google --events 200 --json
    """
    from hedgerow.errors import ParameterError
    from hedgerow.world_settings import WORLD_SETTINGS

    workload = {"--nodes": nodes, "--topics": topics, "--subs": subs,
                "--popularity": popularity, "--trace": trace, "--speedup": speedup}
    if scenario is not None:
        unused = {**workload, **{WORLD_SETTINGS[k].flag: v for k, v in settings.items()
                                 if k not in ("events", "timeout")}}
        given = [k for k, v in unused.items() if v is not None]
        if given:
            raise ParameterError(
                f"{given[0]} cannot be used with --scenario {scenario}, which brings its own "
                "workload and churn; give one"
            )
        _scenario_run(protocol, scenario, settings, seed, params, as_json, no_timings)
        return
    if settings["events"] is not None:
        raise ParameterError("--events replays a named churn scenario: give --scenario NAME")
    if trace is None and speedup is not None:
        raise ParameterError("--speedup replays a trace: give --trace DIR")
    opts = {k: WORLD_SETTINGS[k].default if v is None else v for k, v in settings.items()}
    _synthetic_run(protocol, nodes, topics, subs, popularity, seed, opts, trace,
                   1.0 if speedup is None else speedup, params, as_json, no_timings)


def _wall_clock(key: str) -> bool:
    """A field measured by the clock on the wall (left out by ``--no-timings``)."""
    return key in ("wall_seconds", "start_seconds") or key.startswith(("repair_seconds",
                                                                       "repair_cpu_seconds"))


def _untimed(record: dict, no_timings: bool) -> dict:
    return {k: v for k, v in record.items() if not (no_timings and _wall_clock(k))}


def _synthetic_run(protocol, nodes, topics, subs, popularity, seed, opts, trace, speedup,
                   params, as_json, no_timings=False) -> None:
    """Synthetic churn (``--lifetime``) or a replayed ``--trace`` on a synthetic workload."""
    from hedgerow.errors import ParameterError
    from hedgerow.progress import progress_bar
    from hedgerow.scenarios.churn import run_churn
    from hedgerow.scenarios.traces import load_events, trace_churn
    from hedgerow.workloads import make_instance

    if seed < 0:
        raise ParameterError(f"--seed must be >= 0, got {seed}")
    if nodes is None:
        raise ParameterError("give --nodes (synthetic workload) or --scenario NAME")
    lifetime, duration = opts["lifetime"], opts["duration"]
    if (lifetime is None) == (trace is None):
        raise ParameterError("give exactly one of --lifetime (synthetic churn) and --trace")
    if not math.isfinite(duration):
        raise ParameterError(f"--duration must be a finite time, got {duration}", key="duration")
    from hedgerow.protocols import get_protocol
    from hedgerow.workloads.memory import check_sizes
    from hedgerow.workloads.subscriptions import parse_subs

    get_protocol(protocol, **parse_params(params)).checked()  # -p before any work
    topics = WORKLOAD_DEFAULTS["topics"] if topics is None else topics
    subs = WORKLOAD_DEFAULTS["subs"] if subs is None else subs
    popularity = WORKLOAD_DEFAULTS["popularity"] if popularity is None else popularity
    check_sizes(f"churn on {nodes:,} nodes and {topics:,} topics", nodes=nodes, topics=topics,
                subs=parse_subs(subs)[1], churn=True)
    inst = make_instance(nodes=nodes, topics=topics, subs=subs, popularity=popularity, seed=seed)
    churn = None
    if trace is not None:
        churn = trace_churn(load_events(trace), inst.n_nodes, speedup=speedup, duration=duration)
    show = not as_json or stderr_console.is_terminal
    with progress_bar(f"churn {protocol}", enabled=show) as bar:
        task = bar.add_task(protocol, total=duration)
        result = run_churn(
            protocol,
            inst,
            lifetime=lifetime,
            duration=duration,
            snapshot_every=opts["snapshot_every"],
            off_ratio=opts["off_ratio"],
            seed=seed,
            params=parse_params(params),
            trace=churn,
            timeout=opts["timeout"],
            progress=lambda now, total: bar.update(task, completed=now),
        )
    for w in result.summary["warnings"]:
        click.echo(f"warning: {w}", err=True)
    if as_json:
        from hedgerow.protocols import get_protocol

        ran = {"params": get_protocol(protocol, **parse_params(params)).checked()}
        for row in result.rows:
            click.echo(json.dumps({"kind": "snapshot", **{k: _clean(v) for k, v in
                                                          _untimed(row, no_timings).items()},
                                   **ran}))
        summary = {**{k: _clean(v) for k, v in _untimed(result.summary, no_timings).items()},
                   **ran}
        click.echo(json.dumps({"kind": "summary", **summary}))
        return
    _print(result)


def _scenario_run(protocol, scenario, settings, seed, params, as_json, no_timings=False) -> None:
    """``--scenario``: prepare the inputs, replay event by event, print rows."""
    from hedgerow.errors import ParameterError
    from hedgerow.pipeline.inputs import ensure_inputs
    from hedgerow.progress import progress_bar
    from hedgerow.scenarios.events import (
        CHURN_SCENARIOS,
        churn_scenario_names,
        load_churn_scenario,
        run_events,
    )
    from hedgerow.world_settings import WORLD_SETTINGS

    if seed < 0:
        raise ParameterError(f"--seed must be >= 0, got {seed}")
    if scenario not in CHURN_SCENARIOS:
        raise ParameterError(
            f"unknown churn scenario {scenario!r}; allowed: {', '.join(churn_scenario_names())}"
        )
    sc = CHURN_SCENARIOS[scenario]
    ensure_inputs(sc.inputs(), log=lambda m: click.echo(m, err=True))
    inst, online0, events = load_churn_scenario(scenario, seed=seed)
    n_events = settings["events"]
    total = n_events if n_events is not None else (sc.events or len(events))
    show = not as_json or stderr_console.is_terminal
    # the start (initial overlay, and OMen's warm-up gossip: minutes at 10K) comes before the
    # first event; the status column says so until the first event is done
    with progress_bar(f"churn {protocol}", enabled=show, status=True) as bar:
        task = bar.add_task(protocol, total=min(total, len(events)),
                            status="start: initial overlay and warm-up")
        res = run_events(
            protocol, inst, online0, events, seed=seed, params=parse_params(params),
            n_events=total,
            timeout=WORLD_SETTINGS["timeout"].default if settings["timeout"] is None
            else settings["timeout"],
            progress=lambda done, _t: bar.update(task, completed=done, status="events"),
        )
    summary = {"scenario": scenario, "note": sc.note, **res.summary}
    if as_json:
        ran = {"params": res.summary["params"]}
        for row in res.rows:
            click.echo(json.dumps({**{k: _clean(v) for k, v in _untimed(row, no_timings).items()},
                                   **ran}, default=str))
        click.echo(json.dumps({"kind": "summary", **{k: _clean(v) for k, v in
                                                     _untimed(summary, no_timings).items()}},
                              default=str))
        return
    from rich.console import Console

    c = Console()
    c.print(f"{protocol} on {scenario}: {summary['events']} events ({summary['joins']} joins,"
            f" {summary['leaves']} leaves), start max/avg degree {summary['start_max_degree']}"
            f" / {summary['start_avg_degree']:.2f}")
    c.print(f"mean max degree {summary['mean_max_degree']:.1f}, mean avg degree"
            f" {summary['mean_avg_degree']:.2f}, median repair"
            f" {1000 * summary['repair_seconds_median']:.2f} ms, violations"
            f" {summary['violations']} {summary['violations_by_kind']}")
    if sc.note:
        c.print(f"note: {sc.note}")


def _print(result) -> None:
    from rich.console import Console
    from rich.table import Table

    cols = [
        ("time_s", "t (s)"),
        ("online", "online"),
        ("measured", "measured"),
        ("avg_degree", "degree"),
        ("max_degree", "max"),
        ("partitioned_topics", "split topics"),
        ("undercovered_nodes", "under-cov."),
        ("messages_per_op", "msgs/op"),
    ]
    s = result.summary
    table = Table(title=f"{s['protocol']} under churn, {s['nodes']} nodes")
    for _, title in cols:
        table.add_column(title, justify="right")
    for row in result.rows:
        table.add_row(
            *(f"{row[k]:.4g}" if isinstance(row[k], float) else str(row[k]) for k, _ in cols)
        )
    console = Console()
    console.print(table)
    console.print(
        f"{s['connected_snapshots']} of {s['snapshots']} snapshots with every topic connected;"
        f" {s['joins']} joins, {s['leaves']} leaves, {s['messages_per_op']:.1f} control messages"
        f" per join/leave; joins complete in {s['join_seconds_median']:.2f} s (median),"
        f" {s['join_seconds_p99']:.2f} s (99th percentile)"
    )
