"""Server lifecycle and request validation, as a Python caller sees them."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import grpc
import numpy as np
import pytest
from conftest import wait_stopped

import cclab
from cclab._proto import gym_pb2


def _healthy(address: str) -> bool:
    check = grpc.insecure_channel(address).unary_unary(
        "/grpc.health.v1.Health/Check", request_serializer=None, response_deserializer=None
    )
    # HealthCheckRequest{service} encoded by hand; response status SERVING = 1.
    name = b"cclab.gym.v1.Gym"
    resp = check(b"\x0a" + bytes([len(name)]) + name, timeout=10)
    return bool(resp == b"\x08\x01")


def test_private_unix_socket_by_default_and_healthy(server: cclab.Server) -> None:
    assert server.address.startswith("unix:/")
    path = server.address[len("unix:") :]
    assert os.stat(os.path.dirname(path)).st_mode & 0o077 == 0  # only this user can connect
    assert _healthy(server.address)


def test_tcp_binds_loopback(cclab_binary: str) -> None:
    with cclab.Server(cclab_binary, listen="127.0.0.1:0") as s:
        assert s.address.startswith("127.0.0.1:")
        assert _healthy(s.address)
        env = cclab.CclabVectorEnv("cclab/Marlin-v0", num_envs=2, server=s)
        env.reset(seed=3)
        obs, *_ = env.step(np.zeros((2, 1), dtype=np.float32))
        assert obs.shape[0] == 2 and np.all(np.isfinite(obs))
        env.close()


def test_windows_default_is_loopback_tcp_and_steps_over_stream(
    cclab_binary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a Windows client does by default (os.name only picks the
    # address; the server is this machine's). The lane is then tried and,
    # where the server has none, the stream taken; here it has one.
    monkeypatch.setattr(os, "name", "nt")
    with cclab.Server(cclab_binary) as s:
        assert s.address.startswith("127.0.0.1:")
        assert _healthy(s.address)
        env = cclab.CclabVectorEnv("cclab/Marlin-v0", num_envs=2, server=s, step_lane="stream")
        env.reset(seed=3)
        obs, *_ = env.step(np.zeros((2, 1), dtype=np.float32))
        assert obs.shape[0] == 2 and np.all(np.isfinite(obs))
        env.close()


def test_socket_removed_after_kill(cclab_binary: str) -> None:
    s = cclab.Server(cclab_binary)
    path = s.address[len("unix:") :]
    assert s.process is not None and os.path.exists(path)
    s.process.kill()
    s.process.wait()
    s.close()
    assert not os.path.exists(os.path.dirname(path))


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
        for raw, field in [(b"\x00\x00", "actions"), (np.array([np.nan], dtype=np.float32).tobytes(), "environment 0")]:
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


def test_server_dies_with_its_client(cclab_binary: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    code = "import cclab, sys; s = cclab.Server(); print(s.process.pid, flush=True); sys.stdin.read()"
    # The killed client cannot remove its socket's private directory: let
    # it make that directory here rather than in the machine's /tmp.
    env = dict(os.environ, TMPDIR=str(tmp_path))
    client = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert client.stdout is not None
    pid = int(client.stdout.readline())
    client.kill()  # SIGKILL: no atexit, no cleanup in the client
    client.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in "ZX":  # exited, not yet reaped
                    break
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail(f"server {pid} outlived its killed client")
    # The server removed its socket as it stopped; only the empty
    # directory the client made for it is left.
    dirs = list(tmp_path.glob("cclab-*"))
    assert len(dirs) == 1, dirs
    assert list(dirs[0].iterdir()) == []


def test_refused_stream_step_is_request_error_then_recovers(server: cclab.Server) -> None:
    env = cclab.CclabVectorEnv("cclab/Scenario-v0", num_envs=2, server=server, scenario="dumbbell")
    try:
        env.reset(seed=0)
        with pytest.raises(cclab.RequestError, match="environment 1") as err:
            env.step(np.array([[0.0], [np.nan]], dtype=np.float32))
        assert err.value.code == "INVALID_ARGUMENT"
        obs, r, term, trunc, _ = env.step(np.zeros((2, 1), dtype=np.float32))  # a new stream
        assert obs.shape[0] == 2 and np.all(np.isfinite(obs)) and np.all(np.isfinite(r))
    finally:
        env.close()


def test_hung_server_times_out_naming_it(cclab_binary: str) -> None:
    s = cclab.Server(cclab_binary, call_timeout=2.0)
    env = cclab.CclabEnv("cclab/Marlin-v0", server=s)
    env.reset(seed=1)
    env.step(np.zeros(1, dtype=np.float32))
    assert s.process is not None
    os.kill(s.process.pid, signal.SIGSTOP)  # alive, holding its socket, answering nothing
    wait_stopped(s.process.pid)
    try:
        start = time.monotonic()
        with pytest.raises(cclab.ServerError, match="no answer within 2.0 s") as err:
            env.step(np.zeros(1, dtype=np.float32))
        assert time.monotonic() - start < 10
        assert str(s.process.pid) in str(err.value)
    finally:
        os.kill(s.process.pid, signal.SIGCONT)
        env.close()
        s.close()
