"""Environment steps per second from Python, single and vectorised.

Steps MARLIN environments (or --env) through the cclab service with the
action pattern of rpc/gym's BenchmarkInProcess (the in-process Go baseline)
and prints one row per vector size, after the load average. Usage:

    python bench/steps.py [--steps 20000] [--sizes 1,2,4,8,16] [--listen 127.0.0.1:0] [--no-single]
                          [--step-lane auto|shm|stream]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from numpy.typing import NDArray

import cclab


def action(k: int, n: int, dim: int = 1) -> NDArray[np.float32]:
    # Period 3 in k, so a table of 63 steps repeats it exactly.
    return np.array([((3 * k + i) % 9 - 4) / 5 for i in range(n)], dtype=np.float32).repeat(dim).reshape(n, dim)


def _server_cpu(server: cclab.Server) -> float:
    """CPU seconds (user + system) the server process has used so far."""
    assert server.process is not None
    with open(f"/proc/{server.process.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20000, help="environment steps per measurement")
    ap.add_argument("--sizes", default="1,2,4,8,16")
    ap.add_argument("--env", default="cclab/Marlin-v0")
    ap.add_argument("--option", action="append", default=[], help="Make option name=value (repeatable)")
    ap.add_argument("--listen", default=None, help="server address (default: a private Unix-domain socket)")
    ap.add_argument("--no-single", action="store_true", help="skip the single gymnasium.Env")
    ap.add_argument("--step-lane", default=None, help="auto (default), shm (shared-memory lane) or stream (StepStream)")
    args = ap.parse_args()
    opts: dict[str, str] = dict(o.split("=", 1) for o in args.option)
    # (step_lane only when given: older clients, measured for comparison, lack it)
    lane = {"step_lane": args.step_lane} if args.step_lane else {}
    print(f"load average {os.getloadavg()[0]:.1f}, step lane {args.step_lane or 'default'}")
    # (listen only when given: older clients, measured for comparison, lack it)
    with cclab.Server(**({"listen": args.listen} if args.listen else {})) as server:
        # The plain gymnasium.Env, one call per step.
        env = cclab.CclabEnv(args.env, server=server, **lane, **opts)
        env.reset(seed=1)
        dim = int(np.prod(env.action_space.shape or (1,)))
        if not args.no_single:
            acts = [action(k, 1, dim)[0] for k in range(63)]
            start = time.perf_counter()
            for k in range(args.steps):
                _, _, term, trunc, _ = env.step(acts[k % 63])
                if term or trunc:
                    env.reset()
            dt = time.perf_counter() - start
            print(f"single gymnasium.Env: {args.steps / dt:.0f} steps/s")
        env.close()
        for n in [int(x) for x in args.sizes.split(",")]:
            vec = cclab.CclabVectorEnv(args.env, num_envs=n, server=server, **lane, **opts)
            vec.reset(seed=1)
            acts = [action(k, n, dim) for k in range(63)]
            k = 0
            c0, s0 = time.process_time(), _server_cpu(server)
            start = time.perf_counter()
            while k * n < args.steps:
                vec.step(acts[k % 63])
                k += 1
            dt = time.perf_counter() - start
            # CPU per environment step: this process (Python and gRPC's
            # threads) plus the server's; steadier than wall time under load.
            cc, sc = (time.process_time() - c0) / (k * n), (_server_cpu(server) - s0) / (k * n)
            vec.close()
            print(
                f"vector num_envs={n}: {k * n / dt:.0f} steps/s, CPU us/step: "
                f"client {cc * 1e6:.1f} + server {sc * 1e6:.1f} = {(cc + sc) * 1e6:.1f}"
            )


if __name__ == "__main__":
    main()
