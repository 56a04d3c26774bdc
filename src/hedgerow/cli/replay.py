"""``hedgerow replay``: traced messages spreading over their overlays, as one HTML page."""

from __future__ import annotations

import click


@click.command("replay")
@click.argument("traces", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False),
              help="The HTML page to write (self-contained: opens with no network).")
@click.option("--max-messages", default=30, show_default=True, type=click.IntRange(min=1),
              help="Messages the page embeds per protocol (the latest epochs' first).")
def replay_cmd(traces: tuple[str, ...], out: str, max_messages: int) -> None:
    """Replay TRACES (files written by run/compare --trace, one world) as a page at --out.

    Side by side per protocol: the overlay laid out as hedgerow draw lays it, a time slider
    and a play button moving one message's copies along their links (first copies and
    duplicates apart), the share of subscribers reached against time, per-node counts on hover.
    """
    from hedgerow.figures.replay import write_replay

    path = write_replay(list(traces), out, max_messages=max_messages)
    click.echo(f"replay of {len(traces)} trace file(s) -> {path}")
