"""Server lifecycle and request validation, as a Python caller sees them."""

from __future__ import annotations

import os
import signal
import time

import grpc
import numpy as np
import pytest

import cclab
from cclab._proto import gym_pb2


def test_binds_loopback_and_is_healthy(server: cclab.Server) -> None:
    assert server.address.startswith("127.0.0.1:")
    check = grpc.insecure_channel(server.address).unary_unary("/grpc.health.v1.Health/Check")
    # HealthCheckRequest{service} encoded by hand; response status SERVING = 1.
    name = b"cclab.gym.v1.Gym"
    resp = check(b"\x0a" + bytes([len(name)]) + name, timeout=10)
    assert resp == b"\x08\x01"


def test_killed_server_raises_naming_it(cclab_binary: str) -> None:
    env = cclab.CclabEnv("cclab/Marlin-v0", server="own")
    env.reset(seed=1)
    env.step(np.zeros(1, dtype=np.float32))
    proc = env.server.process
    assert proc is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    start = time.monotonic()
    with pytest.raises(cclab.ServerError) as err:
        env.step(np.zeros(1, dtype=np.float32))
    assert time.monotonic() - start < 15
    msg = str(err.value)
    assert env.server.address in msg and str(proc.pid) in msg and "SIGKILL" in msg
    env.close()


def test_stopped_cleanly(cclab_binary: str) -> None:
    s = cclab.Server(cclab_binary)
    proc = s.process
    assert proc is not None
    s.close()
    assert proc.returncode == 0  # SIGTERM: graceful stop, exit 0


def test_bad_requests_get_status_not_crash(server: cclab.Server) -> None:
    with pytest.raises(cclab.RequestError, match=r'options\["colour"\]') as err:
        cclab.CclabEnv("cclab/Scenario-v0", server=server, scenario="dumbbell", colour="red")
    assert err.value.code == "INVALID_ARGUMENT"
    with pytest.raises(cclab.RequestError, match="env_id"):
        cclab.CclabEnv("cclab/Nope-v0", server=server)
    env = cclab.CclabEnv("cclab/Scenario-v0", server=server, scenario="dumbbell")
    try:
        env.reset(seed=0)
        # Mis-shaped and non-finite actions straight to the server.
        h = env._remote.handle
        for raw, field in [(b"\x00\x00", "actions"), (np.float32([np.nan]).tobytes(), "environment 0")]:
            with pytest.raises(cclab.RequestError, match=field) as err:
                server.call("Step", gym_pb2.StepRequest(handle=h, actions=raw))
            assert err.value.code == "INVALID_ARGUMENT"
        with pytest.raises(ValueError, match="actions"):
            env.step(np.zeros(3, dtype=np.float32))
        # The server and the environment are still fine.
        obs, r, *_ = env.step(np.zeros(1, dtype=np.float32))
        assert np.all(np.isfinite(obs)) and server.alive()
    finally:
        env.close()


def test_missing_binary_is_clear(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setenv(cclab.BINARY_ENV, "/nonexistent/cclab")
    with pytest.raises(cclab.ServerError, match="/nonexistent/cclab"):
        cclab.Server()


def test_server_dies_with_its_client(cclab_binary: str) -> None:
    import subprocess
    import sys

    code = "import cclab, sys; s = cclab.Server(); print(s.process.pid, flush=True); sys.stdin.read()"
    client = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert client.stdout is not None
    pid = int(client.stdout.readline())
    client.kill()  # SIGKILL: no atexit, no cleanup in the client
    client.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in "ZX":  # exited, not yet reaped
                    return
        except (FileNotFoundError, ProcessLookupError):
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    pytest.fail(f"server {pid} outlived its killed client")
