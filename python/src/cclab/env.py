"""Gymnasium environments backed by a cclab server."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space
from numpy.typing import NDArray

from cclab._proto import gym_pb2
from cclab.errors import RequestError, ServerError
from cclab.server import Server, SharedLane, StepStream, default_server

Obs = NDArray[np.float32]

ServerArg = Server | str | None
"""Where an environment runs: a :class:`Server`, ``"own"`` (a server
process of its own, stopped on ``close``), an address (``"host:port"`` or
``"unix:PATH"``) of a running server, or ``None`` (this process's shared
server)."""


def _server(arg: ServerArg) -> tuple[Server, bool]:
    """Return the server and whether the environment owns it."""
    if arg is None:
        return default_server(), False
    if isinstance(arg, Server):
        return arg, False
    if arg == "own":
        return Server(), True
    return Server(address=arg), True


def to_space(sp: gym_pb2.Space) -> spaces.Box | spaces.Discrete:
    """Convert a service space description to a Gymnasium space."""
    if sp.kind == gym_pb2.Space.DISCRETE:
        return spaces.Discrete(int(sp.n))
    shape = tuple(int(d) for d in sp.shape)
    low = np.asarray(sp.low, dtype=np.float32).reshape(shape)
    high = np.asarray(sp.high, dtype=np.float32).reshape(shape)
    return spaces.Box(low=low, high=high, shape=shape, dtype=np.float32)


def _options(options: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in options.items():
        if isinstance(v, bool):
            out[k] = "true" if v else "false"
        elif isinstance(v, (list, tuple)):
            out[k] = ",".join(str(x) for x in v)
        else:
            out[k] = str(v)
    return out


def _unpack(data: bytes, shape: tuple[int, ...]) -> Obs:
    # One bulk copy into a writable array; no per-element conversion.
    return np.frombuffer(bytearray(data), dtype="<f4").reshape(shape)


def _info(info: gym_pb2.Info) -> dict[str, Any]:
    return dict(info.values)


class Batch:
    """One step of a vector, decoded with a few bulk copies (one per field,
    whatever the number of environments and info keys), from a StepBatch or
    from a shared-memory lane."""

    __slots__ = ("obs", "rewards", "terminated", "truncated", "info_keys", "info_values", "info_present")

    def __init__(
        self,
        obs: Obs,
        rewards: NDArray[np.float64],
        terminated: NDArray[np.bool_],
        truncated: NDArray[np.bool_],
        keys: list[str],
        values: NDArray[np.float64],
        present: NDArray[np.bool_] | None,
    ) -> None:
        self.obs, self.rewards, self.terminated, self.truncated = obs, rewards, terminated, truncated
        self.info_keys = keys
        # Key-major copies, so that each key's column is a contiguous,
        # writable array of num_envs values.
        self.info_values = values.T.astype(np.float64, order="C")
        if present is not None:
            self.info_present = present.T.astype(np.bool_, order="C")
        else:
            self.info_present = np.ones((len(keys), obs.shape[0]), dtype=np.bool_)

    @classmethod
    def from_proto(cls, b: gym_pb2.StepBatch, obs_shape: tuple[int, ...]) -> Batch:
        """Decode a StepBatch."""
        n = obs_shape[0]
        t = b.infos
        keys: list[str] = list(t.keys)
        nk = len(keys)
        return cls(
            _unpack(b.observations, obs_shape),
            np.frombuffer(b.rewards, dtype="<f8").astype(np.float64),
            np.frombuffer(b.terminated, dtype=np.bool_).copy(),
            np.frombuffer(b.truncated, dtype=np.bool_).copy(),
            keys,
            np.frombuffer(t.values, dtype="<f8").reshape(n, nk),
            np.frombuffer(t.present, dtype=np.bool_).reshape(n, nk) if t.present else None,
        )

    def info(self, i: int) -> dict[str, Any]:
        """Environment i's info dict."""
        return {k: float(self.info_values[j, i]) for j, k in enumerate(self.info_keys) if self.info_present[j, i]}

    def vector_info(self) -> dict[str, Any]:
        """The infos as a vector environment returns them: per key, an
        array of num_envs values and a ``_key`` mask of which have it."""
        out: dict[str, Any] = {}
        for j, k in enumerate(self.info_keys):
            out[k] = self.info_values[j]
            out["_" + k] = self.info_present[j]
        return out


