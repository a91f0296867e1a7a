# Generates pendulum_golden.txt with an independent numpy transcription of
# gymnasium/envs/classic_control/pendulum.py (PendulumEnv.step/_get_obs):
#   /usr/bin/python3 gen_golden.py > pendulum_golden.txt
# Each line: theta thetadot action -> cos sin thetadot' reward
import numpy as np

def angle_normalize(x):
    return ((x + np.pi) % (2 * np.pi)) - np.pi

g, m, l, dt, max_speed, max_torque = 10.0, 1.0, 1.0, 0.05, 8, 2.0
rng = np.random.default_rng(7)
for case in range(40):
    th = rng.uniform(-12, 12)
    thdot = rng.uniform(-8, 8)
    for step in range(5):
        a = np.float32(rng.uniform(-3, 3))
        u = np.clip(np.array([a], dtype=np.float32), -max_torque, max_torque)[0]
        costs = angle_normalize(th) ** 2 + 0.1 * thdot ** 2 + 0.001 * (u ** 2)
        newthdot = thdot + (3 * g / (2 * l) * np.sin(th) + 3.0 / (m * l ** 2) * u) * dt
        newthdot = np.clip(newthdot, -max_speed, max_speed)
        newth = th + newthdot * dt
        obs = np.array([np.cos(newth), np.sin(newth), newthdot], dtype=np.float32)
        print("%.17g %.17g %.9g %.9g %.9g %.9g %.17g" % (th, thdot, a, obs[0], obs[1], obs[2], -costs))
        th, thdot = newth, newthdot
