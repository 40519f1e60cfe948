#!/usr/bin/env python3
"""Runs every example in README.md and docs/*.md against a real ecsd and compares what the docs show.

The convention (markers, block kinds, how output is compared) is described in tests/docs/README.md.
Python 3.11 standard library only.

    run_docs.py --ecsd PATH --ecsctl PATH [--root REPO] [-v] [FILE...]
"""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import queue
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

SHELL_INFOS = {"sh", "bash", "shell"}
MARKER_RE = re.compile(r"<!--\s*docs-test\b(.*?)-->", re.S)
FENCE_RE = re.compile(r"^(\s*)(`{3,})\s*([\w+-]*)\s*$")
DEFAULT_PORT, DEFAULT_HTTP_PORT = "7777", "7778"
BLOCK_TIMEOUT = 60.0
READ_TIMEOUT = 5.0
INTERRUPT_AFTER = 2.0  # seconds a "Ctrl-C" line runs before it gets SIGINT
DIRECTIVES = {"skip", "output", "expect", "server", "setup", "vary", "approx", "name", "after", "file",
              "meanwhile", "ctrl-c", "noerrexit", "contains", "xfail", "compare-file", "crc-lines"}


class DocError(Exception):
    """A marker or block the runner cannot make sense of (a mistake in the docs' markup)."""


# ---------------------------------------------------------------------------------------------
# Parsing the documents


@dataclass
class Block:
    path: str                      # relative to the repo root
    line: int                      # 1-based line of the opening fence
    index: int                     # 1-based number of the block in its file
    info: str                      # the fence's info string (sh, json, ...)
    text: str                      # the block's content
    directives: list = field(default_factory=list)  # [(key, args)] from the markers before it
    marker_line: int = 0

    def get(self, key):
        return [a for k, a in self.directives if k == key]

    def has(self, key):
        return any(k == key for k, _ in self.directives)

    def one(self, key):
        vals = self.get(key)
        return vals[-1] if vals else None

    @property
    def where(self):
        return f"{self.path}:{self.line} (block {self.index}, ```{self.info})"


def parse_marker(body: str, path: str, line: int) -> list:
    """`<!-- docs-test: KEY ARGS -->` or `<!-- docs-test` NEWLINE `KEY ARGS` lines... `-->`.
    `expect` takes every following line of the comment as its argument."""
    body = body.rstrip()
    if body.startswith(":"):
        lines = [body[1:].strip()]
    else:
        lines = body.split("\n")[1:] if "\n" in body else [body.strip()]
    out = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        s = raw.strip()
        i += 1
        if not s:
            continue
        key, _, args = s.partition(" ")
        key = key.rstrip(":")
        if key not in DIRECTIVES:
            raise DocError(f"{path}:{line}: unknown docs-test directive {key!r}")
        if key == "expect" and not args.strip():
            args = "\n".join(lines[i:])
            i = len(lines)
        out.append((key, args.strip()))
    return out


def parse_doc(root: Path, rel: str) -> list[Block]:
    text = (root / rel).read_text(encoding="utf-8")
    lines = text.split("\n")
    blocks: list[Block] = []
    pending: list = []
    pending_line = 0
    i = 0
    while i < len(lines):
        ln = lines[i]
        stripped = ln.strip()
        if stripped.startswith("<!--") and "docs-test" in stripped.split("-->")[0]:
            j = i
            chunk = ln
            while "-->" not in chunk:
                j += 1
                if j >= len(lines):
                    raise DocError(f"{rel}:{i + 1}: unterminated docs-test comment")
                chunk += "\n" + lines[j]
            m = MARKER_RE.search(chunk)
            if not m:
                raise DocError(f"{rel}:{i + 1}: malformed docs-test comment")
            if not pending:
                pending_line = i + 1
            pending += parse_marker(m.group(1), rel, i + 1)
            i = j + 1
            continue
        m = FENCE_RE.match(ln)
        if m:
            indent, ticks, info = m.groups()
            body = []
            i += 1
            while i < len(lines) and not re.match(rf"^\s*{ticks}\s*$", lines[i]):
                body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
                i += 1
            if i >= len(lines):
                raise DocError(f"{rel}:{len(blocks) and blocks[-1].line}: unterminated code fence")
            start = i - len(body)  # 1-based line of the fence
            blocks.append(Block(rel, start, len(blocks) + 1, info, "\n".join(body), pending, pending_line))
            pending = []
            i += 1
            continue
        if stripped and pending:
            raise DocError(f"{rel}:{pending_line}: a docs-test marker must come right before a code block "
                           f"(only blank lines between), but line {i + 1} is prose")
        i += 1
    if pending:
        raise DocError(f"{rel}:{pending_line}: a docs-test marker with no code block after it")
    return blocks


