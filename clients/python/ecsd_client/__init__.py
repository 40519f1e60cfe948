"""A client for ecsd, the networked Entity-Component-System server (JSON-RPC 2.0 over TCP).

Standard library only. ``Client`` talks to a server; ``ecsd_client.testing.EcsdServer`` starts
one for a test; ``ecsd_client.pytest_plugin`` offers both as pytest fixtures.
"""

from ._requests import EntityRef, QueryType
from ._timeout import CLIENT_TIMEOUT
from .client import Client
from .errors import EcsdConnectionError, EcsdError, EcsdTimeoutError, ProtocolError, RpcError
from .pipeline import Pending, Pipeline
from .watch import State, Watch

__version__ = "0.1.0"

__all__ = [
    "CLIENT_TIMEOUT",
    "Client",
    "EcsdConnectionError",
    "EcsdError",
    "EcsdTimeoutError",
    "EntityRef",
    "Pending",
    "Pipeline",
    "ProtocolError",
    "QueryType",
    "RpcError",
    "State",
    "Watch",
    "__version__",
]
