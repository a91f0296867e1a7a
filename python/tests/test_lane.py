"""The shared-memory step lane against StepStream and unary Step."""

from __future__ import annotations

import glob
import os
import signal
import threading
import time
from typing import Any

import numpy as np
import pytest
from conftest import wait_stopped
from numpy.typing import NDArray

import cclab
from cclab._proto import gym_pb2

Step = tuple[bytes, bytes, bytes, bytes, list[tuple[str, bytes]]]

CASES = [
    ("cclab/Marlin-v0", {}, 30),
    ("cclab/Marlin-v0", {"eval_loss": "0.05", "eval_bytes": "20000", "max_time": "2s"}, 30),  # episode ends
    ("cclab/Scenario-v0", {"scenario": "dumbbell", "episode_steps": "3", "step": "30ms"}, 12),
]


def _act(k: int, n: int, dim: int) -> NDArray[np.float32]:
    return np.array([((3 * k + i) % 9 - 4) / 5 for i in range(n)], dtype=np.float32).repeat(dim).reshape(n, dim)


def _run(server: cclab.Server, env_id: str, opts: dict[str, str], steps: int, lane: str) -> list[Step]:
    vec = cclab.CclabVectorEnv(env_id, num_envs=3, server=server, step_lane=lane, **opts)
    try:
        assert vec._remote.step_lane == ("shm" if lane == "shm" else "stream")
        vec.reset(seed=11)
        dim = int(np.prod(vec.single_action_space.shape or (1,)))
        out: list[Step] = []
        for k in range(steps):
            obs, r, term, trunc, info = vec.step(_act(k, 3, dim))
            assert obs.flags.writeable and obs.dtype == np.float32
            out.append(
                (
                    obs.tobytes(),
                    r.tobytes(),
                    term.tobytes(),
                    trunc.tobytes(),
                    sorted((key, np.asarray(v).tobytes()) for key, v in info.items()),
                )
            )
        return out
    finally:
        vec.close()


def _unary(server: cclab.Server, env_id: str, opts: dict[str, str], steps: int) -> list[Step]:
    """The same steps with unary Step calls, decoded as the vector env does."""
    vec = cclab.CclabVectorEnv(env_id, num_envs=3, server=server, step_lane="stream", **opts)
    try:
        vec.reset(seed=11)
        dim = int(np.prod(vec.single_action_space.shape or (1,)))
        out: list[Step] = []
        for k in range(steps):
            req = gym_pb2.StepRequest(handle=vec._remote.handle, actions=_act(k, 3, dim).tobytes(), autoreset=True)
            resp = server.call("Step", req)
            infos: dict[str, Any] = vec._infos([dict(i.values) for i in resp.infos])
            out.append(
                (
                    resp.observations,
                    np.asarray(resp.rewards, dtype=np.float64).tobytes(),
                    np.asarray(resp.terminated, dtype=np.bool_).tobytes(),
                    np.asarray(resp.truncated, dtype=np.bool_).tobytes(),
                    sorted((key, np.asarray(v).tobytes()) for key, v in infos.items()),
                )
            )
        return out
    finally:
        vec.close()


@pytest.mark.parametrize(("env_id", "opts", "steps"), CASES)
def test_lane_matches_stream_and_step(env_id: str, opts: dict[str, str], steps: int, server: cclab.Server) -> None:
    shm = _run(server, env_id, opts, steps, "shm")
    assert shm == _run(server, env_id, opts, steps, "stream"), "lane differs from StepStream"
    assert shm == _unary(server, env_id, opts, steps), "lane differs from unary Step"
    if env_id == "cclab/Scenario-v0" or "eval_bytes" in opts:
        ends = sum(t.count(1) + u.count(1) for _, _, t, u, _ in shm)
        assert ends > 0, "no episode ended: the autoreset path went untested"


