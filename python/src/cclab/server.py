"""Starting, reaching and stopping a ``cclab serve`` process."""

from __future__ import annotations

import atexit
import mmap
import os
import queue
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any, Protocol, TypeVar

import grpc
import numpy as np
from google.protobuf.message import Message

from cclab._proto import gym_pb2, gym_pb2_grpc
from cclab.errors import RequestError, ServerError

BINARY_ENV = "CCLAB_BINARY"
"""Environment variable naming the cclab binary (else ``cclab`` on PATH)."""

_Resp = TypeVar("_Resp", bound=Message)

# Codes meaning the server is gone or did not answer in time, as opposed to
# a request it refused.
_GONE = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.UNKNOWN,
}


def find_binary(binary: str | os.PathLike[str] | None = None) -> str:
    """Return the cclab binary: ``binary``, else ``$CCLAB_BINARY``, else PATH."""
    cand = os.fspath(binary) if binary is not None else os.environ.get(BINARY_ENV)
    if cand:
        if not (os.path.isfile(cand) and os.access(cand, os.X_OK)):
            raise ServerError(f"cclab binary {cand!r} is not an executable file")
        return cand
    found = shutil.which("cclab")
    if found is None:
        raise ServerError(
            f"no cclab binary: pass binary=..., set {BINARY_ENV}, or put cclab on PATH (go build -o cclab ./cmd/cclab)"
        )
    return found


