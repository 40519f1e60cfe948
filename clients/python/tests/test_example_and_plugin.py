"""The README's example runs as it stands (test_readme.py checks that the README quotes it whole),
and the pytest plugin works on its own (``-p ecsd_client.pytest_plugin``, no conftest)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ecsd_client.testing import EcsdServer, find_binary

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "test_arena.py"


def run_pytest(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECSD_") or k == "ECSD_BIN"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["ECSD_BIN"] = str(find_binary())  # absolute: the child runs in another folder
    # The package by absolute path, as a user sets it (the suite may have been given a relative one).
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.update(extra)
    return env


def test_the_example_passes_against_a_server(tmp_path: Path) -> None:
    # As a new user runs it: a copy in a folder of its own, against a server with a token.
    copy = tmp_path / "test_arena.py"
    copy.write_text(EXAMPLE.read_text("utf-8"), "utf-8")
    with EcsdServer(data_dir=False, token="t0ken") as server:
        result = run_pytest(
            str(copy), env=child_env(ECSD_PORT=str(server.port), ECSD_TOKEN="t0ken"), cwd=tmp_path
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert "1 passed" in result.stdout
        with server.client() as c:
            assert c.list_worlds() == ["default"]  # its world is gone again


def test_the_example_fails_when_the_spell_does_nothing(tmp_path: Path) -> None:
    # The example can fail: without the spells system the monsters live on.
    copy = tmp_path / "test_arena.py"
    text = EXAMPLE.read_text("utf-8").replace(
        "client.create_world(world, paused=True, gravity=0)",
        "client.create_world(world, paused=True, gravity=0)\n        client.call('world.disable_system', {'system': 'spells'})",
    )
    copy.write_text(text, "utf-8")
    with EcsdServer(data_dir=False) as server:
        result = run_pytest(str(copy), env=child_env(ECSD_PORT=str(server.port)), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed" in result.stdout


PLUGIN_TESTS = '''
import pytest
from ecsd_client import Client
from ecsd_client.testing import EcsdServer


def test_fixtures(ecsd, ecsd_server):
    assert isinstance(ecsd, Client) and isinstance(ecsd_server, EcsdServer)
    assert ecsd.port == ecsd_server.port
    assert ecsd.ping() == "pong"


@pytest.mark.ecsd(args=["--max-watches", "1"], token="abc")
def test_marker(ecsd, ecsd_server):
    info = ecsd.info()
    assert info["limits"]["max_watches"] == 1 and info["auth_required"] is True


def test_a_crash_fails_the_test(ecsd_server):
    import os, signal
    os.kill(ecsd_server.pid, signal.SIGKILL)
'''


def test_the_plugin_alone(tmp_path: Path) -> None:
    (tmp_path / "test_plugin_use.py").write_text(PLUGIN_TESTS, "utf-8")
    result = run_pytest("-p", "ecsd_client.pytest_plugin", "-rE", env=child_env(), cwd=tmp_path)
    assert "3 passed, 1 error" in result.stdout, result.stdout + result.stderr
    assert "ERROR at teardown of test_a_crash_fails_the_test" in result.stdout
    assert "killed by signal 9" in result.stdout


def test_the_plugin_option_names_the_binary(tmp_path: Path) -> None:
    (tmp_path / "test_plugin_use.py").write_text(PLUGIN_TESTS, "utf-8")
    env = child_env()
    binary = env.pop("ECSD_BIN", None) or str(find_binary())
    plugin = ("-p", "ecsd_client.pytest_plugin", "-k", "fixtures")
    result = run_pytest(*plugin, f"--ecsd-bin={tmp_path / 'nope'}", env=env, cwd=tmp_path)
    assert result.returncode == 1 and "cannot run" in result.stdout, result.stdout
    result = run_pytest(*plugin, f"--ecsd-bin={binary}", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
