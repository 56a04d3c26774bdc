"""``hedgerow protocols``: the registry, with every protocol's declared parameters."""

from __future__ import annotations

import click


@click.command("protocols")
@click.argument("name", required=False)
@click.option(
    "--capability", default=None, help="Only protocols with this capability (static, adaptive, "
    "maintained)."
)
def protocols_cmd(name, capability) -> None:
    """List the registered protocols, or NAME's parameters (type, range, default, doc).

    Protocols of installed plugins (packages registering the entry-point group
    hedgerow.protocols) are listed with their distribution and version; a
    plugin that could not be loaded is named on stderr with the reason.
    """
    from rich.console import Console
    from rich.table import Table

    from hedgerow.protocols import (
        REGISTRY,
        capabilities,
        plugin_errors,
        protocol_class,
        protocol_names,
        protocol_origin,
    )

    console = Console(width=None if Console().is_terminal else 160)
    if name is None:
        table = Table(title="Registered protocols")
        for col in ("protocol", "capabilities", "forwarding", "parameters", "paper", "from"):
            table.add_column(col)
        for n in protocol_names(capability):
            cls = REGISTRY[n]
            table.add_row(
                n, "/".join(capabilities(cls)), cls.forwarding, ", ".join(cls.params), cls.paper,
                protocol_origin(n),
            )
        console.print(table)
        for line in plugin_errors():
            click.echo(f"warning: {line}", err=True)
        return
    cls = protocol_class(name, capability)
    table = Table(title=f"{name}: {cls.paper}")
    for col in ("parameter", "type, range, default", "meaning"):
        table.add_column(col)
    for k, p in cls.params.items():
        table.add_row(k, p.describe(), p.doc)
    console.print(table)
    click.echo(
        f"capabilities: {', '.join(capabilities(cls))}; forwarding: {cls.forwarding}; "
        f"claims topic connectivity: {str(cls.claims_topic_connected).lower()}; "
        f"from: {protocol_origin(name)}"
    )
