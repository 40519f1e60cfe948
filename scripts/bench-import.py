#!/usr/bin/env python3
"""The memory and time of world.import's final chunk, as a client sees it.

    scripts/bench-import.py [--entities N] BINARY [BINARY ...]

For each ecsd binary given (the previous commit's beside this one's, in one run): starts it on a
free port, fills a paused world with N entities (Position, Velocity, Health, a Name each), exports
it, destroys it, sends every chunk but the last to world.import, resets the process's peak RSS
(/proc/PID/clear_refs), sends the final chunk and prints how long it took and how far the peak
rose above the RSS before it, in MiB and as a multiple of the text (the world built is part of
it). Linux only (it reads /proc).
"""
import argparse
import json
import os
import socket
import subprocess
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(binary, entities):
    port = free_port()
    args = [binary, "--port", str(port), "--http-port", "0", "--max-import-bytes", str(2 << 30)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if proc.poll() is None:
        time.sleep(0.5)
    if proc.poll() is not None:  # an older ecsd without --max-import-bytes (its cap was 1 GiB)
        proc = subprocess.Popen(args[:-2], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            sock = socket.create_connection(("127.0.0.1", port))
            break
        except OSError:
            time.sleep(0.05)
    f = sock.makefile("rwb")
    next_id = [0]

    def call(method, params):
        next_id[0] += 1
        f.write((json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method, "params": params}) + "\n").encode())
        f.flush()
        answer = json.loads(f.readline())
        if "error" in answer:
            raise SystemExit(f"{method}: {answer['error']}")
        return answer["result"]

    def status(key):
        with open(f"/proc/{proc.pid}/status") as s:
            for line in s:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024

    call("world.create", {"world": "src", "paused": True})
    for first in range(0, entities, 5000):
        batch = [{"Position": {"x": i * 0.5, "y": i % 97}, "Velocity": {"x": 0.25, "y": -1.5}, "Health": {},
                  "Name": {"name": f"body-{i}"}} for i in range(first, min(entities, first + 5000))]
        call("world.spawn_entities", {"world": "src", "entities": batch})
    chunk = 512 * 1024
    r = call("world.export", {"world": "src", "max_bytes": chunk})
    chunks = [r["data"]]
    while not r["done"]:
        r = call("world.export", {"world": "src", "export": r["export"],
                                  "offset": sum(len(c.encode()) for c in chunks), "max_bytes": chunk})
        chunks.append(r["data"])
    call("world.destroy", {"world": "src"})
    offset = 0
    for c in chunks[:-1]:
        call("world.import", {"world": "copy", "data": c, "offset": offset})
        offset += len(c.encode())
    time.sleep(0.5)
    with open(f"/proc/{proc.pid}/clear_refs", "w") as c:
        c.write("5")  # VmHWM starts again from VmRSS
    before = status("VmRSS")
    start = time.monotonic()
    done = call("world.import", {"world": "copy", "data": chunks[-1], "offset": offset, "final": True})
    took = time.monotonic() - start
    peak = status("VmHWM")
    text = offset + len(chunks[-1].encode())
    proc.terminate()
    proc.wait()
    assert done["entities"] == entities, done
    print(f"{binary}: {entities} entities, text {text / 2**20:.1f} MiB, final chunk {took:.2f} s, "
          f"peak +{(peak - before) / 2**20:.0f} MiB = {(peak - before) / text:.1f}x the text")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entities", type=int, default=200000)
    parser.add_argument("binaries", nargs="+")
    a = parser.parse_args()
    for b in a.binaries:
        measure(os.path.abspath(b), a.entities)


if __name__ == "__main__":
    main()