# ---------------------------------------------------------------------------------------------
# JSON with the docs' `...` elisions, and structural comparison

class DocNum(float):
    """A number as the docs wrote it; `decimals` is how many digits follow the point."""
    decimals: int
    is_int: bool


def _num(text: str) -> DocNum:
    n = DocNum(text)
    n.is_int = not any(c in text for c in ".eE")
    n.decimals = len(text.split(".")[1].split("e")[0].split("E")[0]) if "." in text else 0
    return n


ELIDED = "\u2026elided"  # a member "...": more members; an element "...": more elements


def doc_json(text: str):
    """Parses a JSON text in which `...` stands for 'more members / elements / any value'."""
    out = []
    stack = []
    in_str = esc = False
    i = 0
    while i < len(text):
        c = text[i]
        if in_str:
            out.append(c)
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
            i += 1
            continue
        if c == '"':
            in_str = True
        elif c in "{[":
            stack.append(c)
        elif c in "}]":
            if stack:
                stack.pop()
        if text.startswith("...", i):
            prev = "".join(out).rstrip()[-1:]
            if prev == ":":
                out.append(json.dumps(ELIDED))
            elif stack and stack[-1] == "{":
                out.append(json.dumps(ELIDED) + ":null")
            else:
                out.append(json.dumps(ELIDED))
            i += 3
            continue
        out.append(c)
        i += 1
    return json.loads("".join(out), parse_float=_num, parse_int=_num)


