'use strict';

// The client's framing and call matching, against a scripted fake server (no ecsd needed).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { once } = require('node:events');
const { LineSplitter } = require('../lib/framing');
const { Client, RpcError, ConnectionError, TimeoutError } = require('..');

test('LineSplitter: partial lines, many lines per chunk, CRLF, blank lines, split UTF-8', () => {
  const s = new LineSplitter();
  assert.deepEqual(s.push(Buffer.from('{"a":')), []);
  assert.equal(s.pendingBytes, 5);
  assert.deepEqual(s.push(Buffer.from('1}\n{"b":2}\r\n\n  \n{"c"')), ['{"a":1}', '{"b":2}']);
  const snow = Buffer.from(':"☃"}\n', 'utf8'); // the snowman's 3 bytes arrive in two chunks
  assert.deepEqual(s.push(snow.subarray(0, 3)), []);
  assert.deepEqual(s.push(snow.subarray(3)), ['{"c":"☃"}']);
  assert.equal(s.pendingBytes, 0);
});

/**
 * A fake server: `handle(requests, socket)` gets every request line as parsed JSON (in batches as
 * they arrive) and writes whatever it likes back.
 */
async function fakeServer(t, handle) {
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    const splitter = new LineSplitter();
    socket.on('data', (chunk) => {
      const requests = splitter.push(chunk).map((l) => JSON.parse(l));
      if (requests.length) handle(requests, socket);
    });
    socket.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return server.address().port;
}

const reply = (id, result) => JSON.stringify({ jsonrpc: '2.0', id, result }) + '\n';

test('answers split at every byte and many per chunk all reach their calls', async (t) => {
  const port = await fakeServer(t, (requests, socket) => {
    const text = Buffer.from(requests.map((r) => reply(r.id, { echo: r.params.n, text: 'héllo ☃' })).join(''));
    // One byte per write, with pauses, then everything at once: both framings must work.
    if (requests[0].params.n === 0) {
      let i = 0;
      const drip = () => {
        if (i < text.length) socket.write(text.subarray(i, ++i), () => setImmediate(drip));
      };
      drip();
    } else {
      socket.write(text);
    }
  });
  const client = await Client.connect({ port });
  t.after(() => client.close());
  assert.deepEqual(await client.call('echo', { n: 0 }), { echo: 0, text: 'héllo ☃' });
  const p = client.pipeline();
  for (let n = 1; n <= 50; n++) p.call('echo', { n });
  const results = await p.exec();
  assert.deepEqual(
    results.map((r) => r.echo),
    Array.from({ length: 50 }, (_, i) => i + 1),
  );
});

test('answers are matched by id, not by order; a pipeline goes out in one write', async (t) => {
  const port = await fakeServer(t, (requests, socket) => {
    socket.write(requests.reverse().map((r) => reply(r.id, r.method)).join(''));
  });
  const client = await Client.connect({ port });
  t.after(() => client.close());
  const writes = [];
  const write = client._socket.write.bind(client._socket);
  client._socket.write = (data, ...rest) => {
    writes.push(data);
    return write(data, ...rest);
  };
  const results = await client.pipeline().call('a').call('b').call('c').exec();
  assert.deepEqual(results, ['a', 'b', 'c']);
  assert.equal(writes.length, 1);
  assert.equal(writes[0].split('\n').filter(Boolean).length, 3);
});

test('errors map to RpcError with code, reason, message and data', async (t) => {
  const port = await fakeServer(t, (requests, socket) => {
    for (const r of requests) {
      const error = { code: -32003, message: 'entity 7 does not exist', data: { reason: 'no_such_entity', extra: 1 } };
      socket.write(JSON.stringify({ jsonrpc: '2.0', id: r.id, error }) + '\n');
    }
  });
  const client = await Client.connect({ port });
  t.after(() => client.close());
  const err = await client.call('world.get_components', { entity: 7 }).catch((e) => e);
  assert.ok(err instanceof RpcError);
  assert.equal(err.code, -32003);
  assert.equal(err.reason, 'no_such_entity');
  assert.equal(err.message, 'entity 7 does not exist');
  assert.deepEqual(err.data, { reason: 'no_such_entity', extra: 1 });
  assert.equal(err.method, 'world.get_components');
});

