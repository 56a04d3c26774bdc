"""Results as pandas DataFrames, in one call.

:func:`to_frame` takes what the Python API returns, the rows of :func:`hedgerow.compare`
(one per protocol), a run of :func:`hedgerow.simulate` (one row per epoch) or any list of row
dicts, and gives one DataFrame with the rows' columns in their order, so a comparison goes
straight to pandas and matplotlib.

Examples
--------
>>> to_frame([{"protocol": "a", "delay_mean_ms": 1.5}, {"protocol": "b", "delay_mean_ms": 2.0}])
  protocol  delay_mean_ms
0        a            1.5
1        b            2.0
>>> to_frame(42)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
hedgerow.errors.ParameterError: to_frame takes rows (a list of dicts) or a result ..., got int
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hedgerow.errors import ParameterError

__all__ = ["to_frame"]


def to_frame(result: Any) -> Any:
    """A pandas DataFrame of ``result``: a list of row dicts, or an object with ``.rows``.

    Columns keep the order of first appearance across rows; a key missing from a row is
    ``NaN`` (``None`` for text columns) there.
    """
    import pandas as pd

    rows = getattr(result, "rows", result)
    if isinstance(rows, Mapping) or not isinstance(rows, (list, tuple)) or not all(
        isinstance(r, Mapping) for r in rows
    ):
        raise ParameterError(
            "to_frame takes rows (a list of dicts) or a result with .rows, got "
            f"{type(result).__name__}",
            key="result",
        )
    columns: dict[str, None] = {}
    for r in rows:
        columns.update(dict.fromkeys(r))
    return pd.DataFrame(list(rows), columns=list(columns))