def kind(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if v is None:
        return "null"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def compare(exp, act, path="$", vary=frozenset(), approx=False) -> list[str]:
    """Mismatches between a documented value and an actual one (empty: they match)."""
    if isinstance(exp, str) and exp == ELIDED:
        return []
    if kind(exp) != kind(act):
        return [f"{path}: expected {kind(exp)} {short(exp)}, got {kind(act)} {short(act)}"]
    if isinstance(exp, dict):
        errs = []
        more = ELIDED in exp or "..." in exp  # {"...": {}} is the docs' way to say "and the others"
        for k, v in exp.items():
            if k in (ELIDED, "..."):
                continue
            if k not in act:
                errs.append(f"{path}.{k}: missing")
            elif k in vary:
                if kind(v) != kind(act[k]):
                    errs.append(f"{path}.{k}: expected some {kind(v)}, got {kind(act[k])} {short(act[k])}")
            else:
                errs += compare(v, act[k], f"{path}.{k}", vary, approx)
        if not more:
            extra = [k for k in act if k not in exp]
            if extra:
                errs.append(f"{path}: unexpected member(s) {', '.join(extra)} (write ... in the doc if more may follow)")
        return errs
    if isinstance(exp, list):
        if ELIDED in exp:
            cut = exp.index(ELIDED)
            head, tail = exp[:cut], [e for e in exp[cut + 1:] if e != ELIDED]
            if len(act) < len(head) + len(tail):
                return [f"{path}: expected at least {len(head) + len(tail)} elements, got {len(act)}"]
            errs = []
            for n, e in enumerate(head):
                errs += compare(e, act[n], f"{path}[{n}]", vary, approx)
            for n, e in enumerate(tail):
                k = len(act) - len(tail) + n
                errs += compare(e, act[k], f"{path}[{k}]", vary, approx)
            return errs
        if len(exp) != len(act):
            return [f"{path}: expected {len(exp)} elements, got {len(act)}: {short(act)}"]
        errs = []
        for n, (e, a) in enumerate(zip(exp, act)):
            errs += compare(e, a, f"{path}[{n}]", vary, approx)
        return errs
    if kind(exp) == "number":
        a = float(act)
        e = float(exp)
        if getattr(exp, "is_int", False) and not approx:
            ok = isinstance(act, int) and not isinstance(act, bool) and int(exp) == act or \
                float(act) == e and not isinstance(act, int)
            ok = ok or a == e
        elif approx:
            tol = 10.0 ** -getattr(exp, "decimals", 0) if not getattr(exp, "is_int", False) else 0.5
            ok = abs(a - e) <= max(tol, 1e-9 * abs(e))
        else:
            ok = abs(a - e) <= 1e-9 * max(1.0, abs(e))
        return [] if ok else [f"{path}: expected {exp_text(exp)}, got {json.dumps(act)}"]
    if exp != act:
        return [f"{path}: expected {json.dumps(exp)}, got {json.dumps(act)}"]
    return []


def exp_text(v):
    if isinstance(v, DocNum):
        return str(int(v)) if v.is_int else repr(float(v))
    return json.dumps(v)


def short(v, n=120):
    s = json.dumps(v) if not isinstance(v, str) else json.dumps(v)
    return s if len(s) <= n else s[:n] + "..."


def json_or_none(text):
    try:
        return doc_json(text)
    except ValueError:
        return None


def match_line(exp: str, act: str, vary, approx) -> list[str] | None:
    """None when an expected output line matches an actual one, else the reasons."""
    # A JSON text, possibly after a prefix such as "data: ": compared structurally.
    m = re.match(r"^([^\[{\"]*?)([\[{].*)$", exp)
    if m and json_or_none(m.group(2)) is not None:
        prefix, body = m.groups()
        if not act.startswith(prefix):
            return [f"expected a line starting {prefix!r}"]
        try:
            actual = json.loads(act[len(prefix):])
        except ValueError:
            return ["expected a JSON text"]
        errs = compare(doc_json(body), actual, "$", vary, approx)
        return errs or None
    # Otherwise text, where `...` matches any characters.
    pattern = "^" + ".*".join(re.escape(p) for p in exp.split("...")) + "$"
    return None if re.match(pattern, act) else ["text differs"]


def match_output(exp_lines: list[str], act_lines: list[str], vary, approx, contains=False):
    """Matches expected output (a line `...` stands for any number of lines) against actual output.
    Returns None on a match, else a description of the first mismatch."""
    exp_lines = [l.rstrip() for l in exp_lines]
    act_lines = [l.rstrip() for l in act_lines]
    while exp_lines and not exp_lines[-1]:
        exp_lines.pop()
    while act_lines and not act_lines[-1]:
        act_lines.pop()
    if contains:
        exp_lines = ["..."] + exp_lines + ["..."]
    best = {"at": -1, "why": None}

    def rec(i, j):
        if i == len(exp_lines):
            return j == len(act_lines)
        if exp_lines[i] == "...":
            return any(rec(i + 1, k) for k in range(j, len(act_lines) + 1))
        if j == len(act_lines):
            if i > best["at"]:
                best.update(at=i, why=f"expected line {exp_lines[i]!r}, but the output ended")
            return False
        why = match_line(exp_lines[i], act_lines[j], vary, approx)
        if why is None:
            return rec(i + 1, j + 1)
        if contains and i == 1:  # the first shown line may end an actual line (curl prints no newline)
            for k in range(1, len(act_lines[j])):
                if match_line(exp_lines[i], act_lines[j][k:], vary, approx) is None and rec(i + 1, j + 1):
                    return True
        if i >= best["at"]:
            best.update(at=i, why=f"expected: {exp_lines[i]}\n      got: {act_lines[j]}\n      ({'; '.join(why)})")
        return False

    if rec(0, 0):
        return None
    return best["why"] or "the output has more lines than the docs show"


# ---------------------------------------------------------------------------------------------
# Servers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, ecsd: str, flags: list[str], tmp: Path):
        self.flags = flags
        self.log = tmp / f"ecsd-{time.monotonic_ns()}.log"
        for attempt in range(5):
            self.http_port = free_port()
            env = {k: v for k, v in os.environ.items() if not k.startswith("ECSD_")}
            self.proc = subprocess.Popen(
                [ecsd, "--port", "0", "--http-port", str(self.http_port), "--threads", "2", *flags],
                stdout=subprocess.PIPE, stderr=open(self.log, "w"), text=True, env=env, cwd=tmp,
                start_new_session=True)
            lines: queue.Queue = queue.Queue()
            threading.Thread(target=self._pump, args=(lines,), daemon=True).start()
            self.port = None
            viewer = False
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not viewer:
                try:
                    ln = lines.get(timeout=0.2)
                except queue.Empty:
                    if self.proc.poll() is not None:
                        break
                    if self.port is not None and time.monotonic() > deadline - 8:
                        break
                    continue
                if ln is None:
                    break
                m = re.match(r"listening on (\S+):(\d+)", ln)
                if m:
                    self.host, self.port = m.group(1), int(m.group(2))
                if ln.startswith("viewer at http://"):
                    viewer = True
            if self.port is not None and viewer:
                return
            self.stop()
        raise RuntimeError(f"ecsd {' '.join(flags)} did not start; its log:\n{self.log.read_text()}")

    def _pump(self, q):
        for ln in self.proc.stdout:
            q.put(ln.rstrip("\n"))
        q.put(None)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log_tail(self, n=15):
        try:
            return "\n".join(self.log.read_text().splitlines()[-n:])
        except OSError:
            return ""


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT)
        self.buf = b""

    def send(self, line: str):
        self.sock.sendall(line.encode() + b"\n")

    def read(self, timeout=READ_TIMEOUT):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                return None
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode()

    def call(self, line: str):
        """Sends a request and waits for the answer with its id (notifications in between are dropped)."""
        req = json.loads(line)
        self.send(line)
        if not isinstance(req, dict) or "id" not in req:
            return None
        while True:
            ans = self.read()
            if ans is None:
                raise RuntimeError(f"no answer to {line}")
            msg = json.loads(ans)
            if isinstance(msg, dict) and msg.get("id") == req["id"] and "method" not in msg:
                return msg

    def close(self):
        self.sock.close()


