"""Protocols from other packages: the entry-point group ``hedgerow.protocols``.

Nothing is installed: each test writes small distributions (a ``*.dist-info``
folder with ``METADATA`` and ``entry_points.txt``, beside the module it
points at) into a temporary folder on ``sys.path``, which is where
``importlib.metadata`` finds installed packages, and makes the registry
discover them again.
"""

from __future__ import annotations

import sys
import textwrap

import pytest
from click.testing import CliRunner

from hedgerow.errors import ParameterError
from hedgerow.protocols import (
    BUILTIN,
    CAPABILITIES,
    REGISTRY,
    get_protocol,
    plugin_errors,
    protocol_class,
    protocol_names,
    protocol_origin,
)
from hedgerow.workloads import make_instance

#: a small static overlay in a plugin's module: each node linked to the next subscriber of
#: each of its topics, in a ring per topic (the shape of ringpt, written from outside)
GOOD = '''
import numpy as np

from hedgerow.metrics.registry import statistics
from hedgerow.model.overlay import Overlay
from hedgerow.params import Int
from hedgerow.protocols.base import StaticProtocol


class Chain(StaticProtocol):
    """Each topic's subscribers in a random order, linked in a chain."""

    name = "chain"
    paper = "an example of a protocol from a plugin"
    params = {"hops": Int(1, "links to the next hops subscribers", low=1)}
    quick_params = {"hops": 1}
    metrics = statistics(links=("links of the chain overlay", "links", None))

    def _build(self, instance, streams, *, progress):
        rng = streams.stream("order")
        edges = []
        for t in range(instance.n_topics):
            subs = rng.permutation(instance.subscribers(t))
            for h in range(1, self.hops + 1):
                edges += list(zip(subs[:-h].tolist(), subs[h:].tolist(), strict=True))
        e = np.array(edges, dtype=np.int64).reshape(-1, 2)
        e = np.unique(np.sort(e, axis=1), axis=0)
        return Overlay.from_edges(instance.n_nodes, e), {"links": len(e)}
'''


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """``install(dist, version, entry_points, modules)`` writes a distribution on ``sys.path``;
    the registry rediscovers its plugins before and after the test, and forgets the modules."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written: list[str] = []

    def install(dist: str, entry_points: dict[str, str], modules: dict[str, str],
                version: str = "0.1.0") -> None:
        info = tmp_path / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
        )
        lines = ["[hedgerow.protocols]"] + [f"{k} = {v}" for k, v in entry_points.items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        for mod, text in modules.items():
            (tmp_path / f"{mod}.py").write_text(textwrap.dedent(text))
            written.append(mod)

    REGISTRY.reset()
    yield install
    REGISTRY.reset()
    for mod in written:
        sys.modules.pop(mod, None)


def test_a_plugin_protocol_is_registered_and_builds(plugins):
    plugins("hedgerow-chain", {"chain": "chain_plugin:Chain"}, {"chain_plugin": GOOD})
    assert "chain" in protocol_names() and "chain" in protocol_names("static")
    assert protocol_origin("chain") == "plugin hedgerow-chain 0.1.0"
    assert protocol_origin("spidercast") == "built-in"
    assert REGISTRY.plugins["chain"].distribution == "hedgerow-chain"
    REGISTRY["chain-2"] = type("Chain2", (REGISTRY["chain"],), {"name": "chain-2"})
    assert protocol_origin("chain-2") == "added at run time"
    del REGISTRY["chain-2"]
    inst = make_instance(nodes=40, topics=5, subs=2, seed=1)
    overlay = get_protocol("chain", hops=2).build(inst, seed=3)
    again = get_protocol("chain", hops=2).build(inst, seed=3)
    assert overlay.n_edges > 0 and (overlay.edges() == again.edges()).all()
    assert plugin_errors() == []


def test_a_builtin_lookup_never_loads_the_plugins(plugins):
    plugins("hedgerow-broken", {"broken": "no_such_module:Nope"}, {})
    assert protocol_class("spidercast") is BUILTIN["spidercast"]
    assert "spidercast" in REGISTRY and not REGISTRY.loaded
    assert "broken" not in protocol_names() and REGISTRY.loaded


def test_an_import_error_is_one_line_and_the_builtins_keep_working(plugins):
    plugins(
        "hedgerow-broken",
        {"broken": "broken_plugin:Broken"},
        {"broken_plugin": "import numpy\nraise RuntimeError('no licence file\\nsecond line')\n"},
    )
    [line] = plugin_errors()
    assert line == (
        "plugin 'broken' (hedgerow-broken 0.1.0): cannot be imported "
        "(RuntimeError: no licence file)"
    )
    with pytest.raises(ParameterError) as info:
        get_protocol("broken")
    assert str(info.value) == line
    assert set(BUILTIN) <= set(protocol_names())
    inst = make_instance(nodes=30, topics=4, subs=2, seed=2)
    assert get_protocol("spidercast").build(inst, seed=1).n_edges > 0


def test_a_name_clash_with_a_builtin_is_refused_without_importing_the_plugin(plugins):
    plugins(
        "evil-overlays",
        {"spidercast": "evil:SpiderCast"},
        {"evil": "raise AssertionError('a clashing plugin must not be imported')\n"},
    )
    assert plugin_errors() == [
        "plugin 'spidercast' (evil-overlays 0.1.0): name 'spidercast' clashes with the built-in "
        "protocol 'spidercast'"
    ]
    assert protocol_class("spidercast") is BUILTIN["spidercast"]


def test_two_plugins_claiming_one_name_are_both_refused(plugins):
    plugins("dist-a", {"chain": "chain_a:Chain"}, {"chain_a": GOOD})
    plugins("dist-b", {"chain": "chain_b:Chain"}, {"chain_b": GOOD})
    [line] = plugin_errors()
    assert line.startswith("plugin 'chain' (dist-") and "is also registered by dist-" in line
    assert "neither is loaded" in line and "\n" not in line
    with pytest.raises(ParameterError, match="is also registered by"):
        protocol_class("chain")


@pytest.mark.parametrize(
    ("module", "value", "reason"),
    [
        ("thing = 42\n", "odd:thing", "odd:thing is not a subclass of "
         "hedgerow.protocols.OverlayProtocol (got int)"),
        ("class Thing:\n    name = 'odd'\n", "odd:Thing", "odd:Thing is not a subclass of "
         "hedgerow.protocols.OverlayProtocol (got Thing)"),
        ("from hedgerow.protocols.base import OverlayProtocol\n"
         "class Bare(OverlayProtocol):\n    name = 'odd'\n", "odd:Bare",
         "odd:Bare declares no capability (derive from the class of one of {capabilities} in "
         "hedgerow.protocols.base)"),
        ("from hedgerow.protocols.base import StaticProtocol\n"
         "class Half(StaticProtocol):\n    name = 'odd'\n", "odd:Half",
         "odd:Half is abstract (does not implement _build)"),
        (GOOD, "odd:Chain", "odd:Chain is named 'chain'; the entry point's name must equal "
         "the class's name"),
        ("", "odd:Missing", "cannot be imported (AttributeError: module 'odd' has no attribute "
         "'Missing')"),
    ],
    ids=["not-a-class", "not-a-protocol", "no-capability", "abstract", "other-name", "no-attr"],
)
def test_an_object_that_is_no_protocol_is_one_line(plugins, module, value, reason):
    plugins("odd-dist", {"odd": value}, {"odd": module})
    reason = reason.replace("{capabilities}", ", ".join(CAPABILITIES))
    assert plugin_errors() == [f"plugin 'odd' (odd-dist 0.1.0): {reason}"]
    assert "odd" not in protocol_names()
    with pytest.raises(ParameterError, match=r"plugin 'odd' \(odd-dist 0\.1\.0\)"):
        get_protocol("odd")


def test_a_name_the_command_line_cannot_take_is_refused(plugins):
    plugins("dots", {"my.overlay": "chain_plugin:Chain"}, {"chain_plugin": GOOD})
    [line] = plugin_errors()
    assert line.startswith("plugin 'my.overlay' (dots 0.1.0): name 'my.overlay' is not a")


def test_good_and_broken_plugins_side_by_side(plugins):
    plugins("hedgerow-chain", {"chain": "chain_plugin:Chain"}, {"chain_plugin": GOOD})
    plugins("hedgerow-broken", {"broken": "gone:X"}, {})
    assert "chain" in protocol_names() and "broken" not in protocol_names()
    assert [x.split(":", 1)[0] for x in plugin_errors()] == ["plugin 'broken' (hedgerow-broken"
                                                             " 0.1.0)"]


def test_the_cli_lists_plugins_with_their_distribution_and_names_broken_ones(plugins):
    from hedgerow.cli import cli

    plugins("hedgerow-chain", {"chain": "chain_plugin:Chain"}, {"chain_plugin": GOOD})
    plugins("hedgerow-broken", {"broken": "gone:X"}, {})
    r = CliRunner().invoke(cli, ["protocols"], env={"COLUMNS": "250"})
    assert r.exit_code == 0
    [row] = [x for x in r.stdout.splitlines() if " chain " in x]
    assert "plugin hedgerow-chain 0.1.0" in row and "static" in row
    [row] = [x for x in r.stdout.splitlines() if " spidercast " in x]
    assert "built-in" in row
    assert r.stderr.splitlines() == [
        "warning: plugin 'broken' (hedgerow-broken 0.1.0): cannot be imported "
        "(ModuleNotFoundError: No module named 'gone')"
    ]
    r = CliRunner().invoke(cli, ["protocols", "broken"])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        "error: plugin 'broken' (hedgerow-broken 0.1.0): cannot be imported "
        "(ModuleNotFoundError: No module named 'gone')"
    ]
    r = CliRunner().invoke(cli, ["protocols", "chain"])
    assert r.exit_code == 0 and "from: plugin hedgerow-chain 0.1.0" in r.output


def test_a_plugin_protocol_runs_in_build_specs_and_the_checks(plugins):
    from hedgerow.cli import cli
    from hedgerow.experiment import parse_spec
    from hedgerow.testing import check_protocol

    plugins("hedgerow-chain", {"chain": "chain_plugin:Chain"}, {"chain_plugin": GOOD})
    r = CliRunner().invoke(
        cli, ["build", "chain", "--nodes", "50", "--topics", "6", "--subs", "2", "--json",
              "-p", "hops=2"]
    )
    assert r.exit_code == 0, r.output
    assert '"protocol": "chain"' in r.output
    spec = parse_spec({
        "experiment": "tiny",
        "scenario": {
            "protocol": "chain",
            "params": {"hops": 2},
            "workload": {"nodes": 60, "topics": 10, "subs": 3, "popularity": "rss"},
        },
    })
    assert spec.scenario.protocol == "chain"
    assert "check_static_build" in check_protocol("chain")


def test_a_maintained_plugin_runs_under_churn(plugins):
    """A plugin with the maintained capability is offered to ``hedgerow churn``."""
    from hedgerow.cli import cli

    plugins(
        "hedgerow-lazy",
        {"lazy-random": "lazy_plugin:LazyRandom"},
        {"lazy_plugin": (
            "from hedgerow.protocols.baselines.similarity import RandomOverlay\n"
            "class LazyRandom(RandomOverlay):\n"
            "    name = 'lazy-random'\n"
        )},
    )
    assert "lazy-random" in protocol_names("maintained")
    r = CliRunner().invoke(
        cli, ["churn", "lazy-random", "--nodes", "80", "--topics", "8", "--subs", "2",
              "--lifetime", "20", "--duration", "40", "--snapshot-every", "20", "--json"]
    )
    assert r.exit_code == 0, r.output
    assert '"protocol": "lazy-random"' in r.output


def test_a_plugin_protocol_runs_in_compare_beside_the_builtins(plugins):
    """One world, a built-in and a plugin protocol: both rows, on the same world fingerprint."""
    import json

    from hedgerow.cli import cli

    plugins("hedgerow-chain", {"chain": "chain_plugin:Chain"}, {"chain_plugin": GOOD})
    r = CliRunner().invoke(
        cli, ["compare", "--scenario", "cities", "--protocols", "ringpt,chain", "--seed", "1",
              "--json", "--no-diameter", "--no-timings", "-p", "chain.hops=2"]
    )
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [row["protocol"] for row in rows] == ["ringpt", "chain"]
    assert rows[0]["world"] == rows[1]["world"]
    assert 0.0 < rows[1]["receive_rate"] <= 1.0