test('a call with no answer rejects with TimeoutError; a late answer is dropped', async (t) => {
  const held = [];
  const port = await fakeServer(t, (requests, socket) => {
    for (const r of requests) {
      if (r.method === 'slow') held.push(r);
      else socket.write(held.map((h) => reply(h.id, 'late')).join('') + reply(r.id, 'fast'));
    }
  });
  const client = await Client.connect({ port, timeout: 200 });
  t.after(() => client.close());
  const started = Date.now();
  await assert.rejects(client.call('slow'), (err) => {
    assert.ok(err instanceof TimeoutError);
    assert.match(err.message, /slow: no answer from 127\.0\.0\.1:\d+ within 200 ms/);
    return true;
  });
  assert.ok(Date.now() - started >= 190);
  assert.equal(await client.call('quick'), 'fast'); // the late 'slow' answer came first and was dropped
  assert.equal(held.length, 1);
});

test('the connection closing rejects every waiting call with ConnectionError', async (t) => {
  const port = await fakeServer(t, (requests, socket) => {
    if (requests.some((r) => r.method === 'bye')) socket.destroy();
  });
  const client = await Client.connect({ port, timeout: 0 });
  const waiting = [client.call('a'), client.call('b')];
  const results = await Promise.allSettled([...waiting, client.call('bye')]);
  for (const r of results) {
    assert.equal(r.status, 'rejected');
    assert.ok(r.reason instanceof ConnectionError, r.reason);
    assert.match(r.reason.message, /connection to 127\.0\.0\.1:\d+ closed/);
  }
  assert.equal(client.connected, false);
  await assert.rejects(client.call('after'), ConnectionError);
  await client.close();
});

test('an error with id null (the server could not parse, or is closing) goes to the oldest call', async (t) => {
  const port = await fakeServer(t, (requests, socket) => {
    const error = { code: -32012, message: 'too many connections', data: { reason: 'limit_reached' } };
    socket.write(JSON.stringify({ jsonrpc: '2.0', id: null, error }) + '\n');
    socket.end();
  });
  const client = await Client.connect({ port });
  await assert.rejects(client.call('server.ping'), { name: 'RpcError', reason: 'limit_reached' });
  await client.close();
});

test('notifications interleaved with answers go to their watch; no answer is lost', async (t) => {
  const port = await fakeServer(t, (requests, socket) => {
    for (const r of requests) {
      const note = (params) => JSON.stringify({ jsonrpc: '2.0', method: 'world.watch', params }) + '\n';
      if (r.method === 'world.watch') {
        socket.write(reply(r.id, { subscription: 9, tick: 1, entities: [{ entity: 1, components: { A: { v: 1 } } }] }));
      } else if (r.method === 'world.step') {
        socket.write(
          note({ subscription: 9, tick: 2, entered: [{ entity: 2, components: { A: { v: 2 }, B: {} } }], changed: [], left: [] }) +
            note({ subscription: 9, tick: 2, entered: [], changed: [{ entity: 2, components: { A: { v: 3 } }, removed: ['B'] }], left: [] }) +
            reply(r.id, { tick: 2 }) +
            note({ subscription: 9, tick: 3, entered: [], changed: [], left: [{ entity: 1, reason: 'died' }] }),
        );
      } else if (r.method === 'world.unwatch') {
        socket.write(reply(r.id, { subscription: 9, ended: true }));
      }
    }
  });
  const client = await Client.connect({ port });
  t.after(() => client.close());
  const watch = client.watch('A');
  await watch.ready;
  assert.deepEqual([...watch.state], [[1, { A: { v: 1 } }]]);
  assert.equal(await client.step(1), 2);
  const seen = [];
  for await (const n of watch) {
    seen.push(n.tick);
    if (n.tick === 3) break;
  }
  assert.deepEqual(seen, [2, 2, 3]);
  assert.deepEqual([...watch.state], [[2, { A: { v: 3 } }]]);
  assert.equal(watch.endReason, 'unwatched');
});
