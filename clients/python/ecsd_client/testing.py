"""``EcsdServer``: runs a real ecsd for a test, on a free port, and checks how it exits."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from .client import Client
from .errors import EcsdConnectionError, EcsdError, RpcError

__all__ = ["EcsdServer", "EcsdServerError", "find_binary"]

_LISTENING = "listening on "


class EcsdServerError(EcsdError):
    """ecsd could not be found or started, or it did not exit 0 when stopped."""


def _repo_root() -> Path | None:
    """The ecsd repository this package sits in (clients/python/ecsd_client), if it does."""
    parents = Path(__file__).resolve().parents
    if len(parents) < 4:
        return None
    root = parents[2 + 1]  # ecsd_client, python, clients, the repository
    return root if (root / "server").is_dir() and (root / "clients" / "python").is_dir() else None


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _built_under(root: Path) -> Path | None:
    """``root/build/release/bin/ecsd`` (what scripts/run.sh builds), else the newest other
    ``root/build/*/bin/ecsd``, else None."""
    release = root / "build" / "release" / "bin" / "ecsd"
    if _executable(release):
        return release
    built = [p for p in (root / "build").glob("*/bin/ecsd") if _executable(p)]
    return max(built, key=lambda p: p.stat().st_mtime) if built else None


def find_binary() -> Path:
    """Where ecsd is: ``$ECSD_BIN``; else, from the current directory upward (the ecsd repository
    a test runs in, or one of its folders), ``build/release/bin/ecsd``, then the newest other
    ``build/*/bin/ecsd``; else ``ecsd`` on ``PATH``; else the build folders of the repository this
    package sits in (``build/test/bin/ecsd`` first), when it is used from there."""
    env = os.environ.get("ECSD_BIN")
    if env:
        path = Path(env)
        if not _executable(path):
            raise EcsdServerError(f"ECSD_BIN={env} is not an executable file")
        return path.resolve()  # a restart after a chdir still finds it
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        found = _built_under(folder)
        if found is not None:
            return found  # absolute: a restart after a chdir still finds it
    on_path = shutil.which("ecsd")
    if on_path:
        return Path(on_path)
    root = _repo_root()
    if root is not None:
        preferred = root / "build" / "test" / "bin" / "ecsd"
        if _executable(preferred):
            return preferred
        found = _built_under(root)
        if found is not None:
            return found
    raise EcsdServerError(
        f"cannot find ecsd: set ECSD_BIN, run from the ecsd repository (or a folder in it) after "
        f"building it (scripts/run.sh builds build/release/bin/ecsd; searched {here} and upward for "
        f"build/release/bin/ecsd and build/*/bin/ecsd), or put ecsd on PATH"
    )


def _drain(stream: Any, sink: list[str]) -> None:
    """Keeps reading ecsd's stdout after start-up so it can never block on a full pipe."""
    for line in iter(stream.readline, b""):
        sink.append(line.decode("utf-8", "replace"))
    stream.close()


def _cleanup(holder: dict[str, Any]) -> None:
    """At garbage collection or interpreter exit: kill a server still running, remove its files."""
    proc: subprocess.Popen[bytes] | None = holder.get("proc")
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()
    scratch = holder.get("scratch")
    if scratch:
        shutil.rmtree(scratch, ignore_errors=True)


