"""The epoch loop as controls and observers: same rows as the inline loop, selection, roles."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pytest

from hedgerow.protocols import get_protocol
from hedgerow.scenarios import epochs as epochs_mod
from hedgerow.scenarios.controls import (
    Epoch,
    EpochControl,
    EpochRun,
    OnlineChurn,
    OnlineTraffic,
    WithholdingRelays,
    WorldTraffic,
    controls_for,
)
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.observers import (
    BroadcastMeasures,
    ChurnMeasures,
    EclipseStreaks,
    EpochObserver,
    EpochRow,
    RelayMeasures,
    RelayTenure,
    RoutingMeasures,
    observers_for,
)
from hedgerow.scenarios.world import make_world

#: digests of small runs made by the epoch loop before it was split into controls and
#: observers (every paper's branch inline); the split must give the same rows, scores and
#: final overlays, bit for bit
BEFORE = [
    ("topiary", "unit-square", {"nodes": 100, "epochs": 3}, {"d": 6}, "bb07af6976821539"),
    ("topiary", "topic-attack", {"nodes": 100, "attackers": 20, "epochs": 3}, {},
     "f6f9a9f901fe0149"),
    ("topiary", "eclipse", {"nodes": 100, "attackers": 20, "epochs": 3}, {}, "30b7fa93e83d7663"),
    ("gossipsub-split", "topic-attack", {"nodes": 100, "attackers": 20}, {}, "7930f15bb866aedf"),
    ("random-graph", "eclipse", {"nodes": 100, "attackers": 20}, {}, "8f1c03bf8d032350"),
    ("goldfish", "goldfish-churn", {"epochs": 4}, {}, "748f493296e0977c"),
    ("perigee", "goldfish-churn", {"epochs": 4}, {}, "ed48aff5e45bb9c8"),
    ("perigee", "goldfish-withhold", {"epochs": 4}, {}, "1b0ae7d6d6017832"),
    ("goldfish", "goldfish-withhold", {"epochs": 4, "attack": "relay"}, {}, "28fdd20fcb22cbee"),
    ("random-graph", "goldfish-withhold", {}, {}, "0664d75666044b8a"),
    ("goldfish", "goldfish-fig2", {"epochs": 3}, {}, "ebac65d2986223d0"),
    ("vitis", "vitis-random", {"nodes": 200, "topics": 200}, {}, "0b3504f97ebeb1b6"),
]


def _digest(res: Any) -> str:
    h = hashlib.sha256()
    # wall-clock columns (a routing run's seconds_*) are the only ones that may differ
    rows = [{k: v for k, v in r.items() if not k.startswith("seconds_")} for r in res.rows]
    h.update(json.dumps(rows, default=str).encode())
    h.update(np.ascontiguousarray(res.scores).tobytes())
    h.update(np.ascontiguousarray(res.overlay.edges()).tobytes())
    return h.hexdigest()[:16]


@pytest.mark.parametrize(
    ("proto", "scenario", "settings", "params", "expected"),
    BEFORE,
    ids=[f"{p}-{s}-{'-'.join(map(str, k.values()))}" for p, s, k, _, _ in BEFORE],
)
def test_rows_as_before(
    proto: str, scenario: str, settings: dict, params: dict, expected: str
) -> None:
    world = make_world(scenario, seed=3, **settings)
    assert _digest(run_protocol(get_protocol(proto, **params), world)) == expected


def _names(parts: list[Any]) -> list[str]:
    return [type(p).__name__ for p in parts]


@pytest.mark.parametrize(
    ("scenario", "settings", "shape", "controls", "observers"),
    [
        ("unit-square", {"nodes": 100}, "adaptive", [WorldTraffic], [EpochRow]),
        ("unit-square", {"nodes": 100}, "static", [WorldTraffic], [EpochRow]),
        ("topic-attack", {"nodes": 100, "attackers": 20}, "adaptive", [WorldTraffic],
         [EpochRow, EclipseStreaks]),
        ("eclipse", {"nodes": 100, "attackers": 20}, "static", [WorldTraffic], [EpochRow]),
        ("goldfish-random", {}, "adaptive", [WorldTraffic], [EpochRow, BroadcastMeasures]),
        ("goldfish-churn", {}, "adaptive", [OnlineChurn, OnlineTraffic],
         [EpochRow, ChurnMeasures, BroadcastMeasures]),
        # a static protocol never sees churn between epochs: it runs one epoch
        ("goldfish-churn", {}, "static", [WorldTraffic], [EpochRow, BroadcastMeasures]),
        ("goldfish-withhold", {}, "adaptive", [WorldTraffic, WithholdingRelays],
         [EpochRow, BroadcastMeasures, RelayMeasures, RelayTenure]),
        ("goldfish-withhold", {"attack": "relay"}, "static", [WorldTraffic, WithholdingRelays],
         [EpochRow, BroadcastMeasures, RelayMeasures]),
        ("vitis-random", {"nodes": 200, "topics": 200}, "static", [], [RoutingMeasures]),
        ("vitis-random", {"nodes": 200, "topics": 200}, "adaptive", [WorldTraffic], [EpochRow]),
    ],
)
def test_settings_select_controls_and_observers(
    scenario: str, settings: dict, shape: str, controls: list, observers: list
) -> None:
    world = make_world(scenario, seed=1, **settings)
    assert _names(controls_for(world, shape)) == [c.__name__ for c in controls]
    assert _names(observers_for(world, shape)) == [o.__name__ for o in observers]


def test_unknown_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown run shape 'cyclic'"):
        controls_for(make_world("goldfish-random", seed=1), "cyclic")


def _fields(ep: Epoch) -> dict[str, bytes]:
    out = {}
    for name, value in vars(ep).items():
        if isinstance(value, np.ndarray):
            out[name] = value.tobytes()
        elif isinstance(value, tuple):
            out[name] = b"".join(np.asarray(v).tobytes() for v in value)
        elif name == "rec" and value is not None:
            out[name] = value.arrival.tobytes() + value.hops.tobytes()
        elif name == "notes":
            out[name] = b"".join(np.asarray(v).tobytes() for v in value.values())
    return out


class _Watch(EpochObserver):
    """Wraps an observer and fails when it changes any array of the epoch it reads."""

    def __init__(self, inner: EpochObserver) -> None:
        self.inner = inner

    def start(self, run: EpochRun) -> None:
        self.inner.start(run)

    def observe(self, run: EpochRun, ep: Epoch) -> dict[str, Any]:
        before = _fields(ep)
        row = self.inner.observe(run, ep)
        assert _fields(ep) == before, type(self.inner).__name__
        return row


@pytest.mark.parametrize(
    ("proto", "scenario"),
    [("perigee", "goldfish-churn"), ("goldfish", "goldfish-withhold"),
     ("gossipsub-split", "goldfish-withhold")],
)
def test_observers_never_change_what_they_read(
    monkeypatch: pytest.MonkeyPatch, proto: str, scenario: str
) -> None:
    world = make_world(scenario, seed=2, epochs=3)
    plain = run_protocol(get_protocol(proto), world).rows
    monkeypatch.setattr(
        epochs_mod, "observers_for",
        lambda *a, **k: [_Watch(o) for o in observers_for(*a, **k)],
    )
    assert run_protocol(get_protocol(proto), world).rows == plain


def test_a_new_measure_is_one_observer_and_controls_act_around_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []

    class OutLinks(EpochObserver):
        def observe(self, run: EpochRun, ep: Epoch) -> dict[str, Any]:
            calls.append(f"observe {ep.number}")
            return {"out_links": int((ep.out >= 0).sum())}

    class Count(EpochControl):
        def start(self, run: EpochRun) -> None:
            calls.append("start")

        def before(self, run: EpochRun, ep: Epoch) -> None:
            calls.append(f"before {ep.number}")

        def after(self, run: EpochRun, ep: Epoch) -> None:
            calls.append(f"after {ep.number}")

    monkeypatch.setattr(epochs_mod, "observers_for",
                        lambda *a, **k: [*observers_for(*a, **k), OutLinks()])
    monkeypatch.setattr(epochs_mod, "controls_for",
                        lambda *a, **k: [*controls_for(*a, **k), Count()])
    world = make_world("goldfish-random", seed=1, epochs=2)
    rows = run_protocol(get_protocol("goldfish"), world).rows
    assert [r["out_links"] for r in rows] == [400, 400]
    assert list(rows[0])[-1] == "out_links"
    assert calls == ["start", "before 0", "observe 0", "after 0", "before 1", "observe 1",
                     "after 1"]
