#!/usr/bin/env python3
"""How far behind the world a watcher that reads slower than its watch falls (docs/protocol.md,
world.watch, "Slow clients"). A fresh ecsd with 10,000 movers (about a megabyte a notification,
watched every 2 ticks); one reader on a WebSocket or an event stream takes 64 KB every 30 ms
(about 2 MB/s) with a 1 MiB receive buffer, and once a second prints the world's tick, the last
tick it has heard of, and their difference.

    python3 scripts/probe-slow-reader.py [--ecsd build/release/bin/ecsd] [--face ws|sse] [--seconds 12]
"""
import argparse
import base64
import json
import math
import os
import re
import socket
import subprocess
import time

ap = argparse.ArgumentParser()
ap.add_argument("--ecsd", default="build/release/bin/ecsd")
ap.add_argument("--face", choices=["ws", "sse"], default="ws")
ap.add_argument("--seconds", type=float, default=12)
ap.add_argument("--pause", type=float, default=0.03, help="seconds between two reads of 64 KB")
args = ap.parse_args()



def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


ports = {"tcp": free_port(), "http": free_port()}
p = subprocess.Popen([args.ecsd, "--port", str(ports["tcp"]), "--http-port", str(ports["http"]),
                      "--log-level", "error"], stdout=subprocess.DEVNULL)
for _ in range(100):  # until it listens
    try:
        socket.create_connection(("127.0.0.1", ports["tcp"])).close()
        break
    except OSError:
        time.sleep(0.05)

ctl = socket.create_connection(("127.0.0.1", ports["tcp"])).makefile("rwb")
ids = iter(range(1, 1 << 30))


def call(method, params):
    ctl.write((json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}) + "\n").encode())
    ctl.flush()
    while True:
        answer = json.loads(ctl.readline())
        if "id" in answer:
            return answer["result"]


try:
    call("world.create", {"world": "s", "gravity": 0})
    n = 10_000
    movers = []
    for i in range(n):
        a = i / n * 2 * math.pi * 37
        r = 3 + 42 * ((i * 7919) % n) / n
        movers.append({"Position": {"x": r * math.cos(a), "y": r * math.sin(a)},
                       "Velocity": {"x": -2 * math.sin(a), "y": 2 * math.cos(a)}})
    for i in range(0, n, 2500):
        call("world.spawn_entities", {"world": "s", "entities": movers[i:i + 2500]})
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "world.watch",
                          "params": {"world": "s", "query": "Position", "every": 2}}).encode()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s.connect(("127.0.0.1", ports["http"]))
    host = f"127.0.0.1:{ports['http']}"
    if args.face == "ws":
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(f"GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(4096)
        mask = os.urandom(4)
        size = len(request)
        frame = bytes([0x81]) + (bytes([0x80 | size]) if size < 126 else bytes([0x80 | 126]) + size.to_bytes(2, "big"))
        s.sendall(frame + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(request)))
    else:
        s.sendall(f"POST / HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                  f"Accept: text/event-stream\r\nContent-Length: {len(request)}\r\n\r\n".encode() + request)
    heard = 0
    tail = b""
    start = time.time()
    report = start + 1
    while time.time() - start < args.seconds:
        chunk = s.recv(65536)
        if not chunk:
            print("the server closed the stream")
            break
        tail = tail[-200:] + chunk
        for m in re.finditer(rb'"tick":(\d+)', tail):
            heard = max(heard, int(m.group(1)))
        time.sleep(args.pause)
        if time.time() >= report:
            report += 1
            tick = call("world.info", {"world": "s"})["tick"]
            print(f"{args.face} {time.time() - start:4.0f} s: world at tick {tick}, reader heard of {heard}, "
                  f"{tick - heard} behind", flush=True)
finally:
    p.terminate()
    p.wait()
