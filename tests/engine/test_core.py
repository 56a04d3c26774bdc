import pytest

from hedgerow.engine import Simulator


def test_order_time_priority_sequence():
    sim = Simulator()
    log = []
    sim.schedule(1.0, log.append, "late-low-priority", priority=1)
    sim.schedule(1.0, log.append, "first")
    sim.schedule(1.0, log.append, "second")
    sim.schedule(0.5, log.append, "earliest")
    sim.run()
    assert log == ["earliest", "first", "second", "late-low-priority"]
    assert sim.now == 1.0 and sim.events_run == 4


def test_events_scheduled_by_events_and_until():
    sim = Simulator()
    ticks = []

    def tick():
        ticks.append(sim.now)
        sim.schedule(1.0, tick)

    sim.schedule(0.0, tick)
    sim.run(until=3.5)
    assert ticks == [0.0, 1.0, 2.0, 3.0]
    assert sim.now == 3.5 and sim.pending == 1
    assert sim.run(max_events=2) == 2


def test_no_past_scheduling():
    sim = Simulator()
    with pytest.raises(ValueError):
        sim.schedule(-1.0, print)


def test_seconds_helpers_convert_with_one_rule():
    sim = Simulator(seconds_per_unit=0.1)
    log = []
    sim.schedule_at_seconds(0.3, log.append, "at")
    sim.schedule_in_seconds(0.1, log.append, "in")
    assert sim.to_units(0.3) == 0.3 / 0.1 and sim.to_units(0.1) == 1.0
    sim.run()
    assert log == ["in", "at"]
    assert sim.now == 0.3 / 0.1 and sim.now_seconds == sim.now * 0.1
    assert Simulator().seconds_per_unit == 1.0
    with pytest.raises(ValueError, match="positive"):
        Simulator(seconds_per_unit=0.0)
