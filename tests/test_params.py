"""Declared parameters (``hedgerow.params``): each kind refuses what it must, naming the key."""

from __future__ import annotations

import math

import pytest

from hedgerow.errors import ParameterError
from hedgerow.params import (
    Bool,
    Choice,
    Float,
    Int,
    as_bool,
    as_choice,
    as_float,
    as_int,
    check_memory,
    validate_params,
)

INT = Int(3, "a count", low=0, high=10).bind("k")
FLOAT = Float(0.5, "a share", low=0.0, high=1.0, low_open=True).bind("share")
BOOL = Bool(False, "a switch").bind("flag")
CHOICE = Choice("uniform", ("uniform", "sequential"), "a rule").bind("ties")


def refused(param, value) -> ParameterError:
    with pytest.raises(ParameterError) as info:
        param.validate("proto", value)
    err = info.value
    assert err.key == param.name
    text = str(err)
    assert "\n" not in text and text.startswith(f"proto: parameter {param.name} must be ")
    return err


@pytest.mark.parametrize(
    "value",
    [True, False, 1.5, float("nan"), float("inf"), "abc", "1.5", None, -1, 11, [3], {}],
    ids=repr,
)
def test_int_refuses(value):
    refused(INT, value)


@pytest.mark.parametrize(
    ("value", "expected"), [(4, 4), (4.0, 4), ("7", 7), (" 2 ", 2), (0, 0), (10, 10)]
)
def test_int_accepts_whole_numbers(value, expected):
    got = INT.validate("proto", value)
    assert got == expected and type(got) is int


@pytest.mark.parametrize(
    "value", [True, False, float("nan"), "nan", "abc", None, 0.0, -0.1, 1.5, float("inf")],
    ids=repr,
)
def test_float_refuses(value):
    refused(FLOAT, value)


def test_float_accepts_numbers_in_range():
    assert FLOAT.validate("proto", 1) == 1.0 and FLOAT.validate("proto", "0.25") == 0.25
    unbounded = Float(1.0, "a period", low=0.0).bind("period")
    assert unbounded.validate("proto", float("inf")) == math.inf  # no upper bound declared
    refused(unbounded, float("-inf"))


@pytest.mark.parametrize("value", ["maybe", 2.5, 2, None, "", [True]], ids=repr)
def test_bool_refuses(value):
    refused(BOOL, value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), ("true", True), ("Yes", True), (1, True), ("off", False), (0, False)],
)
def test_bool_accepts_the_usual_spellings(value, expected):
    assert BOOL.validate("proto", value) is expected


@pytest.mark.parametrize("value", ["no-such-choice", 3, None, True, ""], ids=repr)
def test_choice_refuses(value):
    err = refused(CHOICE, value)
    assert "one of uniform, sequential" in str(err)


def test_choice_is_case_insensitive():
    assert CHOICE.validate("proto", " Sequential ") == "sequential"


@pytest.mark.parametrize("param", [INT, FLOAT, BOOL, CHOICE], ids=lambda p: p.kind)
def test_invalid_values_are_all_refused(param):
    bad = param.invalid_values()
    assert bad
    for value in bad:
        refused(param, value)


def test_optional_accepts_none_only_when_declared():
    opt = Int(None, "derived", low=1, optional=True).bind("n_groups")
    assert opt.validate("proto", None) is None
    assert None not in opt.invalid_values() and None in INT.invalid_values()


def test_validate_params_fills_defaults_and_names_unknown_keys():
    decl = {"k": INT, "ties": CHOICE}
    assert validate_params("proto", decl, {"k": "5"}) == {"k": 5, "ties": "uniform"}
    with pytest.raises(ParameterError, match=r"unknown parameter 'kk'; allowed: k, ties") as info:
        validate_params("proto", decl, {"kk": 1})
    assert info.value.key == "kk"
    with pytest.raises(ParameterError) as info:
        validate_params("proto", decl, {"ties": "random"})
    assert info.value.key == "ties"


@pytest.mark.parametrize(
    ("call", "key"),
    [
        (lambda: as_int("scenario", "epochs", True), "epochs"),
        (lambda: as_int("scenario", "epochs", 1.5), "epochs"),
        (lambda: as_int("scenario", "epochs", 0, minimum=1), "epochs"),
        (lambda: as_float("scenario", "interest", float("nan"), low=0, high=1), "interest"),
        (lambda: as_float("scenario", "interest", 2, low=0, high=1), "interest"),
        (lambda: as_bool("scenario", "flag", "maybe"), "flag"),
        (lambda: as_choice("scenario", "policy", "x", ("ttl", "topic")), "policy"),
    ],
)
def test_one_off_values_name_their_key(call, key):
    with pytest.raises(ParameterError) as info:
        call()
    assert info.value.key == key and key in str(info.value)


def test_check_memory_refuses_before_allocating_with_the_estimate():
    check_memory("a small array", 1 << 20)
    with pytest.raises(ParameterError, match=r"needs about [\d,.]+ GiB of memory"):
        check_memory("a huge array", 1e18)


def test_descriptions_state_type_range_and_default():
    assert INT.describe() == "int in [0, 10], default 3"
    assert FLOAT.describe() == "float in (0, 1], default 0.5"
    assert BOOL.describe() == "true/false, default false"
    assert CHOICE.describe() == "uniform|sequential, default uniform"


def test_text_and_pairs_settings():
    from hedgerow.errors import ParameterError
    from hedgerow.params import Pairs, Text

    def form(v):
        if not v.startswith("unif:"):
            raise ParameterError("not unif:K")

    p = Text(None, "law", parse=form, metavar="unif:K", optional=True).bind("publishers")
    assert p.validate("w", "unif:3") == "unif:3" and p.validate("w", None) is None
    assert p.describe() == "unif:K, optional, default derived"
    for bad in p.invalid_values():
        with pytest.raises(ParameterError, match="publishers"):
            p.validate("w", bad)
    kw = Pairs("latency keywords").bind("latency_kw")
    assert kw.validate("w", [("grid", 2)]) == (("grid", 2),)
    with pytest.raises(ParameterError, match="latency_kw must be a mapping"):
        kw.validate("w", 3)


def test_check_memory_counts_what_the_process_already_holds(monkeypatch):
    """A size that alone fits, beside what the process holds, does not: refused, both named."""
    import hedgerow.params as params

    monkeypatch.setattr(params, "available_memory_bytes", lambda: 10 * 2**30)
    monkeypatch.setattr(params, "resident_bytes", lambda: 0)
    check_memory("seven GiB", 7 * 2**30)  # 7 <= 0.8 x 10
    monkeypatch.setattr(params, "resident_bytes", lambda: 2 * 2**30)
    with pytest.raises(ParameterError, match=r"seven GiB needs about 7\.0 GiB of memory; this "
                       r"machine has 10\.0 GiB and this process holds 2\.0 GiB"):
        check_memory("seven GiB", 7 * 2**30)
