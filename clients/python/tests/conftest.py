"""Shared fixtures: one ecsd for the tests that only need a world of their own."""

from __future__ import annotations

import itertools
import os
import socket
from collections.abc import Callable, Iterator

import pytest

from ecsd_client import Client
from ecsd_client.testing import EcsdServer, find_binary
from fakes import FakeServer

# The package's own plugin (ecsd_server, ecsd fixtures) and pytester (to run pytest in pytest).
pytest_plugins = ("ecsd_client.pytest_plugin", "pytester")

_worlds = itertools.count(1)


def pytest_report_header(config: pytest.Config) -> str:
    try:
        return f"ecsd: {find_binary()}"
    except Exception as e:  # the tests that need it fail, saying why
        return f"ecsd: {e}"


@pytest.fixture(scope="session")
def shared_server() -> Iterator[EcsdServer]:
    """One server for the whole session; tests keep to worlds of their own."""
    with EcsdServer(data_dir=False) as server:
        yield server


@pytest.fixture
def client(shared_server: EcsdServer) -> Iterator[Client]:
    """A client whose world.* calls go to a fresh paused world without gravity (destroyed after)."""
    world = f"t{os.getpid()}-{next(_worlds)}"
    with shared_server.client(world=world) as c:
        c.create_world(world, paused=True, gravity=0)
        yield c
        if not c.closed:
            c.destroy_world(world)


@pytest.fixture
def fake_ecsd() -> Iterator[Callable[[Callable[[socket.socket], None]], FakeServer]]:
    servers: list[FakeServer] = []

    def start(handler: Callable[[socket.socket], None]) -> FakeServer:
        servers.append(FakeServer(handler))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
