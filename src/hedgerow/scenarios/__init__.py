"""Named epoch scenarios (the Topiary evaluation) and their runner; overlays under churn.

:func:`run_scenario` is the public entry point (one JSON row per epoch);
:func:`simulate` also returns the score distribution and the final overlay.
Churn (SpiderCast section 3.8) lives in the submodules :mod:`~hedgerow.scenarios.churn`
(the driver :func:`~hedgerow.scenarios.churn.run_churn` and the synthetic control),
:mod:`~hedgerow.scenarios.observers` (snapshots) and :mod:`~hedgerow.scenarios.traces`
(replayed join/leave traces).
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
from hedgerow.scenarios.workload import interest_instance

__all__ = [
    "ATTACKS",
    "PROTOCOLS",
    "SCENARIOS",
    "AttackSetup",
    "Scenario",
    "ScenarioResult",
    "check_run",
    "eclipse_attack",
    "interest_instance",
    "protocol_names",
    "run_scenario",
    "scenario_names",
    "simulate",
    "topic_attack",
]