class EcsdServer:
    """Runs ecsd for a test::

        with EcsdServer() as server, server.client() as client:
            client.spawn({"Position": {}})

    It starts ``binary`` (default: ``find_binary()``) with ``--port 0`` and reads the
    ``listening on HOST:PORT`` line, then waits until ``server.ping`` answers. ``--http-port 0``
    (HTTP off) and ``--log-level warn`` are added unless ``args`` gives them. ``ECSD_*``
    variables of the environment are not passed on (the test decides every setting); ``env``
    adds variables. ``token`` starts it with that token (as ``ECSD_TOKEN``) and makes
    ``client()`` authenticate.

    ``data_dir``: default a temporary folder, removed when the server is closed; a path is used
    and kept; ``False`` runs without ``--data-dir`` (worlds in memory only).

    Leaving the ``with`` block (or ``close()``) stops it with SIGTERM and raises
    ``EcsdServerError`` if it does not exit 0 within ``stop_timeout`` seconds.
    """

    def __init__(
        self,
        binary: str | os.PathLike[str] | None = None,
        data_dir: str | os.PathLike[str] | Literal[False] | None = None,
        args: Iterable[str] = (),
        *,
        token: str | None = None,
        env: Mapping[str, str] | None = None,
        host: str = "127.0.0.1",
        start_timeout: float = 15.0,
        stop_timeout: float = 10.0,
    ) -> None:
        self.binary = Path(binary).resolve() if binary is not None else find_binary()
        self.args = list(args)
        self.token = token
        self.host = host
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self._env = dict(env or {})
        self._scratch = Path(tempfile.mkdtemp(prefix="ecsd-server-"))
        self._holder: dict[str, Any] = {"scratch": self._scratch, "proc": None}
        weakref.finalize(self, _cleanup, self._holder)
        if data_dir is False:
            self.data_dir: Path | None = None
        elif data_dir is None:
            self.data_dir = self._scratch / "data"
            self.data_dir.mkdir()
        else:
            self.data_dir = Path(data_dir)
            self.data_dir.mkdir(parents=True, exist_ok=True)
        self._proc: subprocess.Popen[bytes] | None = None
        self._stdout: list[str] = []
        self._clients: list[Client] = []
        self._log_path = self._scratch / "ecsd.log"
        self.port = 0

    # -- life cycle ---------------------------------------------------------------------------

    def __enter__(self) -> EcsdServer:
        if self._proc is None:
            self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is None:
            self.close()
            return
        try:  # the test failed already: report ecsd's exit too, without hiding the failure
            self.close()
        except EcsdServerError as stop_error:
            exc.add_note(str(stop_error))

    def start(self) -> EcsdServer:
        """Starts ecsd (``with`` does this); returns self."""
        if self.running:
            raise EcsdServerError("ecsd is running already")
        self._launch(0)
        return self

    def stop(self) -> int:
        """SIGTERM, then waits for ecsd to exit. Raises ``EcsdServerError`` unless it exits 0
        within ``stop_timeout`` (then it is killed). Does nothing after ``kill()``."""
        proc = self._proc
        self._close_clients()
        if proc is None:
            return 0
        self._proc = None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                raise EcsdServerError(
                    f"ecsd (pid {proc.pid}) did not exit within {self.stop_timeout} s of SIGTERM; killed it"
                    + self._log_tail()
                ) from None
        code = proc.returncode
        if code != 0:
            how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
            raise EcsdServerError(f"ecsd (pid {proc.pid}) {how}, not 0" + self._log_tail())
        return code

    def kill(self) -> None:
        """SIGKILL: a crash, with no chance to save. ``restart()`` then shows what the journal kept."""
        proc = self._proc
        self._close_clients()
        self._proc = None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def restart(self) -> None:
        """Stops ecsd (SIGTERM, checked as ``stop()`` does, unless it was killed), then starts it
        again with the same arguments and data folder, on the same port when that is free."""
        self.stop()
        self._launch(self.port)

    def close(self) -> None:
        """Stops ecsd (raising as ``stop()`` does) and removes the temporary folder."""
        try:
            self.stop()
        finally:
            _cleanup(self._holder)

    # -- what tests use -----------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int:
        if self._proc is None:
            raise EcsdServerError("ecsd is not running")
        return self._proc.pid

    @property
    def log(self) -> str:
        """What ecsd wrote to stderr (its log) since it was first started."""
        try:
            return self._log_path.read_text("utf-8", "replace")
        except FileNotFoundError:
            return ""

    @property
    def stdout(self) -> str:
        return "".join(self._stdout)

    def client(self, **options: Any) -> Client:
        """A ``Client`` connected to this server (authenticated when it has a ``token``), closed
        when the server stops. ``options`` go to ``Client`` (``world``, ``timeout``, ...)."""
        options.setdefault("token", self.token)
        client = Client(self.host, self.port, **options)
        self._clients = [c for c in self._clients if not c.closed]
        self._clients.append(client)
        return client

    def __repr__(self) -> str:
        state = f"pid {self._proc.pid}" if self._proc is not None else "stopped"
        return f"<EcsdServer {self.host}:{self.port} {state} data_dir={self.data_dir}>"

    # -- internals ----------------------------------------------------------------------------

    def _command(self, port: int) -> list[str]:
        command = [str(self.binary), "--host", self.host, "--port", str(port)]
        if "--http-port" not in self.args:
            command += ["--http-port", "0"]
        if "--log-level" not in self.args:
            command += ["--log-level", "warn"]
        if self.data_dir is not None and "--data-dir" not in self.args:
            command += ["--data-dir", str(self.data_dir)]
        return command + self.args

    def _environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ECSD_")}
        if self.token is not None:
            env["ECSD_TOKEN"] = self.token
        env.update(self._env)
        return env

    def _launch(self, port: int) -> None:
        try:
            self._start_once(port)
        except EcsdServerError:
            if port == 0:
                raise
            self._start_once(0)  # the old port is taken meanwhile: any port will do

    def _start_once(self, port: int) -> None:
        deadline = time.monotonic() + self.start_timeout
        command = self._command(port)
        with open(self._log_path, "ab") as log:
            try:
                proc = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    env=self._environment(),
                )
            except OSError as e:
                raise EcsdServerError(f"cannot run {self.binary}: {e}") from e
        self._proc = proc
        self._holder["proc"] = proc
        assert proc.stdout is not None
        try:
            self.port = self._read_port(proc, command, deadline)
            threading.Thread(target=_drain, args=(proc.stdout, self._stdout), daemon=True).start()
            self._wait_ready(deadline)
        except BaseException:
            self._proc = None
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            raise

    def _read_port(self, proc: subprocess.Popen[bytes], command: list[str], deadline: float) -> int:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        seen = b""
        marker = _LISTENING.encode()
        while True:
            at = seen.find(marker)
            end = seen.find(b"\n", at) if at >= 0 else -1
            if end >= 0:
                self._stdout.append(seen.decode("utf-8", "replace"))
                address = seen[at + len(marker) : end].decode("utf-8", "replace").strip()
                return int(address.rsplit(":", 1)[1])
            left = deadline - time.monotonic()
            if left <= 0:
                raise EcsdServerError(
                    f"ecsd printed no '{_LISTENING}HOST:PORT' line within {self.start_timeout} s; "
                    f"stdout: {seen.decode('utf-8', 'replace')!r}" + self._log_tail()
                )
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                code = proc.wait()
                raise EcsdServerError(
                    f"ecsd exited with code {code} before listening: {' '.join(command)}"
                    + self._log_tail()
                )
            seen += chunk

    def _wait_ready(self, deadline: float) -> None:
        """Until ``server.ping`` is answered (``unauthorized`` counts: it answered)."""
        while True:
            try:
                with Client(self.host, self.port, timeout=max(0.1, deadline - time.monotonic())) as probe:
                    probe.ping()
                return
            except RpcError:
                return
            except EcsdConnectionError as e:
                if time.monotonic() >= deadline or not self.running:
                    raise EcsdServerError(f"ecsd does not answer on port {self.port}: {e}" + self._log_tail()) from e
                time.sleep(0.02)

    def _close_clients(self) -> None:
        for client in self._clients:
            client.close()
        self._clients.clear()

    def _log_tail(self, lines: int = 30) -> str:
        tail = self.log.splitlines()[-lines:]
        return ("\necsd's log (last lines):\n" + "\n".join(tail)) if tail else ""
