"""The "use the client's own timeout" default of methods that wait."""

from __future__ import annotations

import enum
from typing import Union


class _Default(enum.Enum):
    CLIENT_TIMEOUT = enum.auto()


#: Pass as ``timeout`` to wait as long as the client's ``timeout`` says (the default).
CLIENT_TIMEOUT = _Default.CLIENT_TIMEOUT
#: Seconds to wait, None for ever, or ``CLIENT_TIMEOUT``.
Timeout = Union[float, None, _Default]
