"""Scenarios: the worlds protocols run in, and the loops that run them.

* :mod:`~hedgerow.scenarios.world` -- named settings as data (:data:`SCENARIOS`) and
  :func:`make_world` (workload, network, processing delays, traffic, attackers; one
  fingerprint);
* :mod:`~hedgerow.scenarios.epochs` -- the epoch loop for any protocol
  (:func:`run_protocol`);
* :mod:`~hedgerow.scenarios.controls` -- what acts on the epoch loop before an epoch
  (churn, traffic, withholding relays), selected by the world's settings;
* :mod:`~hedgerow.scenarios.observers` -- per-epoch rows as observers and churn snapshots,
  from :mod:`hedgerow.metrics`;
* :mod:`~hedgerow.scenarios.churn` -- overlays under churn (SpiderCast 3.8): the controls
  and the driver :func:`~hedgerow.scenarios.churn.run_churn` over the ChurnEngine interface;
* :mod:`~hedgerow.scenarios.gossip_churn` -- cycle-driven protocols (Vitis, RVR) under churn
  over the CycleEngine interface; :mod:`~hedgerow.scenarios.events` -- maintained overlays
  event by event, and the named churn scenarios;
* :mod:`~hedgerow.scenarios.churn_drivers` -- the one churn entry
  (:func:`~hedgerow.scenarios.churn_drivers.run_churn_request`): the driver by the protocol's
  capability, for ``hedgerow churn`` and the ``churn`` kind;
* :mod:`~hedgerow.scenarios.traces` -- replayed join/leave traces;
* :mod:`~hedgerow.scenarios.kinds` -- the one table of run kinds (build, run, churn);
* :mod:`~hedgerow.scenarios.run` -- :func:`simulate` (``hedgerow run``) and :func:`compare`
  (``hedgerow compare``);
* :mod:`~hedgerow.scenarios.static` -- :func:`build` and the one build record;
* :mod:`~hedgerow.scenarios.attackers` -- the attack setups of Topiary V-D;
* :mod:`~hedgerow.scenarios.checks` -- the conformance checks of every protocol.
"""

from hedgerow.scenarios.attackers import ATTACKS, AttackSetup, eclipse_attack, topic_attack
from hedgerow.scenarios.epochs import RunResult, run_protocol
from hedgerow.scenarios.run import check_run, compare, make_protocol, run_scenario, simulate
from hedgerow.scenarios.static import build, build_record
from hedgerow.scenarios.world import (
    SCENARIOS,
    Scenario,
    World,
    custom_world,
    make_world,
    scenario_names,
    world_for_instance,
)

__all__ = [
    "ATTACKS",
    "SCENARIOS",
    "AttackSetup",
    "RunResult",
    "Scenario",
    "World",
    "build",
    "build_record",
    "check_run",
    "compare",
    "custom_world",
    "eclipse_attack",
    "make_protocol",
    "make_world",
    "run_protocol",
    "run_scenario",
    "scenario_names",
    "simulate",
    "topic_attack",
    "world_for_instance",
]
