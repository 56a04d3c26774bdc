"""Named ingest outputs the churn scenarios and worlds read (``fb1k``, ``google4k``...).

One table, :data:`INPUTS`, from a name to the ingest job and arguments that make it, and the
folder where that output lives (``$HEDGEROW_INPUTS`` or ``~/.cache/hedgerow/inputs``).  Kept
apart from :mod:`hedgerow.scenarios.events` so that worlds can find a trace without importing
the churn-event driver.

Examples
--------
>>> input_folder("google1k").name
'churn-google1k'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeGuard

from hedgerow.errors import ParameterError

__all__ = [
    "INPUTS", "input_folder", "inputs_dir", "is_social_input", "prepared_folder", "social_folder",
]

#: named ingest outputs: name -> (ingest job, its arguments)
INPUTS: dict[str, tuple[str, dict[str, Any]]] = {
    "fb1k": ("social", {"size": 1000, "seed": 1}),
    "fb4k": ("social", {"size": "all", "seed": 1}),
    "tw1k": ("follower-graph", {"users": 1000, "seed": 1}),
    "tw10k": ("follower-graph", {"users": 10000, "seed": 1}),
    # Vitis IV-E's Twitter-like graph as docs/vitis-baselines.md measured it (mean 80, seed 0)
    "vitis-tw10k": ("follower-graph", {"users": 10000, "mean": 80.0, "seed": 0}),
    "google1k": ("churn", {"source": "google", "nodes": 1000, "seed": 1}),
    "google4k": ("churn", {"source": "google", "nodes": 4039, "seed": 1}),
    "google10k": ("churn", {"source": "google", "nodes": 10000, "seed": 1}),
}


def inputs_dir() -> Path:
    """Folder of the named ingest outputs (``$HEDGEROW_INPUTS`` or ``~/.cache/hedgerow/inputs``)."""
    env = os.environ.get("HEDGEROW_INPUTS")
    return Path(env) if env else Path.home() / ".cache" / "hedgerow" / "inputs"


def input_folder(name: str) -> Path:
    """Folder of named input ``name`` (``social-fb1k``, ``churn-google1k``...); may not exist."""
    if name not in INPUTS:
        raise ParameterError(f"unknown input {name!r}; allowed: {', '.join(INPUTS)}", key="input")
    job = INPUTS[name][0]
    prefix = "churn" if job == "churn" else "social"
    return inputs_dir() / f"{prefix}-{name}"


def is_social_input(name: object) -> TypeGuard[str]:
    """Whether ``name`` is a named social input (a sample or follower graph, not a churn trace).

    Examples
    --------
    >>> is_social_input("fb1k"), is_social_input("google1k"), is_social_input("my/folder")
    (True, False, False)
    """
    return isinstance(name, str) and name in INPUTS and INPUTS[name][0] != "churn"


def social_folder(social: str) -> str:
    """The folder a ``social`` setting names: a named input's (prepared), else ``social`` itself.

    A named social input (``fb1k``, ``vitis-tw10k``, ...) must be prepared
    (``hedgerow sweep`` and ``hedgerow churn`` prepare the ones they need);
    anything else is taken as an ingest output folder.

    Examples
    --------
    >>> social_folder("results/my-graph")
    'results/my-graph'
    """
    if not is_social_input(social):
        return social
    return str(prepared_folder(social))


def prepared_folder(name: str) -> Path:
    """The folder of named input ``name``, which must be prepared (its ``meta.json`` written).

    Raises :class:`~hedgerow.errors.DataError` naming the ``hedgerow ingest`` command that
    prepares it (``hedgerow sweep``, ``churn``, ``build``, ``run`` and ``compare`` prepare the
    inputs they read themselves).
    """
    folder = input_folder(name)
    if not (folder / "meta.json").exists():
        from hedgerow.errors import DataError

        job, args = INPUTS[name]
        flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in args.items())
        raise DataError(
            f"input {name!r} is not prepared at {folder}: a sweep or `hedgerow churn --scenario` "
            f"prepares it, or run `hedgerow ingest {job} {flags} --out {folder}`"
        )
    return folder
