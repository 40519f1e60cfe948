'use strict';

// The WebSocket transport: RFC 6455 framing (encode and decode, against the RFC's own examples),
// the client against a small WebSocket server built here on node:http's upgrade (handshake,
// masking, fragments, ping/pong, the close handshake, broken servers), Client over it against a
// scripted server, and Client over a real ecsd's /ws.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const { once } = require('node:events');
const { WebSocket, WebSocketError, FrameDecoder, encodeFrame, acceptKey, OPCODE } = require('../lib/websocket');
const { Client, EcsdServer, RpcError } = require('..');

const hex = (text) => Buffer.from(text.replace(/\s+/g, ''), 'hex');

// --- framing ------------------------------------------------------------------------------------

test('acceptKey: the example of RFC 6455 section 1.3', () => {
  assert.equal(acceptKey('dGhlIHNhbXBsZSBub25jZQ=='), 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
});

test('encodeFrame: the examples of RFC 6455 section 5.7', () => {
  assert.deepEqual(encodeFrame(OPCODE.text, 'Hello', { mask: false }), hex('81 05 48656c6c6f'));
  assert.deepEqual(encodeFrame(OPCODE.text, 'Hello', { maskKey: hex('37fa213d') }), hex('81 85 37fa213d 7f9f4d5158'));
  assert.deepEqual(encodeFrame(OPCODE.text, 'Hel', { fin: false, mask: false }), hex('01 03 48656c'));
  assert.deepEqual(encodeFrame(OPCODE.continuation, 'lo', { mask: false }), hex('80 02 6c6f'));
  assert.deepEqual(encodeFrame(OPCODE.ping, 'Hello', { mask: false }), hex('89 05 48656c6c6f'));
  assert.deepEqual(encodeFrame(OPCODE.pong, 'Hello', { maskKey: hex('37fa213d') }), hex('8a 85 37fa213d 7f9f4d5158'));
  assert.deepEqual(encodeFrame(OPCODE.binary, Buffer.alloc(256), { mask: false }).subarray(0, 4), hex('82 7e 0100'));
  assert.deepEqual(encodeFrame(OPCODE.binary, Buffer.alloc(65536), { mask: false }).subarray(0, 10), hex('82 7f 0000000000010000'));
});

test('encodeFrame masks with a fresh key per frame', () => {
  const a = encodeFrame(OPCODE.text, 'same');
  const b = encodeFrame(OPCODE.text, 'same');
  assert.equal(a[1] & 0x80, 0x80);
  assert.notDeepEqual(a.subarray(2, 6), b.subarray(2, 6));
});

test('FrameDecoder: every length form round-trips, whatever the chunks', () => {
  const payloads = [0, 1, 125, 126, 127, 65535, 65536, 70001].map((n) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7) & 0xff)));
  const frames = payloads.map((p, i) => encodeFrame(i % 2 ? OPCODE.binary : OPCODE.text, p, { fin: i !== 3 }));
  const stream = Buffer.concat(frames);
  for (const cut of [1, 3, 1000, stream.length]) {
    const decoder = new FrameDecoder();
    const got = [];
    for (let i = 0; i < stream.length; i += cut) got.push(...decoder.push(stream.subarray(i, i + cut)));
    assert.equal(got.length, payloads.length, `chunks of ${cut}`);
    got.forEach((frame, i) => {
      assert.deepEqual(frame.payload, payloads[i]);
      assert.equal(frame.masked, true);
      assert.equal(frame.fin, i !== 3);
      assert.equal(frame.opcode, i % 2 ? OPCODE.binary : OPCODE.text);
    });
    assert.equal(decoder.pendingBytes, 0);
  }
});

test('FrameDecoder refuses what RFC 6455 forbids, from the header alone', () => {
  const refuse = (bytes, pattern, closeCode = 1002, options) => {
    assert.throws(() => new FrameDecoder(options).push(bytes), (err) => {
      assert.ok(err instanceof WebSocketError);
      assert.match(err.message, pattern);
      assert.equal(err.closeCode, closeCode);
      return true;
    });
  };
  refuse(hex('c1 00'), /reserved bits/); // RSV1: compression nobody agreed on
  refuse(hex('83 00'), /unknown opcode 3/);
  refuse(hex('09 00'), /control frame is fragmented/);
  refuse(hex('89 7e 0080'), /more than 125 bytes/);
  refuse(hex('82 7f 8000000000000000'), /most significant bit/);
  refuse(hex('82 7e 1000'), /over the limit of 100/, 1009, { maxPayload: 100 }); // before its bytes came
});

