"""Every environment passes Gymnasium's and Stable-Baselines3's checkers."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

import cclab

# Options keeping each environment cheap where it has a knob for it.
CASES: dict[str, dict[str, Any]] = {
    "cclab/Marlin-v0": {},
    "cclab/MarlinCompact-v0": {},
    "cclab/DeepCC-v0": {"length": "2s"},
    "cclab/BBRTuning-v0": {"steps": 5},
    "cclab/Scenario-v0": {"scenario": "dumbbell", "episode_steps": 10, "step": "50ms"},
}


def test_registered() -> None:
    for env_id in cclab.ENV_IDS:
        assert env_id in gymnasium.registry, env_id
    assert set(CASES) == set(cclab.ENV_IDS)


@pytest.mark.parametrize("env_id", sorted(CASES))
def test_gymnasium_check_env(env_id: str, server: cclab.Server) -> None:
    env = gymnasium.make(env_id, server=server, **CASES[env_id])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # any checker warning fails the test...
            # ...except this one: the features are unbounded by design.
            warnings.filterwarnings("ignore", message=".*Box observation space (minimum|maximum) value is")
            gym_check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", sorted(CASES))
def test_sb3_check_env(env_id: str, server: cclab.Server) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = cclab.CclabEnv(env_id, server=server, **CASES[env_id])
    try:
        sb3_check_env(env, warn=True)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", sorted(CASES))
def test_vector_env(env_id: str, server: cclab.Server) -> None:
    vec = gymnasium.make_vec(env_id, num_envs=3, server=server, **CASES[env_id])
    try:
        assert isinstance(vec.unwrapped, cclab.CclabVectorEnv)
        obs, info = vec.reset(seed=3)
        assert obs.dtype == np.float32 and obs.shape == vec.observation_space.shape
        assert vec.observation_space.contains(obs)
        ended = np.zeros(3, dtype=bool)
        for _ in range(12):
            obs, rew, term, trunc, info = vec.step(vec.action_space.sample())
            single = vec.single_observation_space.shape
            assert single is not None and obs.shape == (3, *single)
            assert rew.shape == (3,) and np.all(np.isfinite(rew))
            # Next-step autoreset: an environment that ended returns reward 0.
            assert np.all(rew[ended] == 0)
            ended = term | trunc
    finally:
        vec.close()


def test_scenario_env_options(server: cclab.Server) -> None:
    env = cclab.CclabEnv(
        "cclab/Scenario-v0",
        server=server,
        scenario="dumbbell",
        features=["throughput", "srtt", "queue_delay"],
        reward="utilization",
        action="pacing",
    )
    try:
        obs, _ = env.reset(seed=1)
        assert obs.shape == (3,)
        total = 0.0
        for _ in range(20):
            obs, r, *_ = env.step(np.array([1.0], dtype=np.float32))  # double the rate every step
            total += float(r)
        # Utilization is a fraction of the link; pacing doubling from 1 Mbit/s
        # reaches the 10 Mbit/s bottleneck within the episode.
        assert 0 < total / 20 <= 1.0
        assert obs[0] > 1.0  # throughput well above the 1 Mbit/s start
    finally:
        env.close()


def test_scenario_env_mark_threshold(server: cclab.Server) -> None:
    """The agent sets the bottleneck's ECN marking threshold (ACC-style):
    a low threshold keeps the ECN flow's queue shorter, with more of its
    data echoed, than the queue's limit does."""
    yaml = (
        "name: ecn-threshold\n"
        "duration: 10s\n"
        "bottleneck: {rate: 10Mbps, delay: 20ms, queue: {discipline: droptail, limit: 100}}\n"
        "transport: {ecn: true}\n"
        "flows: [{name: bulk, cc: cubic}]\n"
    )

    def run(a: float) -> tuple[float, float, float]:
        env = cclab.CclabEnv(
            "cclab/Scenario-v0",
            server=server,
            scenario_yaml=yaml,
            action="mark_threshold",
            features=["queue_delay", "ece_fraction"],
            episode_steps=40,
        )
        try:
            env.reset(seed=1)
            qdelay = ece = 0.0
            threshold = 0.0
            for _ in range(40):
                obs, _, term, trunc, info = env.step(np.array([a], dtype=np.float32))
                qdelay += float(obs[0]) / 40
                ece += float(obs[1]) / 40
                threshold = float(info["mark_threshold"])
                if term or trunc:
                    break
            return qdelay, ece, threshold
        finally:
            env.close()

    low_q, low_ece, low_t = run(-1.0)
    high_q, high_ece, high_t = run(1.0)
    assert (low_t, high_t) == (1.0, 100.0)
    assert low_q < high_q / 2 and low_ece > high_ece
