"""Shared fixtures: a cclab binary built from this checkout, and a server."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import cclab

REPO = Path(__file__).resolve().parents[2]


def _go_build(pkg: str, out: Path) -> str:
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot build the cclab binary the tests need")
    subprocess.run(["go", "build", "-o", str(out), pkg], cwd=REPO, check=True)
    return str(out)


@pytest.fixture(scope="session")
def cclab_binary(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The cclab binary: $CCLAB_BINARY if set, else built from this checkout."""
    given = os.environ.get(cclab.BINARY_ENV)
    if given:
        return given
    path = _go_build("./cmd/cclab", tmp_path_factory.mktemp("bin") / "cclab")
    os.environ[cclab.BINARY_ENV] = path  # for default_server() and Ray workers
    return path


@pytest.fixture(scope="session")
def gymtraj(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The Go reference stepper rpc/gym/gymtraj."""
    return _go_build("./rpc/gym/gymtraj", tmp_path_factory.mktemp("bin") / "gymtraj")


@pytest.fixture(scope="session")
def server(cclab_binary: str) -> Iterator[cclab.Server]:
    """One server shared by the tests that do not kill theirs."""
    with cclab.Server(cclab_binary) as s:
        yield s


def wait_stopped(pid: int) -> None:
    """Wait until SIGSTOP has taken effect: kill returns before it does, and
    a step over the shared-memory lane is quick enough to finish first."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return
        time.sleep(0.001)
    pytest.fail(f"process {pid} did not stop")
