"""Metrics: plain functions of (overlay, instance) that never mutate their inputs."""

from hedgerow.metrics.connectivity import (
    partitioned_topics,
    topic_components,
    total_topic_components,
)
from hedgerow.metrics.degree import degree_ci95, degree_histogram, degree_stats
from hedgerow.metrics.diameter import topic_diameters, topic_overlay_diameters
from hedgerow.metrics.intersection import tdi
from hedgerow.metrics.summary import overlay_summary

__all__ = [
    "degree_ci95",
    "degree_histogram",
    "degree_stats",
    "overlay_summary",
    "partitioned_topics",
    "tdi",
    "topic_components",
    "topic_diameters",
    "topic_overlay_diameters",
    "total_topic_components",
]
