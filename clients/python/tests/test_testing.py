"""EcsdServer: start-up, restart, crashes, exit codes, binaries."""

from __future__ import annotations

import os
import signal
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from ecsd_client import EcsdConnectionError, RpcError
from ecsd_client.testing import EcsdServer, EcsdServerError, _repo_root, find_binary


def test_starts_on_a_free_port_and_cleans_up() -> None:
    with EcsdServer() as a, EcsdServer() as b:
        assert a.port != b.port and a.port > 0
        assert a.running and a.pid > 0
        assert "listening on 127.0.0.1:" in a.stdout
        with a.client() as c:
            config = c.info()["config"]
            assert config["http-port"] == 0  # HTTP off, so servers side by side do not collide
            assert config["data-dir"] == str(a.data_dir)
        data_dir = a.data_dir
        assert data_dir is not None and data_dir.is_dir()
    assert not a.running
    assert not data_dir.exists()  # the temporary folder is gone


def test_restart_keeps_the_data_and_the_port(tmp_path: Path) -> None:
    with EcsdServer(data_dir=tmp_path / "data") as server:
        port = server.port
        with server.client() as c:
            c.create_world("keep", paused=True)
            e = c.spawn({"Position": {"x": 7}}, world="keep")
            digest = c.hash(world="keep")
        server.restart()  # SIGTERM (checked: exit 0), then the same command
        assert server.port == port
        with server.client(world="keep") as c:
            assert c.get(e) == {"Position": {"x": 7.0, "y": 0.0}}
            assert c.hash() == digest
            assert c.spawn({}) > e  # ids are never handed out twice
    assert (tmp_path / "data" / "keep.snapshot").is_file()  # a data_dir given is kept


def test_kill_then_restart_keeps_what_was_acknowledged() -> None:
    with EcsdServer(args=["--autosave", "0"]) as server:
        with server.client() as c:
            c.pause()
            ids = c.spawn_many([{"Health": {"hp": i}} for i in range(10)])
            c.mutate(ids[3], "Health", "hp", 99)
            c.step(4)
            digest = c.hash()
            # The default world ticks from start-up until the pause arrives: on a loaded machine
            # that may be a tick or two, so the tick to keep is the one read, not 4.
            tick = c.world_info()["tick"]
            assert tick >= 4
        stale = server.client()
        server.kill()  # SIGKILL: no snapshot at exit, only the journal
        assert not server.running
        assert stale.closed  # clients of the server are closed with it
        server.restart()
        with server.client() as c:
            assert c.hash() == digest
            assert c.get(ids[3]) == {"Health": {"hp": 99.0, "max": 100.0}}
            assert c.world_info()["tick"] == tick


def test_a_crash_fails_the_with_block() -> None:
    server = EcsdServer(data_dir=False).start()
    os.kill(server.pid, signal.SIGSEGV)
    # A plain build dies of the SIGSEGV (11); under AddressSanitizer its handler reports the crash
    # and aborts (6). Either way the with block must fail.
    with pytest.raises(EcsdServerError, match=r"killed by signal (11|6),"):
        server.close()
    assert not server.running