// --- the client against a WebSocket server built here --------------------------------------------

/**
 * A WebSocket server on a free port; `onUpgrade(peer, request)` runs for each connection. A peer
 * decodes what the client sends (checking it is masked) and sends unmasked frames.
 */
async function wsServer(t, onUpgrade, { answer } = {}) {
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found: only /ws here');
  });
  server.on('upgrade', (req, socket, head) => {
    sockets.add(socket);
    socket.on('error', () => {});
    if (!req.url.startsWith('/ws')) {
      const body = 'not found: only /ws here';
      socket.end(`HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      return;
    }
    const accept = answer ? answer(req) : acceptKey(req.headers['sec-websocket-key']);
    if (accept === null) return; // never answers
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    onUpgrade(new Peer(socket, head), req);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return server.address().port;
}

class Peer {
  constructor(socket, head) {
    this.socket = socket;
    this.frames = [];
    this.ended = new Promise((resolve) => socket.once('close', resolve));
    this._waiters = [];
    const decoder = new FrameDecoder();
    const take = (chunk) => {
      for (const frame of decoder.push(chunk)) {
        assert.equal(frame.masked, true, 'a client frame is masked');
        this.frames.push(frame);
        for (const wake of this._waiters.splice(0)) wake();
      }
    };
    if (head.length) take(head);
    socket.on('data', take);
  }

  /** The next frame the client sent. */
  async next() {
    while (this.frames.length === 0) await new Promise((resolve) => this._waiters.push(resolve));
    return this.frames.shift();
  }

  send(opcode, payload, options = {}) {
    this.socket.write(encodeFrame(opcode, payload, { mask: false, ...options }));
  }
}

const closePayload = (code, reason = '') => Buffer.concat([Buffer.from([code >> 8, code & 0xff]), Buffer.from(reason)]);

test('handshake, masked messages both ways, fragments with a ping between them, binary', async (t) => {
  let peer;
  let request;
  const port = await wsServer(t, (p, req) => {
    peer = p;
    request = req;
  });
  const ws = await WebSocket.connect(`ws://127.0.0.1:${port}/ws?x=1`, { headers: { Authorization: 'Bearer abc' } });
  t.after(() => ws.destroy());
  assert.equal(request.url, '/ws?x=1');
  assert.equal(request.headers.host, `127.0.0.1:${port}`);
  assert.equal(request.headers.upgrade, 'websocket');
  assert.equal(request.headers.connection, 'Upgrade');
  assert.equal(request.headers['sec-websocket-version'], '13');
  assert.equal(Buffer.from(request.headers['sec-websocket-key'], 'base64').length, 16);
  assert.equal(request.headers.authorization, 'Bearer abc');

  assert.equal(ws.send(['{"a":1}', 'é☃']), true); // two messages in one write
  const first = await peer.next();
  const second = await peer.next();
  assert.deepEqual([first.opcode, first.fin, first.payload.toString()], [OPCODE.text, true, '{"a":1}']);
  assert.equal(second.payload.toString(), 'é☃');

  const messages = [];
  ws.on('message', (data, isBinary) => messages.push([data, isBinary]));
  const text = Buffer.from('héllo ☃ wörld');
  peer.send(OPCODE.text, text.subarray(0, 2), { fin: false }); // cuts é in two
  peer.send(OPCODE.ping, 'are you there');
  peer.send(OPCODE.continuation, text.subarray(2, 9), { fin: false }); // and ☃
  peer.send(OPCODE.continuation, text.subarray(9));
  peer.send(OPCODE.binary, Buffer.from([0, 1, 2]));
  const pong = await peer.next();
  assert.deepEqual([pong.opcode, pong.payload.toString()], [OPCODE.pong, 'are you there']);
  while (messages.length < 2) await once(ws, 'message');
  assert.deepEqual(messages, [
    ['héllo ☃ wörld', false],
    [Buffer.from([0, 1, 2]), true],
  ]);

  ws.ping('hi');
  const ping = await peer.next();
  assert.deepEqual([ping.opcode, ping.payload.toString()], [OPCODE.ping, 'hi']);
  const pongs = once(ws, 'pong');
  peer.send(OPCODE.pong, 'hi');
  assert.equal((await pongs)[0].toString(), 'hi');
});

test('the server closes: the client echoes its code and reports it', async (t) => {
  const port = await wsServer(t, (peer) => {
    peer.send(OPCODE.text, 'last words');
    peer.send(OPCODE.close, closePayload(1001, 'going away'));
    peer.send(OPCODE.text, 'after the close: ignored');
    peer.next().then((frame) => {
      assert.deepEqual([frame.opcode, frame.payload.readUInt16BE(0)], [OPCODE.close, 1001]);
      peer.socket.end();
    });
  });
  const ws = await WebSocket.connect(`ws://127.0.0.1:${port}/ws`);
  const messages = [];
  ws.on('message', (data) => messages.push(data));
  const [code, reason] = await once(ws, 'close');
  assert.deepEqual([code, reason], [1001, 'going away']);
  assert.deepEqual(messages, ['last words']);
  assert.equal(ws.readyState, 'closed');
  assert.equal(ws.send('too late'), false);
});

test('the client closes: a close frame, the server answers, close() resolves', async (t) => {
  let peer;
  const port = await wsServer(t, (p) => {
    peer = p;
    p.next().then((frame) => {
      p.send(OPCODE.close, frame.payload); // echoes, then ends the TCP connection as a server should
      p.socket.end();
    });
  });
  const ws = await WebSocket.connect(`ws://127.0.0.1:${port}/ws`);
  const closing = ws.close(1000, 'done');
  assert.equal(ws.readyState, 'closing');
  await closing;
  assert.equal(peer.frames.length, 0);
  assert.equal(ws.readyState, 'closed');
  assert.equal(ws.closeCode, 1000);
  assert.equal(ws.closeReason, 'done');
});

test('a server that never ends the connection after the close handshake is cut after a second', async (t) => {
  const port = await wsServer(t, (peer) => {
    peer.next().then(() => peer.send(OPCODE.close, closePayload(1000)));
  });
  const ws = await WebSocket.connect(`ws://127.0.0.1:${port}/ws`);
  const started = Date.now();
  await ws.close();
  assert.ok(Date.now() - started < 3000);
});

test('a server breaking the protocol: error, close 1002 or 1007 with the reason, then closed', async (t) => {
  const cases = [
    [(peer) => peer.send(OPCODE.text, 'x', { mask: true }), /masked a frame/, 1002],
    [(peer) => peer.send(OPCODE.continuation, 'x'), /no message to continue/, 1002],
    [(peer) => (peer.send(OPCODE.text, 'a', { fin: false }), peer.send(OPCODE.text, 'b')), /before the fragmented one ended/, 1002],
    [(peer) => peer.send(OPCODE.text, hex('c328')), /not valid UTF-8/, 1007],
    [(peer) => peer.socket.write(hex('c1 00')), /reserved bits/, 1002],
  ];
  for (const [misbehave, pattern, code] of cases) {
    let peer;
    const port = await wsServer(t, (p) => {
      peer = p;
      misbehave(p);
    });
    const ws = await WebSocket.connect(`ws://127.0.0.1:${port}/ws`);
    const [err] = await once(ws, 'error');
    assert.match(err.message, pattern);
    const frame = await peer.next();
    assert.equal(frame.opcode, OPCODE.close);
    assert.equal(frame.payload.readUInt16BE(0), code);
    assert.match(frame.payload.subarray(2).toString(), pattern);
    peer.socket.end();
    await ws.closed;
  }
});

test('failed handshakes reject: a refusal with its status and body, a wrong accept, no answer, no server', async (t) => {
  const port = await wsServer(t, () => {});
  await assert.rejects(WebSocket.connect(`ws://127.0.0.1:${port}/`), {
    name: 'WebSocketError',
    status: 404,
    message: 'the server answered 404 Not Found instead of switching to WebSocket: not found: only /ws here',
  });
  const refusing = http.createServer((req, res) => {
    res.writeHead(401, { 'Content-Type': 'text/plain', 'WWW-Authenticate': 'Bearer' });
    res.end('a token is required');
  });
  refusing.listen(0, '127.0.0.1');
  await once(refusing, 'listening');
  t.after(() => refusing.close());
  await assert.rejects(WebSocket.connect(`ws://127.0.0.1:${refusing.address().port}/ws`), {
    name: 'WebSocketError',
    status: 401,
    message: /answered 401 Unauthorized instead of switching to WebSocket: a token is required/,
  });

  const liar = await wsServer(t, () => {}, { answer: () => 'bm90IHRoZSByaWdodCBrZXk=' });
  await assert.rejects(WebSocket.connect(`ws://127.0.0.1:${liar}/ws`), { name: 'WebSocketError', message: /Sec-WebSocket-Accept is/ });

  const silent = await wsServer(t, () => {}, { answer: () => null });
  await assert.rejects(WebSocket.connect(`ws://127.0.0.1:${silent}/ws`, { timeout: 200 }), { code: 'ETIMEDOUT' });

  await assert.rejects(WebSocket.connect('ws://127.0.0.1:1/ws'), { code: 'ECONNREFUSED' });
  await assert.rejects(WebSocket.connect('http://127.0.0.1:1/ws'), TypeError);
});

// --- Client over WebSocket, against a scripted JSON-RPC server ------------------------------------

test('Client over WebSocket: calls, pipelines, watch notifications and errors, one message each', async (t) => {
  const port = await wsServer(t, async (peer) => {
    for (;;) {
      const frame = await peer.next();
      if (frame.opcode === OPCODE.close) {
        peer.send(OPCODE.close, frame.payload);
        peer.socket.end();
        return;
      }
      const request = JSON.parse(frame.payload.toString()); // one request per message, never a line
      const reply = (body) => peer.send(OPCODE.text, JSON.stringify({ jsonrpc: '2.0', id: request.id, ...body }));
      if (request.method === 'server.ping') reply({ result: 'pong' });
      else if (request.method === 'world.spawn_entity') reply({ result: { entity: request.params.components.Position.x } });
      else if (request.method === 'world.watch') {
        reply({ result: { subscription: 7, tick: 1, entities: [] } });
        const n = { subscription: 7, tick: 2, entered: [{ entity: 5, components: { Position: { x: 1 } } }], changed: [], left: [] };
        const text = Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'world.watch', params: n }));
        peer.send(OPCODE.text, text.subarray(0, 10), { fin: false }); // a notification in fragments
        peer.send(OPCODE.continuation, text.subarray(10));
      } else reply({ error: { code: -32003, message: 'no entity', data: { reason: 'no_such_entity' } } });
    }
  });
  const client = await Client.connect({ url: `ws://127.0.0.1:${port}/ws`, world: 'w' });
  assert.equal(client.address, `ws://127.0.0.1:${port}/ws`);
  assert.equal(await client.ping(), 'pong');
  const p = client.pipeline();
  for (let x = 0; x < 50; x++) p.spawn({ Position: { x } });
  assert.deepEqual(await p.exec(), Array.from({ length: 50 }, (_, x) => x));
  await assert.rejects(client.get(1), { name: 'RpcError', reason: 'no_such_entity', method: 'world.get_components' });
  const watch = client.watch('Position');
  await watch.until((state) => state.has(5));
  assert.deepEqual(watch.state.get(5), { Position: { x: 1 } });
  await client.close();
  assert.equal(client.connected, false);
  await assert.rejects(client.ping(), { name: 'ConnectionError', message: /closed/ });
});

