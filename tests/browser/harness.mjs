// What the browser suites share: ecsd on free ports, a JSON-RPC client over TCP, and waiting.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";

export const binary = process.env.ECSD_BINARY;
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
if (!binary) throw new Error("set ECSD_BINARY to the ecsd to test (CTest does)");

/** A port nobody listens on right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

/** Waits until fn() is truthy (returns it) or fails with what. */
export async function until(what, fn, timeoutMs = 5000, everyMs = 25) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() > deadline) assert.fail("timed out waiting for " + what);
    await sleep(everyMs);
  }
}

/** ecsd on a free HTTP port and an ephemeral TCP port; resolves once it prints its ports. */
export async function startEcsd(more = []) {
  const http = await freePort();
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ECSD_")));
  const proc = spawn(binary, ["--port", "0", "--http-port", String(http), "--log-level", "warn", ...more],
                     { env, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  const tcp = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("ecsd did not start; stdout: " + out)), 10000);
    proc.on("exit", (code) => reject(new Error("ecsd exited with " + code + "; stdout: " + out)));
    proc.stdout.on("data", (d) => {
      out += d;
      const m = /listening on \S+:(\d+)\n/.exec(out);
      if (m && out.includes("viewer at")) { clearTimeout(timer); resolve(Number(m[1])); }
    });
  });
  return { proc, tcp, http, url: `http://127.0.0.1:${http}/` };
}

/** JSON-RPC over the TCP port: one JSON text per line; notifications are ignored. */
export class TcpClient {
  constructor(port) {
    this.pending = new Map(); this.nextId = 1; this.buf = "";
    this.sock = net.connect(port, "127.0.0.1");
    this.ready = new Promise((resolve, reject) => { this.sock.once("connect", resolve); this.sock.once("error", reject); });
    this.sock.setEncoding("utf8");
    this.sock.on("data", (d) => {
      this.buf += d;
      let nl;
      while ((nl = this.buf.indexOf("\n")) >= 0) {
        const msg = JSON.parse(this.buf.slice(0, nl)); this.buf = this.buf.slice(nl + 1);
        const p = this.pending.get(msg.id); if (!p) continue;
        this.pending.delete(msg.id);
        if (msg.error) p.reject(new Error(p.method + ": " + JSON.stringify(msg.error))); else p.resolve(msg.result);
      }
    });
  }
  async call(method, params = {}) {
    await this.ready;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.sock.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  }
  close() { this.sock.end(); }
}

