"""Workloads: who subscribes to what, and which messages are published.

Synthetic subscriptions of SpiderCast (section 3.1: popularity laws,
:func:`make_instance`) and Topiary (section V-A: topic interest rate,
:func:`interest_instance`), and Topiary's message traffic
(:func:`draw_messages`).  Social-graph instances read from ingest outputs live
in :mod:`hedgerow.workloads.social` (pandas/pyarrow; not imported here).
"""

from hedgerow.workloads.interest import (
    interest_bytes,
    interest_instance,
    with_topic,
    without_topic,
)
from hedgerow.workloads.popularity import POPULARITY, popularity
from hedgerow.workloads.publishers import (
    draw_publishers,
    parse_publishers,
    publisher_probabilities,
)
from hedgerow.workloads.subscriptions import draw_subscriptions, make_instance, parse_subs
from hedgerow.workloads.traffic import draw_messages

__all__ = [
    "POPULARITY",
    "draw_messages",
    "draw_publishers",
    "draw_subscriptions",
    "interest_bytes",
    "interest_instance",
    "make_instance",
    "parse_publishers",
    "parse_subs",
    "popularity",
    "publisher_probabilities",
    "with_topic",
    "without_topic",
]