test('Client over WebSocket: a server closing with a reason fails the waiting calls with it', async (t) => {
  const port = await wsServer(t, async (peer) => {
    await peer.next(); // the request; never answered
    peer.send(OPCODE.close, closePayload(1008, 'idle for too long'));
    await peer.next();
    peer.socket.end();
  });
  const client = await Client.connect({ url: `ws://127.0.0.1:${port}/ws` });
  await assert.rejects(client.ping(), {
    name: 'ConnectionError',
    message: /closed: the server closed the WebSocket with code 1008 \(policy violation: idle for too long\)$/,
  });
});

test('Client over WebSocket: connecting fails clearly, and a bad url is refused at once', async (t) => {
  const port = await wsServer(t, () => {});
  await assert.rejects(Client.connect({ url: `ws://127.0.0.1:${port}/nowhere`, timeout: 2000 }), (err) => {
    assert.equal(err.name, 'ConnectionError');
    assert.match(err.message, /answered 404 Not Found .*: not found: only \/ws here \(an ecsd without WebSocket support\?\)$/);
    assert.ok(err.message.startsWith(`cannot connect to ws://127.0.0.1:${port}/nowhere: `));
    return true;
  });
  await assert.rejects(Client.connect({ url: 'ws://127.0.0.1:1/ws' }), { name: 'ConnectionError', message: /ECONNREFUSED.*--http-port/ });
  const refusing = http.createServer((req, res) => {
    // ecsd explains a refused upgrade with a JSON-RPC error: the client quotes its message and reason.
    const error = { code: -32010, message: 'this server does not answer to that Host name', data: { reason: 'unauthorized' } };
    res.writeHead(403, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error }));
  });
  refusing.listen(0, '127.0.0.1');
  await once(refusing, 'listening');
  t.after(() => refusing.close());
  await assert.rejects(Client.connect({ url: `ws://127.0.0.1:${refusing.address().port}/ws` }), {
    name: 'ConnectionError',
    message: /: the server refused the WebSocket with 403: this server does not answer to that Host name \(unauthorized\)$/,
  });
  const silent = await wsServer(t, () => {}, { answer: () => null });
  await assert.rejects(Client.connect({ url: `ws://127.0.0.1:${silent}/ws`, timeout: 200 }), {
    name: 'TimeoutError',
    message: /no answer within 200 ms/,
  });
  assert.throws(() => new Client({ url: 'http://127.0.0.1:7778/' }), TypeError);
});

