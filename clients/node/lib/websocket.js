'use strict';

// A WebSocket client (RFC 6455), just what ecsd's /ws needs: the opening handshake over
// node:http's upgrade, masked frames out, text and binary messages in (fragmented or not), ping and
// pong, and the closing handshake. Node 20 has no global WebSocket, and this package takes no
// dependencies.

const crypto = require('node:crypto');
const http = require('node:http');
const https = require('node:https');
const { EventEmitter } = require('node:events');

/** Appended to Sec-WebSocket-Key before hashing (RFC 6455, section 1.3). */
const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

const OPCODE = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa };
const KNOWN_OPCODES = new Set(Object.values(OPCODE));

/** Close codes (RFC 6455, section 7.4.1) this client sends or reports. */
const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  protocolError: 1002,
  unsupportedData: 1003,
  noStatus: 1005, // reported, never sent: the close frame had no code
  abnormal: 1006, // reported, never sent: the connection ended without a close frame
  invalidData: 1007,
  tooBig: 1009,
};

/** What the codes a server closes with mean, for messages. */
const CLOSE_NAMES = {
  1000: 'normal closure',
  1001: 'going away',
  1002: 'protocol error',
  1003: 'unsupported data',
  1007: 'invalid data',
  1008: 'policy violation',
  1009: 'message too big',
  1011: 'internal error',
};

const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
const CLOSE_TIMEOUT_MS = 1000; // how long the server gets to end the TCP connection once closing

/**
 * A broken handshake, or a frame that breaks RFC 6455; `closeCode` is the code to close with. A
 * refused upgrade has the server's `status` and (the start of) its `body`.
 */
class WebSocketError extends Error {
  constructor(message, { closeCode = CLOSE.protocolError, status, body, code } = {}) {
    super(message);
    this.name = 'WebSocketError';
    this.closeCode = closeCode;
    if (status !== undefined) this.status = status;
    if (body !== undefined) this.body = body;
    if (code !== undefined) this.code = code;
  }
}

/** The Sec-WebSocket-Accept a server must answer to `key`. */
function acceptKey(key) {
  return crypto.createHash('sha1').update(key + GUID).digest('base64');
}

// Mask keys come from a pool of random bytes: one randomFillSync per 1024 frames, not one per frame
// (a pipeline of 20,000 calls is 20,000 frames).
let maskPool = Buffer.alloc(0);
let maskOffset = 0;
function nextMaskKey() {
  if (maskOffset + 4 > maskPool.length) {
    maskPool = crypto.randomFillSync(Buffer.allocUnsafe(4096));
    maskOffset = 0;
  }
  maskOffset += 4;
  return maskPool.subarray(maskOffset - 4, maskOffset);
}

/** XORs `data` with the 4-byte `key` into `out` (RFC 6455, section 5.3); masking and unmasking alike. */
function applyMask(data, key, out = data, outOffset = 0) {
  for (let i = 0; i < data.length; i++) out[outOffset + i] = data[i] ^ key[i & 3];
  return out;
}

/**
 * One frame as bytes. A client masks every frame it sends (section 5.1), so `mask` defaults to
 * true; `maskKey` fixes the key (tests compare with the RFC's examples), otherwise it is random.
 * @param {number} opcode
 * @param {Buffer|string} [payload] a string is sent as UTF-8
 */
function encodeFrame(opcode, payload = Buffer.alloc(0), { fin = true, mask = true, maskKey } = {}) {
  const data = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const length = data.length;
  const extra = length < 126 ? 0 : length < 0x10000 ? 2 : 8;
  const headerLength = 2 + extra + (mask ? 4 : 0);
  const frame = Buffer.allocUnsafe(headerLength + length);
  frame[0] = (fin ? 0x80 : 0) | opcode;
  frame[1] = (mask ? 0x80 : 0) | (extra === 0 ? length : extra === 2 ? 126 : 127);
  if (extra === 2) frame.writeUInt16BE(length, 2);
  else if (extra === 8) frame.writeBigUInt64BE(BigInt(length), 2);
  if (mask) {
    const key = maskKey || nextMaskKey();
    key.copy(frame, 2 + extra, 0, 4);
    applyMask(data, key, frame, headerLength);
  } else {
    data.copy(frame, headerLength);
  }
  return frame;
}

