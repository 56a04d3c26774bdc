"""Head to head: every registered protocol on the same worlds (``docs/head-to-head.md``),
without and with bytes on the wire (``bytes-head-to-head``), and at 10,000 and 100,000 nodes
(``head-to-head-10k``, ``head-to-head-100k``).

The scaling figure draws receive rate, delay and degree against the number of
nodes from the rows of the 1,000-node table, the 10,000-node one and, when the
results folder holds them, the 100,000-node one (a sweep of hours, not run by
``hedgerow reproduce``: ``hedgerow sweep experiments/head-to-head-100k.yaml``
into the same folder, then ``reproduce head-to-head --report-only``).  The
cities family is the 246 cities at 1,000 nodes and nodes placed on them above.
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

#: the scaling figure's panels
_SCALE_METRICS = (("receive_rate", "receive rate"), ("delay_mean_ms", "average delay (ms)"),
                  ("avg_degree", "average degree"))

#: a world family at every size: the 246 cities, and nodes placed on them at 10K and 100K
_FAMILIES = {"cities-placed": "cities"}

#: the protocols a quick head-to-head-10k runs (at 2,000 nodes): those of the 1,000-node table
#: (but complete, not in the 10K table) and Perigee and OMen-G; Goldfish, OMen and the churn
#: repairs (on a static world the LowODA build) stay in the full sweep
_SCALE_QUICK = ["spidercast", "similarity", "random", "ringpt", "random-graph", "gossipsub-split",
                "scribe-random", "scribe-topic", "gm", "lowoda", "minmaxoda", "vitis", "rvr",
                "opt", "topiary", "gossipsub", "omen-g", "perigee"]

#: the quick head-to-head: Perigee at 10 epochs, Goldfish at 4 (its window fills after 3, then
#: one completion epoch: 1,000 completions on a 1,000-node world)
_H2H_QUICK = {"perigee": {"scenario.run.epochs": 10}, "goldfish": {"scenario.run.epochs": 4}}

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
              Quick(seeds=[1], scenario={"run.epochs": 30}, overrides=_H2H_QUICK), 60.0, 2.5),
        Named("bytes-head-to-head.yaml", "bytes-head-to-head",
              Quick(grid={"scenario.run.size": ["0", "16k", "1m"],
                          "scenario.run.bandwidth": ["25:50"]},
                    labels=_BYTES_QUICK, scenario={"run.epochs": 3}), 6.0, 0.8),
        Named("head-to-head-10k.yaml", "head-to-head-10k",
              Quick(seeds=[1], labels=_SCALE_QUICK,
                    scenario={"run.nodes": 2000, "run.epochs": 5}), 60.0, 2.5),
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
        FigureSpec("scale", "Receive rate, delay and degree against the number of nodes, "
                   "one line per protocol and world family (last epoch of each run)",
                   "head-to-head", "lines", panels=_SCALE_METRICS, x="nodes",
                   xlabel="nodes", group="scenario", last=True, logx=True,
                   logy=("delay_mean_ms", "avg_degree"),
                   also=("head-to-head-10k", "head-to-head-100k"), families=_FAMILIES,
                   readings=(("At 10,000 and 100,000 nodes",
                              "docs/head-to-head.md#at-10000-and-100000-nodes"),)),
    ),
)

# ---------------------------------------------------------------------------------------------
