"""Stable-Baselines3 SAC against cclab's SAC on the MARLIN environment.

Same hyperparameters as `cclab marlin train` (MLP [400, 300], learning rate
3e-4, batch 512, buffer 250K, gamma 0.99, tau 0.005, 100 learning starts,
one gradient step per vectorised step of 8 environments, automatic entropy
coefficient, running observation normalisation), the same number of
environment steps, and the same evaluation: `cclab marlin eval`'s transfers
(600 KB at UHF loss 0-3 %, seeds 1..runs), scored by the same Go code
(Marlin-v0's evaluation mode). One learner and seed per invocation, so runs
can go in parallel; prints one JSON line.

    python bench/sac_compare.py --learner sb3|cclab --seed 1 --steps 3200 --runs 5 --out DIR
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import time
from typing import Any

import numpy as np

import cclab

LOSSES = [0.0, 0.01, 0.02, 0.03]


def cpu_seconds() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def summarise(outcomes: list[dict[str, float]]) -> dict[str, Any]:
    rows = {}
    for loss in LOSSES:
        o = [x for x in outcomes if x["loss"] == loss]
        rti = [x["rti"] for x in o if not math.isnan(x["rti"])]
        rows[f"{loss:.2f}"] = {
            "runs": len(o),
            "transfer_time_s": float(np.mean([x["transfer_time_s"] for x in o])),
            "retransmissions": float(np.mean([x["retransmissions"] for x in o])),
            "rti": float(np.mean(rti)) if rti else float("nan"),
            "unfinished": sum(1 for x in o if not x["finished"]),
        }
    return rows


def run_sb3(seed: int, steps: int, runs: int, out: str) -> dict[str, Any]:
    import torch
    from stable_baselines3 import SAC
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    torch.set_num_threads(1)
    with cclab.Server() as server:
        venv = VecNormalize(
            DummyVecEnv([lambda: cclab.CclabEnv("cclab/Marlin-v0", server=server) for _ in range(8)]),
            norm_obs=True,
            norm_reward=False,
            gamma=0.99,
        )
        venv.seed(seed)
        model = SAC(
            "MlpPolicy",
            venv,
            learning_rate=3e-4,
            buffer_size=250_000,
            learning_starts=100,
            batch_size=512,
            tau=0.005,
            gamma=0.99,
            train_freq=1,
            gradient_steps=1,
            ent_coef="auto",
            policy_kwargs={"net_arch": [400, 300]},
            seed=seed,
            device="cpu",
            verbose=0,
        )
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        model.learn(total_timesteps=steps)
        wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
        model.save(os.path.join(out, f"sb3-seed{seed}"))
        venv.save(os.path.join(out, f"sb3-seed{seed}-vecnormalize.pkl"))
        venv.training = False
        outcomes = []
        for loss in LOSSES:
            env = cclab.CclabEnv("cclab/Marlin-v0", server=server, eval_loss=loss)
            for i in range(1, runs + 1):
                obs, _ = env.reset(seed=i)
                while True:
                    a, _ = model.predict(venv.normalize_obs(obs[None])[0], deterministic=True)
                    obs, _, term, trunc, info = env.step(a)
                    if term or trunc:
                        break
                outcomes.append(
                    {
                        "loss": loss,
                        "transfer_time_s": info["transfer_time_s"],
                        "retransmissions": info["retransmissions_total"],
                        "rti": info["rti"],
                        "finished": bool(info["finished"]),
                    }
                )
            env.close()
    return {
        "learner": "sb3",
        "seed": seed,
        "steps": steps,
        "train_wall_s": wall,
        "train_cpu_s": cpu,
        "eval": summarise(outcomes),
    }


def run_cclab(seed: int, steps: int, runs: int, out: str) -> dict[str, Any]:
    binary = cclab.find_binary()
    pol = os.path.join(out, f"cclab-seed{seed}.policy")
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    subprocess.run(
        [binary, "marlin", "train", "--steps", str(steps), "--envs", "8", "--seed", str(seed), "--out", pol],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
    res = subprocess.run(
        [binary, "marlin", "eval", "--policy", pol, "--runs", str(runs), "--unseen=false", "--json", "--jobs", "1"],
        check=True,
        capture_output=True,
        text=True,
    )
    rows = json.loads(res.stdout)["results"]

    def table(scheme: str) -> dict[str, Any]:
        return {
            f"{r['loss']:.2f}": {k: r[k] for k in ("runs", "transfer_time_s", "retransmissions", "rti", "unfinished")}
            for r in rows
            if r["scheme"] == scheme
        }

    return {
        "learner": "cclab",
        "seed": seed,
        "steps": steps,
        "train_wall_s": wall,
        "train_cpu_s": cpu,
        "eval": table("marlin"),
        "cubic": table("cubic"),
        "mockets": table("mockets"),
        "random": table("random"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--learner", choices=["sb3", "cclab"], required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=3200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=".")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    fn = run_sb3 if a.learner == "sb3" else run_cclab
    print(json.dumps(fn(a.seed, a.steps, a.runs, a.out)), flush=True)


if __name__ == "__main__":
    main()
