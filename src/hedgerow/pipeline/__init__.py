"""The Spark data pipeline: sweeps, ingest jobs and aggregation.

This is the only package that imports :mod:`pyspark`.
"""
