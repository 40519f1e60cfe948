'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('./client');
const { RpcError } = require('./errors');

const LOG_KEEP = 64 * 1024; // the tail of ecsd's stderr kept for error messages

/** The repository root when this package sits in its clients/node folder (symlinks resolved). */
const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** `root/build/release/bin/ecsd` (what scripts/run.sh builds), else the newest other `root/build/<any>/bin/ecsd`. */
function builtUnder(root) {
  const build = path.join(root, 'build');
  const release = path.join(build, 'release', 'bin', 'ecsd');
  if (isExecutable(release)) return release;
  let others = [];
  try {
    others = fs.readdirSync(build).map((d) => path.join(build, d, 'bin', 'ecsd'));
  } catch {
    return null; // no build folder
  }
  others = others.filter(isExecutable).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  return others[0] || null;
}

/**
 * The ecsd to run: $ECSD_BIN; else, from the current directory upward (the ecsd repository a test
 * runs in, or a folder in it), build/release/bin/ecsd, then the newest other build/<any>/bin/ecsd;
 * else `ecsd` on PATH; else the build folders of the repository this package sits in
 * (build/test/bin/ecsd first).
 */
function findBinary() {
  if (process.env.ECSD_BIN) return process.env.ECSD_BIN;
  const here = path.resolve(process.cwd());
  for (let dir = here; ; dir = path.dirname(dir)) {
    const found = builtUnder(dir);
    if (found) return found;
    if (path.dirname(dir) === dir) break;
  }
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, 'ecsd'))) return path.join(dir, 'ecsd');
  }
  const preferred = path.join(REPO_ROOT, 'build', 'test', 'bin', 'ecsd');
  if (isExecutable(preferred)) return preferred;
  const own = builtUnder(REPO_ROOT);
  if (own) return own;
  throw new Error(
    'ecsd not found: set ECSD_BIN to its path, run from the ecsd repository (or a folder in it) after ' +
      `building it (scripts/run.sh builds build/release/bin/ecsd; searched ${here} and upward for ` +
      'build/release/bin/ecsd and build/*/bin/ecsd), or put ecsd on PATH',
  );
}

const has = (args, flag) => args.some((a) => a === flag || a.startsWith(`${flag}=`));

/** The value of `--flag V` or `--flag=V` in args (the last one wins, as for ecsd), or undefined. */
function flagValue(args, flag) {
  let value;
  args.forEach((a, i) => {
    if (a === flag) value = args[i + 1];
    else if (a.startsWith(`${flag}=`)) value = a.slice(flag.length + 1);
  });
  return value;
}

/**
 * A port nobody listens on now: `preferred` when it is free, else one the system picks. ecsd's
 * --http-port 0 means "off", not "any", so the HTTP port has to be chosen before it starts.
 */
