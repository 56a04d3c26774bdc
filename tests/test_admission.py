"""The memory ledger of runs that share a machine (hedgerow.admission)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from hedgerow import admission
from hedgerow.errors import MemoryDeferred, ParameterError
from hedgerow.params import check_memory

GIB = 2**30


@pytest.fixture
def machine(monkeypatch):
    """A 24 GiB machine with 20 GiB available now, whatever this one has."""
    monkeypatch.setattr(admission, "_physical", lambda: 24 * GIB)
    monkeypatch.setattr(admission, "available_now_bytes", lambda: 20 * GIB)
    monkeypatch.setattr(admission, "_resident", lambda pid: 1 * GIB)


@pytest.fixture
def ledger(tmp_path):
    return str(tmp_path / "ledger.json")


def _put(ledger, pid, reserved):
    host = socket.gethostname()
    data = json.loads(open(ledger).read()) if os.path.exists(ledger) else {}
    data.setdefault(host, {})[str(pid)] = int(reserved)
    with open(ledger, "w") as f:
        json.dump(data, f)


def test_a_run_that_fits_is_reserved_at_what_it_holds_plus_its_estimate(machine, ledger):
    admission.admit("a run", 5 * GIB, held_bytes=2 * GIB, path=ledger)
    assert admission.reservations(ledger) == {os.getpid(): 7 * GIB}
    # a second, smaller estimate keeps the larger reservation
    admission.admit("its next step", 1 * GIB, held_bytes=3 * GIB, path=ledger)
    assert admission.reservations(ledger) == {os.getpid(): 7 * GIB}
    admission.release(path=ledger)
    assert admission.reservations(ledger) == {}


def test_room_is_available_less_headroom_less_what_others_will_still_take(machine, ledger):
    # 20 available - 4.8 kept free = 15.2 GiB; another live run reserved 10 and holds 1
    _put(ledger, os.getppid(), 10 * GIB)
    assert admission.room_bytes(ledger) == pytest.approx(20 * GIB - 0.2 * 24 * GIB - 9 * GIB)
    admission.admit("a light run", 6 * GIB, path=ledger)  # 6.2 GiB of room: admitted
    with pytest.raises(MemoryDeferred, match=r"needs about 7\.0 GiB more; .* 1 other run on "
                                             r"it will take 9\.0 GiB more"):
        admission.admit("a heavy run", 7 * GIB, path=ledger)


def test_a_deferred_run_reserves_nothing(machine, ledger):
    _put(ledger, os.getppid(), 14 * GIB)
    with pytest.raises(MemoryDeferred):
        admission.admit("a heavy run", 9 * GIB, path=ledger)
    assert os.getpid() not in admission.reservations(ledger)


def test_ended_processes_and_other_hosts_do_not_count(machine, ledger):
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    _put(ledger, ended.pid, 14 * GIB)
    with open(ledger) as f:
        data = json.load(f)
    data["another-machine"] = {str(os.getppid()): 14 * GIB}
    with open(ledger, "w") as f:
        json.dump(data, f)
    admission.admit("a heavy run", 9 * GIB, path=ledger)  # 15.2 GiB of room
    assert admission.reservations(ledger) == {os.getpid(): 10 * GIB}
    with open(ledger) as f:
        assert json.load(f)["another-machine"] == {str(os.getppid()): 14 * GIB}


def test_check_memory_defers_only_under_a_ledger(machine, ledger, monkeypatch):
    _put(ledger, os.getppid(), 14 * GIB)
    monkeypatch.delenv(admission.LEDGER_ENV, raising=False)
    check_memory("a heavy run", 9 * GIB)  # alone it fits: no ledger, no deferral
    monkeypatch.setenv(admission.LEDGER_ENV, ledger)
    with pytest.raises(MemoryDeferred, match=r"a heavy run needs about 9\.0 GiB more"):
        check_memory("a heavy run", 9 * GIB)
    # what does not fit the machine alone is refused as before, not deferred
    with pytest.raises(ParameterError, match="more than the 80% a run may take"):
        check_memory("a huge run", 10**15)


def test_a_cut_ledger_starts_again(machine, ledger):
    with open(ledger, "w") as f:
        f.write('{"half a')
    admission.admit("a run", 1 * GIB, path=ledger)
    assert admission.reservations(ledger) == {os.getpid(): 2 * GIB}