class _Remote:
    """A vector of environments on a server (shared by both classes)."""

    def __init__(
        self, env_id: str, num_envs: int, server: ServerArg, options: Mapping[str, Any], step_lane: str = "auto"
    ) -> None:
        if step_lane not in _LANES:
            raise ValueError(f"step_lane: {step_lane!r}, want one of {', '.join(_LANES)}")
        self.server, self._owns = _server(server)
        self.handle = 0
        self._stream: StepStream | None = None
        self._lane: SharedLane | None = None
        # "shm" until a lane cannot be opened under "auto", then "stream".
        self.step_lane = step_lane if step_lane != "auto" else ("shm" if self.server.is_local() else "stream")
        self._forced = step_lane != "auto"
        resp = self.server.call(
            "Make", gym_pb2.MakeRequest(env_id=env_id, num_envs=num_envs, options=_options(options))
        )
        self.handle = resp.handle
        self.num_envs = resp.num_envs
        self.obs_space = to_space(resp.observation_space)
        self.act_space = to_space(resp.action_space)
        self.max_episode_steps = int(resp.max_episode_steps)
        self.obs_shape = (self.num_envs, *(self.obs_space.shape or ()))
        if isinstance(self.act_space, spaces.Discrete):
            self._act_shape: tuple[int, ...] = (self.num_envs,)
        else:
            self._act_shape = (self.num_envs, *(self.act_space.shape or ()))
        self._act_count = int(np.prod(self._act_shape))

    def pack(self, actions: Any) -> bytes:
        return self._array(actions).tobytes()

    def _array(self, actions: Any) -> NDArray[np.float32]:
        a = np.asarray(actions, dtype="<f4")
        if a.size != self._act_count:
            raise ValueError(f"actions: shape {a.shape}, want {self._act_shape}")
        return a

    def reset(self, seeds: Sequence[int]) -> tuple[Obs, list[dict[str, Any]]]:
        resp = self.server.call("Reset", gym_pb2.ResetRequest(handle=self.handle, seeds=list(seeds)))
        return _unpack(resp.observations, self.obs_shape), [_info(i) for i in resp.infos]

    def step(self, actions: Any, autoreset: bool) -> Batch:
        if self.step_lane == "shm":
            a = self._array(actions)
            if self._lane is None:
                self._open_lane()
            if self._lane is not None:
                return Batch(*self._lane.step(a, autoreset))
        if self._stream is None:
            self._stream = self.server.step_stream()
        req = gym_pb2.StepRequest(handle=self.handle, actions=self.pack(actions), autoreset=autoreset)
        return Batch.from_proto(self._stream.step(req), self.obs_shape)

    def _open_lane(self) -> None:
        act_size = int(np.prod(self.act_space.shape or ())) if isinstance(self.act_space, spaces.Box) else 1
        try:
            self._lane = SharedLane(self.server, self.handle, self.num_envs, act_size, self.obs_shape)
        except (RequestError, OSError) as err:
            if self._forced or (isinstance(err, ServerError) and not self.server.alive()):
                raise
            # Not on the server's machine after all, or a server without
            # lanes: the stream works everywhere.
            self.step_lane = "stream"

    def close(self) -> None:
        if self._lane is not None:
            self._lane.close()
            self._lane = None
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self.handle and self.server.alive():
            try:
                self.server.call("Close", gym_pb2.CloseRequest(handle=self.handle), timeout=10)
            except Exception:  # the server may be gone; nothing left to free
                pass
        self.handle = 0
        if self._owns:
            self.server.close()


_LANES = ("auto", "shm", "stream")


def _check_seed(seed: Any) -> int:
    if not isinstance(seed, (int, np.integer)) or seed < 0 or seed >= 1 << 63:
        raise ValueError(f"seed: {seed!r} is not an integer in [0, 2**63)")
    return int(seed)


