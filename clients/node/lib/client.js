'use strict';

const net = require('node:net');
const { LineSplitter, encode } = require('./framing');
const { WebSocket, CLOSE_NAMES } = require('./websocket');
const { RpcError, ConnectionError, TimeoutError } = require('./errors');
const { mixinRequests } = require('./requests');
const { Pipeline } = require('./pipeline');
const { Watch } = require('./watch');

const DEFAULT_PAGE_SIZE = 1000; // world.query takes at most 10000 per page

/**
 * One connection to ecsd. Calls may overlap freely (they are pipelined and matched by id); watch
 * notifications arriving on the same socket are routed to their Watch. An idle client does not keep
 * Node running: the socket holds the event loop only while a call or a watch loop waits on it.
 *
 * The connection is ecsd's TCP port (one JSON text per line), or with `url` its HTTP port's
 * WebSocket endpoint (one JSON text per message); everything above the framing is the same, so a
 * message is handled as a line would be.
 */
class Client {
  /**
   * @param {object} [options]
   * @param {string} [options.host] default 127.0.0.1
   * @param {number} [options.port] default 7777
   * @param {string|null} [options.url] ws://HOST:PORT/ws: WebSocket to ecsd's HTTP port instead of
   *   TCP to host:port (which it then replaces)
   * @param {string|null} [options.token] sent with server.auth right after connecting
   * @param {string|null} [options.world] added as params.world to world.* calls that name none
   * @param {number} [options.timeout] ms to wait for each answer (and to connect); 0: for ever
   */
  constructor({ host = '127.0.0.1', port = 7777, url = null, token = null, world = null, timeout = 5000 } = {}) {
    this.url = url === null || url === undefined ? null : String(url);
    if (this.url !== null) {
      const parsed = new URL(this.url);
      if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') throw new TypeError(`url must be ws:// or wss://, not ${this.url}`);
      host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
      port = Number(parsed.port || (parsed.protocol === 'wss:' ? 443 : 80));
    }
    this.host = host;
    this.port = port;
    this.token = token;
    this.world = world;
    this.timeout = timeout;
    this._socket = null;
    this._state = 'new'; // new -> connecting -> open -> closed
    this._nextId = 1;
    this._pending = new Map(); // id -> {method, resolve, reject, timer}
    this._watches = new Map(); // subscription -> Watch
    this._starting = new Set(); // Watches whose world.watch answer has not arrived
    this._early = new Map(); // subscription -> notifications that came before their watch answer
    this._closeCause = null; // what the server said (or the socket error) before the connection went
    this._closed = null; // resolves once the socket is closed
  }

  /** Connects a new client; see the constructor for the options. */
  static async connect(options) {
    return new Client(options).connect();
  }

  /** host:port, or the url for a WebSocket client: what error messages name. */
  get address() {
    return this.url !== null ? this.url : `${this.host}:${this.port}`;
  }

  get connected() {
    return this._state === 'open';
  }

  /** Opens the connection (and authenticates when a token is set). Resolves to the client. */
  async connect() {
    if (this._state !== 'new') throw new Error(`connect(): this client is already ${this._state}`);
    this._state = 'connecting';
    let socket;
    try {
      socket = this.url !== null ? await this._openWebSocket() : await this._openTcp();
    } catch (err) {
      this._state = 'closed';
      throw err;
    }
    this._socket = socket;
    this._closed = new Promise((resolve) => socket.once('close', resolve));
    if (this.url !== null) {
      socket.on('message', (data, isBinary) => {
        if (!isBinary) {
          this._onLine(data);
          return;
        }
        this._closeCause = new ConnectionError('the server sent a binary WebSocket message (ecsd sends text only)');
        socket.destroy();
      });
      socket.on('close', (code, reason) => {
        if (this._closeCause !== null || code === 1000 || code === 1005) return;
        const why = [CLOSE_NAMES[code], reason].filter(Boolean).join(': ');
        this._closeCause = new ConnectionError(`the server closed the WebSocket with code ${code}${why ? ` (${why})` : ''}`);
      });
    } else {
      const splitter = new LineSplitter();
      socket.on('data', (chunk) => {
        for (const line of splitter.push(chunk)) this._onLine(line);
      });
    }
    socket.on('error', (err) => {
      this._closeCause = this._closeCause || err;
    });
    socket.on('close', () => this._onClose());
    this._state = 'open';
    this._holdChanged();
    if (this.token !== null && this.token !== undefined) {
      try {
        await this.call('server.auth', { token: this.token });
      } catch (err) {
        await this.close();
        throw err;
      }
    }
    return this;
  }

