#!/usr/bin/env python3
"""Re-runs the adversarial probe's connection cases of issue 21 against an ecsd binary and prints
figures, so two builds can be compared side by side:

    scripts/probe-hardening.py build/release/bin/ecsd [OLD_BINARY]

Cases (each on a fresh ecsd with 10,000 entities of Position+Velocity, on loopback):
  slow consumer   one client sends 600 world.query pages of 10,000 entities and reads nothing for 5 s
  amplification   one batch of 100 such queries on one line, read in full
  slowloris       --max-connections 64, 64 clients sending one byte a second; can a newcomer ping?
Figures: the server's peak RSS growth (VmHWM), whether the others were served, ticks skipped.
"""
import json, os, socket, subprocess, sys, time

def start(binary, *args):
    http = ["--http-port", "0"] if "--http-port" in subprocess.run([binary, "--help"], capture_output=True, text=True).stdout else []
    p = subprocess.Popen([binary, "--port", "0", *http, "--log-level", "error", *args],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    return p, int(line.rsplit(":", 1)[1])

def hwm(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmHWM:"): return int(l.split()[1])
    return 0

def call(port, method, params=None, timeout=10):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}) + "\n").encode())
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(1 << 20)
        if not chunk: break
        buf += chunk
    s.close()
    return json.loads(buf) if buf else None

def populate(port):
    ents = [{"Position": {"x": i, "y": -i}, "Velocity": {"x": 1.5, "y": -2.25}} for i in range(10000)]
    call(port, "world.spawn_entities", {"entities": ents})

QUERY = {"jsonrpc": "2.0", "method": "world.query", "params": {"query": "Position, Velocity", "limit": 10000}}

def slow_consumer(binary):
    p, port = start(binary)
    populate(port); call(port, "world.query", QUERY["params"])
    before = hwm(p.pid); skipped0 = call(port, "world.info")["result"].get("skipped_ticks", 0)
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port)); s.settimeout(1)
    lines = "".join(json.dumps(dict(QUERY, id=i)) + "\n" for i in range(600)).encode()
    try: s.sendall(lines)
    except OSError: pass
    worst = 0.0
    end = time.time() + 5
    while time.time() < end:
        t0 = time.time(); r = call(port, "server.ping", timeout=5); worst = max(worst, time.time() - t0)
        time.sleep(0.1)
    info = call(port, "world.info")["result"]
    out = {"peak_rss_growth_mib": round((hwm(p.pid) - before) / 1024, 1), "worst_ping_ms": round(worst * 1000, 1),
           "ticks_skipped": info.get("skipped_ticks", 0) - skipped0}
    s.close(); t0 = time.time(); p.terminate(); p.wait(); out["sigterm_exit_s"] = round(time.time() - t0, 2)
    return out

def amplification(binary):
    p, port = start(binary)
    populate(port); call(port, "world.query", QUERY["params"])
    before = hwm(p.pid)
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall((json.dumps([dict(QUERY, id=i) for i in range(100)]) + "\n").encode())
    buf = b""
    try:
        while not buf.endswith(b"\n"):
            chunk = s.recv(1 << 20)
            if not chunk: break
            buf += chunk
    except OSError: pass
    answered = refused = 0
    try:
        for a in json.loads(buf):
            if "result" in a: answered += 1
            elif a.get("error", {}).get("data", {}).get("reason") == "too_large": refused += 1
    except ValueError: pass
    out = {"peak_rss_growth_mib": round((hwm(p.pid) - before) / 1024, 1), "answer_bytes": len(buf),
           "elements_answered": answered, "elements_refused_too_large": refused}
    p.terminate(); p.wait()
    return out

def slowloris(binary):
    p, port = start(binary, "--max-connections", "64")
    socks = []
    for _ in range(64):
        s = socket.create_connection(("127.0.0.1", port)); s.sendall(b'{"jsonrpc"'); socks.append(s)
    served = 0
    for second in range(3):
        for s in socks:
            try: s.sendall(b" ")
            except OSError: pass
        time.sleep(1)
    for _ in range(5):
        try:
            r = call(port, "server.ping", timeout=2)
            if r and r.get("result") == "pong": served += 1
        except OSError: pass
    out = {"newcomers_served_of_5": served}
    for s in socks: s.close()
    p.terminate(); p.wait()
    return out

if __name__ == "__main__":
    binaries = sys.argv[1:] or ["build/release/bin/ecsd"]
    rows = {}
    for b in binaries:
        rows[b] = {"slow_consumer": slow_consumer(b), "amplification": amplification(b), "slowloris": slowloris(b)}
    print(json.dumps(rows, indent=2))
