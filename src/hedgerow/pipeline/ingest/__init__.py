"""Ingest jobs: real data sets -> Parquet tables for workloads, latency models and churn.

One module per job, each a Spark job on DataFrames writing Parquet under an
output folder (atomically: a failed job leaves nothing behind):

- :mod:`~hedgerow.pipeline.ingest.cities` -- WonderNetwork city latencies;
- :mod:`~hedgerow.pipeline.ingest.perigee` -- the Perigee 1000-node matrix;
- :mod:`~hedgerow.pipeline.ingest.social` -- BFS samples of social graphs as
  subscription instances;
- :mod:`~hedgerow.pipeline.ingest.follower_graph` -- synthetic power-law
  follower graphs;
- :mod:`~hedgerow.pipeline.ingest.churn` -- Google 2011 machine events and
  smartphone sessions as join/leave sequences.

The JVM-free readers of these outputs are :mod:`hedgerow.workloads.social` and
:mod:`hedgerow.scenarios.traces` (and ``pandas.read_parquet`` for the latency tables).
"""