# ---------------------------------------------------------------------------------------------
# Running blocks


class Failure(Exception):
    pass


@dataclass
class Stats:
    run: int = 0
    compared: int = 0
    skipped: int = 0
    failed: int = 0
    xfailed: int = 0


def is_request(v) -> bool:
    if isinstance(v, list):
        return bool(v) and all(is_request(e) for e in v)
    return isinstance(v, dict) and "method" in v and "result" not in v and "error" not in v


def block_kind(b: Block) -> str:
    if b.has("skip"):
        return "skip"
    if b.has("output"):
        return "output"
    if b.has("file"):
        return "file"
    if b.has("compare-file"):
        return "compare-file"
    if b.info in SHELL_INFOS:
        return "shell"
    lines = [l for l in b.text.split("\n") if l.strip()]
    if lines and lines[0].startswith("$ ") and not b.info:
        return "transcript"
    if lines and all(l.startswith(("> ", "< ")) for l in lines):
        return "session"
    if lines and all(json_or_none(l) is not None for l in lines) and any(is_request(json_or_none(l)) for l in lines):
        return "exchange"
    return "unknown"


def session_steps(b: Block):
    """[(direction, text)] with direction '>' (send) or '<' (expect) for a session or exchange."""
    steps = []
    for n, l in enumerate(b.text.split("\n")):
        if not l.strip():
            continue
        if l.startswith("> ") or l.startswith("< "):
            steps.append((l[0], l[2:], b.line + 1 + n))
        else:
            steps.append((">" if is_request(json_or_none(l)) else "<", l, b.line + 1 + n))
    return steps


