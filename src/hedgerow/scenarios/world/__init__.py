"""The world a run happens in: workload, network, clock, traffic and attackers.

One topic per module:

* :mod:`~hedgerow.world_settings` -- every world setting declared
  once (:data:`WORLD_SETTINGS`); validation, the spec models, the sweepable
  keys, the CLI options and the docs table come from it;
* :mod:`~hedgerow.scenarios.world.catalogue` -- the named scenarios
  (:data:`SCENARIOS`) as data over those settings, their protocol-bound
  values, and :func:`resolve_scenario`;
* :mod:`~hedgerow.scenarios.world.core` -- the :class:`World` type and its
  fingerprint, the ``world`` of every row;
* :mod:`~hedgerow.scenarios.world.make` -- the workload dispatch
  (:func:`make_world`) and worlds made from parts;
* :mod:`~hedgerow.scenarios.world.formats` -- input file formats
  (:func:`read_topology_json`).

Examples
--------
>>> w = make_world("cities", seed=1, topics=10)
>>> w.n_nodes, w.instance.n_topics, w.latency.name
(246, 10, 'cities')
"""

from __future__ import annotations

from hedgerow.scenarios.world.catalogue import (
    SCENARIOS,
    SIZED_MODELS,
    From,
    Scenario,
    check_bound_settings,
    protocol_params,
    resolve_scenario,
    scenario_names,
)
from hedgerow.scenarios.world.core import World
from hedgerow.scenarios.world.formats import read_topology_json
from hedgerow.scenarios.world.make import (
    ATTACK_SETUPS,
    broadcast_instance,
    custom_world,
    draw_adaptive,
    instance_fingerprint,
    make_world,
    world_for_instance,
)
from hedgerow.world_settings import (
    ADAPTIVE_POOLS,
    WORLD_SETTINGS,
    WorldSetting,
    check_setting,
    settings_in,
    settings_reference,
)

__all__ = [
    "ADAPTIVE_POOLS",
    "ATTACK_SETUPS",
    "SCENARIOS",
    "SIZED_MODELS",
    "WORLD_SETTINGS",
    "From",
    "Scenario",
    "World",
    "WorldSetting",
    "broadcast_instance",
    "check_bound_settings",
    "check_setting",
    "custom_world",
    "draw_adaptive",
    "instance_fingerprint",
    "make_world",
    "protocol_params",
    "read_topology_json",
    "resolve_scenario",
    "scenario_names",
    "settings_in",
    "settings_reference",
    "world_for_instance",
]