class CclabEnv(gymnasium.Env[Obs, Any]):
    """One cclab environment (``gymnasium.make("cclab/Marlin-v0")``).

    ``options`` are the environment's Make options (docs/python.md lists
    them); ``server`` says where it runs (see :data:`ServerArg`);
    ``step_lane`` how steps travel (see :class:`CclabVectorEnv`).
    ``reset(seed=s)`` runs exactly the episode ``env.Reset(s)`` runs in Go.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        env_id: str,
        server: ServerArg = None,
        render_mode: str | None = None,
        step_lane: str = "auto",
        **options: Any,
    ) -> None:
        if render_mode is not None:
            raise ValueError(f"render_mode: cclab environments do not render (got {render_mode!r})")
        self.env_id = env_id
        self._remote = _Remote(env_id, 1, server, options, step_lane)
        self.observation_space = self._remote.obs_space  # type: ignore[assignment]
        self.action_space = self._remote.act_space
        self._obs_shape = self.observation_space.shape or ()

    @property
    def server(self) -> Server:
        """The server the environment runs on."""
        return self._remote.server

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Obs, dict[str, Any]]:
        super().reset(seed=seed)
        if options:
            raise ValueError(f"options: {self.env_id} accepts no reset options, got {sorted(options)}")
        obs, infos = self._remote.reset([] if seed is None else [_check_seed(seed)])
        return obs.reshape(self._obs_shape), infos[0]

    def step(self, action: Any) -> tuple[Obs, SupportsFloat, bool, bool, dict[str, Any]]:
        b = self._remote.step([action], autoreset=False)
        obs = b.obs.reshape(self._obs_shape)
        return obs, float(b.rewards[0]), bool(b.terminated[0]), bool(b.truncated[0]), b.info(0)

    def close(self) -> None:
        self._remote.close()
        super().close()  # type: ignore[no-untyped-call]


class CclabVectorEnv(gymnasium.vector.VectorEnv[Obs, Any, Any]):
    """``num_envs`` cclab environments stepped in one call, in parallel in
    the server (``gymnasium.make_vec("cclab/Marlin-v0", num_envs=8)``).

    Episodes reset automatically on the step after they end (Gymnasium's
    next-step autoreset): that step returns the new episode's first
    observation with reward 0. ``reset(seed=s)`` seeds environment i with
    ``s + i``, so environment i replays ``CclabEnv.reset(seed=s + i)``.

    ``step_lane`` chooses how steps travel: ``"shm"``, a shared-memory lane
    (actions and results in a memory-mapped file, a socket byte each way:
    the cheapest, for a server on this machine); ``"stream"``, gRPC's
    ``StepStream`` (works over any network); ``"auto"`` (default): the lane
    when the server is surely local (this package started it, or it listens
    on a Unix-domain socket) and opening it works, else the stream. Both
    give the same results bit for bit.
    """

    metadata: dict[str, Any] = {"render_modes": [], "autoreset_mode": "NextStep"}

    def __init__(
        self, env_id: str, num_envs: int = 1, server: ServerArg = None, step_lane: str = "auto", **options: Any
    ) -> None:
        options.pop("render_mode", None)
        self.env_id = env_id
        self._remote = _Remote(env_id, num_envs, server, options, step_lane)
        self.num_envs = self._remote.num_envs
        self.single_observation_space = self._remote.obs_space
        self.single_action_space = self._remote.act_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        try:
            from gymnasium.vector import AutoresetMode  # type: ignore[attr-defined,unused-ignore]  # gymnasium >= 1.1

            self.metadata = {**self.metadata, "autoreset_mode": AutoresetMode.NEXT_STEP}
        except ImportError:
            pass

    @property
    def server(self) -> Server:
        """The server the environments run on."""
        return self._remote.server

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Obs, dict[str, Any]]:
        if options:
            raise ValueError(f"options: {self.env_id} accepts no reset options, got {sorted(options)}")
        seeds: list[int] = []
        if isinstance(seed, (int, np.integer)):
            seeds = [_check_seed(seed + i) for i in range(self.num_envs)]
        elif seed is not None:
            if len(seed) != self.num_envs:
                raise ValueError(f"seed: {len(seed)} seeds for {self.num_envs} environments")
            seeds = [-1 if s is None else _check_seed(s) for s in seed]
        obs, infos = self._remote.reset(seeds)
        return obs, self._infos(infos)

    def step(
        self, actions: Any
    ) -> tuple[Obs, NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_], dict[str, Any]]:
        b = self._remote.step(actions, autoreset=True)
        return b.obs, b.rewards, b.terminated, b.truncated, b.vector_info()

    def _infos(self, infos: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, info in enumerate(infos):
            for k, v in info.items():
                if k not in out:
                    out[k] = np.zeros(self.num_envs, dtype=np.float64)
                    out["_" + k] = np.zeros(self.num_envs, dtype=np.bool_)
                out[k][i] = v
                out["_" + k][i] = True
        return out

    def close_extras(self, **kwargs: Any) -> None:
        remote = getattr(self, "_remote", None)  # absent if __init__ failed
        if remote is not None:
            remote.close()
