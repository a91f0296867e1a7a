"""Train Stable-Baselines3 SAC on the MARLIN environment (8 environments
in one cclab server) and score it on marlin eval's transfers.

    CCLAB_BINARY=/path/to/cclab python examples/sb3_sac_marlin.py --steps 20000

With --randomize-links, each training episode draws its links' delays,
rates and queue limit as `cclab marlin train --delay-range 0.5,1.5
--rate-range 0.5,2 --queue-range 0.5,2` does (docs/marlin.md, "Randomised
links": the configuration that generalised best).
"""

from __future__ import annotations

import argparse

import numpy as np
from stable_baselines3 import SAC
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

import cclab


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--randomize-links", action="store_true", help="draw link delays, rates and queue limits per episode"
    )
    args = ap.parse_args()
    ranges = {"delay_range": "0.5,1.5", "rate_range": "0.5,2", "queue_range": "0.5,2"} if args.randomize_links else {}
    with cclab.Server() as server:
        venv = VecNormalize(
            DummyVecEnv([lambda: cclab.CclabEnv("cclab/Marlin-v0", server=server, **ranges) for _ in range(8)]),
            norm_obs=True,
            norm_reward=False,
        )
        model = SAC(
            "MlpPolicy",
            venv,
            batch_size=512,
            buffer_size=250_000,
            policy_kwargs={"net_arch": [400, 300]},
            seed=args.seed,
            verbose=1,
        )
        model.learn(total_timesteps=args.steps)
        venv.training = False
        env = cclab.CclabEnv("cclab/Marlin-v0", server=server, eval_loss=0.03)
        obs, _ = env.reset(seed=1)
        while True:
            norm = venv.normalize_obs(obs[None])
            assert isinstance(norm, np.ndarray)  # a Box observation, not a dict
            a, _ = model.predict(norm[0], deterministic=True)
            obs, _, term, trunc, info = env.step(a)
            if term or trunc:
                break
        print(
            f"600 KB at 3 % loss: {info['transfer_time_s']:.2f} s, "
            f"{info['retransmissions_total']:.0f} retransmissions, RTI {info['rti']:.3f}"
        )


if __name__ == "__main__":
    main()
