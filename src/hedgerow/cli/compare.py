"""``hedgerow compare``: several protocols on one world, one row per protocol."""

from __future__ import annotations

import click

from hedgerow.cli._common import (
    ProtocolCommand,
    parse_params,
    print_json,
    scenario_options,
    trace_options,
)

#: columns of the table (key, header, format)
_COLUMNS = (
    ("avg_degree", "avg deg", "{:.2f}"),
    ("max_degree", "max deg", "{:d}"),
    ("partitioned_topics", "split topics", "{:d}"),
    ("receive_rate", "receive", "{:.4f}"),
    ("delay_mean_ms", "delay ms", "{:.1f}"),
    ("delay_p90_ms", "p90 ms", "{:.1f}"),
    ("hops_mean", "hops", "{:.2f}"),
    ("relay_share", "relay share", "{:.3f}"),
    ("duplicates_per_message", "dup/msg", "{:.1f}"),
    ("control_messages", "control msgs", "{:d}"),
    ("hit_ratio", "hit ratio", "{:.4f}"),
    ("overhead", "overhead", "{:.3f}"),
    ("overhead_copies", "overhead (copies)", "{:.3f}"),
    ("delay_hops", "delay hops", "{:.2f}"),
)


def _params_by_protocol(items: tuple[str, ...], protocols: list[str]) -> dict[str, dict]:
    """``-p topiary.eta=3`` -> ``{"topiary": {"eta": 3}}``; ``-p d=4`` goes to every protocol
    that declares ``d``.  A parameter set twice for one protocol (``-p vitis.rt=20 -p rt=25``)
    is an error naming both."""
    from hedgerow.errors import ParameterError
    from hedgerow.protocols import protocol_class

    out: dict[str, dict] = {}
    given: dict[tuple[str, str], str] = {}

    def put(proto: str, name: str, value: object, item: str) -> None:
        if (proto, name) in given:
            raise ParameterError(
                f"-p {given[proto, name]} and -p {item} both set {proto}'s {name}; give one",
                key=name,
            )
        given[proto, name] = item
        out.setdefault(proto, {})[name] = value

    for item in items:
        key, value = next(iter(parse_params((item,)).items()))
        text = item.strip()
        if "." in key:
            proto, name = key.split(".", 1)
            if proto not in protocols:
                raise ParameterError(f"-p {key}: {proto!r} is not among the compared protocols")
            put(proto, name, value, text)
            continue
        takers = [p for p in protocols if key in protocol_class(p).params]
        if not takers:
            raise ParameterError(f"-p {key}: no compared protocol has a parameter {key!r}")
        for p in takers:
            put(p, key, value, text)
    return out


@click.command("compare", cls=ProtocolCommand, scenarios=True)
@click.option("--protocols", required=True, help="Comma-separated protocol names.")
@scenario_options
@click.option(
    "-p", "params", multiple=True, metavar="[PROTOCOL.]NAME=VALUE",
    help="Protocol parameter (repeatable); without PROTOCOL. it goes to every protocol that "
    "declares NAME.",
)
@click.option("--forwarding", default=None, help="One dissemination policy for all: ttl, topic, "
              "flood or mesh (default: each protocol's own).")
@click.option("--no-diameter", is_flag=True, help="Skip the topic diameters.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per protocol on stdout.")
@click.option("--no-timings", is_flag=True, help="Leave the wall-clock 'seconds' field out.")
@trace_options
def compare_cmd(protocols, scenario, seed, settings, params, forwarding, no_diameter, as_json,
                no_timings, trace):
    """Run every protocol of --protocols on ONE world (same workload, network, traffic and
    seed) and print a row per protocol: structure, delivery and cost.

    \b
    Example:
      hedgerow compare --scenario unit-square --protocols spidercast,topiary,gossipsub --json
    """
    from rich.console import Console
    from rich.table import Table

    from hedgerow.progress import progress_bar
    from hedgerow.protocols import protocol_class
    from hedgerow.scenarios.run import check_run, compare
    from hedgerow.scenarios.world import check_bound_settings, resolve_scenario

    names = [p.strip() for p in protocols.split(",") if p.strip()]
    for n in names:
        protocol_class(n)
    by_proto = _params_by_protocol(params, names)
    for n in names:
        check_run(n, scenario, params=by_proto.get(n), forwarding=forwarding, alone=False,
                  **settings)
    check_bound_settings(resolve_scenario(scenario, **settings), names)
    rows = []
    with progress_bar(enabled=not as_json) as bar:
        task = bar.add_task(f"compare on {scenario}", total=len(names))

        def on_row(row: dict) -> None:
            if no_timings:
                row.pop("seconds", None)
            rows.append(row)
            if as_json:
                print_json(row)
            bar.advance(task)

        compare(names, scenario, seed=seed, params=by_proto, forwarding=forwarding,
                diameter=not no_diameter, on_row=on_row, **trace, **settings)
    if trace:
        click.echo(f"trace -> {trace['trace']}", err=True)
    if as_json:
        return
    table = Table(title=f"{scenario}, seed {seed}, world {rows[0]['world']}")
    table.add_column("protocol")
    present = [c for c in _COLUMNS if any(r.get(c[0]) is not None for r in rows)]
    for _, header, _ in present:
        table.add_column(header, justify="right")
    for r in rows:
        cells = ["-" if r.get(k) is None else fmt.format(r[k]) for k, _, fmt in present]
        table.add_row(r["protocol"], *cells)
    Console(width=None if Console().is_terminal else 200).print(table)
