"""Head to head: every registered protocol on the same worlds (``docs/head-to-head.md``),
without and with bytes on the wire (``bytes-head-to-head``).
"""

from __future__ import annotations

from hedgerow.figures.papers._declare import (
    FigureSpec,
    Named,
    Paper,
    Quick,
)

__all__ = ["HEAD_TO_HEAD"]

_H2H_METRICS = (("receive_rate", "receive rate"), ("delay_mean_ms", "average delay (ms)"),
                ("avg_degree", "average degree"), ("partitioned_topics", "partitioned topics"))

#: the protocols a quick bytes-head-to-head draws
_BYTES_QUICK = ["spidercast", "ringpt", "topiary", "gossipsub-split", "gossipsub", "complete", "gm",
                "vitis"]

HEAD_TO_HEAD = Paper(
    name="head-to-head",
    title="Head to head: every registered protocol on the same worlds (unit square, "
    "246 cities, RSS on the unit square)",
    doc="docs/head-to-head.md",
    experiments=(
        Named("head-to-head.yaml", "head-to-head",
              Quick(seeds=[1], scenario={"run.epochs": 30}), 4.5, 0.6),
        Named("bytes-head-to-head.yaml", "bytes-head-to-head",
              Quick(grid={"scenario.run.size": ["0", "16k", "1m"],
                          "scenario.run.bandwidth": ["25:50"]},
                    labels=_BYTES_QUICK, scenario={"run.epochs": 3}), 6.0, 0.8),
    ),
    figures=(
        FigureSpec("h2h", "Every protocol on the same worlds, each forwarding by its own rule "
                   "(last epoch of each run)", "head-to-head", "bars", panels=_H2H_METRICS,
                   group="scenario", last=True, logy=("delay_mean_ms", "avg_degree"),
                   readings=(("How to read the table", "docs/head-to-head.md"),)),
        FigureSpec("bytes", "Bytes on the wire: delay p90 and bytes sent per node by "
                   "message size", "bytes-head-to-head", "lines",
                   panels=(("delay_p90_ms", "delay p90 (ms)"),
                           ("sent_payload_mean", "payload bytes sent per node")),
                   x="message_bytes_mean", xlabel="message size (bytes)", group="run_bandwidth",
                   last=True, logy=("delay_p90_ms", "sent_payload_mean"), logx=True,
                   readings=(("Does the ranking survive bytes?",
                              "docs/head-to-head.md#bytes-on-the-wire"),)),
    ),
)

# ---------------------------------------------------------------------------------------------