// --- against a real ecsd's /ws ------------------------------------------------------------------

test('ecsd /ws: the whole client API over WebSocket', async (t) => {
  const server = await EcsdServer.start({ dataDir: false, http: true });
  t.after(() => server.stop());
  assert.equal(server.wsUrl, `ws://127.0.0.1:${server.httpPort}/ws`);
  const client = await server.client({ url: server.wsUrl, world: 'ws' });
  assert.equal(await client.ping(), 'pong');
  await client.createWorld('ws', { paused: true, gravity: 0 });
  const hero = await client.spawn({ Position: { x: 1 }, Velocity: { x: 60 }, Name: { name: 'hero' } });
  assert.deepEqual(await client.get('hero', ['Position']), { Position: { x: 1, y: 0 } });
  await assert.rejects(client.get(4294967299), (err) => err instanceof RpcError && err.reason === 'no_such_entity');

  const watch = client.watch('Position', { fields: ['Position'] });
  await watch.ready;
  assert.deepEqual([...watch.state.keys()], [hero]);
  const p = client.pipeline();
  for (let i = 0; i < 300; i++) p.spawn({ Position: { x: i }, Appearance: { name: `crate ${'é'.repeat(200)} ${i}` } });
  p.step(1);
  const results = await p.exec();
  assert.equal(results.length, 301);
  assert.equal(results[300], 1);
  assert.equal(watch.state.size, 301); // paused world: the step's notification came before its answer
  assert.equal(watch.state.get(hero).Position.x, 2);
  await watch.unwatch();

  // Answers over 64 KiB (a 64-bit frame length, or fragments: the client takes either).
  const all = await client.query('Appearance', { pageSize: 300 });
  assert.equal(all.length, 300);
  assert.ok(Buffer.byteLength(JSON.stringify(all)) > 65536);

  await client.defineAction('whoami', 'return function(w, caller, args) return {caller = caller, args = args} end');
  assert.deepEqual(await client.callAction('whoami', { n: 1 }), { caller: 'anonymous', args: { n: 1 } });
  await client.close();
});

