"""cclab for Python: cclab's congestion-control learning environments as
Gymnasium environments, served by ``cclab serve`` (a Go process this package
starts and stops itself).

Importing the package registers ``cclab/Marlin-v0``, ``cclab/MarlinCompact-v0``,
``cclab/DeepCC-v0``, ``cclab/BBRTuning-v0`` and ``cclab/Scenario-v0`` with
Gymnasium, both for
``gymnasium.make`` (:class:`CclabEnv`) and ``gymnasium.make_vec``
(:class:`CclabVectorEnv`, stepped in parallel inside the server).
"""

from __future__ import annotations

import gymnasium

from cclab.env import CclabEnv, CclabVectorEnv, ServerArg, to_space
from cclab.errors import CclabError, RequestError, ServerError
from cclab.server import BINARY_ENV, Server, default_server, find_binary

__all__ = [
    "BINARY_ENV",
    "ENV_IDS",
    "CclabEnv",
    "CclabError",
    "CclabVectorEnv",
    "RequestError",
    "Server",
    "ServerArg",
    "ServerError",
    "default_server",
    "find_binary",
    "to_space",
]

__version__ = "0.1.0"

ENV_IDS = (
    "cclab/Marlin-v0",
    "cclab/MarlinCompact-v0",
    "cclab/DeepCC-v0",
    "cclab/BBRTuning-v0",
    "cclab/Scenario-v0",
)
"""The environment ids registered with Gymnasium."""

for _id in ENV_IDS:
    if _id not in gymnasium.registry:
        gymnasium.register(
            id=_id,
            entry_point="cclab.env:CclabEnv",
            vector_entry_point="cclab.env:CclabVectorEnv",
            kwargs={"env_id": _id},
        )
