"""Same seed, same trajectory: from Go, from Python single, from Python vectorised."""

from __future__ import annotations

import hashlib
import json
import subprocess
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
import pytest
from numpy.typing import NDArray

import cclab

Traj = list[dict[str, Any]]


def action(k: int, i: int, shape: tuple[int, ...] | None) -> NDArray[np.float32]:
    assert shape is not None  # a Box action space
    # Exactly representable in float32 on both sides (gymtraj's pattern).
    return np.full(shape, ((3 * k + i) % 9 - 4) / 5, dtype=np.float32)


def digest(obs: NDArray[Any]) -> str:
    return hashlib.sha256(np.ascontiguousarray(obs, dtype="<f4").tobytes()).hexdigest()


def rec(obs: NDArray[Any], r: SupportsFloat = 0.0, term: bool = False, trunc: bool = False) -> dict[str, Any]:
    return {"obs_sha256": digest(obs), "reward": float(r), "terminated": bool(term), "truncated": bool(trunc)}


CASES = [
    ("cclab/Marlin-v0", {}, 25),
    ("cclab/MarlinCompact-v0", {}, 40),
    # The filter windows (`--capacity-window`, `--min-rtt-window`) reach the Go side.
    ("cclab/MarlinCompact-v0", {"capacity_window": "1s", "min_rtt_window": "1s"}, 40),
    # So does the BDP action's span (`--bdp-span`).
    ("cclab/MarlinCompact-v0", {"bdp_span": "4"}, 40),
    # And the minimum-RTT feature (`--rtt-feature`: 9 x 4 values).
    ("cclab/MarlinCompact-v0", {"rtt_feature": "true"}, 40),
    # And a window cap other than the paper's (`--window-cap`).
    ("cclab/MarlinCompact-v0", {"window_cap": "200KB", "bdp_span": "4"}, 40),
    # And the training timeline's ranges (`--switch-range`, `--delay-range`,
    # `--rate-range`, `--queue-range`).
    (
        "cclab/MarlinCompact-v0",
        {"switch_range": "4s,12s", "delay_range": "0.5,1.5", "rate_range": "0.5,2", "queue_range": "0.5,2"},
        40,
    ),
    # Evaluation mode: the episode ends (truncated at 2 s) and autoresets.
    ("cclab/MarlinCompact-v0", {"eval_loss": "0.03", "eval_bytes": "20000", "max_time": "2s"}, 30),
    ("cclab/Scenario-v0", {"scenario": "dumbbell", "episode_steps": "4", "step": "30ms"}, 11),
]


def from_go(gymtraj: str, env_id: str, opts: dict[str, Any], seed: int, index: int, steps: int) -> Traj:
    args = [gymtraj, "-env", env_id, "-seed", str(seed), "-index", str(index), "-steps", str(steps)]
    for k, v in opts.items():
        args += ["-option", f"{k}={v}"]
    out: Traj = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return out


def from_single(server: cclab.Server, env_id: str, opts: dict[str, Any], seed: int, index: int, steps: int) -> Traj:
    env = gymnasium.make(env_id, server=server, **opts)
    try:
        obs, _ = env.reset(seed=seed)
        out = [rec(obs)]
        ended = False
        for k in range(steps):
            if ended:
                obs, _ = env.reset()  # unseeded: continues the seed's sequence
                out.append(rec(obs))
                ended = False
                continue
            obs, r, term, trunc, _ = env.step(action(k, index, env.action_space.shape))
            out.append(rec(obs, r, term, trunc))
            ended = term or trunc
        return out
    finally:
        env.close()


def from_vector(server: cclab.Server, env_id: str, opts: dict[str, Any], seed: int, n: int, steps: int) -> list[Traj]:
    vec = gymnasium.make_vec(env_id, num_envs=n, server=server, **opts)
    try:
        obs, _ = vec.reset(seed=seed)  # environment i gets seed + i
        out = [[rec(obs[i])] for i in range(n)]
        shape = vec.single_action_space.shape
        for k in range(steps):
            acts = np.stack([action(k, i, shape) for i in range(n)])
            obs, r, term, trunc, _ = vec.step(acts)
            for i in range(n):
                out[i].append(rec(obs[i], r[i], term[i], trunc[i]))
        return out
    finally:
        vec.close()


@pytest.mark.parametrize(("env_id", "opts", "steps"), CASES)
def test_same_seed_same_trajectory(
    env_id: str, opts: dict[str, str], steps: int, server: cclab.Server, gymtraj: str
) -> None:
    seed, n = 7, 3
    vec = from_vector(server, env_id, opts, seed, n, steps)
    for i in range(n):
        go = from_go(gymtraj, env_id, opts, seed + i, i, steps)
        single = from_single(server, env_id, opts, seed + i, i, steps)
        assert single == go, f"{env_id} env {i}: Python single differs from Go"
        assert vec[i] == go, f"{env_id} env {i}: Python vectorised differs from Go"
    # The property is not vacuous: different seeds give different episodes
    # (MARLIN randomises the link switch and background per seed).
    if env_id.startswith("cclab/Marlin") and "eval_loss" not in opts:
        assert vec[0] != vec[1]