  async _openTcp() {
    const socket = net.createConnection({ host: this.host, port: this.port });
    try {
      await new Promise((resolve, reject) => {
        const timer = this.timeout
          ? setTimeout(() => reject(new TimeoutError(`cannot connect to ${this.address}: no answer within ${this.timeout} ms`)), this.timeout)
          : null;
        socket.once('connect', () => {
          clearTimeout(timer);
          resolve();
        });
        socket.once('error', (err) => {
          clearTimeout(timer);
          const hint = err.code === 'ECONNREFUSED' ? ' (is ecsd running there? scripts/run.sh starts one on 7777)' : '';
          reject(new ConnectionError(`cannot connect to ${this.address}: ${err.message}${hint}`, { cause: err }));
        });
      });
    } catch (err) {
      socket.destroy();
      throw err;
    }
    socket.setNoDelay(true);
    return socket;
  }

  async _openWebSocket() {
    try {
      return await WebSocket.connect(this.url, { timeout: this.timeout });
    } catch (err) {
      if (err.code === 'ETIMEDOUT') throw new TimeoutError(`cannot connect to ${this.address}: no answer within ${this.timeout} ms`);
      let why = err.message;
      const refusal = rpcErrorIn(err.body);
      if (refusal) why = `the server refused the WebSocket with ${err.status}: ${refusal.message} (${refusal.reason})`;
      let hint = '';
      if (err.code === 'ECONNREFUSED') hint = " (is ecsd's HTTP port there? --http-port, 7778 by default)";
      else if (err.status === 404) hint = ' (an ecsd without WebSocket support?)';
      throw new ConnectionError(`cannot connect to ${this.address}: ${why}${hint}`, { cause: err });
    }
  }

  /** Closes the connection. Calls still waiting reject with ConnectionError; watch loops finish. */
  async close() {
    if (this._state === 'new') this._state = 'closed';
    if (!this._socket) return;
    if (this._state !== 'closed') {
      this._state = 'closed';
      this._failAll(new ConnectionError(`client closed (connection to ${this.address})`), null);
      this._socket.end();
      const timer = setTimeout(() => this._socket.destroy(), 1000);
      await this._closed;
      clearTimeout(timer);
    }
    await this._closed;
  }

  /**
   * Sends one request. Resolves to its result; rejects with RpcError (the server said no),
   * TimeoutError or ConnectionError.
   */
  call(method, params = {}) {
    return this._send([{ method, params }])[0];
  }

  /**
   * Every chunk of one world.export: the world's snapshot text (one tick's, however long the reading
   * takes), as `ecsctl export` writes it and importWorld reads it. `seal` seals the world (a move).
   */
  async exportWorld({ world, seal = false, chunkBytes } = {}) {
    const first = {};
    if (world !== undefined) first.world = world;
    if (chunkBytes !== undefined) first.max_bytes = chunkBytes;
    if (seal) first.seal = true;
    let answer = await this.call('world.export', first);
    const parts = [answer.data];
    let offset = Buffer.byteLength(answer.data, 'utf8');
    while (!answer.done) {
      answer = await this.call('world.export', { world: answer.world, export: answer.export, offset });
      parts.push(answer.data);
      offset += Buffer.byteLength(answer.data, 'utf8');
    }
    return parts.join('');
  }