def test_a_non_zero_exit_fails_the_with_block(tmp_path: Path) -> None:
    # A stand-in binary that starts like ecsd but exits 3 on SIGTERM.
    fake = tmp_path / "fake-ecsd"
    fake.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import signal, socket, sys
        server = socket.create_server(("127.0.0.1", 0))
        print("listening on 127.0.0.1:%d" % server.getsockname()[1], flush=True)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
        while True:
            conn, _ = server.accept()
            reader = conn.makefile("rb")
            for line in reader:
                conn.sendall(b'{{"jsonrpc":"2.0","id":1,"result":"pong"}}\\n')
        """))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(EcsdServerError, match="exited with code 3"):
        with EcsdServer(binary=fake, data_dir=False) as server:
            assert server.running


def test_a_failing_test_keeps_its_own_error(tmp_path: Path) -> None:
    with pytest.raises(KeyError) as caught:
        with EcsdServer(data_dir=False) as server:
            os.kill(server.pid, signal.SIGKILL)
            raise KeyError("the test's own failure")
    assert any("killed by signal 9" in note for note in caught.value.__notes__)


def test_start_failure_is_reported_with_the_log() -> None:
    with pytest.raises(EcsdServerError, match=r"exited with code \d+ before listening") as caught:
        EcsdServer(data_dir=False, args=["--no-such-flag"]).start()
    assert "no-such-flag" in str(caught.value)


def test_token(tmp_path: Path) -> None:
    with EcsdServer(data_dir=False, token="s3cret") as server:
        with server.client() as c:  # authenticates with the server's token
            assert c.info()["config"]["token"] == "set"
        with pytest.raises(RpcError) as caught, server.client(token=None) as anonymous:
            anonymous.ping()
        assert caught.value.reason == "unauthorized"


def test_environment_does_not_leak_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ECSD_TOKEN", "from-the-environment")
    monkeypatch.setenv("ECSD_READ_ONLY", "1")
    with EcsdServer(data_dir=False) as server, server.client() as c:
        assert c.info()["auth_required"] is False
        assert isinstance(c.spawn({}), int)


def test_env_and_data_dir_false() -> None:
    with EcsdServer(data_dir=False, env={"ECSD_MAX_WORLDS": "2"}) as server, server.client() as c:
        assert server.data_dir is None
        assert c.info()["limits"]["max_worlds"] == 2
        with pytest.raises(RpcError) as caught:
            c.save()
        assert caught.value.reason == "invalid_params"


def test_after_stop_the_port_is_closed() -> None:
    server = EcsdServer(data_dir=False).start()
    port = server.port
    assert server.stop() == 0
    server.stop()  # nothing left to stop
    from ecsd_client import Client

    with pytest.raises(EcsdConnectionError):
        Client(port=port, timeout=1)
    server.close()


def _fake_ecsd(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_find_binary_searches_upward_from_the_current_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Run from a repository (or a folder in it) without ECSD_BIN: its build/release/bin/ecsd, as
    scripts/run.sh builds it, then the newest other build/*/bin/ecsd, before PATH."""
    repo = tmp_path / "repo"
    release = _fake_ecsd(repo / "build" / "release" / "bin" / "ecsd")
    debug = _fake_ecsd(repo / "build" / "debug" / "bin" / "ecsd")
    on_path = _fake_ecsd(tmp_path / "path" / "ecsd")
    (repo / "tests" / "deep").mkdir(parents=True)
    monkeypatch.delenv("ECSD_BIN", raising=False)
    monkeypatch.setenv("PATH", str(on_path.parent))
    monkeypatch.chdir(repo)
    assert find_binary() == release.resolve()
    monkeypatch.chdir(repo / "tests" / "deep")
    assert find_binary() == release.resolve()
    release.unlink()
    assert find_binary() == debug.resolve()
    debug.unlink()
    assert find_binary() == on_path
    monkeypatch.setenv("ECSD_BIN", str(on_path))  # ECSD_BIN still comes first
    _fake_ecsd(repo / "build" / "release" / "bin" / "ecsd")
    assert find_binary() == on_path.resolve()


def test_find_binary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = find_binary()
    assert os.access(real, os.X_OK)
    monkeypatch.setenv("ECSD_BIN", str(tmp_path / "missing"))
    with pytest.raises(EcsdServerError, match="ECSD_BIN"):
        find_binary()
    monkeypatch.delenv("ECSD_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)  # no build folder above it
    if _repo_root() is None:  # an installed copy: no repository to look in
        with pytest.raises(EcsdServerError, match="cannot find ecsd"):
            find_binary()
    else:
        found = find_binary()  # the repository's build folders
        assert found.name == "ecsd" and found.parent.parent.parent.name == "build"
