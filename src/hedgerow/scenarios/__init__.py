"""Named epoch scenarios (the Topiary evaluation) and their runner.

:func:`run_scenario` is the public entry point (one JSON row per epoch);
:func:`simulate` also returns the score distribution and the final overlay.
"""

from hedgerow.scenarios.attackers import ATTACKS, AttackSetup, eclipse_attack, topic_attack
from hedgerow.scenarios.runner import (
    PROTOCOLS,
    SCENARIOS,
    Scenario,
    ScenarioResult,
    check_run,
    protocol_names,
    run_scenario,
    scenario_names,
    simulate,
)

__all__ = [
    "ATTACKS",
    "PROTOCOLS",
    "SCENARIOS",
    "AttackSetup",
    "Scenario",
    "ScenarioResult",
    "check_run",
    "eclipse_attack",
    "protocol_names",
    "run_scenario",
    "scenario_names",
    "simulate",
    "topic_attack",
]