function freePort(host, preferred = 0) {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err) => (preferred ? resolve(freePort(host, 0)) : reject(err)));
    probe.listen(preferred, host, () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

// Servers still running when Node exits (a test that threw before stop()) are killed, and their
// temporary data folders removed, so nothing outlives the test run.
const live = new Set();
process.once('exit', () => {
  for (const server of live) server._cleanUpSync();
});

/**
 * An ecsd child process on a free port, for tests. Its ECSD_* settings come from `args` only (the
 * environment's are dropped, as in ecsd's own tests); the HTTP face is off unless `http` is set or
 * args name --http-port.
 */
class EcsdServer {
  constructor({ binary, dataDir, args = [], token = null, env = {}, startTimeout = 20000, http = false }) {
    this.binary = binary || findBinary();
    this.args = args.map(String);
    this.http = http;
    this.httpPort = null; // once started with an HTTP face: its port
    this.token = token;
    this.env = env;
    this.startTimeout = startTimeout;
    this._ownsDataDir = dataDir === undefined || dataDir === null;
    this.dataDir = dataDir === false ? null : dataDir || null;
    this.host = '127.0.0.1';
    this.port = null;
    this.process = null;
    this._exit = null; // resolves to {code, signal} when the current process exits
    this._log = '';
    this._clients = new Set();
    this._killed = false;
    this._exited = true;
  }

  /**
   * Starts ecsd and resolves once it answers server.ping.
   * @param {object} [options]
   * @param {string} [options.binary] default: findBinary(): $ECSD_BIN, build folders from the
   *   current directory upward, PATH, the package's repository
   * @param {string|false} [options.dataDir] default: a temporary folder removed by stop(); false: none
   * @param {string[]} [options.args] more ecsd flags, e.g. ['--max-watches', '2']
   * @param {string} [options.token] passed as --token; server.client() authenticates with it
   * @param {object} [options.env] more environment variables for ecsd
   * @param {number} [options.startTimeout] ms to wait for the listening line and a pong (default 20000)
   * @param {boolean} [options.http] the HTTP face on a free port too (httpPort, wsUrl)
   */
  static async start(options = {}) {
    const server = new EcsdServer(options);
    if (server._ownsDataDir) server.dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'ecsd-node-'));
    live.add(server);
    try {
      await server._launch();
    } catch (err) {
      await server._removeDataDir();
      live.delete(server);
      throw err;
    }
    return server;
  }

  /** ws://HOST:PORT/ws of the HTTP face (a Client's `url`), or null when it is off. */
  get wsUrl() {
    return this.httpPort ? `ws://${this.host}:${this.httpPort}/ws` : null;
  }

  /** The last 64 KiB ecsd wrote to stderr (its log). */
  get log() {
    return this._log;
  }

  get pid() {
    return this.process ? this.process.pid : null;
  }

  /** Whether the process is running. */
  get running() {
    return this.process !== null && !this._exited;
  }

  /** A connected Client for this server (with its token); closed by stop(), kill() and restart(). */
  async client(options = {}) {
    const client = await Client.connect({ host: this.host, port: this.port, token: this.token, ...options });
    this._clients.add(client);
    return client;
  }

  /**
   * Stops ecsd (SIGTERM), then starts it again with the same arguments and data folder. It keeps
   * its port when that is still free. Rejects, like stop(), if ecsd did not exit 0.
   */
  async restart() {
    if (this.process) await this._terminate();
    await this._launch(this.port);
  }

  /** SIGKILL: ecsd dies at once, saving nothing more (its journal has every answered change). */
  async kill() {
    this._killed = true;
    await this._signal('SIGKILL');
  }

  /**
   * SIGTERM, then waits for ecsd to save and exit (SIGKILL after `timeout` ms). Removes the data
   * folder if it is a temporary one. Rejects if ecsd did not exit 0 (unless kill() ended it).
   */
  async stop({ timeout = 10000 } = {}) {
    live.delete(this);
    try {
      if (this.process) await this._terminate(timeout);
    } finally {
      this.process = null;
      await this._removeDataDir();
    }
  }

  // --- internals --------------------------------------------------------------------------------

  async _launch(port = 0, httpAttempt = 0) {
    const args = ['--port', String(port)];
    if (!has(this.args, '--host')) args.push('--host', this.host);
    let httpPort = null; // chosen here, so taken by someone else meanwhile is possible: then another
    if (this.http && !has(this.args, '--http-port')) {
      httpPort = await freePort(this.host, httpAttempt === 0 && this.httpPort ? this.httpPort : 0);
      args.push('--http-port', String(httpPort));
    } else if (!has(this.args, '--http-port')) {
      args.push('--http-port', '0');
    }
    if (!has(this.args, '--log-level')) args.push('--log-level', 'warn');
    if (this.dataDir && !has(this.args, '--data-dir')) args.push('--data-dir', this.dataDir);
    if (this.token !== null && this.token !== undefined) args.push('--token', this.token);
    args.push(...this.args);
    try {
      await this._spawn(args);
    } catch (err) {
      if (err.httpPortTaken && httpPort !== null && httpAttempt < 3) return this._launch(port, httpAttempt + 1);
      if (port === 0 || !/listen|bind|in use/i.test(this._log)) throw err;
      await this._launch(0); // the old port was taken meanwhile: take any
    }
  }

  async _spawn(args) {
    const env = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ECSD_')) env[k] = v;
    Object.assign(env, this.env);
    this._log = '';
    this._killed = false;
    const child = spawn(this.binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.process = child;
    this._exited = false;
    this._exit = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', (error) => child.pid === undefined && resolve({ code: null, signal: null, error }));
    }).then((st) => {
      this._exited = true;
      return st;
    });
    child.stderr.on('data', (chunk) => {
      this._log = (this._log + chunk.toString('utf8')).slice(-LOG_KEEP);
    });
    // "listening on HOST:PORT", then (with an HTTP face that could bind its port) "viewer at
    // http://HOST:PORT/"; ecsd writes both at once.
    const wantsHttp = Number(flagValue(args, '--http-port') || 0) !== 0;
    let stdout = '';
    let onViewer;
    const viewer = new Promise((resolve) => (onViewer = resolve));
    let onData;
    const listening = new Promise((resolve) => {
      onData = (chunk) => {
        stdout += chunk.toString('utf8');
        const m = /listening on (\S+):(\d+)\r?\n/.exec(stdout);
        const v = /viewer at http:\/\/\S+:(\d+)\/\r?\n/.exec(stdout);
        if (v) onViewer(Number(v[1]));
        if (!m) return;
        if (v || !wantsHttp) {
          child.stdout.off('data', onData);
          child.stdout.resume(); // the rest of stdout is not needed, but must not fill the pipe
        }
        resolve(Number(m[2]));
      };
      child.stdout.on('data', onData);
    });
    const timeout = (ms) => new Promise((resolve) => setTimeout(resolve, ms, 'timeout').unref());
    const deadline = Date.now() + this.startTimeout;
    const fail = async (why) => {
      if (this.running) child.kill('SIGKILL');
      await this._exit;
      const log = this._log.trim() ? `\necsd's log:\n${this._log.trim()}` : '';
      return new Error(`ecsd (${this.binary} ${args.join(' ')}) ${why}${log}`);
    };

    const first = await Promise.race([
      listening,
      this._exit.then((st) => ({ st })),
      timeout(this.startTimeout),
    ]);
    if (first === 'timeout') throw await fail(`did not print "listening on" within ${this.startTimeout} ms`);
    if (first.st && first.st.error) throw await fail(`could not be started: ${first.st.error.message}`);
    if (first.st) throw await fail(`exited before listening (${describeExit(first.st)})`);
    this.port = first;

    // Ready when it answers (server.ping; "unauthorized" is an answer too).
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw await fail(`did not answer server.ping within ${this.startTimeout} ms`);
      const client = new Client({ host: this.host, port: this.port, timeout: left });
      try {
        await client.connect();
        await client.call('server.ping');
        break;
      } catch (err) {
        if (err instanceof RpcError) break;
        if (!this.running) throw await fail(`exited before answering (${describeExit(await this._exit)})`);
        await timeout(20);
      } finally {
        await client.close();
      }
    }
    this.httpPort = null;
    if (wantsHttp) {
      // It answered, so it has written both lines; give the pipe a moment to deliver them.
      const http = await Promise.race([viewer, timeout(2000)]);
      child.stdout.off('data', onData);
      child.stdout.resume();
      if (http === 'timeout') {
        const err = await fail('did not open its HTTP port (taken meanwhile?)');
        err.httpPortTaken = true;
        throw err;
      }
      this.httpPort = http;
    }
    // Running now: ecsd alone must not keep Node alive (a forgotten stop() does not hang the tests).
    child.unref();
    child.stdout.unref();
    child.stderr.unref();
  }

  async _signal(signal) {
    if (this.running) {
      this.process.kill(signal);
      this.process.ref(); // until it has exited
    }
    const st = await this._exit;
    this.process.unref();
    // Its clients see their connection close (calls and watch loops fail with ConnectionError, as
    // they would with any server); the ones that do not notice within a second are closed here.
    const clients = [...this._clients];
    this._clients.clear();
    await Promise.all(
      clients.map(async (client) => {
        let timer;
        const late = new Promise((resolve) => (timer = setTimeout(resolve, 1000)));
        if (client._closed) await Promise.race([client._closed, late]);
        clearTimeout(timer);
        await client.close();
      }),
    );
    return st;
  }

  async _terminate(timeout = 10000) {
    const killed = this._killed;
    const timer = setTimeout(() => this.running && this.process.kill('SIGKILL'), timeout);
    let st;
    try {
      st = await this._signal('SIGTERM');
    } finally {
      clearTimeout(timer);
    }
    if (killed) return; // kill() ended it: nothing to check
    if (st.code !== 0) {
      const log = this._log.trim() ? `\necsd's log:\n${this._log.trim()}` : '';
      throw new Error(`ecsd did not exit 0 on SIGTERM (${describeExit(st)})${log}`);
    }
  }

  async _removeDataDir() {
    if (this._ownsDataDir && this.dataDir) await fsp.rm(this.dataDir, { recursive: true, force: true });
  }

  _cleanUpSync() {
    if (this.running) this.process.kill('SIGKILL');
    if (this._ownsDataDir && this.dataDir) fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

function describeExit({ code, signal }) {
  return signal ? `killed by ${signal}` : code === null ? 'not started' : `exit code ${code}`;
}

module.exports = { EcsdServer, findBinary };
