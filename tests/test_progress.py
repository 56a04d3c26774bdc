"""The compile notice: said once on a terminal when numba compiles, never otherwise."""

from __future__ import annotations

import io

import numba

from hedgerow.progress import COMPILE_NOTICE, compile_notice


class _Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _fresh_kernel():
    """A kernel numba has not compiled yet (a new function object each call, no cache)."""

    @numba.njit(cache=False)
    def twice(x):
        return 2 * x

    return twice


def test_a_compilation_is_announced_once_on_a_terminal():
    out = _Terminal()
    first, second = _fresh_kernel(), _fresh_kernel()
    with compile_notice(out):
        assert first(2) == 4
        assert second(3) == 6  # a second compilation: no second line
    assert out.getvalue() == COMPILE_NOTICE + "\n"


def test_nothing_is_said_when_nothing_compiles():
    k = _fresh_kernel()
    k(1)  # compiled before the block
    out = _Terminal()
    with compile_notice(out):
        assert k(5) == 10
    assert out.getvalue() == ""


def test_nothing_is_said_off_a_terminal():
    out = io.StringIO()
    with compile_notice(out):
        assert _fresh_kernel()(4) == 8
    assert out.getvalue() == ""


def test_the_listener_is_gone_after_the_block():
    out = _Terminal()
    with compile_notice(out):
        pass
    _fresh_kernel()(1)
    assert out.getvalue() == ""
