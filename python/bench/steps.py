"""Environment steps per second from Python, single and vectorised.

Steps MARLIN environments through the cclab service with the action pattern
of rpc/gym's BenchmarkMarlinInProcess (the in-process Go baseline) and prints
one row per vector size. Usage:

    python bench/steps.py [--steps 20000] [--sizes 1,2,4,8,16]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import cclab


def action(k: int, n: int, dim: int = 1) -> np.ndarray:
    # Period 3 in k, so a table of 63 steps repeats it exactly.
    return np.array([((3 * k + i) % 9 - 4) / 5 for i in range(n)], dtype=np.float32).repeat(dim).reshape(n, dim)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20000, help="environment steps per measurement")
    ap.add_argument("--sizes", default="1,2,4,8,16")
    ap.add_argument("--env", default="cclab/Marlin-v0")
    ap.add_argument("--option", action="append", default=[], help="Make option name=value (repeatable)")
    args = ap.parse_args()
    opts = dict(o.split("=", 1) for o in args.option)
    with cclab.Server() as server:
        # The plain gymnasium.Env, one call per step.
        env = cclab.CclabEnv(args.env, server=server, **opts)
        env.reset(seed=1)
        dim = int(np.prod(env.action_space.shape or (1,)))
        acts = [action(k, 1, dim)[0] for k in range(63)]
        start = time.perf_counter()
        for k in range(args.steps):
            _, _, term, trunc, _ = env.step(acts[k % 63])
            if term or trunc:
                env.reset()
        dt = time.perf_counter() - start
        env.close()
        print(f"single gymnasium.Env: {args.steps / dt:.0f} steps/s")
        for n in [int(x) for x in args.sizes.split(",")]:
            vec = cclab.CclabVectorEnv(args.env, num_envs=n, server=server, **opts)
            vec.reset(seed=1)
            acts = [action(k, n, dim) for k in range(63)]
            k = 0
            start = time.perf_counter()
            while k * n < args.steps:
                vec.step(acts[k % 63])
                k += 1
            dt = time.perf_counter() - start
            vec.close()
            print(f"vector num_envs={n}: {k * n / dt:.0f} steps/s")


if __name__ == "__main__":
    main()
