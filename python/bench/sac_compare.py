"""Stable-Baselines3 SAC against cclab's SAC on a MARLIN environment.

Both learners train with the same hyperparameters for the same number of
environment steps and are scored on the same evaluation: `cclab marlin
eval`'s transfers (600 KB at UHF loss 0-3 %, seeds 1..runs), measured by the
same Go code (the environment's evaluation mode, which
papers/marlin TestEvalEnvMatchesEvaluate checks against `cclab marlin eval`
bit for bit). One learner and seed per invocation, so runs can go side by
side; prints one JSON line (and writes it to OUT/LEARNER-seedS.json).

--variant compact (default): cclab/MarlinCompact-v0 and `cclab marlin train
--variant compact` with the recipe of docs/marlin.md ("Our variant"): MLP
[64, 64], batch 256, 8 gradient steps per vectorised step of 8 environments
(one per environment step), learning rate 3e-4, buffer 250K, gamma 0.99,
tau 0.005, automatic entropy coefficient (target -1), 100 learning starts,
running observation normalisation, rewards unnormalised.

--variant paper: cclab/Marlin-v0 and `cclab marlin train` with its defaults
(MLP [400, 300], batch 512, one gradient step per vectorised step, the rest
as above).

    python bench/sac_compare.py --learner sb3|cclab --seed 1 --steps 30000 --runs 100 --out DIR
    python bench/sac_compare.py --table DIR      # the tables of docs/python.md

Both learners run on one core: PyTorch with torch.set_num_threads(1), the
Go trainer with GOMAXPROCS=1 (--threads changes both).
"""

from __future__ import annotations

import argparse
import csv
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

RECIPES: dict[str, dict[str, Any]] = {
    "compact": {
        "env_id": "cclab/MarlinCompact-v0",
        "net_arch": [64, 64],
        "batch_size": 256,
        "gradient_steps": 8,
    },
    "paper": {
        "env_id": "cclab/Marlin-v0",
        "net_arch": [400, 300],
        "batch_size": 512,
        "gradient_steps": 1,
    },
}
# Shared by both recipes and both learners (cclab's defaults, SB3's too
# except the buffer and, for the paper's recipe, the network and batch).
COMMON: dict[str, Any] = {
    "learning_rate": 3e-4,
    "buffer_size": 250_000,
    "learning_starts": 100,
    "tau": 0.005,
    "gamma": 0.99,
}
ENVS = 8


def cpu_seconds() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU of a running process (the cclab server)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


def run_sb3(variant: str, seed: int, steps: int, runs: int, out: str, threads: int) -> dict[str, Any]:
    import torch
    from stable_baselines3 import SAC
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    torch.set_num_threads(threads)
    r = RECIPES[variant]
    with cclab.Server() as server:
        assert server.process is not None
        venv = VecNormalize(
            DummyVecEnv([lambda: cclab.CclabEnv(r["env_id"], server=server) for _ in range(ENVS)]),
            norm_obs=True,
            norm_reward=False,
            gamma=COMMON["gamma"],
        )
        venv.seed(seed)
        model = SAC(
            "MlpPolicy",
            venv,
            learning_rate=COMMON["learning_rate"],
            buffer_size=COMMON["buffer_size"],
            learning_starts=COMMON["learning_starts"],
            batch_size=r["batch_size"],
            tau=COMMON["tau"],
            gamma=COMMON["gamma"],
            train_freq=1,
            gradient_steps=r["gradient_steps"],
            ent_coef="auto",
            policy_kwargs={"net_arch": r["net_arch"]},
            seed=seed,
            device="cpu",
            verbose=0,
        )
        # The CPU of the gradient steps alone: SAC.train runs them all, on
        # this thread (one torch thread), while the environments are idle.
        update_cpu = [0.0]
        train = model.train

        def timed_train(*args: Any, **kwargs: Any) -> None:
            c0 = time.process_time()
            train(*args, **kwargs)
            update_cpu[0] += time.process_time() - c0

        model.train = timed_train  # type: ignore[method-assign]
        server_cpu0 = proc_cpu_seconds(server.process.pid)
        load0 = os.getloadavg()
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        model.learn(total_timesteps=steps)
        wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
        server_cpu = proc_cpu_seconds(server.process.pid) - server_cpu0
        load1 = os.getloadavg()
        model.save(os.path.join(out, f"sb3-{variant}-seed{seed}"))
        venv.save(os.path.join(out, f"sb3-{variant}-seed{seed}-vecnormalize.pkl"))
        venv.training = False
        outcomes = []
        et0 = time.perf_counter()
        for loss in LOSSES:
            env = cclab.CclabEnv(r["env_id"], server=server, eval_loss=loss)
            for i in range(1, runs + 1):
                obs, _ = env.reset(seed=i)
                while True:
                    norm = venv.normalize_obs(obs[None])
                    assert isinstance(norm, np.ndarray)  # a Box observation, not a dict
                    a, _ = model.predict(norm[0], deterministic=True)
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
        eval_wall = time.perf_counter() - et0
    return {
        "learner": "sb3",
        "variant": variant,
        "seed": seed,
        "steps": int(model.num_timesteps),
        "gradient_steps": int(model._n_updates),
        "train_wall_s": wall,
        "train_cpu_s": cpu,
        "train_server_cpu_s": server_cpu,
        "update_cpu_s": update_cpu[0],
        "eval_wall_s": eval_wall,
        "loadavg_start": load0,
        "loadavg_end": load1,
        "eval": summarise(outcomes),
    }