/**
 * Cuts a byte stream into frames, whatever chunks it arrives in. push() returns the frames the
 * chunk completes, `{ fin, opcode, masked, payload }` with the payload unmasked, and throws a
 * WebSocketError for a frame RFC 6455 forbids as soon as its header shows it (so a frame over
 * `maxPayload` is refused before it is buffered).
 */
class FrameDecoder {
  constructor({ maxPayload = DEFAULT_MAX_MESSAGE_BYTES } = {}) {
    this.maxPayload = maxPayload;
    this._chunks = [];
    this._buffered = 0;
    this._header = null; // the current frame's parsed header, once it is whole
  }

  /** @param {Buffer} chunk @returns {Array<{fin: boolean, opcode: number, masked: boolean, payload: Buffer}>} */
  push(chunk) {
    if (chunk.length > 0) {
      this._chunks.push(chunk);
      this._buffered += chunk.length;
    }
    const frames = [];
    for (;;) {
      if (this._header === null) {
        this._header = this._parseHeader();
        if (this._header === null) break;
      }
      const { headerLength, payloadLength } = this._header;
      if (this._buffered < headerLength + payloadLength) break;
      const { fin, opcode, masked } = this._header;
      const header = this._take(headerLength);
      let payload = this._take(payloadLength);
      if (masked) payload = applyMask(payload, header.subarray(headerLength - 4), Buffer.allocUnsafe(payloadLength));
      frames.push({ fin, opcode, masked, payload });
      this._header = null;
    }
    return frames;
  }

  /** Bytes received that do not yet make a whole frame. */
  get pendingBytes() {
    return this._buffered;
  }

  _parseHeader() {
    if (this._buffered < 2) return null;
    const start = this._peek(Math.min(this._buffered, 14));
    const fin = (start[0] & 0x80) !== 0;
    const rsv = start[0] & 0x70;
    const opcode = start[0] & 0x0f;
    const masked = (start[1] & 0x80) !== 0;
    const length7 = start[1] & 0x7f;
    if (rsv !== 0) throw new WebSocketError('a frame has reserved bits set, but no extension was agreed');
    if (!KNOWN_OPCODES.has(opcode)) throw new WebSocketError(`a frame has the unknown opcode ${opcode}`);
    const control = opcode >= OPCODE.close;
    if (control && !fin) throw new WebSocketError('a control frame is fragmented');
    if (control && length7 > 125) throw new WebSocketError('a control frame has more than 125 bytes');
    const extra = length7 === 126 ? 2 : length7 === 127 ? 8 : 0;
    const headerLength = 2 + extra + (masked ? 4 : 0);
    if (start.length < headerLength) return null;
    let payloadLength = length7;
    if (extra === 2) payloadLength = start.readUInt16BE(2);
    if (extra === 8) {
      const big = start.readBigUInt64BE(2);
      if (big >> 63n) throw new WebSocketError('a frame length has its most significant bit set');
      payloadLength = big > BigInt(Number.MAX_SAFE_INTEGER) ? Infinity : Number(big);
    }
    if (payloadLength > this.maxPayload)
      throw new WebSocketError(`a frame of ${payloadLength} bytes is over the limit of ${this.maxPayload}`, { closeCode: CLOSE.tooBig });
    return { fin, opcode, masked, headerLength, payloadLength };
  }

  /** The first `n` buffered bytes, left buffered. */
  _peek(n) {
    if (this._chunks[0].length >= n) return this._chunks[0].subarray(0, n);
    const joined = Buffer.concat(this._chunks);
    this._chunks = [joined];
    return joined.subarray(0, n);
  }

