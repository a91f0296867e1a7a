#!/usr/bin/python3
"""PyTorch CPU yardstick for cclab's learning core (bench/rl/run.sh).

Measures, with the same network sizes and the same computation as cclab:
  mlp   one training update (forward, backward, Adam) of an MLP
  sac   one SAC gradient step as Stable-Baselines3's SAC.train does it
        (entropy coefficient, twin-critic TD target, critic and actor updates,
        Polyak averaging)
  ppo   one PPO minibatch step (clipped surrogate + value loss, backward,
        gradient clipping, Adam) with separate policy/value MLPs
  infer one forward pass for a single observation

Usage: torch_bench.py KIND --obs N --hidden 400,300 --batch B --threads T --seconds S
Prints one line: "<kind> ... : <rate> updates/s (<n> in <wall> s; <cpu> s CPU)"
(us/op for infer), the format of cclab's rl speed.
Runs under Debian's /usr/bin/python3 with python3-torch.
"""
import argparse, math, time
import torch as th
import torch.nn as nn
import torch.nn.functional as F


def mlp(sizes, act=nn.ReLU, out_act=None):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(act())
    if out_act is not None:
        layers.append(out_act())
    return nn.Sequential(*layers)


def timed(step, seconds):
    """Runs step for about seconds of wall time; returns (count, wall
    seconds, CPU seconds of the process) like cclab's rl speed."""
    step()  # warm-up
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        step()
        n += 1
    return n, time.perf_counter() - t0, time.process_time() - c0


def bench_mlp(a):
    net = mlp([a.obs] + a.hidden + [1])
    opt = th.optim.Adam(net.parameters(), lr=3e-4)
    x, y = th.randn(a.batch, a.obs), th.randn(a.batch, 1)

    def step():
        opt.zero_grad()
        loss = F.mse_loss(net(x), y)
        loss.backward()
        opt.step()
    return timed(step, a.seconds)


def bench_sac(a):
    od, ad, B = a.obs, a.act, a.batch
    latent = mlp([od] + a.hidden, out_act=nn.ReLU)
    mu, log_std = nn.Linear(a.hidden[-1], ad), nn.Linear(a.hidden[-1], ad)
    actor_params = list(latent.parameters()) + list(mu.parameters()) + list(log_std.parameters())
    q1, q2 = mlp([od + ad] + a.hidden + [1]), mlp([od + ad] + a.hidden + [1])
    q1t, q2t = mlp([od + ad] + a.hidden + [1]), mlp([od + ad] + a.hidden + [1])
    q1t.load_state_dict(q1.state_dict()); q2t.load_state_dict(q2.state_dict())
    critic_params = list(q1.parameters()) + list(q2.parameters())
    log_alpha = th.zeros(1, requires_grad=True)
    a_opt = th.optim.Adam(actor_params, lr=3e-4)
    c_opt = th.optim.Adam(critic_params, lr=3e-4)
    e_opt = th.optim.Adam([log_alpha], lr=3e-4)
    obs, nxt = th.randn(B, od), th.randn(B, od)
    act, rew, done = th.rand(B, ad) * 2 - 1, th.randn(B, 1), th.zeros(B, 1)

    def sample(o):
        h = latent(o)
        m, ls = mu(h), th.clamp(log_std(h), -20, 2)
        std = ls.exp()
        u = m + std * th.randn_like(m)
        act = th.tanh(u)
        lp = (-0.5 * ((u - m) / std) ** 2 - ls - 0.5 * math.log(2 * math.pi)).sum(1, keepdim=True)
        lp -= th.log(1 - act ** 2 + 1e-6).sum(1, keepdim=True)
        return act, lp

    def step():
        a_pi, lp = sample(obs)
        alpha = th.exp(log_alpha.detach())
        e_loss = -(log_alpha * (lp - ad).detach()).mean()
        e_opt.zero_grad(); e_loss.backward(); e_opt.step()
        with th.no_grad():
            na, nlp = sample(nxt)
            qi = th.cat([nxt, na], 1)
            nq = th.min(q1t(qi), q2t(qi)) - alpha * nlp
            y = rew + (1 - done) * 0.99 * nq
        ci = th.cat([obs, act], 1)
        c_loss = 0.5 * (F.mse_loss(q1(ci), y) + F.mse_loss(q2(ci), y))
        c_opt.zero_grad(); c_loss.backward(); c_opt.step()
        pi_in = th.cat([obs, a_pi], 1)
        a_loss = (alpha * lp - th.min(q1(pi_in), q2(pi_in))).mean()
        a_opt.zero_grad(); a_loss.backward(); a_opt.step()
        with th.no_grad():
            for t, s in zip(list(q1t.parameters()) + list(q2t.parameters()), critic_params):
                t.mul_(0.995); t.add_(s, alpha=0.005)
    return timed(step, a.seconds)


def bench_ppo(a):
    od, ad, B = a.obs, a.act, a.batch
    pi = mlp([od] + a.hidden + [ad], act=nn.Tanh)
    vf = mlp([od] + a.hidden + [1], act=nn.Tanh)
    log_std = nn.Parameter(th.zeros(ad))
    params = list(pi.parameters()) + list(vf.parameters()) + [log_std]
    opt = th.optim.Adam(params, lr=3e-4, eps=1e-5)
    obs, act = th.randn(B, od), th.randn(B, ad)
    old_lp, adv, ret = th.randn(B), th.randn(B), th.randn(B)

    def step():
        m = pi(obs)
        std = log_std.exp()
        lp = (-0.5 * ((act - m) / std) ** 2 - log_std - 0.5 * math.log(2 * math.pi)).sum(1)
        ent = (0.5 + 0.5 * math.log(2 * math.pi) + log_std).sum().expand(B)
        v = vf(obs).flatten()
        nadv = (adv - adv.mean()) / (adv.std() + 1e-8)
        ratio = th.exp(lp - old_lp)
        pg = -th.min(nadv * ratio, nadv * th.clamp(ratio, 0.8, 1.2)).mean()
        loss = pg + 0.5 * F.mse_loss(ret, v) - 0.0 * ent.mean()
        opt.zero_grad(); loss.backward()
        th.nn.utils.clip_grad_norm_(params, 0.5)
        opt.step()
    return timed(step, a.seconds)


def bench_infer(a):
    net = mlp([a.obs] + a.hidden + [a.act])
    x = th.randn(1, a.obs)
    with th.no_grad():
        return timed(lambda: net(x), a.seconds)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=["mlp", "sac", "ppo", "infer"])
    p.add_argument("--obs", type=int, default=980)
    p.add_argument("--act", type=int, default=1)
    p.add_argument("--hidden", default="256,256")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seconds", type=float, default=10)
    a = p.parse_args()
    a.hidden = [int(h) for h in a.hidden.split(",")]
    th.set_num_threads(a.threads)
    th.manual_seed(0)
    n, wall, cpu = {"mlp": bench_mlp, "sac": bench_sac, "ppo": bench_ppo, "infer": bench_infer}[a.kind](a)
    r, unit = n / wall, "updates/s"
    if a.kind == "infer":
        r, unit = wall / n * 1e6, "us/op"
    print(f"torch {th.__version__} {a.kind}: obs {a.obs}, hidden {a.hidden}, batch {a.batch}, threads {a.threads}: {r:.1f} {unit} ({n} in {wall:.1f} s; {cpu:.1f} s CPU)")


if __name__ == "__main__":
    main()