class Runner:
    def __init__(self, args, root: Path, tmp: Path):
        self.ecsd = os.path.abspath(args.ecsd)
        self.ecsctl = os.path.abspath(args.ecsctl)
        self.root = root
        self.tmp = tmp
        self.verbose = args.verbose
        self.named: dict[str, Block] = {}
        self.data_dir: Path | None = None
        self.failures: list[str] = []
        self.stats: dict[str, Stats] = {}
        # bin/: ecsctl and an ecsd that keeps off the fixed ports; build/release/bin/ in every
        # document's folder points there, so `build/release/bin/ecsctl ...` lines run as written.
        self.bin = tmp / "bin"
        self.bin.mkdir()
        (self.bin / "ecsctl").symlink_to(self.ecsctl)
        wrapper = self.bin / "ecsd"
        wrapper.write_text("#!/bin/sh\n# ecsd for examples that start their own: free ports unless the line names them\n"
                           f"ECSD_PORT=0 ECSD_HTTP_PORT=0 exec {self.ecsd} \"$@\"\n")
        wrapper.chmod(0o755)

    # -- helpers

    def server_flags(self, b: Block, workdir: Path) -> list[str]:
        """The block's `server` flags; `@tmp` becomes a new empty folder (exported as DOCS_DATA_DIR)."""
        flags = []
        self.data_dir = None
        for a in b.get("server"):
            for w in a.split():
                if "@tmp" in w:
                    d = Path(tempfile.mkdtemp(dir=self.tmp, prefix="data-"))
                    self.data_dir = self.data_dir or d
                    w = w.replace("@tmp", str(d))
                elif not w.startswith("-") and (workdir / w).is_file():
                    w = str(workdir / w)  # a file a `file` block wrote, as the reader's ecsd finds it
                flags.append(w)
        return flags

    def shell_env(self, server: Server) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ECSD_", "ECSCTL_"))}
        env.update(PATH=f"{self.bin}:{env.get('PATH', '/usr/bin:/bin')}", ECSD_HOST="127.0.0.1",
                   ECSD_PORT=str(server.port), HOME=str(self.tmp), ECSCTL_HISTORY=str(self.tmp / "history"))
        if self.data_dir is not None:
            env["DOCS_DATA_DIR"] = str(self.data_dir)
        env.pop("TERM", None)
        return env

    def vary(self, b: Block):
        return frozenset(w for a in b.get("vary") for w in a.split())

    def fail(self, b: Block, what: str, detail: str, server: Server | None = None):
        msg = f"FAIL {b.where}\n  {what}\n  {detail}"
        if server is not None:
            tail = server.log_tail(8)
            if tail:
                msg += "\n  ecsd's log (last lines):\n    " + tail.replace("\n", "\n    ")
        raise Failure(msg)

    # -- JSON-RPC

    def replay(self, name: str, conn: Conn, seen=()):
        if name in seen:
            raise DocError(f"docs-test: 'after {name}' loops")
        b = self.named.get(name)
        if b is None:
            raise DocError(f"docs-test: 'after {name}' names no block (name it with 'name {name}')")
        for prev in b.get("after"):
            self.replay(prev, conn, (*seen, name))
        for s in b.get("setup"):
            conn.call(s)
        for d, text, _ in session_steps(b):
            if d == ">":
                conn.call(text)

    def run_rpc(self, b: Block, st: Stats):
        workdir = self.workdir(b)
        server = Server(self.ecsd, self.server_flags(b, workdir), self.tmp)
        try:
            for prev in b.get("after"):
                c = Conn(server.port)
                self.replay(prev, c)
                c.close()
            conn = Conn(server.port)
            for s in b.get("setup"):
                ans = conn.call(s)
                if ans is not None and "error" in ans:
                    self.fail(b, f"setup request: {s}", f"was refused: {json.dumps(ans)}", server)
            vary, approx = self.vary(b), b.has("approx")
            meanwhile = list(b.get("meanwhile"))
            sent = []
            for d, text, line in session_steps(b):
                if d == ">":
                    conn.send(text)
                    sent.append(text)
                    continue
                got = conn.read()
                if got is None and meanwhile:
                    other = Conn(server.port)
                    for m in meanwhile:
                        other.call(m)
                    other.close()
                    meanwhile = []
                    got = conn.read()
                if got is None:
                    self.fail(b, f"line {line}: after sending {short(sent[-1] if sent else '', 200)}",
                              f"expected {text}\n  got nothing within {READ_TIMEOUT} s", server)
                try:
                    actual = json.loads(got)
                except ValueError:
                    self.fail(b, f"line {line}", f"expected {text}\n  got a line that is not JSON: {got}", server)
                errs = compare(doc_json(text), actual, "$", vary, approx)
                if errs:
                    self.fail(b, f"line {line}: after sending {short(sent[-1] if sent else '', 300)}",
                              f"expected: {text}\n  actual:   {got}\n  " + "\n  ".join(errs), server)
            extra = conn.read(0.3)
            if extra is not None:
                self.fail(b, "after the last line", f"the server sent a line the docs do not show: {extra}", server)
            conn.close()
            st.compared += 1
        finally:
            server.stop()

    # -- shell

    def workdir(self, b: Block) -> Path:
        d = self.tmp / "work" / b.path.replace("/", "_")
        if not d.exists():
            (d / "build" / "release").mkdir(parents=True)
            (d / "build" / "release" / "bin").symlink_to(self.bin)
        return d

    def shell_script(self, b: Block, server: Server | None) -> tuple[str, int]:
        text = b.text
        if server is not None:
            text = re.sub(rf"\b{DEFAULT_PORT}\b", str(server.port), text)
            text = re.sub(rf"\b{DEFAULT_HTTP_PORT}\b", str(server.http_port), text)
        patterns = b.get("ctrl-c")
        out = []
        for l in text.split("\n"):
            comment = re.search(r"\s#\s.*$", l)
            if (comment and "Ctrl-C" in comment.group(0)) or any(p and p in l for p in patterns):
                cmd = l[: comment.start()] if comment else l
                # What a reader does: let it run a moment, then press Ctrl-C. Exit 0 or death by SIGINT.
                l = (f"docs_rc=0; timeout --preserve-status -s INT {INTERRUPT_AFTER} {cmd.strip()} || docs_rc=$?; "
                     f"[ $docs_rc -eq 0 ] || [ $docs_rc -eq 130 ] || "
                     f"{{ echo \"docs-test: interrupted line exited $docs_rc\" >&2; exit $docs_rc; }}")
            out.append(l)
        pre = [f"shopt -s expand_aliases{'' if b.has('noerrexit') else '; set -e'}"]
        for s in b.get("setup"):
            pre.append(s)
        pre.append(f"PS4='+ docs line $(( {b.line} + LINENO - {len(pre) + 1} )): '; set -x")
        return "\n".join(pre + out) + "\n", len(pre)

    def run_shell(self, b: Block, st: Stats, expected: Block | None):
        workdir = self.workdir(b)
        flags = self.server_flags(b, workdir)
        server = Server(self.ecsd, flags, self.tmp)
        try:
            script, _ = self.shell_script(b, server)
            env = self.shell_env(server)
            for tool in ("jq", "curl", "timeout"):
                if re.search(rf"\b{tool}\b", b.text) and not shutil.which(tool):
                    self.fail(b, f"the example needs {tool}", f"{tool} is not installed on this machine")
            trace = Path(tempfile.mktemp(dir=self.tmp, prefix="xtrace-"))
            with open(trace, "w") as tf:
                # The trace goes to a high descriptor, out of the way of examples (`exec 3<>/dev/tcp/...`).
                fd = fcntl.fcntl(tf.fileno(), fcntl.F_DUPFD, 100)
                env["BASH_XTRACEFD"] = str(fd)
                try:
                    p = subprocess.run(["bash", "-c", script], cwd=workdir, env=env, capture_output=True,
                                       text=True, timeout=BLOCK_TIMEOUT, pass_fds=(fd,))
                except subprocess.TimeoutExpired as e:
                    self.fail(b, f"did not finish within {BLOCK_TIMEOUT} s", f"stdout so far: {e.stdout!r}", server)
                finally:
                    os.close(fd)
            traced = [l for l in trace.read_text().splitlines() if l.startswith("+ docs line")]
            last = traced[-1][2:] if traced else "(no command ran)"
            if p.returncode != 0:
                self.fail(b, f"exited {p.returncode}; last command: {last}",
                          f"stdout:\n    {indent(p.stdout)}\n  stderr:\n    {indent(p.stderr)}", server)
            if self.verbose >= 2:
                print(f"---- {b.where} stdout:\n{p.stdout}---- stderr:\n{p.stderr}----", flush=True)
            exp_text = None
            if expected is not None:
                exp_text = expected.text
                contains = expected.has("contains") or b.has("contains") or "contains" in (expected.one("output") or "")
                exp_where = f"the output block at {expected.path}:{expected.line}"
            elif b.has("expect"):
                exp_text, contains = b.one("expect"), b.has("contains")
                exp_where = "the block's hidden 'expect'"
            if exp_text is not None:
                exp_text = re.sub(rf"\b{DEFAULT_PORT}\b", str(server.port), exp_text)
                why = match_output(exp_text.split("\n"), p.stdout.split("\n"), self.vary(b) | (
                    self.vary(expected) if expected else frozenset()), b.has("approx"), contains)
                if why:
                    self.fail(b, f"output differs from {exp_where}",
                              f"{why}\n  whole output:\n    {indent(p.stdout)}", server)
                st.compared += 1
            st.run += 1
        finally:
            server.stop()

    def run_compare_file(self, b: Block, st: Stats):
        """The block shows a file ecsd writes: `setup` shell lines make it, then it is compared."""
        workdir = self.workdir(b)
        server = Server(self.ecsd, self.server_flags(b, workdir), self.tmp)
        try:
            env = self.shell_env(server)
            for s in b.get("setup"):
                p = subprocess.run(["bash", "-ec", s], cwd=workdir, env=env, capture_output=True, text=True,
                                   timeout=BLOCK_TIMEOUT)
                if p.returncode != 0:
                    self.fail(b, f"setup line exited {p.returncode}: {s}", f"stderr: {p.stderr.strip()}", server)
            spec = b.one("compare-file").split()
            path = Path(workdir, os.path.expandvars(spec[0]).replace("$DOCS_DATA_DIR", env.get("DOCS_DATA_DIR", "")))
            if not path.exists():
                self.fail(b, f"compare-file {spec[0]}", f"{path} does not exist", server)
            actual = path.read_text()
            vary, approx = self.vary(b), b.has("approx")
            if b.has("crc-lines"):  # each line is CRC-32 (8 hex digits), a space, the text it covers
                import zlib
                for n, l in enumerate(b.text.split("\n")):
                    crc, _, rest = l.partition(" ")
                    if f"{zlib.crc32(rest.encode()):08x}" != crc:
                        self.fail(b, f"line {b.line + 1 + n}: the checksum does not fit the text",
                                  f"{crc} is written, CRC-32 of {rest} is {zlib.crc32(rest.encode()):08x}")
            exp = json_or_none(b.text)
            if exp is not None:
                errs = compare(exp, json.loads(actual), "$", vary, approx)
                if errs:
                    self.fail(b, f"the file {spec[0]} differs", "\n  ".join(errs) + f"\n  the file:\n    {indent(actual)}")
            else:
                exp_lines = b.text.split("\n")
                act_lines = actual.split("\n")
                if len(spec) >= 3 and spec[1] == "head":
                    exp_lines, act_lines = exp_lines[: int(spec[2])], act_lines[: int(spec[2])]
                why = match_output(exp_lines, act_lines, vary, approx, b.has("contains"))
                if why:
                    self.fail(b, f"the file {spec[0]} differs", f"{why}\n  the file:\n    {indent(actual)}")
            st.compared += 1
            st.run += 1
        finally:
            server.stop()

    def run_transcript(self, b: Block, st: Stats):
        """A terminal session: `$ COMMAND`, then what it prints; a line starting with the program's prompt
        (`HOST:PORT...> `) is typed. Runs COMMAND on a pseudo-terminal and compares everything it shows."""
        import pty
        workdir = self.workdir(b)
        server = Server(self.ecsd, self.server_flags(b, workdir), self.tmp)
        try:
            text = re.sub(rf"\b{DEFAULT_PORT}\b", str(server.port), b.text)
            lines = text.split("\n")
            command = lines[0][2:]
            env = self.shell_env(server)
            env.update(TERM="dumb", COLUMNS="120", LINES="40")
            pid, fd = pty.fork()
            if pid == 0:
                os.chdir(workdir)
                os.execvpe("bash", ["bash", "-c", command], env)
            out = b""

            def read_until(pred, timeout):
                nonlocal out
                deadline = time.monotonic() + timeout
                while not pred() and time.monotonic() < deadline:
                    r, _, _ = select.select([fd], [], [], 0.1)
                    if r:
                        try:
                            chunk = os.read(fd, 65536)
                        except OSError:
                            return
                        if not chunk:
                            return
                        out += chunk

            def clean(raw: bytes) -> str:
                t = raw.decode(errors="replace").replace("\r\n", "\n").replace("\r", "")
                return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]", "", t)

            seen = 0  # what the terminal showed before the last line was typed
            for l in lines[1:]:
                m = re.match(r"^(\S+?> )(.*)$", l)
                if not m:
                    continue
                prompt, typed = m.groups()

                def prompted():
                    shown = clean(out)
                    return len(shown) > seen and shown.endswith(prompt)
                read_until(prompted, READ_TIMEOUT)
                if not prompted():
                    os.kill(pid, signal.SIGKILL)
                    self.fail(b, f"waiting for the prompt {prompt!r} to type {typed!r}",
                              f"the terminal shows:\n    {indent(clean(out))}", server)
                os.write(fd, typed.encode() + b"\n")
                echo = typed + "\n"
                read_until(lambda: echo in clean(out)[seen:], READ_TIMEOUT)  # the terminal echoes the line
                shown = clean(out)
                seen = shown.find(echo, seen) + len(echo) if echo in shown[seen:] else len(shown)
            read_until(lambda: False, 2.0)  # until it exits (EOF) or 2 s pass
            try:
                _, status = os.waitpid(pid, 0)
            finally:
                os.close(fd)
            shown = clean(out)
            why = match_output(lines[1:], shown.split("\n"), self.vary(b), b.has("approx"))
            if why:
                self.fail(b, f"the terminal differs from the transcript ({command})",
                          f"{why}\n  the terminal showed:\n    {indent(shown)}", server)
            if os.waitstatus_to_exitcode(status) != 0:
                self.fail(b, f"{command} exited {os.waitstatus_to_exitcode(status)}", indent(shown), server)
            st.compared += 1
            st.run += 1
        finally:
            server.stop()

    def write_file(self, b: Block):
        name = b.one("file")
        (self.workdir(b) / name).write_text(b.text + "\n")

    # -- the whole run

    def run(self, files: list[str]):
        docs = {f: parse_doc(self.root, f) for f in files}
        for blocks in docs.values():
            for b in blocks:
                for n in b.get("name"):
                    if n in self.named:
                        raise DocError(f"{b.where}: the name {n!r} is taken by {self.named[n].where}")
                    self.named[n] = b
        for f, blocks in docs.items():
            st = self.stats.setdefault(f, Stats())
            i = 0
            while i < len(blocks):
                b = blocks[i]
                nxt = blocks[i + 1] if i + 1 < len(blocks) else None
                k = block_kind(b)
                expected = nxt if nxt is not None and block_kind(nxt) == "output" else None
                try:
                    if k == "skip":
                        reason = b.one("skip")
                        if not reason:
                            raise DocError(f"{b.where}: 'skip' needs a reason")
                        st.skipped += 1
                        self.note(f"skip {b.where}: {reason}")
                    elif k == "output":
                        raise DocError(f"{b.where}: an 'output' block must follow a shell block it belongs to")
                    elif k == "file":
                        self.write_file(b)
                        st.run += 1
                        self.note(f"file {b.where} -> {b.one('file')}")
                    elif k == "transcript":
                        self.run_transcript(b, st)
                        self.note(f"ok   {b.where} (terminal session compared)")
                    elif k == "compare-file":
                        self.run_compare_file(b, st)
                        self.note(f"ok   {b.where} (file compared)")
                    elif k == "shell":
                        self.run_shell(b, st, expected)
                        self.note(f"ok   {b.where}" + (" (output compared)" if expected or b.has("expect") else ""))
                    elif k in ("session", "exchange"):
                        self.run_rpc(b, st)
                        st.run += 1
                        self.note(f"ok   {b.where} ({k} compared)")
                    else:
                        raise DocError(f"{b.where}: not an example the runner knows how to run; "
                                       "mark it <!-- docs-test: skip REASON --> or make it one")
                    if b.has("xfail") and k not in ("skip", "output"):
                        raise Failure(f"FAIL {b.where}\n  passes, but is marked xfail ({b.one('xfail')}): "
                                      "remove the marker")
                except Failure as e:
                    if b.has("xfail") and "is marked xfail" not in str(e):
                        st.xfailed += 1
                        print(f"XFAIL {b.where}: {b.one('xfail')}", flush=True)
                        self.note("  " + str(e).replace("\n", "\n  "))
                    else:
                        st.failed += 1
                        self.failures.append(str(e))
                        print(str(e), flush=True)
                except (OSError, RuntimeError, ValueError, DocError) as e:
                    st.failed += 1
                    msg = f"FAIL {b.where}\n  {type(e).__name__}: {e}"
                    self.failures.append(msg)
                    print(msg, flush=True)
                i += 2 if expected is not None else 1

    def note(self, s):
        if self.verbose:
            print(s, flush=True)


