"""Metrics: plain functions of overlays, instances and dissemination arrays that never mutate
their inputs."""

from hedgerow.metrics.attack import slot_stats
from hedgerow.metrics.connectivity import (
    partitioned_topics,
    topic_components,
    total_topic_components,
)
from hedgerow.metrics.degree import degree_ci95, degree_histogram, degree_stats
from hedgerow.metrics.delivery import (
    delay_percentiles,
    delivery_stats,
    duplicates_per_message,
    relay_share,
)
from hedgerow.metrics.diameter import topic_diameters, topic_overlay_diameters
from hedgerow.metrics.intersection import tdi
from hedgerow.metrics.summary import overlay_summary

__all__ = [
    "degree_ci95",
    "degree_histogram",
    "degree_stats",
    "delay_percentiles",
    "delivery_stats",
    "duplicates_per_message",
    "overlay_summary",
    "partitioned_topics",
    "relay_share",
    "slot_stats",
    "tdi",
    "topic_components",
    "topic_diameters",
    "topic_overlay_diameters",
    "total_topic_components",
]
