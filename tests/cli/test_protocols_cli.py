"""``hedgerow protocols``: the registry and each protocol's declared parameters, generated."""

from __future__ import annotations

from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.protocols import REGISTRY, capabilities

WIDE = {"COLUMNS": "200"}  # one table row per line


def test_list_shows_every_protocol_with_its_capabilities():
    r = CliRunner().invoke(cli, ["protocols"], env=WIDE)
    assert r.exit_code == 0
    for name, cls in REGISTRY.items():
        [line] = [x for x in r.output.splitlines() if f" {name} " in x]
        assert "/".join(capabilities(cls)) in line


def test_capability_filter():
    r = CliRunner().invoke(cli, ["protocols", "--capability", "maintained"], env=WIDE)
    assert r.exit_code == 0
    assert {"random", "similarity", "spidercast"} <= set(r.output.split())
    assert "topiary" not in r.output and "ringpt" not in r.output


def test_spidercast_prints_each_parameter_with_its_range():
    r = CliRunner().invoke(cli, ["protocols", "spidercast"], env=WIDE)
    assert r.exit_code == 0
    lines = r.output.splitlines()
    for k, p in REGISTRY["spidercast"].params.items():
        [line] = [x for x in lines if x.split("│")[1:2] and x.split("│")[1].strip() == k]
        assert p.describe() in line, (k, line)
    assert "kg" in r.output and ">= 0" in r.output
    assert "capabilities: static, maintained" in r.output


def test_unknown_protocol_is_one_error_line():
    r = CliRunner().invoke(cli, ["protocols", "nope"])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        "error: unknown protocol 'nope'; allowed: " + ", ".join(sorted(REGISTRY))
    ]