def run_cclab(variant: str, seed: int, steps: int, runs: int, out: str, threads: int) -> dict[str, Any]:
    binary = cclab.find_binary()
    r = RECIPES[variant]
    pol = os.path.join(out, f"cclab-{variant}-seed{seed}.policy")
    cmd = [binary, "marlin", "train", "--variant", variant, "--batch", str(r["batch_size"])]
    cmd += ["--gradient-steps", str(r["gradient_steps"]), "--steps", str(steps), "--envs", str(ENVS)]
    cmd += ["--seed", str(seed), "--out", pol, "--force"]
    envvars = dict(os.environ, GOMAXPROCS=str(threads))
    load0 = os.getloadavg()
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=envvars)
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
    load1 = os.getloadavg()
    # cclab's SAC schedules updates as SB3 does (learn/rl/sac): after each
    # vectorised step, once more than learning_starts steps were taken.
    vec_steps = steps // ENVS
    updates = r["gradient_steps"] * sum(1 for j in range(1, vec_steps + 1) if j * ENVS > COMMON["learning_starts"])
    with open(pol[: -len(".policy")] + ".csv") as f:
        logged = list(csv.DictReader(f))
    if logged:  # the learning curve's last row agrees with the schedule
        k = int(float(logged[-1]["step"])) // ENVS
        want = r["gradient_steps"] * sum(1 for j in range(1, k + 1) if j * ENVS > COMMON["learning_starts"])
        if int(float(logged[-1]["updates"])) != want:
            got = logged[-1]["updates"]
            raise SystemExit(f"cclab logged {got} updates at step {logged[-1]['step']}, expected {want}")
    et0 = time.perf_counter()
    res = subprocess.run(
        [binary, "marlin", "eval", "--policy", pol, "--runs", str(runs), "--unseen=false", "--json", "--jobs", "1"],
        check=True,
        capture_output=True,
        text=True,
        env=envvars,
    )
    eval_wall = time.perf_counter() - et0
    rows = json.loads(res.stdout)["results"]

    def table(scheme: str) -> dict[str, Any]:
        return {
            f"{r['loss']:.2f}": {k: r[k] for k in ("runs", "transfer_time_s", "retransmissions", "rti", "unfinished")}
            for r in rows
            if r["scheme"] == scheme
        }

    return {
        "learner": "cclab",
        "variant": variant,
        "seed": seed,
        "steps": steps,
        "gradient_steps": updates,
        "train_wall_s": wall,
        "train_cpu_s": cpu,
        "eval_wall_s": eval_wall,
        "loadavg_start": load0,
        "loadavg_end": load1,
        "eval": table("marlin"),
        "cubic": table("cubic"),
        "mockets": table("mockets"),
        "random": table("random"),
        "ideal": table("ideal"),
    }


# Student's t at 97.5 % for 1-9 degrees of freedom.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262]


def mean_ci(xs: list[float]) -> tuple[float, float]:
    """Mean and half-width of its 95 % confidence interval (Student's t)."""
    m = float(np.mean(xs))
    if len(xs) < 2:
        return m, float("nan")
    return m, T975[len(xs) - 2] * float(np.std(xs, ddof=1)) / math.sqrt(len(xs))


def welch(runs: dict[str, list[dict[str, Any]]], key: str) -> str:
    """SB3's mean transfer time over seeds minus cclab's, +- the 95 %
    interval of the difference (Welch's t), and the test's p-value."""
    try:
        from scipy import stats  # type: ignore[import-untyped]
    except ImportError:
        return "(needs scipy)"
    a = [r["eval"][key]["transfer_time_s"] for r in runs["sb3"]]
    b = [r["eval"][key]["transfer_time_s"] for r in runs["cclab"]]
    va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    d = float(np.mean(a) - np.mean(b))
    half = float(stats.t.ppf(0.975, df) * math.sqrt(va + vb))
    p = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
    return f"{d:+.2f} ± {half:.2f} (p = {p:.2f})"


