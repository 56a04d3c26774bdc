"""The public conformance checks, for a protocol built into Hedgerow or in its own package.

scikit-learn's ``check_estimator`` / ``parametrize_with_checks``, for
protocols: every check of every capability a protocol declares (parameters
declared and refused when invalid, a static build that is deterministic and
well formed, an adaptive run that keeps its out-degree, a maintained overlay
that is consistent after churn, ...), from the library
:mod:`hedgerow.scenarios.checks`.  A protocol is given as its registered
name, its class (registered or not: a protocol under development) or an
instance (checked with its parameter values).

In a plugin's own test file, one pytest case per (protocol, check)::

    from hedgerow.testing import parametrize_with_checks
    from my_overlay import MyOverlay

    @parametrize_with_checks([MyOverlay])
    def test_hedgerow_conformance(protocol, check):
        check(protocol)

Examples
--------
>>> check_protocol("ringpt")[:2]
['check_declared_params', 'check_param_round_trip']
>>> [check.__name__ for check in protocol_checks("ringpt")][-1]
'check_bandwidth_limited'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from hedgerow.protocols.base import OverlayProtocol
from hedgerow.scenarios import checks as _checks

__all__ = ["check_protocol", "parametrize_with_checks", "protocol_checks"]

#: a check: a function of a protocol class that raises ``AssertionError`` naming what failed
Check = Callable[[type[OverlayProtocol]], None]


def check_protocol(protocol: Any) -> list[str]:
    """Run every check of ``protocol``'s capabilities; raise at the first failure.

    Parameters
    ----------
    protocol : str, protocol class or protocol instance
        A registered name (built in or from a plugin), a class derived from a
        capability of :mod:`hedgerow.protocols.base` (registered or not), or
        an instance, checked with its own parameter values instead of the
        class's ``quick_params``.

    Returns
    -------
    list of str
        The names of the checks run, in order.

    Raises
    ------
    AssertionError
        At the first failed check, naming the protocol and what failed.
    hedgerow.errors.ParameterError
        For an unknown name or an object that is no protocol.

    Examples
    --------
    >>> from hedgerow.protocols import get_protocol
    >>> "check_static_build" in check_protocol(get_protocol("random-graph", d=4))
    True
    """
    return _checks.check_protocol(protocol)


def protocol_checks(protocol: Any) -> list[Check]:
    """The checks that apply to ``protocol`` (every protocol's, then each capability's).

    ``protocol`` as in :func:`check_protocol`.  Each check is called with the
    protocol class: ``check(cls)``.

    Examples
    --------
    >>> [c.__name__ for c in protocol_checks("topiary")][-1]
    'check_bandwidth_limited'
    """
    return list(_checks.protocol_checks(_checks.as_protocol_class(protocol)))


def parametrize_with_checks(protocols: Iterable[Any]) -> Any:
    """A ``pytest.mark.parametrize`` over every (protocol, check) pair of ``protocols``.

    The decorated test takes two arguments, ``protocol`` (the class) and
    ``check``, and calls ``check(protocol)``; each case's id is
    ``<name>-<check>`` (``nearest-check_static_build``), so a failure names
    both.  ``protocols`` holds names, classes or instances, as
    :func:`check_protocol` takes them.

    Examples
    --------
    >>> mark = parametrize_with_checks(["ringpt", "topiary"])
    >>> mark.args[0]
    'protocol,check'
    >>> [p.id for p in mark.args[1]][-1]
    'topiary-check_bandwidth_limited'
    """
    import pytest  # only a test session needs it

    cases = []
    for protocol in protocols:
        cls = _checks.as_protocol_class(protocol)
        for check in _checks.protocol_checks(cls):
            cases.append(pytest.param(cls, check, id=f"{cls.name}-{check.__name__}"))
    return pytest.mark.parametrize("protocol,check", cases)