test('ecsd /ws: a token by server.auth as the first message, or as a Bearer header on the upgrade', async (t) => {
  const server = await EcsdServer.start({ dataDir: false, http: true, token: 's3cret' });
  t.after(() => server.stop());
  const authed = await Client.connect({ url: server.wsUrl, token: 's3cret' });
  t.after(() => authed.close());
  assert.equal(await authed.ping(), 'pong');
  assert.equal((await authed.info()).auth_required, true);
  await assert.rejects(Client.connect({ url: server.wsUrl, token: 'wrong' }), { name: 'RpcError', reason: 'unauthorized' });
  const anonymous = await Client.connect({ url: server.wsUrl });
  t.after(() => anonymous.close());
  await assert.rejects(anonymous.call('world.list'), { name: 'RpcError', reason: 'unauthorized' });

  const ws = await WebSocket.connect(server.wsUrl, { headers: { Authorization: 'Bearer s3cret' } });
  const answer = once(ws, 'message');
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'world.list' }));
  assert.deepEqual(JSON.parse((await answer)[0]), { jsonrpc: '2.0', id: 1, result: { worlds: ['default'] } });
  await ws.close();
  await assert.rejects(WebSocket.connect(server.wsUrl, { headers: { Authorization: 'Bearer wrong' } }), {
    status: 401,
    message: /"reason":"unauthorized"/,
  });
});

