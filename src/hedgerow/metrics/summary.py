"""One dictionary of the standard overlay metrics."""

from __future__ import annotations

from hedgerow.metrics._args import checked
from hedgerow.metrics.connectivity import topic_components
from hedgerow.metrics.degree import degree_stats
from hedgerow.metrics.diameter import topic_diameters, topic_overlay_diameters
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay


def overlay_summary(overlay: Overlay, instance: Instance, *, diameter: bool = True) -> dict:
    """Degree, connectivity and (optionally) diameter metrics as plain values.

    Keys: ``avg_degree, max_degree, min_degree, degree_ci95, degree_p2_5,
    degree_p97_5, partitioned_topics, topic_components, max_topic_diameter,
    avg_topic_diameter, max_topic_overlay_diameter, avg_topic_overlay_diameter``.
    ``*_topic_diameter`` is measured inside the topic subgraphs,
    ``*_topic_overlay_diameter`` in the whole overlay (see
    :mod:`hedgerow.metrics.diameter`).  Averages are over topics with at least
    two subscribers.
    """
    checked("overlay_summary", overlay=overlay, instance=instance)
    out = dict(degree_stats(overlay))
    comps = topic_components(overlay, instance)
    out["partitioned_topics"] = int((comps > 1).sum())
    out["topic_components"] = int(comps.sum())
    if diameter:
        diam = topic_diameters(overlay, instance)
        has_pairs = instance.topic_sizes >= 2
        out["max_topic_diameter"] = int(diam.max()) if len(diam) else 0
        out["avg_topic_diameter"] = float(diam[has_pairs].mean()) if has_pairs.any() else 0.0
        span = topic_overlay_diameters(overlay, instance)
        out["max_topic_overlay_diameter"] = int(span.max()) if len(span) else 0
        out["avg_topic_overlay_diameter"] = (
            float(span[has_pairs].mean()) if has_pairs.any() else 0.0
        )
    return out
