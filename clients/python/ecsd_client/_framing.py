"""Newline-delimited JSON framing: one JSON text per line, LF (or CRLF) terminated."""

from __future__ import annotations

import json
from collections import deque
from typing import Any


def encode(message: Any) -> bytes:
    """One message as a compact line of UTF-8 JSON ending in LF.

    NaN and infinities are refused (``ValueError``): they are not JSON and ecsd would reject them.
    """
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.encode("utf-8") + b"\n"


class LineDecoder:
    """Cuts a byte stream into lines, whatever the chunks it arrives in.

    ``feed()`` takes bytes as ``recv()`` returns them (partial lines, several lines at once);
    ``pop()`` hands out complete lines one at a time, so the reader decides when to stop (the
    rest stay buffered). Blank lines are skipped and a trailing CR is dropped.
    """

    def __init__(self) -> None:
        self._partial = bytearray()
        self._lines: deque[bytes] = deque()

    def feed(self, data: bytes) -> None:
        self._partial += data
        if b"\n" not in data:
            return
        *complete, rest = bytes(self._partial).split(b"\n")
        self._partial = bytearray(rest)
        for line in complete:
            line = line.rstrip(b"\r")
            if line.strip():
                self._lines.append(line)

    def pop(self) -> bytes | None:
        """The next complete line (without its terminator), or None when none is whole yet."""
        return self._lines.popleft() if self._lines else None

    @property
    def pending_bytes(self) -> int:
        """Bytes of an unfinished line held back until its terminator arrives."""
        return len(self._partial)

    def __len__(self) -> int:
        return len(self._lines)
