"""pytest fixtures for testing against a real ecsd.

Loaded automatically once the package is pip-installed (entry point ``pytest11``), or with
``pytest -p ecsd_client.pytest_plugin``, or ``pytest_plugins = ["ecsd_client.pytest_plugin"]``
in a top-level conftest.py.

- ``ecsd_server``: an ``EcsdServer`` of its own for the test (a free port, a temporary data
  folder), stopped afterwards; the test fails if ecsd does not exit 0.
- ``ecsd``: a ``Client`` connected to it.

Options for the server come from the ``ecsd`` marker, passed to ``EcsdServer``::

    @pytest.mark.ecsd(args=["--max-watches", "2"], token="s3cret")
    def test_limits(ecsd): ...

``--ecsd-bin PATH`` (or ``$ECSD_BIN``) says which ecsd to run.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .client import Client
from .testing import EcsdServer


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ecsd")
    group.addoption(
        "--ecsd-bin",
        default=None,
        metavar="PATH",
        help="the ecsd binary the ecsd_server fixture runs (default: $ECSD_BIN, PATH, the repository's build)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "ecsd(**options): options for the ecsd_server fixture's EcsdServer (args, token, data_dir, env)"
    )


@pytest.fixture
def ecsd_server(request: pytest.FixtureRequest) -> Iterator[EcsdServer]:
    """A fresh ecsd for this test, stopped (and checked to exit 0) afterwards."""
    marker = request.node.get_closest_marker("ecsd")
    options = dict(marker.kwargs) if marker is not None else {}
    binary = request.config.getoption("ecsd_bin")
    if binary is not None:
        options.setdefault("binary", binary)
    with EcsdServer(**options) as server:
        yield server


@pytest.fixture
def ecsd(ecsd_server: EcsdServer) -> Iterator[Client]:
    """A client connected to ``ecsd_server`` (world ``default``)."""
    with ecsd_server.client() as client:
        yield client
