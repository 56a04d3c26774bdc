"""The helpers the papers' checks are written with.

A check returns an :data:`~hedgerow.figures.papers._declare.Outcome`: our
value as text and whether it passes, or :data:`_NOT_RUN` when its runs are
not in the results (e.g. 10,000 nodes in a quick run), which the report shows
as *not run*, never as passed.  Every "mean over runs" a check takes is
:func:`hedgerow.figures.tidy.over_runs` (each run's rows first; which epochs
and which reduction are its arguments).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from hedgerow.figures.papers._declare import Outcome, Results
from hedgerow.figures.tidy import over_runs

__all__ = ["_NOT_RUN", "final_at_least"]

#: the outcome of a check whose runs are not in the results
_NOT_RUN: Outcome = ("not in these runs", None)


def final_at_least(
    experiment: str, metric: str, label: str, at_least: float, tail: int = 10
) -> Callable[[Results], Outcome]:
    """The check "``label``'s final ``metric`` is at least ``at_least``" (a rate, 4 decimals).

    "Final" is the mean over runs of each run's last ``tail`` epochs (Topiary's reading).

    Examples
    --------
    >>> import pandas as pd
    >>> class R:
    ...     def ok(self, experiment):
    ...         return pd.DataFrame({"run_id": ["a", "a"], "epoch": [0, 1], "label": "t",
    ...                              "rate": [0.5, 0.99]})
    >>> final_at_least("e", "rate", "t", 0.98, tail=1)(R())
    ('0.9900', True)
    >>> final_at_least("e", "rate", "other", 0.98)(R())
    ('not in these runs', None)
    """

    def compute(r: Results) -> Outcome:
        df = r.ok(experiment)
        v = over_runs(df, metric, epochs=tail, where={"label": label}) if len(df) else math.nan
        return _NOT_RUN if math.isnan(v) else (f"{v:.4f}", v >= at_least)

    return compute