  /**
   * Creates world `name` from a snapshot text (exportWorld's, or a file `ecsctl export` wrote), sent
   * with world.import in chunks of at most `chunkBytes`; resolves to the last answer,
   * `{ world, bytes, done: true, tick, entities }`.
   */
  async importWorld(name, text, { paused, chunkBytes = 200_000 } = {}) {
    const data = Buffer.from(text, 'utf8');
    for (let offset = 0; ; ) {
      let end = Math.min(offset + chunkBytes, data.length);
      while (end < data.length && end > offset && (data[end] & 0xc0) === 0x80) end -= 1; // whole characters only
      const final = end >= data.length;
      const params = { world: name, data: data.subarray(offset, end).toString('utf8'), offset };
      if (final) {
        params.final = true;
        if (paused !== undefined) params.paused = paused;
      }
      const answer = await this.call('world.import', params);
      if (final) return answer;
      offset = end;
    }
  }

  /** A batch of calls sent in one write; see Pipeline. */
  pipeline() {
    return new Pipeline(this);
  }

  /**
   * Every entity matching `query` (text or object), paging through world.query; `limit` caps how
   * many (default: all), `fields` picks the components returned. In a running world the pages may
   * see different ticks: pause it for an exact answer.
   * @returns {Promise<Array<{entity: number, components: object}>>}
   */
  async query(query, { fields, limit = Infinity, pageSize = DEFAULT_PAGE_SIZE, world } = {}) {
    const entities = [];
    for (let offset = 0; entities.length < limit; ) {
      const params = { query, offset, limit: Math.min(pageSize, limit - entities.length) };
      if (fields !== undefined) params.fields = fields;
      if (world !== undefined) params.world = world;
      const page = await this.call('world.query', params);
      entities.push(...page.entities);
      offset += page.entities.length;
      if (page.entities.length === 0 || offset >= page.total) break;
    }
    return entities;
  }

  /**
   * Subscribes to `query` (world.watch). Returns at once; `await watch.ready` for the first answer,
   * or just iterate: `for await (const notification of client.watch('Position')) ...`.
   */
  watch(query, { fields, every, world, maxQueue } = {}) {
    const params = this._params('world.watch', { query, fields, every, world });
    const watch = new Watch(this, params, { maxQueue });
    this._starting.add(watch);
    watch.ready.then(
      () => this._started(watch),
      () => this._started(watch),
    );
    return watch;
  }

  // --- internals --------------------------------------------------------------------------------

  /** Runs one helper request (see requests.js). */
  _run({ method, params, pick }) {
    return this.call(method, params).then(pick);
  }

  /** The params as sent: the client's world added to world.* calls that name none (not world.list). */
  _params(method, params) {
    const p = {};
    for (const [k, v] of Object.entries(params || {})) if (v !== undefined) p[k] = v;
    if (this.world !== null && this.world !== undefined && p.world === undefined && method.startsWith('world.') && method !== 'world.list')
      p.world = this.world;
    return p;
  }

  /** Registers the requests and writes them all at once. Returns one promise per request. */
  _send(requests) {
    if (this._state !== 'open') {
      const why = this._state === 'new' ? 'not connected: call connect() first' : `connection to ${this.address} is closed`;
      const err = new ConnectionError(why, { cause: this._closeCause || undefined });
      return requests.map(() => Promise.reject(err));
    }
    const messages = [];
    const promises = requests.map(({ method, params }) => {
      const id = this._nextId++;
      messages.push({ jsonrpc: '2.0', id, method, params: this._params(method, params) });
      return new Promise((resolve, reject) => {
        const timer = this.timeout ? setTimeout(() => this._timedOut(id), this.timeout) : null;
        this._pending.set(id, { method, resolve, reject, timer });
      });
    });
    this._holdChanged();
    // One write either way: a line per request on TCP, a message per request on WebSocket.
    if (this.url !== null) this._socket.send(messages.map((m) => JSON.stringify(m)));
    else this._socket.write(messages.map(encode).join(''));
    return promises;
  }

