"""Every fenced block of README.md runs here, against a real ecsd, so the README cannot rot.

The convention (also written at the top of README.md's source): the line before each block is the
HTML comment ``<!-- readme-test: NAME -->``; ``readme_blocks()`` finds the blocks by those names, and
each name has a test below saying how its block runs. A block without a name, a name used twice, or a
name this file does not know (``NAMES``) fails ``test_every_block_is_named_and_run``.

How blocks are adapted to this machine, and nothing more:

- ``7777`` (scripts/run.sh's port) becomes the port of an ecsd the test started with ``--demo``, as
  scripts/run.sh starts it (``demo_server``); where a block is a shell script that starts the server
  with ``scripts/run.sh`` (which builds a Release tree and serves until stopped), that line is
  replaced by ``demo_server`` and ``ECSD_PORT`` points the rest of the block at it.
- ``/path/to/ecsd`` becomes this repository (or, to pip-install, a copy of this folder: pip builds in
  the folder it installs, and the suite writes nothing into the source tree); ``python3 -m`` becomes
  the interpreter running this suite (the one that has pytest).
- Shell blocks run with ``bash -e`` in a temporary folder, with the ``ECSD_*`` variables and
  ``PYTHONPATH`` of this process removed (a block sets what it needs), and ``ECSD_BIN`` set only
  for blocks that do not promise to find ecsd by themselves (venv, plugin-run and own-tests do).
- Fragments (the snippets under "Client", which use ``client`` and ``hero`` without defining them)
  run in this process, compiled with README.md's line numbers, with ``client`` connected to
  ``demo_server``'s default world, ``hero`` spawned and stepped as in the quick start, and ``pytest``
  and ``RpcError`` imported.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ecsd_client import Client, RpcError
from ecsd_client.testing import EcsdServer, find_binary

PACKAGE = Path(__file__).resolve().parent.parent  # clients/python
ROOT = PACKAGE.parent.parent  # the repository
README = PACKAGE / "README.md"
MARK = re.compile(r"<!-- readme-test: (\S+) -->")

NAMES = {
    "quick-start", "pythonpath", "venv", "arena", "arena-run", "test-mine", "plugin-run",
    "rpc-error", "actions", "pipeline", "watch", "ecsd-server", "own-tests",
}  # fmt: skip


@dataclass
class Block:
    name: str | None
    lang: str
    text: str
    line: int  # README.md's line number of the block's first line of code


def readme_blocks() -> list[Block]:
    lines = README.read_text("utf-8").split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        lang, start = lines[i][3:].strip(), i + 1
        end = lines.index("```", start)  # a block that never closes fails here
        before = i - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        mark = MARK.fullmatch(lines[before].strip()) if before >= 0 else None
        text = "\n".join(lines[start:end]) + "\n"
        blocks.append(Block(mark.group(1) if mark else None, lang, text, start + 1))
        i = end + 1
    return blocks


def block(name: str) -> Block:
    (found,) = [b for b in readme_blocks() if b.name == name]
    return found


def for_this_machine(text: str, *, port: int | None = None, root: Path = ROOT) -> str:
    text = text.replace("/path/to/ecsd", str(root))
    text = re.sub(r"\bpython3 -m ", f"{sys.executable} -m ", text)
    text = text.replace("ECSD_BIN=build/test/bin/ecsd", f"ECSD_BIN={find_binary()}")
    if port is not None:
        text = re.sub(r"\b7777\b", str(port), text)
    return text


def child_env(*, with_ecsd_bin: bool = True, **extra: str) -> dict[str, str]:
    """This process's environment for a block: no ECSD_* and no PYTHONPATH; ECSD_BIN set unless
    ``with_ecsd_bin`` is False (a block that must find ecsd by itself, as a reader's would)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECSD_") and k != "PYTHONPATH"}
    env.update(PYTHONDONTWRITEBYTECODE="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    if with_ecsd_bin:
        env["ECSD_BIN"] = str(find_binary())
    env.update(extra)
    return env


def run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


def run_sh(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = run(["bash", "-e", "-c", script], cwd, env)
    assert result.returncode == 0, f"{script}\n{result.stdout}{result.stderr}"
    return result


def run_fragment(name: str, **names: Any) -> None:
    b = block(name)
    assert b.lang == "python"
    exec(compile("\n" * (b.line - 1) + b.text, str(README), "exec"), {"__name__": "readme", **names})


@pytest.fixture(scope="module")
def demo_server() -> Iterator[EcsdServer]:
    """What scripts/run.sh serves: ecsd --demo (the default world, running, with the demo scene)."""
    with EcsdServer(data_dir=False, args=["--demo"]) as server:
        yield server


@pytest.fixture
def quick_start(demo_server: EcsdServer) -> Iterator[tuple[Client, int]]:
    """``client`` and ``hero`` as the quick start leaves them (the client still open)."""
    with Client(port=demo_server.port) as client:
        hero = client.spawn({"Position": {"x": 0, "y": 10}, "Velocity": {"x": 1}})
        client.step(60)
        yield client, hero


def test_every_block_is_named_and_run() -> None:
    blocks = readme_blocks()
    unnamed = [b.line for b in blocks if b.name is None]
    assert not unnamed, f"README.md blocks at lines {unnamed} have no <!-- readme-test: NAME --> before them"
    names = [b.name for b in blocks]
    assert len(names) == len(set(names)), f"a name is used twice: {names}"
    assert set(names) == NAMES, "each README block needs a test here, and each test here its block"


def test_quick_start(tmp_path: Path, demo_server: EcsdServer) -> None:
    b = block("quick-start")
    assert "port=7777" in b.text
    (tmp_path / "quick_start.py").write_text(for_this_machine(b.text, port=demo_server.port), "utf-8")
    result = run([sys.executable, "quick_start.py"], tmp_path, child_env(PYTHONPATH=str(PACKAGE)))
    assert result.returncode == 0, result.stdout + result.stderr
    printed = ast.literal_eval(result.stdout.strip())
    assert list(printed) == ["Position"] and printed["Position"]["y"] == 10.0
    # 60 ticks at 60 Hz at 1 unit/s; the running world may tick once or twice more by itself.
    assert 1.0 - 1e-9 <= printed["Position"]["x"] < 1.2


def test_pythonpath(tmp_path: Path) -> None:
    script = for_this_machine(block("pythonpath").text)
    script += f'{sys.executable} -c "import ecsd_client; print(ecsd_client.__file__)"\n'
    result = run_sh(script, tmp_path, child_env())
    assert Path(result.stdout.strip()) == PACKAGE / "ecsd_client" / "__init__.py"


def test_venv(tmp_path: Path, demo_server: EcsdServer) -> None:
    """The venv block without its apt-get line, offline (--no-build-isolation, as the README says);
    then the plugin loads by itself and the arena example runs with the venv's python."""
    if sys.prefix != sys.base_prefix:
        pytest.skip("this suite runs in a virtual environment; the README makes one from a system python")
    lines = block("venv").text.splitlines()
    assert lines[0].startswith("sudo apt-get install ")
    assert "add `--no-build-isolation`" in README.read_text("utf-8")
    copy = tmp_path / "ecsd" / "clients" / "python"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    script = for_this_machine("\n".join(lines[1:]) + "\n", root=tmp_path / "ecsd")
    script = re.sub(r"(\.venv/bin/pip install \S+)", r"\1 --no-build-isolation", script)
    # The project root is the ecsd repository, where scripts/run.sh built build/release/bin/ecsd: the
    # fixture finds it from there by itself, with no ECSD_BIN and no ecsd on PATH.
    project = tmp_path / "ecsd"
    (project / "build" / "release" / "bin").mkdir(parents=True)
    (project / "build" / "release" / "bin" / "ecsd").symlink_to(find_binary())
    assert shutil.which("ecsd", path=child_env()["PATH"]) is None, "an ecsd on PATH would hide the search"
    result = run(["bash", "-e", "-c", script], project, child_env(with_ecsd_bin=False, PIP_NO_INDEX="1"))
    if result.returncode != 0 and "ensurepip is not available" in result.stdout + result.stderr:
        pytest.skip("python3-venv is not installed (the README's apt-get line installs it)")
    assert result.returncode == 0, result.stdout + result.stderr

    python = str(project / ".venv" / "bin" / "python")
    where = run([python, "-c", "import ecsd_client; print(ecsd_client.__file__)"], project, child_env())
    assert "/.venv/" in where.stdout, where.stdout + where.stderr
    (project / "test_mine.py").write_text(block("test-mine").text, "utf-8")
    mine = run([python, "-m", "pytest", "-q", "test_mine.py"], project, child_env(with_ecsd_bin=False))  # no -p
    assert "1 passed" in mine.stdout, mine.stdout + mine.stderr
    shutil.copy(PACKAGE / "examples" / "test_arena.py", project)
    arena = run([python, "-m", "pytest", "test_arena.py"], project,
                child_env(with_ecsd_bin=False, ECSD_PORT=str(demo_server.port)))
    assert "1 passed" in arena.stdout, arena.stdout + arena.stderr


def test_arena_is_the_example_file() -> None:
    # test_example_and_plugin.py runs examples/test_arena.py (and shows it can fail).
    assert block("arena").text == (PACKAGE / "examples" / "test_arena.py").read_text("utf-8")


def test_arena_run(tmp_path: Path, demo_server: EcsdServer) -> None:
    lines = block("arena-run").text.splitlines()
    assert lines[0].startswith("scripts/run.sh ")  # demo_server stands in for it
    script = for_this_machine("\n".join(lines[1:]) + "\n")
    result = run_sh(script, tmp_path, child_env(ECSD_PORT=str(demo_server.port)))
    assert "1 passed" in result.stdout, result.stdout
    with demo_server.client() as c:
        assert c.list_worlds() == ["default"]  # its world is gone again


def test_plugin_run(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text(block("test-mine").text, "utf-8")
    result = run_sh(for_this_machine(block("plugin-run").text), tmp_path, child_env(with_ecsd_bin=False))
    assert "1 passed" in result.stdout, result.stdout


def test_rpc_error(quick_start: tuple[Client, int]) -> None:
    client, hero = quick_start
    run_fragment("rpc-error", client=client, hero=hero, pytest=pytest, RpcError=RpcError)


def test_actions(quick_start: tuple[Client, int], capsys: pytest.CaptureFixture[str]) -> None:
    client, hero = quick_start
    run_fragment("actions", client=client, hero=hero, pytest=pytest, RpcError=RpcError)
    teleported, listed = capsys.readouterr().out.splitlines()
    assert ast.literal_eval(teleported) == {"x": 5.0, "y": 5.0, "by": "anonymous"}
    assert ("teleport", 1, 1) in ast.literal_eval(listed)
    client.remove_action("teleport")  # the demo world as the other fragments expect it


def test_pipeline(quick_start: tuple[Client, int], capsys: pytest.CaptureFixture[str]) -> None:
    client, hero = quick_start
    entities = client.world_info()["entities"]
    run_fragment("pipeline", client=client, hero=hero)
    printed = re.fullmatch(r"(\[.*\]) (\d+) (\d+)\n", capsys.readouterr().out)
    assert printed, "it prints the ids, the tick and the entity count"
    ids, tick, count = ast.literal_eval(printed[1]), int(printed[2]), int(printed[3])
    assert len(ids) == 3 and all(isinstance(i, int) for i in ids)
    assert tick > 60 and count == entities + 3


def test_watch(quick_start: tuple[Client, int]) -> None:
    client, hero = quick_start
    run_fragment("watch", client=client, hero=hero)
    assert sorted(client.get(hero)) == ["Position"]  # it lost its Velocity


def test_ecsd_server(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(block("ecsd-server").text, "utf-8")
    result = run([sys.executable, "server.py"], tmp_path, child_env(PYTHONPATH=str(PACKAGE)))
    assert result.returncode == 0, result.stdout + result.stderr


def test_own_tests() -> None:
    # Collected, not run: running them would run this test again.
    script = for_this_machine(block("own-tests").text).rstrip("\n") + " --collect-only -q\n"
    result = run_sh(script, ROOT, child_env(with_ecsd_bin=False))  # found from the root by itself
    assert re.search(r"^\d+ tests collected", result.stdout, re.M), result.stdout
    assert "test_readme.py::test_own_tests" in result.stdout
