"""Exceptions raised by the cclab client."""

from __future__ import annotations


class CclabError(Exception):
    """Base class of every error the cclab client raises."""


class ServerError(CclabError, ConnectionError):
    """The cclab server cannot be started or reached, or stopped mid-call.

    The message names the server (address, process id and binary) and, when
    the client started it, how the process ended.
    """


class RequestError(CclabError, ValueError):
    """The server rejected a request (a bad option, action shape or seed).

    ``code`` is the gRPC status code's name, e.g. ``"INVALID_ARGUMENT"``.
    """

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code