def indent(s: str) -> str:
    s = s.rstrip("\n")
    return s.replace("\n", "\n    ") if s else "(empty)"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ecsd", required=True)
    ap.add_argument("--ecsctl", required=True)
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[2]))
    ap.add_argument("-v", "--verbose", action="count", default=0, help="-v: every block; -vv: and its output")
    ap.add_argument("files", nargs="*", help="documents relative to the root (default: README.md docs/*.md)")
    args = ap.parse_args()
    root = Path(args.root)
    files = args.files or ["README.md"] + sorted(str(p.relative_to(root)) for p in (root / "docs").glob("*.md"))
    with tempfile.TemporaryDirectory(prefix="ecsd-docs-") as tmp:
        r = Runner(args, root, Path(tmp))
        try:
            r.run(files)
        except DocError as e:
            print(f"docs-test markup error: {e}")
            return 2
    total = Stats()
    print("\nblocks per file: run (output compared), skipped, known failures (xfail), failed")
    for f, s in r.stats.items():
        print(f"  {f:22} {s.run:3} run ({s.compared:3} compared)  {s.skipped:3} skipped  {s.xfailed:3} xfail  "
              f"{s.failed:3} failed")
        for a in ("run", "compared", "skipped", "failed", "xfailed"):
            setattr(total, a, getattr(total, a) + getattr(s, a))
    print(f"  {'total':22} {total.run:3} run ({total.compared:3} compared)  {total.skipped:3} skipped  "
          f"{total.xfailed:3} xfail  {total.failed:3} failed")
    if r.failures:
        print(f"\n{len(r.failures)} example(s) failed (details above)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
