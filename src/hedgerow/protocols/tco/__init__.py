"""Centralized topic-connected overlay (TCO) design: GM, MinMaxODA, LowODA and its repair variants.

:mod:`hedgerow.protocols.tco.engine` holds the one incremental engine every
rule and every repair variant runs on (:func:`tco_augment`).
"""

from hedgerow.protocols.tco.engine import RULES, naive_tco_augment, tco_augment

__all__ = ["RULES", "naive_tco_augment", "tco_augment"]