class Server:
    """A ``cclab serve`` process started by this client, or one already running.

    With ``address`` (``host:port`` or ``unix:PATH``) the client connects to
    a running server and never stops it; otherwise it starts ``binary serve``
    and stops it on :meth:`close` (also at interpreter exit). A started
    server listens on ``listen``: by default a Unix-domain socket in a
    private temporary directory (cheaper per step than loopback TCP, and
    reachable by this user only), or e.g. ``"127.0.0.1:0"`` for TCP. Every
    call and every step carries a deadline (``call_timeout`` seconds), so a
    server that dies or hangs raises :class:`ServerError` naming it instead
    of blocking.
    """

    def __init__(
        self,
        binary: str | os.PathLike[str] | None = None,
        *,
        address: str | None = None,
        max_envs: int = 256,
        startup_timeout: float = 30.0,
        call_timeout: float = 120.0,
        listen: str | None = None,
    ) -> None:
        self.call_timeout = call_timeout
        self.binary: str | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None
        self._sockdir: str | None = None
        self._lock = threading.Lock()
        self._watchdog: _Watchdog | None = None
        if address is None:
            self.binary = find_binary(binary)
            address = self._start(max_envs, startup_timeout, listen)
        self.address = address
        channel = grpc.insecure_channel(
            address,
            options=[
                ("grpc.max_receive_message_length", 64 << 20),
                ("grpc.max_send_message_length", 64 << 20),
                # No call here has a retry policy; without the retry
                # filter a step's messages skip its replay buffering.
                ("grpc.enable_retries", 0),
            ],
        )
        self._channel: grpc.Channel | None = channel
        try:
            grpc.channel_ready_future(channel).result(timeout=startup_timeout)
        except grpc.FutureTimeoutError:
            self.close()
            raise ServerError(f"{self.describe()} did not accept connections within {startup_timeout} s") from None
        self.stub = gym_pb2_grpc.GymStub(channel)  # type: ignore[no-untyped-call]
        atexit.register(self.close)

    def _start(self, max_envs: int, timeout: float, listen: str | None) -> str:
        assert self.binary is not None
        if listen is None and os.name == "nt":
            # Not every Windows build of gRPC has Unix-domain sockets:
            # loopback TCP on a port the server picks and prints (open to
            # the machine's other users, unlike the private socket below).
            listen = "127.0.0.1:0"
        elif listen is None:
            # mkdtemp's directory is private (0700), so is the socket.
            self._sockdir = tempfile.mkdtemp(prefix="cclab-")
            listen = "unix:" + os.path.join(self._sockdir, "gym.sock")
        self._stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [self.binary, "serve", "--listen", listen, "--envs", str(max_envs), "--exit-on-stdin-eof"],
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            # Never written: when this process dies, even by SIGKILL, the
            # pipe closes and the server stops (no preexec_fn, whose fork
            # runs gRPC's at-fork handlers and can abort the child).
            stdin=subprocess.PIPE,
        )
        line: list[bytes] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(timeout)
        first = line[0].decode(errors="replace").strip() if line else ""
        prefix = "cclab serve: listening on "
        if not first.startswith(prefix):
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            msg = f"{self.describe()} did not start: {first or 'no address printed'}{self._tail()}"
            self.close()
            raise ServerError(msg)
        return first[len(prefix) :]

    def describe(self) -> str:
        """Name the server for messages: address, pid, binary, exit status."""
        parts = [f"cclab server at {getattr(self, 'address', None) or '(not listening)'}"]
        if self.process is not None:
            parts.append(f"pid {self.process.pid}, binary {self.binary}")
            rc = self.process.poll()
            if rc is not None:
                parts.append(f"exited with code {rc}" if rc >= 0 else f"killed by signal {signal.Signals(-rc).name}")
        return f"{parts[0]} ({'; '.join(parts[1:])})" if len(parts) > 1 else parts[0]

    def _tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            text = self._stderr.read()[-2000:].decode(errors="replace").strip()
        except (OSError, ValueError):
            return ""
        return f"\nserver stderr:\n{text}" if text else ""

    def call(self, method: str, request: Message, timeout: float | None = None) -> Any:
        """Call ``method`` with a deadline, translating gRPC errors."""
        fn = getattr(self.stub, method)
        try:
            return fn(request, timeout=timeout if timeout is not None else self.call_timeout)
        except grpc.RpcError as err:
            code: grpc.StatusCode = err.code()
            details: str = err.details() or ""
            if code in _GONE:
                raise self.gone(method, err) from None
            raise RequestError(f"{method}: {details}", code.name) from None

    def step_stream(self) -> StepStream:
        """Open a :class:`StepStream` on this server."""
        return StepStream(self, self.watchdog())

    def watchdog(self) -> _Watchdog:
        """The server's step watchdog, started on first use."""
        with self._lock:
            if self._watchdog is None:
                self._watchdog = _Watchdog()
            return self._watchdog

    def is_local(self) -> bool:
        """Whether the server surely runs on this machine: this client
        started it, or it listens on a Unix-domain socket."""
        return self.process is not None or self.address.startswith("unix:")

    def describe_death(self) -> str:
        """describe(), after giving a dying started server a moment to be
        reaped so that the message says how it ended."""
        if self.process is not None:
            try:
                self.process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        return self.describe()

    def gone(self, what: str, err: grpc.RpcError) -> ServerError:
        """The error for a call that failed because the server is gone."""
        code: grpc.StatusCode = err.code()
        return ServerError(f"{self.describe()}: {what} failed: {code.name}: {err.details() or ''}{self._tail()}")

    def alive(self) -> bool:
        """Report whether a started server's process still runs."""
        return self.process is None or self.process.poll() is None

    def close(self) -> None:
        """Close the connection and stop the server if this client started it."""
        with self._lock:
            ch = getattr(self, "_channel", None)
            if ch is not None:
                ch.close()
                self._channel = None
            p = self.process
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            if p is not None and p.stdout is not None:
                p.stdout.close()
            if p is not None and p.stdin is not None:
                p.stdin.close()
            if self._stderr is not None and p is not None and p.poll() is not None:
                self._stderr.close()
                self._stderr = None
            if self._sockdir is not None and (p is None or p.poll() is not None):
                # The server removes its socket when it stops cleanly; not
                # when it was killed.
                shutil.rmtree(self._sockdir, ignore_errors=True)
                self._sockdir = None

    def __deepcopy__(self, memo: dict[int, Any]) -> Server:
        # A server is a shared resource: copies of environment specs (which
        # Gymnasium makes) refer to the same one.
        return self

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StepStream:
    """Steps over one long-lived ``StepStream`` call: a step is one message
    each way on an open HTTP/2 stream, instead of a whole unary call.

    Not thread-safe (one per environment vector). A request the server
    refuses ends the call with :class:`RequestError`, and the next step
    opens a new one; a server that dies raises :class:`ServerError`, and
    one that does not answer within the server's ``call_timeout`` too (a
    watchdog thread cancels the step).
    """

    def __init__(self, server: Server, watchdog: _Watchdog) -> None:
        self._server = server
        self._watchdog = watchdog
        self._requests: queue.SimpleQueue[gym_pb2.StepRequest | None] | None = None
        self._call: Any = None
        # Monotonic deadline of the step in flight, 0 when idle; read by the
        # watchdog, so setting it costs a step nothing more.
        self.deadline = 0.0
        self.timed_out = False
        watchdog.add(self)

    @staticmethod
    def _iterate(q: queue.SimpleQueue[gym_pb2.StepRequest | None]) -> Iterator[gym_pb2.StepRequest]:
        while (req := q.get()) is not None:
            yield req

    def step(self, request: gym_pb2.StepRequest) -> gym_pb2.StepBatch:
        """Send one StepRequest and return its StepBatch."""
        if self._call is None:
            self._requests = queue.SimpleQueue()
            self._call = self._server.stub.StepStream(self._iterate(self._requests))
        assert self._requests is not None
        self.timed_out = False
        self.deadline = time.monotonic() + self._server.call_timeout
        self._requests.put(request)
        try:
            batch: gym_pb2.StepBatch = next(self._call)
            return batch
        except grpc.RpcError as err:
            self._drop()
            code: grpc.StatusCode = err.code()
            if self.timed_out:
                raise ServerError(
                    f"{self._server.describe()}: step got no answer within {self._server.call_timeout} s"
                ) from None
            if code in _GONE:
                raise self._server.gone("StepStream", err) from None
            raise RequestError(f"Step: {err.details() or ''}", code.name) from None
        except StopIteration:
            self._drop()
            raise ServerError(f"{self._server.describe()}: StepStream ended without an answer") from None
        finally:
            self.deadline = 0.0

    def _drop(self) -> None:
        if self._call is not None:
            assert self._requests is not None
            self._requests.put(None)
            self._call.cancel()
            self._call = None
            self._requests = None

    def cancel(self) -> None:
        """Cancel the step in flight (the watchdog's way to end a hang)."""
        call = self._call
        if call is not None:
            self.timed_out = True
            call.cancel()

    def close(self) -> None:
        """End the stream."""
        self._watchdog.remove(self)
        self._drop()


