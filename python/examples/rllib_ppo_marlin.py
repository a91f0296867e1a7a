"""Train RLlib PPO on the MARLIN environment with several env runners, each
running its own cclab server (how training scales past one process or
machine: point "server" at running servers' addresses instead).

    CCLAB_BINARY=/path/to/cclab python examples/rllib_ppo_marlin.py --runners 2 --iterations 10
"""

from __future__ import annotations

import argparse

import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.tune.registry import register_env

from cclab.rllib import env_creator


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runners", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=10)
    args = ap.parse_args()
    ray.init(include_dashboard=False)
    register_env("cclab-marlin", env_creator)
    algo = (
        PPOConfig()
        .environment("cclab-marlin", env_config={"env_id": "cclab/Marlin-v0"})
        .env_runners(num_env_runners=args.runners)
        .training(train_batch_size=4000, minibatch_size=500)
        .build()
    )
    for i in range(args.iterations):
        r = algo.train()
        print(i, r["env_runners"].get("episode_return_mean"))
    algo.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
