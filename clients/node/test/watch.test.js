'use strict';

// world.watch through Client.watch: the applied state, iteration, unsubscribing, the end of a
// subscription, and a client that falls behind (coalesced and resync notifications).

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { isDeepStrictEqual } = require('node:util');
const { EcsdServer, RpcError } = require('..');

let server;
let admin;
let worlds = 0;

before(async () => {
  server = await EcsdServer.start({ args: ['--max-watches', '2'] });
  admin = await server.client();
});

after(async () => {
  await server?.stop();
});

async function freshWorld(t, options = { paused: true, gravity: 0 }) {
  const world = `w${++worlds}`;
  await admin.createWorld(world, options);
  const c = await server.client({ world });
  t.after(() => c.close());
  return c;
}

/** What world.query says now, as a watch's state. */
async function queried(c, query, fields) {
  const entities = await c.query(query, { fields });
  return new Map(entities.map((e) => [e.entity, e.components]));
}

test('state follows spawn, mutate, insert, remove and despawn', async (t) => {
  const c = await freshWorld(t);
  const a = await c.spawn({ Position: { x: 1 }, Velocity: { x: 6 } });
  const watch = c.watch('Position, Velocity', { fields: ['Position', 'Health'] });
  await watch.ready;
  assert.equal(typeof watch.subscription, 'number');
  assert.equal(watch.tick, 0);
  assert.deepEqual([...watch.state], [[a, { Position: { x: 1, y: 0 } }]]);

  // In a paused world a change's notification arrives before the answer of the request that made
  // it, so the state is current as soon as the call resolves.
  const b = await c.spawn({ Position: { x: 5 }, Velocity: {}, Health: { hp: 7 } });
  assert.deepEqual(watch.state.get(b), { Position: { x: 5, y: 0 }, Health: { hp: 7, max: 100 } });
  await c.step(1);
  assert.deepEqual(watch.state.get(a), { Position: { x: 1.1, y: 0 } });
  await c.mutate(b, 'Health', 'hp', 3);
  assert.deepEqual(watch.state.get(b), { Position: { x: 5, y: 0 }, Health: { hp: 3, max: 100 } });
  await c.remove(b, 'Health');
  assert.deepEqual(watch.state.get(b), { Position: { x: 5, y: 0 } });
  await c.remove(a, 'Velocity'); // no longer matches
  assert.equal(watch.state.has(a), false);
  await c.insert(a, { Velocity: {} }); // matches again
  assert.deepEqual(watch.state.get(a), { Position: { x: 1.1, y: 0 } });
  await c.despawn(b);
  assert.deepEqual([...watch.state.keys()], [a]);
  assert.deepEqual(watch.state, await queried(c, 'Position, Velocity', ['Position', 'Health']));

  // The loop sees the same notifications, in order.
  const seen = [];
  for await (const n of watch) {
    for (const e of n.entered) seen.push(['entered', e.entity]);
    for (const e of n.changed) seen.push(['changed', e.entity, ...Object.keys(e.components), ...(e.removed || []).map((r) => `-${r}`)]);
    for (const e of n.left) seen.push(['left', e.entity, e.reason]);
    if (n.left.some((e) => e.entity === b)) break;
  }
  assert.deepEqual(seen, [
    ['entered', b],
    ['changed', a, 'Position'],
    ['changed', b, 'Health'],
    ['changed', b, '-Health'],
    ['left', a, 'unmatched'],
    ['entered', a],
    ['left', b, 'died'],
  ]);
  assert.equal(watch.ended, true);
  assert.equal(watch.endReason, 'unwatched');
});

test('leaving the loop unsubscribes on the server', async (t) => {
  const c = await freshWorld(t);
  await c.spawn({ Position: {} });
  for (let round = 0; round < 3; round++) {
    // --max-watches is 2: a third round would be refused if breaking out left subscriptions behind.
    const watch = c.watch('Position');
    const stepping = c.step(1).then(() => c.spawn({ Position: { x: round } }));
    for await (const n of watch) {
      if (n.entered.length) break;
    }
    await stepping;
    await assert.rejects(c.call('world.unwatch', { subscription: watch.subscription }), { reason: 'no_such_subscription' });
  }
  const w1 = c.watch('Position');
  const w2 = c.watch('Position');
  await Promise.all([w1.ready, w2.ready]);
  const w3 = c.watch('Position');
  await assert.rejects(w3.ready, { name: 'RpcError', reason: 'limit_reached' });
  await w1.unwatch();
  await w1.unwatch(); // twice is fine
  const w4 = c.watch('Position');
  await w4.ready;
  await Promise.all([w2.unwatch(), w4.unwatch()]);
});