class _Deadlined(Protocol):
    """A step in flight the watchdog can end: ``deadline`` is monotonic
    seconds (0 when idle)."""

    deadline: float

    def cancel(self) -> None: ...


class _Watchdog:
    """One daemon thread per server that cancels steps past their deadline.

    It looks once a second, so a step pays no timer of its own.
    """

    def __init__(self) -> None:
        self._streams: weakref.WeakSet[_Deadlined] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, s: _Deadlined) -> None:
        with self._lock:
            self._streams.add(s)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="cclab-step-watchdog", daemon=True)
                self._thread.start()

    def remove(self, s: _Deadlined) -> None:
        with self._lock:
            self._streams.discard(s)

    def _run(self) -> None:
        while True:
            time.sleep(1.0)
            now = time.monotonic()
            with self._lock:
                late = [s for s in self._streams if 0 < s.deadline < now]
                if not self._streams:
                    self._thread = None
                    return
            for s in late:
                s.cancel()


_CODE_NAMES = {c.value[0]: c.name for c in grpc.StatusCode}
_LANE_MAGIC = 0x4E4C4343
_LANE_VERSION = 1


class SharedLane:
    """Steps one vector over a shared-memory lane (``OpenSharedLane``): the
    actions go into a memory-mapped file the server created, one byte on a
    Unix-domain socket rings the step, and one byte back says the results
    are in the file. No gRPC per step, so no grpcio locks or thread
    hand-offs; the client blocks in ``recv`` (no spinning).

    The answer is awaited in a blocking ``recv``: a server that dies closes
    the socket (``ServerError`` at once, naming the server and how it
    died), and one that does not answer within ``call_timeout`` has its
    socket shut down by the server's watchdog thread (the one StepStream
    uses; no timer per step), which raises ``ServerError`` too and drops
    the lane. A step the server
    refuses raises :class:`RequestError` with the status and message
    ``StepStream`` would give, and the lane stays usable.
    """

    def __init__(self, server: Server, handle: int, num_envs: int, act_size: int, obs_shape: tuple[int, ...]) -> None:
        self._server = server
        resp = server.call("OpenSharedLane", gym_pb2.OpenLaneRequest(handle=handle))
        self._paths = (resp.path, resp.socket)
        self._mm: mmap.mmap | None = None
        self._sock: socket.socket | None = None
        try:
            if resp.version != _LANE_VERSION:
                raise ServerError(
                    f"{server.describe()}: lane version {resp.version}, this client speaks {_LANE_VERSION}"
                )
            fd = os.open(resp.path, os.O_RDWR)
            try:
                self._mm = mmap.mmap(fd, resp.size)
            finally:
                os.close(fd)
            magic, version, n, ad, od = struct.unpack_from("<5I", self._mm, 0)
            if (magic, version, n, ad) != (_LANE_MAGIC, _LANE_VERSION, num_envs, act_size) or n * od != int(
                np.prod(obs_shape)
            ):
                raise ServerError(f"{server.describe()}: lane {resp.path} does not match the vector")
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._sock.settimeout(max(1.0, resp.accept_timeout_ms / 1000))
            self._sock.connect(resp.socket)
        except BaseException:
            self.close()
            raise
        self._sock.settimeout(None)
        self.deadline = 0.0
        self.timed_out = False
        self._watchdog = server.watchdog()
        self._watchdog.add(self)
        mm, n = self._mm, num_envs
        self._hdr64 = np.frombuffer(mm, dtype="<u8", count=8, offset=0)
        self._hdr32 = np.frombuffer(mm, dtype="<u4", count=16, offset=0)
        self._act = np.frombuffer(mm, dtype="<f4", count=n * act_size, offset=resp.actions_offset)
        self._obs = np.frombuffer(mm, dtype="<f4", count=n * od, offset=resp.observations_offset).reshape(obs_shape)
        self._rew = np.frombuffer(mm, dtype="<f8", count=n, offset=resp.rewards_offset)
        self._term = np.frombuffer(mm, dtype=np.uint8, count=n, offset=resp.terminated_offset)
        self._trunc = np.frombuffer(mm, dtype=np.uint8, count=n, offset=resp.truncated_offset)
        self._vals = np.frombuffer(mm, dtype="<f8", count=n * resp.max_info_keys, offset=resp.info_values_offset)
        self._pres = np.frombuffer(mm, dtype=np.uint8, count=n * resp.max_info_keys, offset=resp.info_present_offset)
        self._keys_at, self._keys_size = resp.info_keys_offset, resp.info_keys_size
        self._msg_at = resp.message_offset
        self._n = n
        self._seq = 0
        self._key_gen = 0
        self.keys: list[str] = []

    def step(self, actions: np.ndarray[Any, Any], autoreset: bool) -> tuple[Any, ...]:
        """Run one step; return copies of (obs, rewards, terminated,
        truncated, info keys, info values n x k, info present n x k)."""
        sock = self._sock
        if sock is None:
            raise ServerError(f"{self._server.describe()}: the step lane is closed")
        self._seq += 1
        self._act[:] = actions.reshape(-1)
        self._hdr32[8] = 1 if autoreset else 0
        self._hdr64[3] = self._seq
        self.timed_out = False
        self.deadline = time.monotonic() + self._server.call_timeout
        why = ""
        try:
            sock.send(b"\x01")
            got = sock.recv(1)
        except OSError as err:
            got, why = b"", f" ({err})"
        finally:
            self.deadline = 0.0
        if not got:
            self.close()
            if self.timed_out:
                raise ServerError(f"{self._server.describe()}: step got no answer within {self._server.call_timeout} s")
            raise ServerError(f"{self._server.describe_death()}: the step lane closed without an answer{why}")
        h32 = self._hdr32
        if int(self._hdr64[5]) != self._seq:
            self.close()
            raise ServerError(f"{self._server.describe()}: lane answer {int(self._hdr64[5])} for step {self._seq}")
        if h32[12] != 0:
            assert self._mm is not None
            msg = bytes(self._mm[self._msg_at : self._msg_at + int(h32[13])]).decode(errors="replace")
            raise RequestError(f"Step: {msg}", _CODE_NAMES.get(int(h32[12]), str(int(h32[12]))))
        nk = int(h32[14])
        if int(h32[15]) != self._key_gen:
            self._key_gen = int(h32[15])
            self.keys = self._read_keys(nk)
        n = self._n
        return (
            self._obs.copy(),
            self._rew.copy(),
            self._term.astype(np.bool_),
            self._trunc.astype(np.bool_),
            self.keys,
            self._vals[: n * nk].reshape(n, nk),
            self._pres[: n * nk].reshape(n, nk),
        )

    def cancel(self) -> None:
        """End the step in flight (the watchdog's way to end a hang)."""
        sock = self._sock
        if sock is not None:
            self.timed_out = True
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _read_keys(self, nk: int) -> list[str]:
        assert self._mm is not None
        raw = bytes(self._mm[self._keys_at : self._keys_at + self._keys_size])
        keys, at = [], 0
        for _ in range(nk):
            (ln,) = struct.unpack_from("<H", raw, at)
            keys.append(raw[at + 2 : at + 2 + ln].decode())
            at += 2 + ln
        return keys

    def close(self) -> None:
        """Hang up; the server ends the lane (its files are already gone
        once connected; removed here too in case it never connected)."""
        watchdog = self.__dict__.get("_watchdog")
        if watchdog is not None:
            watchdog.remove(self)
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        for attr in ("_hdr64", "_hdr32", "_act", "_obs", "_rew", "_term", "_trunc", "_vals", "_pres"):
            self.__dict__.pop(attr, None)
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:  # a view still held by a caller; freed with it
                pass
            self._mm = None
        for p in self._paths:
            try:
                os.unlink(p)
            except OSError:
                pass
        try:
            os.rmdir(os.path.dirname(self._paths[0]))
        except OSError:
            pass


_default: Server | None = None
_default_lock = threading.Lock()


def default_server() -> Server:
    """Return this process's shared server, starting it on first use."""
    global _default
    with _default_lock:
        if _default is None or not _default.alive():
            _default = Server()
        return _default
