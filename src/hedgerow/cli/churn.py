"""``hedgerow churn``: run a protocol under churn with the driver of its capability."""

from __future__ import annotations

import json
import math

import click

from hedgerow.cli._common import (
    ProtocolCommand,
    parse_params,
    stderr_console,
    workload_options,
)


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@click.command("churn", cls=ProtocolCommand, capability=("maintained", "cycle"))
@click.argument("protocol")
@workload_options(topics_required=False, nodes_required=False)
@click.option(
    "--scenario",
    default=None,
    metavar="NAME",
    help="Named churn scenario: maintained protocols replay it event by event (fb1k-google,"
    " tw1k-google, ...); cycle protocols run it cycle by cycle (vitis-flash-crowd,"
    " vitis-trace).",
)
@click.option("--events", "n_events", type=int, default=None, help="Replay the first N events.")
@click.option(
    "--lifetime",
    type=float,
    default=None,
    help="Mean online time λ in seconds (offline: λ/4). Synthetic churn of section 3.8.",
)
@click.option(
    "--trace",
    type=click.Path(file_okay=False),
    default=None,
    help="Replay a join/leave trace (an output folder of `hedgerow ingest churn`).",
)
@click.option(
    "--speedup", type=float, default=1.0, show_default=True, help="Trace seconds per second."
)
@click.option("--duration", type=float, default=1000.0, show_default=True, help="Seconds.")
@click.option(
    "--snapshot-every", type=float, default=200.0, show_default=True, help="Snapshot period (s)."
)
@click.option(
    "--timeout",
    type=float,
    default=0.1,
    show_default=True,
    help="Seconds per connect_timeout (one maintenance iteration).",
)
@click.option(
    "-p", "params", multiple=True, metavar="NAME=VALUE", help="Protocol parameter (repeatable)."
)
@click.option(
    "--json", "as_json", is_flag=True,
    help="One JSON line per row (snapshot, event or sample), then a summary line."
)
def churn_cmd(
    protocol,
    nodes,
    topics,
    subs,
    popularity,
    seed,
    scenario,
    n_events,
    lifetime,
    trace,
    speedup,
    duration,
    snapshot_every,
    timeout,
    params,
    as_json,
):
    """Run PROTOCOL under churn (SpiderCast section 3.8, OMen section 6, Vitis section IV-F).

    PROTOCOL is any maintained or cycle-driven protocol (listed below); the
    driver is the one of its capability.  A maintained overlay: with
    --scenario NAME the named workload x churn pair is replayed event by
    event (OMen's churn rounds) with the invariants checked after each event;
    --json then prints one line per event.  Otherwise each node is online
    for Exp(λ) seconds and offline for Exp(λ/4), and rejoins with a new
    interest; or the join/leave events of --trace are replayed.
    Every --snapshot-every seconds the overlay of the nodes online for over
    2 s is measured: degree, partitioned topics, under-covered nodes, and the
    control messages per join/leave so far.  A cycle-driven gossip protocol
    (vitis, rvr) runs a named cycle scenario (vitis-flash-crowd, vitis-trace;
    --nodes reduces it), one row every few cycles: ring correctness, hit ratio,
    overhead, delay.  An option the chosen churn does not use is an error.

    \b
    Example:
      hedgerow churn spidercast --nodes 1250 --lifetime 100 --duration 1000 --seed 1
      hedgerow churn lowoda-inc --scenario fb1k-google --events 200 --json
      hedgerow churn vitis --scenario vitis-flash-crowd --seed 1
    """
    from hedgerow.pipeline.inputs import ensure_inputs, inputs_of
    from hedgerow.progress import progress_bar
    from hedgerow.scenarios.churn_drivers import ChurnRequest, run_churn_request

    ctx = click.get_current_context()
    names = {"nodes": "nodes", "topics": "topics", "subs": "subs", "popularity": "popularity",
             "n_events": "events", "lifetime": "lifetime", "trace": "trace",
             "speedup": "speedup", "duration": "duration", "snapshot_every": "snapshot_every",
             "timeout": "timeout"}
    given = frozenset(key for opt, key in names.items()
                      if ctx.get_parameter_source(opt) == click.core.ParameterSource.COMMANDLINE)
    request = ChurnRequest(
        scenario=scenario, events=n_events, lifetime=lifetime, trace=trace, speedup=speedup,
        duration=duration, snapshot_every=snapshot_every, timeout=timeout,
        workload={"nodes": nodes, "topics": topics, "subs": subs, "popularity": popularity},
        given=frozenset(given | ({"scenario"} if scenario else set())),
    )
    ensure_inputs(inputs_of({"churn": {"scenario": scenario}}),
                  log=lambda m: click.echo(m, err=True))
    show = not as_json or stderr_console.is_terminal
    with progress_bar(f"churn {protocol}", enabled=show, status=True) as bar:
        task = bar.add_task(protocol, total=None, status="start")
        outcome = run_churn_request(
            protocol, request, seed=seed, params=parse_params(params),
            nodes=nodes if "nodes" in given and scenario else None,
            progress=lambda done, total: bar.update(task, completed=done, total=total,
                                                    status="running"),
        )
    for w in outcome.summary["warnings"]:
        click.echo(f"warning: {w}", err=True)
    if as_json:
        for row in outcome.rows:
            click.echo(json.dumps({"kind": outcome.row_kind,
                                   **{k: _clean(v) for k, v in row.items()}}, default=str))
        summary = {k: _clean(v) for k, v in outcome.summary.items()}
        click.echo(json.dumps({"kind": "summary", **summary}, default=str))
        return
    _print(outcome)


def _print(outcome) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if outcome.columns:
        table = Table(title=outcome.title)
        for _, title in outcome.columns:
            table.add_column(title, justify="right")
        for row in outcome.rows:
            table.add_row(*("-" if row.get(k) is None else
                            f"{row[k]:.4g}" if isinstance(row[k], float) else str(row[k])
                            for k, _ in outcome.columns))
        console.print(table)
    for line in outcome.lines:
        console.print(line)
