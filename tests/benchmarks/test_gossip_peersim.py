"""The PeerSim anchor script's own logic: its configuration, its options and the absent anchor.

The script (``benchmarks/anchors/gossip_peersim.py``) is loaded from its path; nothing here
needs PeerSim or a JVM.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "anchors" / "gossip_peersim.py"


@pytest.fixture(scope="module")
def script(load_script):
    return load_script(SCRIPT)


def _config(text: str) -> dict[str, str]:
    return dict(line.split(" ", 1) if " " in line else (line, "") for line in text.splitlines()
                if line)


def test_config_names_the_java_tman_and_the_experiments(script):
    cold = _config(script.peersim_config(1000, 20, 20, 5, 7, False))
    assert cold["protocol.tman"] == "hedgerowanchor.RingTMan"
    assert cold["simulation.experiments"] == "1"
    assert cold["random.seed"] == "7" and cold["network.size"] == "1000"
    warm = _config(script.peersim_config(1000, 20, 20, 5, 7, True, "tuned", 2))
    assert warm["protocol.tman"] == "hedgerowanchor.TunedRingTMan"
    assert warm["simulation.experiments"] == "2"
    assert warm["protocol.tman.cache"] == "20" and warm["control.probe.quality"] == "true"
    assert set(script.VARIANTS) == {"harness", "tuned"}
    assert script.MODES == {"cold": 1, "warm": 2}


def test_every_java_class_is_written(script):
    # the tuned class extends the harness's, so the initialiser and the probe read both
    assert "class TunedRingTMan extends RingTMan" in script.TUNED_TMAN
    assert "getCurrentThreadCpuTime" in script.PROBE
    assert "ArrayList<" not in script.TUNED_TMAN and "import java.util" not in script.TUNED_TMAN


@pytest.mark.parametrize(("argv", "message"), [
    (["--variants", "fast"], "--variants: unknown Java T-Man 'fast'"),
    (["--modes", "hot"], "--modes: unknown mode 'hot'"),
])
def test_bad_options_say_which(script, monkeypatch, argv, message):
    monkeypatch.setattr(sys, "argv", ["gossip_peersim.py", *argv])
    with pytest.raises(SystemExit, match=message):
        script.main()


def test_absent_anchor_says_so(script, monkeypatch, tmp_path):
    monkeypatch.delenv(script.ENV, raising=False)
    with pytest.raises(SystemExit, match="HEDGEROW_ANCHOR_PEERSIM is not set"):
        script.anchor_classpath()
    monkeypatch.setenv(script.ENV, str(tmp_path))
    with pytest.raises(SystemExit, match=r"no compiled peersim\.jabeja\.Newscast"):
        script.anchor_classpath()
