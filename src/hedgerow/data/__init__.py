"""The real data sets: a registry of pinned public sources, and fetching them on demand.

:mod:`~hedgerow.data.registry` lists every data set (source repository and commit, files,
sizes, SHA-256, licence, citation); :mod:`~hedgerow.data.store` finds them (``HEDGEROW_DATA``,
the user's cache, a development checkout's ``shared/data``) and fetches them (``hedgerow data
fetch``), from a mirror when ``HEDGEROW_DATA_MIRROR`` is set.
"""

from hedgerow.data.registry import DATASETS, DataFile, Dataset, dataset
from hedgerow.data.store import (
    cache_dir,
    data_dir,
    data_path,
    dataset_dir,
    fetch,
    search_dirs,
    verify,
)

__all__ = [
    "DATASETS",
    "DataFile",
    "Dataset",
    "cache_dir",
    "data_dir",
    "data_path",
    "dataset",
    "dataset_dir",
    "fetch",
    "search_dirs",
    "verify",
]