test('ecsd /ws: refusals and closes are explained: Host, too large (1009), shutdown (1001)', async (t) => {
  const server = await EcsdServer.start({ dataDir: false, http: true, args: ['--max-line-bytes', '2000'] });
  t.after(() => server.stop());
  await assert.rejects(WebSocket.connect(server.wsUrl, { headers: { Host: 'elsewhere.example' } }), (err) => {
    assert.equal(err.status, 403); // DNS rebinding protection: the upgrade is an HTTP request like any
    assert.equal(JSON.parse(err.body).error.data.reason, 'unauthorized');
    return true;
  });

  const big = await Client.connect({ url: server.wsUrl });
  await assert.rejects(big.call('server.ping', { pad: 'x'.repeat(3000) }), { name: 'RpcError', reason: 'too_large' });
  await assert.rejects(big.ping(), {
    name: 'ConnectionError',
    message: /closed: the server closed the WebSocket with code 1009 \(message too big\)$/,
  });

  const client = await Client.connect({ url: server.wsUrl });
  const watch = client.watch('Position');
  await watch.ready;
  const stopping = server.stop();
  await assert.rejects(watch.until(() => false, { timeout: 5000 }), /ended \(server_shutdown\)/);
  await stopping;
  // A ping sent while the server drains may still be answered; once it has gone, a call says why,
  // whether it was in flight at the close or sent after it (then the cause carries the code).
  let failure = null;
  for (let i = 0; i < 50 && failure === null; i += 1) {
    failure = await client.ping().then(() => null, (err) => err);
    if (failure === null) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(failure?.name, 'ConnectionError');
  assert.match(failure.cause?.message ?? failure.message, /code 1001 \(going away\)$/);
});

test('ecsd /ws: ping answered with pong, batches as one message, close answered with close', async (t) => {
  const server = await EcsdServer.start({ dataDir: false, http: true });
  t.after(() => server.stop());
  const ws = await WebSocket.connect(server.wsUrl);
  const pong = once(ws, 'pong');
  ws.ping('still there?');
  assert.equal((await pong)[0].toString(), 'still there?');
  const answer = once(ws, 'message');
  ws.send(JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'server.ping' }))));
  assert.deepEqual(
    JSON.parse((await answer)[0]).map((r) => r.result),
    ['pong', 'pong', 'pong'],
  );
  const closed = once(ws, 'close');
  await ws.close(1000, 'bye');
  assert.equal((await closed)[0], 1000); // the server's close frame, not a cut connection (1006)
});

test('EcsdServer http: a free HTTP port, kept across restart(); off by default', async (t) => {
  const server = await EcsdServer.start({ http: true });
  t.after(() => server.stop());
  const before = server.httpPort;
  assert.ok(before > 0 && before !== server.port);
  const client = await server.client({ url: server.wsUrl });
  const id = await client.spawn({ Position: {} });
  await server.restart();
  assert.equal(server.httpPort, before);
  const again = await server.client({ url: server.wsUrl });
  assert.deepEqual(await again.get(id, ['Position']), { Position: { x: 0, y: 0 } });
  const plain = await EcsdServer.start({ dataDir: false });
  t.after(() => plain.stop());
  assert.equal(plain.httpPort, null);
  assert.equal(plain.wsUrl, null);
});
