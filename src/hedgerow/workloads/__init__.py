"""Synthetic subscription workloads (SpiderCast section 3.1)."""

from hedgerow.workloads.popularity import POPULARITY, popularity
from hedgerow.workloads.subscriptions import draw_subscriptions, make_instance, parse_subs

__all__ = ["POPULARITY", "draw_subscriptions", "make_instance", "parse_subs", "popularity"]
