"""``hedgerow run``: any protocol on a named scenario, one row per epoch."""

from __future__ import annotations

import click

from hedgerow.cli._common import (
    ProtocolCommand,
    parse_params,
    print_json,
    scenario_options,
    trace_options,
)

#: row keys shown in the table, with their headers and formats
_COLUMNS = (
    ("epoch", "epoch", "{:d}"),
    ("receive_rate", "receive rate", "{:.4f}"),
    ("delay_mean_ms", "delay (ms)", "{:.1f}"),
    ("delay_p90_ms", "p90 (ms)", "{:.1f}"),
    ("avg_score", "avg score", "{:.2f}"),
    ("relay_copies", "relay copies", "{:.1f}"),
    ("victim_receive_rate", "victim rate", "{:.4f}"),
    ("victim_delay_mean_ms", "victim delay (ms)", "{:.1f}"),
    ("attacker_slot_share", "attacker slots", "{:.3f}"),
    ("honest_with_honest_neighbour", "honest w/ honest out-nbr", "{:.4f}"),
    ("honest_with_honest_link", "honest w/ honest link", "{:.4f}"),
    ("wasted_latency_mean_ms", "wasted mean (ms)", "{:.1f}"),
    ("wasted_latency_p50_ms", "wasted p50 (ms)", "{:.1f}"),
    ("t50_ms", "t50 (ms)", "{:.1f}"),
    ("t90_ms", "t90 (ms)", "{:.1f}"),
    ("hit_ratio", "hit ratio", "{:.4f}"),
    ("overhead", "overhead", "{:.3f}"),
    ("overhead_copies", "overhead (copies)", "{:.3f}"),
    ("delay_hops", "delay hops", "{:.2f}"),
    ("delay_hops_max", "max hops", "{:.2f}"),
    ("degree_max", "max degree", "{:d}"),
    ("star_optimal", "optimal", "{:d}"),
    ("star_lambda_ms", "lambda (ms)", "{:.1f}"),
)


@click.command("run", cls=ProtocolCommand, scenarios=True)
@click.argument("protocol")
@scenario_options
@click.option(
    "-p", "--param", "params", multiple=True, metavar="NAME=VALUE",
    help="Protocol parameter (repeatable), e.g. -p wd=2 -p eta=1.5",
)
@click.option("--forwarding", default=None,
              help="Dissemination policy: ttl, topic, flood or mesh (default: the protocol's "
              "own; mesh needs a protocol that labels its links with topics).")
@click.option("--json", "as_json", is_flag=True, help="One JSON line per epoch on stdout.")
@trace_options
def run_cmd(protocol, scenario, seed, settings, params, forwarding, as_json, trace):
    """Run PROTOCOL on a named scenario and print one row per epoch.

    Adaptive protocols run the scenario's epochs; static ones build once and
    report one epoch.  A progress bar runs on stderr.
    """
    from rich.console import Console
    from rich.table import Table

    from hedgerow.progress import progress_bar
    from hedgerow.protocols import AdaptiveProtocol, protocol_class
    from hedgerow.scenarios.run import check_run, simulate
    from hedgerow.scenarios.world import resolve_scenario

    options = parse_params(params)
    check_run(protocol, scenario, params=options, forwarding=forwarding, **settings)
    adaptive = issubclass(protocol_class(protocol), AdaptiveProtocol)
    total = resolve_scenario(scenario, **settings).epochs if adaptive else 1
    rows: list[dict] = []
    with progress_bar() as bar:
        task = bar.add_task(f"{protocol} on {scenario}", total=total)

        def on_epoch(row: dict) -> None:
            rows.append(row)
            if as_json:
                print_json(row)
            bar.advance(task)

        simulate(protocol, scenario, seed=seed, params=options, forwarding=forwarding,
                 on_epoch=on_epoch, **trace, **settings)
    if trace:
        click.echo(f"trace -> {trace['trace']}", err=True)
    if as_json:
        return
    present = [c for c in _COLUMNS if any(r.get(c[0]) is not None for r in rows)]
    table = Table(title=f"{protocol} on {scenario} (seed {seed})")
    for _, header, _ in present:
        table.add_column(header, justify="right")
    for r in rows:
        table.add_row(*("-" if r.get(k) is None else f.format(r[k]) for k, _, f in present))
    Console(width=None if Console().is_terminal else 200).print(table)
