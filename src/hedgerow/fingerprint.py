"""A fingerprint of the installed Hedgerow code, stamped on every result row.

A resumed sweep skips runs that already have an ``ok`` row.  If the code
changed in between, those rows were made by other code; the sweep counts them
and can redo them (``hedgerow sweep --redo-stale``).  The fingerprint is a hash
of the package's Python sources, so it changes with any edit, installed or
editable, with no version bump needed, and it is the same on the driver and on
every worker that runs the same code.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

__all__ = ["code_fingerprint"]


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """12 hex digits of SHA-256 over the package's ``.py`` files (relative path and bytes).

    Examples
    --------
    >>> fp = code_fingerprint()
    >>> len(fp), fp == code_fingerprint()
    (12, True)
    """
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:12]
