"""Train Stable-Baselines3 PPO on the MARLIN environment.

CCLAB_BINARY=/path/to/cclab python examples/sb3_ppo_marlin.py --steps 50000
"""

from __future__ import annotations

import argparse

from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

import cclab


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50_000)
    args = ap.parse_args()
    with cclab.Server() as server:
        venv = VecNormalize(DummyVecEnv([lambda: cclab.CclabEnv("cclab/Marlin-v0", server=server) for _ in range(4)]))
        model = PPO("MlpPolicy", venv, n_steps=256, batch_size=256, verbose=1, seed=1)
        model.learn(total_timesteps=args.steps)
        model.save("ppo-marlin")


if __name__ == "__main__":
    main()
