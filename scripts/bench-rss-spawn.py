#!/usr/bin/env python3
"""RSS per entity as a user sees it (issue 45): a fresh ecsd, 1M entities with Position and
Velocity spawned by world.spawn_entities in batches of 10k, VmRSS 2 s after the last batch.
Prints the growth per entity beside server.info's own count of the registry.

    python3 scripts/bench-rss-spawn.py [--ecsd build/release/bin/ecsd] [--paused]
"""
import argparse
import json
import re
import socket
import subprocess
import time

ap = argparse.ArgumentParser()
ap.add_argument("--ecsd", default="build/release/bin/ecsd")
ap.add_argument("--paused", action="store_true", help="pause the default world first (no ticks)")
ap.add_argument("--entities", type=int, default=1_000_000)
args = ap.parse_args()

p = subprocess.Popen([args.ecsd, "--port", "0", "--http-port", "0", "--log-level", "error"],
                     stdout=subprocess.PIPE, text=True)
port = None
for line in p.stdout:
    m = re.search(r"listening on [^:]+:(\d+)", line)
    if m:
        port = int(m.group(1))
        break


def rss() -> int:
    with open(f"/proc/{p.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) * 1024
    return 0


conn = socket.create_connection(("127.0.0.1", port)).makefile("rwb")
ids = iter(range(1, 1 << 30))


def call(method, params):
    conn.write((json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}) + "\n").encode())
    conn.flush()
    answer = json.loads(conn.readline())
    if "result" not in answer:
        raise SystemExit(f"{method}: {answer}")
    return answer["result"]


try:
    if args.paused:
        call("world.pause", {})
    time.sleep(1)
    before = rss()
    batch = [{"Position": {"x": 1.5, "y": 2.5}, "Velocity": {"x": 0.5, "y": -0.5}}] * 10_000
    for _ in range(args.entities // len(batch)):
        call("world.spawn_entities", {"entities": batch})
    time.sleep(2)
    after = rss()
    registry = call("server.info", {})["memory"]["worlds"]["default"]["registry_bytes"]
    n = args.entities
    print(f"RSS {before / 2**20:.1f} -> {after / 2**20:.1f} MiB: {(after - before) / n:.1f} B per entity; "
          f"registry (server.info, refreshed by ticks) {registry / n:.1f} B per entity"
          + (" (paused: not refreshed)" if args.paused else ""))
finally:
    p.terminate()
    p.wait()
