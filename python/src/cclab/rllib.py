"""RLlib helpers: environment creators that run in Ray's env-runner
processes, each of which starts a cclab server of its own (so training
scales over processes and machines without a shared server).

    from ray.tune.registry import register_env
    from cclab.rllib import env_creator
    register_env("cclab-marlin", env_creator)
    PPOConfig().environment("cclab-marlin", env_config={"env_id": "cclab/Marlin-v0"})

``env_config`` keys: ``env_id`` (default ``cclab/Marlin-v0``), ``binary``
(the cclab binary, default ``$CCLAB_BINARY`` or PATH), ``server``
(``"own"`` by default, or an address ``host:port`` or ``unix:PATH`` of a
running server), and any other key is a Make option of the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import gymnasium

from cclab.env import CclabEnv
from cclab.server import BINARY_ENV


def env_creator(config: Mapping[str, Any]) -> gymnasium.Env[Any, Any]:
    """Create one environment from an RLlib ``env_config``; observations
    with more than one dimension (MARLIN's stacked history) are flattened,
    since RLlib's default models take 1-D boxes."""
    opts = dict(config)
    env_id = opts.pop("env_id", "cclab/Marlin-v0")
    binary = opts.pop("binary", None)
    if binary:
        os.environ[BINARY_ENV] = str(binary)
    server = opts.pop("server", "own")
    env = CclabEnv(env_id, server=server, **opts)
    if len(env.observation_space.shape or ()) > 1:
        return gymnasium.wrappers.FlattenObservation(env)
    return env


def server_pids(env_runner: Any) -> list[int]:
    """Return the process ids of the servers an RLlib env runner's
    environments use (for checks and monitoring)."""
    pids = []
    for e in getattr(env_runner.env.unwrapped, "envs", []):
        proc = e.unwrapped.server.process
        if proc is not None:
            pids.append(proc.pid)
    return pids
