"""A scripted stand-in for ecsd, for what the real server never does on demand."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from typing import Any


class FakeServer:
    """A scripted stand-in for ecsd on a free port: ``handler(sock)`` runs for the first
    connection in a thread, to test what the real server never does on demand."""

    def __init__(self, handler: Callable[[socket.socket], None]) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._serve, args=(handler,), daemon=True)
        self._thread.start()

    def _serve(self, handler: Callable[[socket.socket], None]) -> None:
        try:
            conn, _ = self._listener.accept()
            with conn:
                handler(conn)
        except BaseException as e:  # reported by close()
            self.error = e

    def close(self) -> None:
        self._listener.close()
        self._thread.join(5)
        if self.error is not None:
            raise self.error


def read_requests(sock: socket.socket, count: int) -> list[dict[str, Any]]:
    """Reads ``count`` request lines from a client."""
    reader = sock.makefile("rb")
    return [json.loads(reader.readline()) for _ in range(count)]


def answer(request_id: Any, result: Any) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n").encode()