def table(out: str, variant: str, seeds: set[int] | None = None) -> str:
    """The markdown tables of every run's JSON in out: each learner's mean
    over seeds of each seed's mean over the evaluation transfers, +- the 95 %
    interval across seeds, then the per-seed figures and the training cost."""
    runs: dict[str, list[dict[str, Any]]] = {"cclab": [], "sb3": []}
    for name in sorted(os.listdir(out)):
        if name.endswith(".json") and f"-{variant}-seed" in name:
            with open(os.path.join(out, name)) as f:
                r = json.loads(f.readline())
            if seeds is None or r["seed"] in seeds:
                runs[r["learner"]].append(r)
    label = {"cclab": "cclab SAC (Go)", "sb3": "SB3 SAC (PyTorch)"}
    lines = [
        "| UHF loss | learner | seeds | transfer time s | retransmissions | RTI | unfinished |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for loss in LOSSES:
        key = f"{loss:.2f}"
        for learner in ("cclab", "sb3"):
            rs = sorted(runs[learner], key=lambda r: r["seed"])
            if not rs:
                continue
            cells = []
            for field, fmt in (("transfer_time_s", "{:.2f}"), ("retransmissions", "{:.1f}"), ("rti", "{:.3f}")):
                m, ci = mean_ci([r["eval"][key][field] for r in rs])
                per = ", ".join(fmt.format(r["eval"][key][field]) for r in rs)
                cells.append(f"{fmt.format(m)} ± {fmt.format(ci)} ({per})")
            unf = sum(r["eval"][key]["unfinished"] for r in rs)
            n = sum(r["eval"][key]["runs"] for r in rs)
            seed_list = ",".join(str(r["seed"]) for r in rs)
            lines.append(f"| {loss:.0%} | {label[learner]} | {seed_list} | {' | '.join(cells)} | {unf}/{n} |")
        if len(runs["cclab"]) > 1 and len(runs["sb3"]) > 1:
            lines.append(f"| {loss:.0%} | SB3 - cclab (Welch) | | {welch(runs, key)} | | | |")
        if runs["cclab"]:
            for scheme in ("cubic", "mockets", "random", "ideal"):
                row = runs["cclab"][0].get(scheme, {}).get(key)
                if row:
                    lines.append(
                        f"| {loss:.0%} | {scheme} | - | {row['transfer_time_s']:.2f} | {row['retransmissions']:.1f} | "
                        f"{row['rti']:.3f} | {row['unfinished']}/{row['runs']} |"
                    )
    lines += [
        "",
        "| learner | seed | env steps | gradient steps | train wall s | train CPU s | CPU ms per gradient step "
        "| load average (start, end) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for learner in ("cclab", "sb3"):
        for r in sorted(runs[learner], key=lambda r: r["seed"]):
            cpu = r["train_cpu_s"] + r.get("train_server_cpu_s", 0.0)
            upd = r.get("update_cpu_s", r["train_cpu_s"])
            lines.append(
                f"| {label[learner]} | {r['seed']} | {r['steps']} | {r['gradient_steps']} | {r['train_wall_s']:.0f} | "
                f"{cpu:.1f} | {1000 * upd / r['gradient_steps']:.2f} | "
                f"{r['loadavg_start'][0]:.1f}, {r['loadavg_end'][0]:.1f} |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", metavar="DIR", help="print the markdown tables of the runs in DIR and exit")
    ap.add_argument("--table-seeds", help="with --table: only these seeds, comma-separated")
    ap.add_argument("--learner", choices=["sb3", "cclab"])
    ap.add_argument("--variant", choices=sorted(RECIPES), default="compact")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=30_000)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=".")
    a = ap.parse_args()
    if a.table:
        seeds = {int(x) for x in a.table_seeds.split(",")} if a.table_seeds else None
        print(table(a.table, a.variant, seeds))
        return
    if a.learner is None:
        ap.error("--learner is required (or --table DIR)")
    os.makedirs(a.out, exist_ok=True)
    fn = run_sb3 if a.learner == "sb3" else run_cclab
    res = fn(a.variant, a.seed, a.steps, a.runs, a.out, a.threads)
    line = json.dumps(res)
    with open(os.path.join(a.out, f"{a.learner}-{a.variant}-seed{a.seed}.json"), "w") as f:
        f.write(line + "\n")
    print(line, flush=True)


if __name__ == "__main__":
    main()
