"""``hedgerow pictures``: build a gossip overlay and write its pictures and GraphML."""

from __future__ import annotations

from pathlib import Path

import click

from hedgerow.cli._common import parse_params, workload_options

#: protocols whose builds can be drawn (they keep their gossip state in ``run_``)
DRAWABLE = ("vitis",)


@click.command("pictures")
@click.argument("protocol", type=click.Choice(DRAWABLE))
@workload_options()
@click.option("-p", "params", multiple=True, metavar="NAME=VALUE",
              help="Protocol parameter (repeatable).")
@click.option("--topic", type=int, default=None,
              help="Topic to draw (default: the one with the most clusters).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=".",
              show_default=True, help="Folder for overlay.png, topic-T.png, convergence.png, "
              "overlay.graphml.")
def pictures_cmd(protocol, nodes, topics, subs, popularity, seed, params, topic, out_dir):
    """Build PROTOCOL on a synthetic workload; draw the overlay on its id ring, one topic's
    clusters, gateways and relay paths, the convergence curves; export GraphML.

    \b
    Example:
      hedgerow pictures vitis --nodes 300 --topics 40 --subs 3:6 -p rt=8 -p cycles=40 --out pics
    """
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np

    from hedgerow.cli._common import WORKLOAD_DEFAULTS
    from hedgerow.metrics.connectivity import topic_components
    from hedgerow.protocols import get_protocol
    from hedgerow.protocols.vitis.pictures import (
        draw_convergence,
        draw_overlay,
        draw_topic,
        write_graphml,
    )
    from hedgerow.userfiles import check_writable
    from hedgerow.workloads import make_instance

    check_writable(out_dir, folder=True)
    if topic is not None and not 0 <= topic < topics:
        raise click.BadParameter(f"{topic} is not a topic of 0..{topics - 1}",
                                 param_hint="--topic")
    proto = get_protocol(protocol, **parse_params(params))
    proto.checked()  # a bad -p value before the workload is drawn
    inst = make_instance(
        nodes=nodes, topics=topics,
        subs=WORKLOAD_DEFAULTS["subs"] if subs is None else subs,
        popularity=WORKLOAD_DEFAULTS["popularity"] if popularity is None else popularity,
        seed=seed,
    )  # fmt: skip
    ov = proto.build(inst, seed=seed)
    if topic is None:
        topic = int(np.argmax(topic_components(ov, inst)))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in (("overlay.png", lambda: draw_overlay(proto)),
                       (f"topic-{topic}.png", lambda: draw_topic(proto, topic)),
                       ("convergence.png", lambda: draw_convergence(proto))):
        ax = draw()
        ax.figure.savefig(out / name, dpi=110, bbox_inches="tight")
        matplotlib.pyplot.close(ax.figure)
        written.append(out / name)
    write_graphml(proto, str(out / "overlay.graphml"))
    written.append(out / "overlay.graphml")
    for w in written:
        click.echo(str(w))
