"""Exceptions raised by the client. Every one is an ``EcsdError``."""

from __future__ import annotations

from typing import Any


class EcsdError(Exception):
    """Base class of every error this package raises."""


class RpcError(EcsdError):
    """The server answered a request with a JSON-RPC error.

    Branch on ``reason`` (the protocol's stable ``error.data.reason``, such as ``"no_such_entity"``),
    not on ``message``. ``data`` is the whole ``error.data`` (``world``, ``limit``, ...).
    ``index`` is the position of the failed call in a pipeline, else None.
    """

    def __init__(
        self,
        code: int,
        message: str,
        data: dict[str, Any] | None = None,
        method: str | None = None,
        index: int | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.data: dict[str, Any] = dict(data or {})
        self.reason: str = str(self.data.get("reason", ""))
        self.method = method
        self.index = index
        super().__init__(code, message)

    @classmethod
    def from_error(cls, error: Any, method: str | None = None) -> RpcError:
        """Builds one from a response's ``error`` member (tolerating a malformed one)."""
        if not isinstance(error, dict):
            return cls(-32603, f"malformed error: {error!r}", {"reason": "internal"}, method)
        data = error.get("data")
        return cls(
            int(error.get("code", -32603)),
            str(error.get("message", "")),
            data if isinstance(data, dict) else {},
            method,
        )

    def __str__(self) -> str:
        where = f"{self.method}: " if self.method else ""
        return f"{where}{self.message} ({self.reason or 'no reason'}, {self.code})"

    def __repr__(self) -> str:
        return f"RpcError(code={self.code}, reason={self.reason!r}, message={self.message!r}, method={self.method!r})"


class EcsdTimeoutError(EcsdError, TimeoutError):
    """No answer (or notification) arrived in time. Also a built-in ``TimeoutError``."""


class EcsdConnectionError(EcsdError, ConnectionError):
    """Could not connect, the server closed the connection, or the client was closed.

    Also a built-in ``ConnectionError``.
    """


class ProtocolError(EcsdError):
    """The server sent something that is not JSON-RPC 2.0 (never expected from ecsd)."""