test('a bad query rejects ready and the loop with RpcError', async (t) => {
  const c = await freshWorld(t);
  const watch = c.watch('Position,,');
  await assert.rejects(watch.ready, (err) => err instanceof RpcError && err.reason === 'invalid_params');
  await assert.rejects(async () => {
    for await (const n of watch) assert.fail(`unexpected ${JSON.stringify(n)}`);
  }, { reason: 'invalid_params' });
  await assert.rejects(c.watch('Nope').ready, { reason: 'no_such_component' });
});

test('the server ending a subscription ends the loop: world destroyed, world reloaded', async (t) => {
  const c = await freshWorld(t);
  await c.spawn({ Position: {} });
  const watch = c.watch('Position');
  await watch.ready;
  const loop = (async () => {
    const ticks = [];
    for await (const n of watch) ticks.push(n.tick);
    return ticks;
  })();
  await c.step(1);
  await c.spawn({ Position: {} });
  await admin.destroyWorld(c.world);
  assert.deepEqual(await loop, [1]); // the spawn's; the step changed nothing
  assert.equal(watch.ended, true);
  assert.equal(watch.endReason, 'world_destroyed');
  await watch.unwatch(); // already over: nothing to do

  const d = await freshWorld(t);
  await d.spawn({ Position: {} });
  await d.save();
  const reloaded = d.watch('Position');
  await reloaded.ready;
  await d.call('world.load');
  await assert.rejects(
    reloaded.until(() => false, { timeout: 2000 }),
    /ended \(world_reloaded\) before the condition held/,
  );
  assert.equal(reloaded.endReason, 'world_reloaded');
});

test('a running world: until() waits for a condition; the state then equals world.query', async (t) => {
  const c = await freshWorld(t, { paused: false, gravity: 0, tick_hz: 200 });
  await c.spawnMany(Array.from({ length: 50 }, (_, i) => ({ Position: { x: i }, Velocity: { x: 1, y: i % 3 } })));
  const watch = c.watch('Position', { fields: ['Position'] });
  await watch.ready;
  const start = watch.tick;
  await watch.until((state, w) => w.tick >= start + 20, { timeout: 10000 });
  await c.pause();
  const expected = await queried(c, 'Position', ['Position']);
  await watch.until((state) => isDeepStrictEqual(state, expected), { timeout: 5000 });
  await assert.rejects(watch.until(() => false, { timeout: 100 }), {
    name: 'TimeoutError',
    message: /condition did not hold within 100 ms/,
  });
  await watch.unwatch();
});

test('every: at most one notification every N ticks', async (t) => {
  const c = await freshWorld(t);
  await c.spawn({ Position: {}, Velocity: { x: 1 } });
  const watch = c.watch('Position', { every: 5 });
  await watch.ready;
  await c.step(10);
  await watch.unwatch();
  const notes = [];
  for await (const n of watch) notes.push(n.tick);
  assert.deepEqual(notes, [5, 10]);
  assert.deepEqual(watch.state, await queried(c, 'Position', ['Position'])); // fields default to the query's
});

for (const [bytes, kind] of [
  [4000000, 'coalesced'],
  [20000, 'resync'],
]) {
  test(`a client that stops reading gets ${kind} notifications, and its state stays exact`, async (t) => {
    const slow = await EcsdServer.start({ dataDir: false, args: ['--max-output-bytes', String(bytes)] });
    t.after(() => slow.stop());
    const c = await slow.client({ world: 'r' });
    const driver = await slow.client({ world: 'r' });
    await c.createWorld('r', { paused: true, gravity: 0 });
    await c.spawnMany(Array.from({ length: 4000 }, (_, i) => ({ Position: { x: i }, Velocity: { x: 1 } })));
    const watch = c.watch('Position, Velocity', { fields: ['Position'] });
    await watch.ready;
    c._socket.pause(); // stop reading: the server must hold, merge or drop what it would send
    // About 30 MB of notifications, far more than the kernel's socket buffers hold, in 200 ticks:
    // fewer than the 256 ticks behind after which the server resyncs a reader instead of merging
    // (watch_limits::max_behind_ticks), however early the buffers fill.
    for (let i = 0; i < 40; i++) await driver.step(5);
    c._socket.resume();
    const expected = await queried(driver, 'Position, Velocity', ['Position']);
    await watch.until((state) => isDeepStrictEqual(state, expected), { timeout: 20000 });
    assert.equal(watch.tick, 200);
    const kinds = new Set(watch._queue.map((n) => (n.resync ? 'resync' : n.coalesced ? 'coalesced' : 'plain')));
    assert.ok(kinds.has(kind), `no ${kind} notification (saw ${[...kinds]})`);
  });
}
