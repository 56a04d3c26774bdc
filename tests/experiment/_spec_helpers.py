"""Shared pieces of the experiment-spec tests: a tiny base spec and its error text."""

from __future__ import annotations

import copy

import pytest

from hedgerow.errors import SpecError
from hedgerow.experiment import parse_spec

BASE = {
    "experiment": "tiny",
    "scenario": {
        "protocol": "ringpt",
        "workload": {"nodes": 60, "topics": 10, "subs": 3, "popularity": "rss"},
        "diameter": False,
    },
}


def spec_with(**changes):
    data = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        node = data
        parts = dotted.split("__")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return data


def error_of(data) -> str:
    with pytest.raises(SpecError) as info:
        parse_spec(data)
    return str(info.value)