  /** Removes the first `n` buffered bytes and returns them (without copying when one chunk has them). */
  _take(n) {
    this._buffered -= n;
    const first = this._chunks[0];
    if (n === 0) return Buffer.alloc(0);
    if (first.length >= n) {
      if (first.length === n) this._chunks.shift();
      else this._chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    let i = 0; // chunks used up, dropped at once: shift() per chunk is quadratic for small chunks
    while (filled < n) {
      const chunk = this._chunks[i];
      const used = Math.min(chunk.length, n - filled);
      chunk.copy(out, filled, 0, used);
      filled += used;
      if (used === chunk.length) i += 1;
      else this._chunks[i] = chunk.subarray(used);
    }
    this._chunks.splice(0, i);
    return out;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * One client connection. Open one with `await WebSocket.connect(url)`. Events:
 * - 'message' (data, isBinary): a whole message, `data` a string for text, a Buffer for binary;
 * - 'ping' (payload), 'pong' (payload): a ping is answered with a pong by itself;
 * - 'error' (err): the server broke the protocol (the connection is then closed with
 *   `err.closeCode`) or the socket failed; with no listener it is thrown, as for any EventEmitter;
 * - 'close' (code, reason): once, when the TCP connection is gone; `code` is the server's close
 *   code, 1005 when its close frame had none, 1006 when the connection ended without one.
 * Messages start flowing on the next turn of the event loop, so listeners added right after
 * `await WebSocket.connect()` miss none.
 */
class WebSocket extends EventEmitter {
  /**
   * Opens a connection: `GET path` with `Upgrade: websocket`, checked against the server's
   * Sec-WebSocket-Accept. Rejects with WebSocketError (`status` set when the server answered
   * something other than 101, `code` 'ETIMEDOUT' after `timeout` ms) or the socket's error.
   * @param {string|URL} url ws://host:port/path (wss:// over TLS)
   * @param {object} [options]
   * @param {Record<string,string>} [options.headers] more request headers (Authorization, Origin)
   * @param {number} [options.timeout] ms for the whole handshake; 0: none
   * @param {number} [options.maxMessageBytes] longest message accepted (default 256 MiB); past it: close 1009
   */
  static connect(url, { headers = {}, timeout = 0, maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES } = {}) {
    const target = url instanceof URL ? url : new URL(url);
    if (target.protocol !== 'ws:' && target.protocol !== 'wss:')
      return Promise.reject(new TypeError(`not a WebSocket address (ws:// or wss://): ${target.href}`));
    const secure = target.protocol === 'wss:';
    const key = crypto.randomBytes(16).toString('base64');
    return new Promise((resolve, reject) => {
      let timer = null;
      const settle = (fn, value) => {
        clearTimeout(timer);
        fn(value);
      };
      const request = (secure ? https : http).request({
        host: target.hostname.replace(/^\[(.*)\]$/, '$1'), // an IPv6 literal without its brackets
        port: target.port || (secure ? 443 : 80),
        path: `${target.pathname}${target.search}`,
        agent: false, // never a pooled socket: this one leaves HTTP for good
        headers: {
          ...headers,
          Connection: 'Upgrade',
          Upgrade: 'websocket',
          'Sec-WebSocket-Version': '13',
          'Sec-WebSocket-Key': key,
        },
      });
      if (timeout) {
        timer = setTimeout(() => {
          // Rejected here, not through 'error': once a response has begun, the request emits none.
          reject(new WebSocketError(`no answer to the WebSocket handshake within ${timeout} ms`, { code: 'ETIMEDOUT' }));
          request.destroy();
        }, timeout);
      }
      request.on('error', (err) => settle(reject, err));
      request.on('response', (response) => {
        // Anything but 101: the server refused the upgrade; its body says why (ecsd's is short).
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (text) => {
          if (body.length < 1024) body += text;
        });
        response.on('error', (err) => settle(reject, err));
        response.on('end', () => {
          const why = body.trim() ? `: ${body.trim().slice(0, 300)}` : '';
          const status = `${response.statusCode} ${response.statusMessage || ''}`.trim();
          const message = `the server answered ${status} instead of switching to WebSocket${why}`;
          settle(reject, new WebSocketError(message, { status: response.statusCode, body }));
        });
      });
      request.on('upgrade', (response, socket, head) => {
        const problem = handshakeProblem(response, key);
        if (problem) {
          socket.destroy();
          settle(reject, new WebSocketError(`the WebSocket handshake failed: ${problem}`, { status: response.statusCode }));
          return;
        }
        settle(resolve, new WebSocket(socket, head, { url: target.href, maxMessageBytes }));
      });
      request.end();
    });
  }

  /** Use WebSocket.connect(); this takes a socket that has just switched protocols. */
  constructor(socket, head = Buffer.alloc(0), { url = null, maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES } = {}) {
    super();
    this.url = url;
    this.maxMessageBytes = maxMessageBytes;
    /** 'open', 'closing' (a close frame went out or came in), or 'closed' (the TCP connection is gone). */
    this.readyState = 'open';
    this.closeCode = null; // the server's, once its close frame came
    this.closeReason = '';
    this._socket = socket;
    this._decoder = new FrameDecoder({ maxPayload: maxMessageBytes });
    this._fragments = null; // {opcode, parts, bytes} while a fragmented message arrives
    this._closeSent = false;
    this._closeTimer = null;
    this._failed = false; // the server broke the protocol: nothing it sends counts any more
    this.closed = new Promise((resolve) => socket.once('close', resolve));
    socket.setNoDelay(true);
    socket.setTimeout(0);
    socket.on('error', (err) => {
      // After the server's close frame, a failed echo (EPIPE, ECONNRESET: it hung up first) is no news.
      if (this.closeCode === null) this.emit('error', err);
    });
    socket.on('end', () => {
      if (!this._closeSent) socket.end(); // the server ended the TCP connection: nothing more to say
    });
    socket.once('close', () => this._onClose());
    setImmediate(() => {
      if (this.readyState === 'closed') return;
      if (head.length > 0) this._onData(head);
      socket.on('data', (chunk) => this._onData(chunk));
    });
  }

  /**
   * Sends one message, or several in one write: a string as a text message, a Buffer as a binary
   * one. Returns false (and sends nothing) once the connection is closing.
   * @param {string|Buffer|Array<string|Buffer>} data
   */
  send(data) {
    if (this.readyState !== 'open') return false;
    const messages = Array.isArray(data) ? data : [data];
    const frames = messages.map((m) => (typeof m === 'string' ? encodeFrame(OPCODE.text, m) : encodeFrame(OPCODE.binary, m)));
    this._socket.write(frames.length === 1 ? frames[0] : Buffer.concat(frames));
    return true;
  }

  /** Sends a ping; the server's pong comes as a 'pong' event. */
  ping(payload = Buffer.alloc(0)) {
    if (this.readyState !== 'open') return false;
    this._socket.write(encodeFrame(OPCODE.ping, payload));
    return true;
  }

  /**
   * Starts the closing handshake (a close frame with `code` and `reason`) and resolves once the TCP
   * connection is gone; a server that does not end it within a second has it cut.
   */
  close(code = CLOSE.normal, reason = '') {
    this._sendClose(code, reason);
    return this.closed;
  }

  /** close() without waiting: what a client of node:net's `socket.end()` expects. */
  end() {
    this._sendClose(CLOSE.normal, '');
  }

  /** Cuts the TCP connection at once, without the closing handshake. */
  destroy() {
    this._socket.destroy();
  }

  /** While unref'd, an open connection does not keep Node running (as for a net.Socket). */
  ref() {
    this._socket.ref();
    return this;
  }

  unref() {
    this._socket.unref();
    return this;
  }

  // --- internals --------------------------------------------------------------------------------

  _onData(chunk) {
    if (this.readyState === 'closed' || this._failed) return;
    let frames;
    try {
      frames = this._decoder.push(chunk);
    } catch (err) {
      this._fail(err);
      return;
    }
    for (const frame of frames) {
      if (this.closeCode !== null) return; // nothing counts after the server's close frame
      try {
        this._onFrame(frame);
      } catch (err) {
        if (!(err instanceof WebSocketError)) throw err;
        this._fail(err);
        return;
      }
    }
  }

  _onFrame({ fin, opcode, masked, payload }) {
    if (masked) throw new WebSocketError('the server masked a frame (only clients mask theirs)');
    switch (opcode) {
      case OPCODE.ping:
        if (!this._closeSent) this._socket.write(encodeFrame(OPCODE.pong, payload));
        this.emit('ping', payload);
        return;
      case OPCODE.pong:
        this.emit('pong', payload);
        return;
      case OPCODE.close:
        this._onCloseFrame(payload);
        return;
      case OPCODE.continuation:
        if (this._fragments === null) throw new WebSocketError('a continuation frame came with no message to continue');
        break;
      default: // text or binary
        if (this._fragments !== null) throw new WebSocketError('a new message began before the fragmented one ended');
        this._fragments = { opcode, parts: [], bytes: 0 };
    }
    const message = this._fragments;
    message.bytes += payload.length;
    if (message.bytes > this.maxMessageBytes)
      throw new WebSocketError(`a message of more than ${this.maxMessageBytes} bytes`, { closeCode: CLOSE.tooBig });
    message.parts.push(payload);
    if (!fin) return;
    this._fragments = null;
    const data = message.parts.length === 1 ? message.parts[0] : Buffer.concat(message.parts, message.bytes);
    if (message.opcode === OPCODE.binary) {
      this.emit('message', data, true);
      return;
    }
    let text;
    try {
      text = utf8.decode(data);
    } catch {
      throw new WebSocketError('a text message is not valid UTF-8', { closeCode: CLOSE.invalidData });
    }
    this.emit('message', text, false);
  }

  _onCloseFrame(payload) {
    if (payload.length === 1) throw new WebSocketError('a close frame has a 1-byte payload');
    let code = CLOSE.noStatus;
    let reason = '';
    if (payload.length >= 2) {
      code = payload.readUInt16BE(0);
      try {
        reason = utf8.decode(payload.subarray(2));
      } catch {
        throw new WebSocketError('a close reason is not valid UTF-8', { closeCode: CLOSE.invalidData });
      }
    }
    this.closeCode = code;
    this.closeReason = reason;
    // Echo the code (none for none), then let the server end the TCP connection, as it should
    // first; ending ours too is harmless and spares a server that waits for it.
    this._sendClose(code === CLOSE.noStatus ? null : code, '');
    this._socket.end();
  }

  /** Sends the close frame once (code null: an empty one) and arms the timer that cuts a server that lingers. */
  _sendClose(code, reason) {
    if (this._closeSent || this.readyState === 'closed') return;
    this._closeSent = true;
    this.readyState = 'closing';
    let payload = Buffer.alloc(0);
    if (code !== null) {
      const text = Buffer.from(reason, 'utf8').subarray(0, 123); // a control frame holds 125 bytes
      payload = Buffer.concat([Buffer.from([code >> 8, code & 0xff]), text]);
    }
    this._socket.write(encodeFrame(OPCODE.close, payload));
    this._closeTimer = setTimeout(() => this._socket.destroy(), CLOSE_TIMEOUT_MS);
  }

  /** The server broke the protocol: say why in a close frame, report it, and hang up. */
  _fail(err) {
    this._failed = true;
    this.emit('error', err);
    this._sendClose(err.closeCode || CLOSE.protocolError, err.message);
    this._socket.end();
  }

  _onClose() {
    clearTimeout(this._closeTimer);
    this.readyState = 'closed';
    this.emit('close', this.closeCode === null ? CLOSE.abnormal : this.closeCode, this.closeReason);
  }
}

/** Why the server's 101 does not complete the handshake (RFC 6455, section 4.1), or null. */
function handshakeProblem(response, key) {
  const h = response.headers;
  if (response.statusCode !== 101) return `status ${response.statusCode} instead of 101`;
  if ((h.upgrade || '').toLowerCase() !== 'websocket') return `Upgrade is ${JSON.stringify(h.upgrade)}, not websocket`;
  if (!(h.connection || '').toLowerCase().split(/\s*,\s*/).includes('upgrade'))
    return `Connection is ${JSON.stringify(h.connection)}, not Upgrade`;
  const accept = h['sec-websocket-accept'];
  if (accept !== acceptKey(key)) return `Sec-WebSocket-Accept is ${JSON.stringify(accept)}, not ${acceptKey(key)}`;
  if (h['sec-websocket-extensions']) return `the server chose an extension nobody asked for: ${h['sec-websocket-extensions']}`;
  if (h['sec-websocket-protocol']) return `the server chose a subprotocol nobody asked for: ${h['sec-websocket-protocol']}`;
  return null;
}

module.exports = { WebSocket, WebSocketError, FrameDecoder, encodeFrame, acceptKey, applyMask, OPCODE, CLOSE, CLOSE_NAMES };
