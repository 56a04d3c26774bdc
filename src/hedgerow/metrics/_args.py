"""The argument check of the metrics' entry points: a wrong type is one
:class:`~hedgerow.errors.ParameterError` naming the argument, never an
``AttributeError`` from inside a kernel."""

from __future__ import annotations

from typing import Any

from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.params import as_instance


def checked(owner: str, overlay: Any = None, instance: Any = None) -> None:
    """Refuse an ``overlay`` that is no :class:`Overlay` or an ``instance`` that is no
    :class:`Instance` (``None``: not an argument of ``owner``).

    Examples
    --------
    >>> checked("overlay_summary", overlay="x")
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: overlay_summary: overlay must be a Overlay, got str 'x'
    """
    if overlay is not None:
        as_instance(owner, "overlay", overlay, Overlay)
    if instance is not None:
        as_instance(owner, "instance", instance, Instance)
