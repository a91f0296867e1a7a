"""Train Stable-Baselines3 PPO to set a bottleneck's ECN marking threshold
(as ACC's agents tune their switches'), then compare the learned policy
with every fixed threshold on links it trained on and on links it never
saw.

One CUBIC flow with ECN (transport.ecn) through a DropTail bottleneck of
1,000 packets; each step (50 ms) the agent picks the marking threshold
(cclab/Scenario-v0's mark_threshold action: -1..1 onto 1..1,000 packets,
logarithmically) from the step's capacity, throughput, minimum RTT,
queueing delay and ECE fraction; reward utilization-delay (utilization -
0.5 x queueing delay / minimum RTT). Training links: 10 and 40 Mbit/s x 10
and 50 ms RTT; unseen: 20 Mbit/s 30 ms, 80 Mbit/s 80 ms, 5 Mbit/s 100 ms.

    CCLAB_BINARY=/path/to/cclab python examples/sb3_ppo_ecn_threshold.py --steps 200000
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

import cclab

TRAIN = [(10, 5), (10, 25), (40, 5), (40, 25)]  # (Mbit/s, one-way ms)
UNSEEN = [(20, 15), (80, 40), (5, 50)]
FIXED = [2, 5, 10, 20, 50, 100, 200, 1000]  # packets
FEATURES = ["capacity", "throughput", "min_rtt", "queue_delay", "ece_fraction"]
STEPS = 100  # 5 s episodes


def scenario(rate: int, delay: int) -> str:
    return (
        f"name: ecn-threshold-{rate}-{delay}\n"
        "duration: 30s\n"
        f"bottleneck: {{rate: {rate}Mbps, delay: {delay}ms, queue: {{discipline: droptail, limit: 1000}}}}\n"
        "transport: {ecn: true}\n"
        "flows: [{name: bulk, cc: cubic}]\n"
    )


def make(server: cclab.Server, rate: int, delay: int) -> cclab.CclabEnv:
    return cclab.CclabEnv(
        "cclab/Scenario-v0",
        server=server,
        scenario_yaml=scenario(rate, delay),
        action="mark_threshold",
        features=FEATURES,
        step="50ms",
        episode_steps=STEPS,
    )


def threshold_action(packets: int) -> float:
    """The action that sets a threshold of `packets` (1..1,000, log scale)."""
    return float(2 * np.log(packets) / np.log(1000) - 1)


Obs = npt.NDArray[np.float32]


def fixed(packets: int) -> Callable[[Obs], float]:
    """A scheme that keeps the threshold at `packets`."""
    a = threshold_action(packets)
    return lambda _: a


def episode(env: cclab.CclabEnv, act: Callable[[Obs], float], seed: int) -> tuple[float, float, float]:
    """Plays one episode; returns the return, mean utilization and mean queueing delay (ms)."""
    obs, _ = env.reset(seed=seed)
    ret = util = qdelay = 0.0
    for _ in range(STEPS):
        obs, r, term, trunc, info = env.step(np.array([act(obs)], dtype=np.float32))
        ret += float(r)
        util += float(info["utilization"]) / STEPS
        qdelay += float(obs[3]) / STEPS
        if term or trunc:
            break
    return ret, util, qdelay


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-seeds", type=int, default=3)
    args = ap.parse_args()
    with cclab.Server() as server:

        def maker(rate: int, delay: int) -> Callable[[], cclab.CclabEnv]:
            return lambda: make(server, rate, delay)

        venv = VecNormalize(DummyVecEnv([maker(r, d) for r, d in TRAIN]), norm_reward=False)
        model = PPO("MlpPolicy", venv, n_steps=512, batch_size=256, verbose=0, seed=args.seed)
        model.learn(total_timesteps=args.steps)
        venv.training = False

        def learned(obs: Obs) -> float:
            a, _ = model.predict(venv.normalize_obs(obs[None, :]), deterministic=True)
            return float(a[0][0])

        print("link                       scheme       return  utilization  qdelay ms")
        totals: dict[str, list[float]] = {}  # scheme -> [training links' return, unseen links']
        for rate, delay in TRAIN + UNSEEN:
            env = make(server, rate, delay)
            tag = f"{rate} Mbit/s {2 * delay} ms" + ("" if (rate, delay) in TRAIN else " (unseen)")
            rows = [(f"fixed {k}", fixed(k)) for k in FIXED]
            rows.append(("learned", learned))
            results = []
            for name, act in rows:
                runs = [episode(env, act, 100 + s) for s in range(args.eval_seeds)]
                ret, util, q = (float(np.mean([r[i] for r in runs])) for i in range(3))
                results.append((ret, name, util, q))
                t = totals.setdefault(name, [0.0, 0.0])
                if (rate, delay) in TRAIN:
                    t[0] += ret / len(TRAIN)
                else:
                    t[1] += ret / len(UNSEEN)
                print(f"{tag:26s} {name:10s} {ret:8.2f} {util:10.3f} {q:10.2f}")
            print(f"{tag:26s} best: {max(results)[1]}")
            env.close()
        print("\nmean return over the links: scheme, training links, unseen links")
        for name, (tr, un) in totals.items():
            print(f"{name:10s} {tr:8.2f} {un:8.2f}")


if __name__ == "__main__":
    main()