def test_auto_picks_lane_for_local_and_stream_for_tcp_address(cclab_binary: str) -> None:
    with cclab.Server(cclab_binary, listen="127.0.0.1:0") as s:
        own = cclab.CclabVectorEnv("cclab/Marlin-v0", num_envs=2, server=s)
        remote = cclab.CclabVectorEnv("cclab/Marlin-v0", num_envs=2, server=s.address)
        try:
            assert own._remote.step_lane == "shm"  # started by this package
            assert remote._remote.step_lane == "stream"  # could be another machine
            for v in (own, remote):
                v.reset(seed=0)
                v.step(np.zeros((2, 1), dtype=np.float32))
            forced = cclab.CclabVectorEnv("cclab/Marlin-v0", num_envs=2, server=s.address, step_lane="shm")
            forced.reset(seed=0)
            forced.step(np.zeros((2, 1), dtype=np.float32))  # same machine in fact: works
            assert forced._remote._lane is not None
            forced.close()
        finally:
            own.close()
            remote.close()
    with pytest.raises(ValueError, match="step_lane"):
        cclab.CclabVectorEnv("cclab/Marlin-v0", step_lane="tcp")


@pytest.mark.parametrize("lane", ["shm", "stream"])
def test_refused_step_then_usable(server: cclab.Server, lane: str) -> None:
    env = cclab.CclabVectorEnv("cclab/Scenario-v0", num_envs=2, server=server, step_lane=lane, scenario="dumbbell")
    try:
        env.reset(seed=0)
        with pytest.raises(cclab.RequestError, match="actions: environment 1, element 0 is NaN") as err:
            env.step(np.array([[0.0], [np.nan]], dtype=np.float32))
        assert err.value.code == "INVALID_ARGUMENT"
        with pytest.raises(ValueError, match="actions: shape"):
            env.step(np.zeros((3, 1), dtype=np.float32))
        obs, r, *_ = env.step(np.zeros((2, 1), dtype=np.float32))
        assert np.all(np.isfinite(obs)) and np.all(np.isfinite(r))
    finally:
        env.close()


def _lane_dirs() -> set[str]:
    import tempfile

    return set(glob.glob("/dev/shm/cclab-lane-*")) | set(glob.glob(os.path.join(tempfile.gettempdir(), "cclab-lane-*")))


def test_lane_files_removed(cclab_binary: str) -> None:
    before = _lane_dirs()
    with cclab.Server(cclab_binary) as s:
        env = cclab.CclabVectorEnv("cclab/Marlin-v0", num_envs=2, server=s, step_lane="shm")
        env.reset(seed=0)
        env.step(np.zeros((2, 1), dtype=np.float32))
        assert _lane_dirs() - before == set()  # gone once attached
        env.close()
        # A lane opened but never attached: removed by Close.
        h = s.call("Make", gym_pb2.MakeRequest(env_id="cclab/Marlin-v0", num_envs=1)).handle
        resp = s.call("OpenSharedLane", gym_pb2.OpenLaneRequest(handle=h))
        assert os.path.exists(resp.path)
        s.call("Close", gym_pb2.CloseRequest(handle=h))
        assert not os.path.exists(os.path.dirname(resp.path))
        # And one open when the server stops: removed at exit.
        h = s.call("Make", gym_pb2.MakeRequest(env_id="cclab/Marlin-v0", num_envs=1)).handle
        resp = s.call("OpenSharedLane", gym_pb2.OpenLaneRequest(handle=h))
    assert not os.path.exists(os.path.dirname(resp.path))
    assert _lane_dirs() - before == set()


def test_server_killed_mid_step_raises_naming_it(cclab_binary: str) -> None:
    env = cclab.CclabVectorEnv("cclab/Marlin-v0", num_envs=4, server="own", step_lane="shm")
    env.reset(seed=1)
    env.step(np.zeros((4, 1), dtype=np.float32))
    proc = env.server.process
    assert proc is not None
    os.kill(proc.pid, signal.SIGSTOP)  # the next step waits for an answer ...
    wait_stopped(proc.pid)
    killer = threading.Timer(0.5, lambda: os.kill(proc.pid, signal.SIGKILL))  # ... and the server dies meanwhile
    killer.start()
    start = time.monotonic()
    try:
        with pytest.raises(cclab.ServerError) as err:
            env.step(np.zeros((4, 1), dtype=np.float32))
        assert time.monotonic() - start < 10
        msg = str(err.value)
        assert env.server.address in msg and str(proc.pid) in msg and "SIGKILL" in msg
    finally:
        killer.join()
        env.close()