  _timedOut(id) {
    const p = this._pending.get(id);
    if (!p) return;
    this._pending.delete(id);
    this._holdChanged();
    p.reject(new TimeoutError(`${p.method}: no answer from ${this.address} within ${this.timeout} ms`));
  }

  _onLine(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      this._closeCause = new ConnectionError(`the server sent a line that is not JSON: ${line.slice(0, 80)}`);
      this._socket.destroy();
      return;
    }
    for (const m of Array.isArray(message) ? message : [message]) this._onMessage(m);
  }

  _onMessage(m) {
    if (m === null || typeof m !== 'object') return;
    if (!('id' in m)) {
      if (m.method === 'world.watch' && m.params) this._onNotification(m.params);
      return;
    }
    let id = m.id;
    if (id === null) {
      // The server could not tell which request this answers (it could not parse it), or it is
      // about the connection (limit_reached, timeout, too_large) and the connection is about to
      // close. Answers come in request order, so it belongs to the oldest call waiting, if any.
      const error = new RpcError(m.error || {});
      id = this._pending.keys().next().value;
      if (id === undefined) {
        this._closeCause = error;
        return;
      }
    }
    const p = this._pending.get(id);
    if (!p) return; // timed out meanwhile, or a streaming answer this client does not follow
    this._pending.delete(id);
    clearTimeout(p.timer);
    this._holdChanged();
    if (m.error) p.reject(new RpcError(m.error, p.method));
    else p.resolve(m.result);
  }

  _onNotification(params) {
    const watch = this._watches.get(params.subscription);
    if (watch) {
      watch._deliver(params);
    } else if (this._starting.size > 0) {
      // Not expected (ecsd sends a watch's answer before its notifications), but never lost.
      const list = this._early.get(params.subscription) || [];
      list.push(params);
      this._early.set(params.subscription, list);
    }
  }

  _started(watch) {
    this._starting.delete(watch);
    if (watch.subscription !== null && !watch.ended) {
      this._watches.set(watch.subscription, watch);
      for (const n of this._early.get(watch.subscription) || []) watch._deliver(n);
    }
    this._early.delete(watch.subscription);
    if (this._starting.size === 0) this._early.clear();
  }

  _forgetWatch(watch) {
    if (this._watches.get(watch.subscription) === watch) this._watches.delete(watch.subscription);
  }

  _onClose() {
    const wasOpen = this._state !== 'closed';
    this._state = 'closed';
    if (!wasOpen) return; // close() already settled everything
    const cause = this._closeCause;
    const why = cause ? `: ${cause.reason ? `${cause.reason}: ` : ''}${cause.message}` : '';
    const err = new ConnectionError(`connection to ${this.address} closed${why}`, { cause: cause || undefined });
    this._failAll(err, err);
  }

  /** Rejects every waiting call with `err`; ends every watch (with `watchError`, or quietly). */
  _failAll(err, watchError) {
    const pending = [...this._pending.values()];
    this._pending.clear();
    for (const p of pending) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    for (const watch of [...this._watches.values()]) watch._finish(watchError ? 'failed' : 'closed', watchError);
    this._holdChanged();
  }

  /** Keeps the event loop alive only while something waits on the socket. */
  _holdChanged() {
    if (!this._socket || this._state !== 'open') return;
    let waiting = this._pending.size > 0 || this._starting.size > 0;
    for (const watch of this._watches.values()) waiting = waiting || watch._waiting > 0;
    if (waiting) this._socket.ref();
    else this._socket.unref();
  }
}

/** ecsd explains a refused upgrade (403 for a Host or Origin, 401 for a token) with a JSON-RPC error body. */
function rpcErrorIn(body) {
  try {
    const answer = JSON.parse(body);
    return answer && answer.error && typeof answer.error.message === 'string' ? new RpcError(answer.error) : null;
  } catch {
    return null;
  }
}

mixinRequests(Client);

module.exports = { Client };
