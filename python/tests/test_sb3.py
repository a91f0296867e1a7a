"""Short Stable-Baselines3 SAC and PPO runs on the MARLIN environment."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from numpy.typing import NDArray

import cclab

sb3 = pytest.importorskip("stable_baselines3")


@pytest.fixture(autouse=True)
def sb3_logdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """learn() makes a log directory, by default a new one in the machine's
    /tmp on every call: keep it in the test's own."""
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path))


def params(model: object) -> NDArray[np.float32]:
    vec = torch.nn.utils.parameters_to_vector(model.policy.parameters())  # type: ignore[attr-defined]
    out: NDArray[np.float32] = vec.detach().numpy().copy()
    return out


def test_sac_marlin(server: cclab.Server) -> None:
    env = cclab.CclabEnv("cclab/Marlin-v0", server=server)
    model = sb3.SAC(
        "MlpPolicy",
        env,
        seed=1,
        learning_starts=100,
        batch_size=64,
        buffer_size=5000,
        policy_kwargs={"net_arch": [64, 64]},
        device="cpu",
    )
    before = params(model)
    model.learn(total_timesteps=300)
    assert model.num_timesteps == 300
    assert model.replay_buffer.size() == 300
    # 200 gradient steps moved the policy, and it acts within the bounds.
    assert not np.array_equal(before, params(model))
    obs, _ = env.reset(seed=3)
    for _ in range(20):
        a, _ = model.predict(obs, deterministic=True)
        assert env.action_space.contains(a)
        obs, r, term, trunc, _ = env.step(a)
        assert -2.0 <= float(r) <= 0.0  # equation 1's range
    env.close()


def test_ppo_marlin_vectorised(server: cclab.Server) -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([lambda: cclab.CclabEnv("cclab/Marlin-v0", server=server) for _ in range(2)])
    model = sb3.PPO(
        "MlpPolicy",
        venv,
        seed=1,
        n_steps=128,
        batch_size=64,
        n_epochs=2,
        policy_kwargs={"net_arch": [64, 64]},
        device="cpu",
    )
    before = params(model)
    model.learn(total_timesteps=256)
    assert model.num_timesteps == 256
    assert not np.array_equal(before, params(model))
    venv.close()
