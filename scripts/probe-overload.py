#!/usr/bin/env python3
"""Re-runs issue 40's probes of items 9 and 10 against an ecsd binary and prints figures, so two
builds can be compared side by side:

    scripts/probe-overload.py build/test/bin/ecsd [OLD_BINARY] [--seconds 25] [--streams 500]

Cases (each on a fresh ecsd, on loopback, the world of 3,000 movers: Position + Velocity, so
every one changes every tick, spread over 200 x 200 units):
  watches      4 TCP connections x 64 distinct near() watches (radius 10) that read nothing for
               --seconds; figures: world.info's tick p50/p99 (of the last 256 ticks) before and at
               the end, the last tick, ticks skipped meanwhile, and the slowest server.ping
  sse          --streams event streams (POST / world.watch "Position, Velocity") that read nothing
               for --seconds; figures: the server's peak RSS growth (VmHWM) and the slowest ping
"""
import json, os, random, socket, subprocess, sys, time

def start(binary, *args, http=False):
    hp = free_port() if http else 0
    p = subprocess.Popen([binary, "--port", "0", "--http-port", str(hp), "--log-level", "error", *args],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    return p, int(line.rsplit(":", 1)[1]), hp

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close(); return port

def hwm(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmHWM:"): return int(l.split()[1])
    return 0

def call(port, method, params=None, timeout=30):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}) + "\n").encode())
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(1 << 20)
        if not chunk: break
        buf += chunk
    s.close()
    return json.loads(buf) if buf else None

def populate(port, n=3000):
    rnd = random.Random(40)
    ents = [{"Position": {"x": rnd.uniform(0, 200), "y": rnd.uniform(0, 200)},
             "Velocity": {"x": rnd.uniform(-1, 1), "y": rnd.uniform(-1, 1)}} for _ in range(n)]
    call(port, "world.spawn_entities", {"entities": ents})

def silent(port, rcvbuf=4096):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port)); s.setblocking(False)
    return s

def watch_ping(port, seconds):
    worst, end = 0.0, time.time() + seconds
    while time.time() < end:
        t0 = time.time(); call(port, "server.ping"); worst = max(worst, time.time() - t0)
        time.sleep(0.1)
    return worst

def watches(binary, seconds):
    p, port, _ = start(binary)
    populate(port)
    time.sleep(2)
    info0 = call(port, "world.info")["result"]
    socks = []
    for c in range(4):
        s = silent(port); socks.append(s)
        lines = "".join(json.dumps({"jsonrpc": "2.0", "id": k, "method": "world.watch",
                                    "params": {"query": f"near({(c * 64 + k) % 16 * 12 + 10}, {(c * 64 + k) // 16 * 12 + 10}, 10)"}})
                        + "\n" for k in range(64)).encode()
        s.setblocking(True); s.sendall(lines); s.setblocking(False)
    worst = watch_ping(port, seconds)
    info = call(port, "world.info")["result"]
    p.kill(); p.wait()
    return {"tick_p50_ms_before": round(info0["tick_p50_ms"], 3), "tick_p50_ms": round(info["tick_p50_ms"], 3),
            "tick_p99_ms": round(info["tick_p99_ms"], 3), "last_tick_total_ms": round(info["last_tick_total_ms"], 3),
            "ticks_skipped": info.get("skipped_ticks", 0) - info0.get("skipped_ticks", 0),
            "worst_ping_ms": round(worst * 1000, 1), "watches": info.get("watches")}

def sse(binary, seconds, streams):
    p, port, http = start(binary, http=True)
    populate(port)
    before = hwm(p.pid)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "world.watch", "params": {"query": "Position, Velocity"}})
    req = (f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{http}\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(body)}\r\n\r\n{body}").encode()
    socks = []
    for _ in range(streams):
        s = silent(http); socks.append(s)
        s.setblocking(True); s.sendall(req); s.setblocking(False)
    worst = watch_ping(port, seconds)
    info = call(port, "server.info")["result"]
    out = {"peak_rss_growth_mib": round((hwm(p.pid) - before) / 1024, 1), "worst_ping_ms": round(worst * 1000, 1),
           "output": info.get("output")}
    p.kill(); p.wait()
    return out

def main():
    args = sys.argv[1:]
    seconds, streams = 25, 500
    if "--seconds" in args: i = args.index("--seconds"); seconds = float(args[i + 1]); del args[i:i + 2]
    if "--streams" in args: i = args.index("--streams"); streams = int(args[i + 1]); del args[i:i + 2]
    for binary in args:
        print(binary)
        print("  watches:", json.dumps(watches(binary, seconds)), flush=True)
        print("  sse:    ", json.dumps(sse(binary, seconds, streams)), flush=True)

if __name__ == "__main__":
    main()
