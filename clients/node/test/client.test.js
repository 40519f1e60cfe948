'use strict';

// Calls, typed helpers, errors, pipelines and paging against a real ecsd ($ECSD_BIN or a build).

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client, EcsdServer, RpcError } = require('..');

let server;
let client;
let worlds = 0;

before(async () => {
  server = await EcsdServer.start();
  client = await server.client();
});

after(async () => {
  await server?.stop();
});

/** A fresh paused world and a client whose calls default to it. */
async function freshWorld(t) {
  const world = `c${++worlds}`;
  await client.createWorld(world, { paused: true, gravity: 0 });
  const c = await server.client({ world });
  t.after(() => c.close());
  return c;
}

test('server methods and world defaults', async (t) => {
  assert.equal(await client.ping(), 'pong');
  const info = await client.info();
  assert.equal(info.auth_required, false);
  assert.equal(info.config['data-dir'], server.dataDir);
  const c = await freshWorld(t);
  assert.equal((await c.worldInfo()).world, c.world);
  assert.deepEqual((await c.call('world.list')).worlds, ['c1', 'default']); // world.list takes no world
  assert.equal((await c.call('world.info', { world: 'default' })).world, 'default'); // a named world wins
});

test('typed helpers map to the protocol', async (t) => {
  const c = await freshWorld(t);
  const id = await c.spawn({ Position: { x: 1, y: 2 }, Velocity: { x: 3 } });
  assert.equal(typeof id, 'number');
  const [a, b] = await c.spawnMany([{ Position: {} }, { Position: { x: 5 }, Frozen: {} }]);
  assert.ok(b > a);
  assert.deepEqual(await c.get(id), { Position: { x: 1, y: 2 }, Velocity: { x: 3, y: 0 } });
  assert.deepEqual(await c.get(id, ['Velocity']), { Velocity: { x: 3, y: 0 } });
  assert.deepEqual(await c.mutate(id, 'Position', 'x', 9), { x: 9, y: 2 });
  await c.insert(id, { Health: { hp: 50 } });
  assert.deepEqual((await c.get(id, 'Health')).Health, { hp: 50, max: 100 });
  await c.remove(id, 'Velocity');
  assert.deepEqual(Object.keys(await c.get(id)).sort(), ['Health', 'Position']);

  assert.equal(await c.step(3), 3);
  assert.equal(await c.step(), 4);
  assert.deepEqual(await c.resume(), { paused: false, tick: 4 });
  assert.equal((await c.pause()).paused, true);
  assert.match(await c.hash(), /^[0-9a-f]{16}$/);
  const systems = await c.systems();
  assert.ok(systems.some((s) => s.name === 'movement'));
  const saved = await c.save();
  assert.equal(saved.world, c.world);
  assert.ok(saved.path.startsWith(server.dataDir));

  const cast = await c.cast(id, 'heal', { target: id, amount: 10 });
  assert.equal(cast.spell, 'heal');
  await c.step();
  assert.equal((await c.get(id, 'Health')).Health.hp, 60);

  assert.equal(await c.despawn(id), true);
  assert.equal(await c.despawn([a, b]), 2);
  assert.deepEqual(await c.query('*'), []);
});

test('acknowledgements resolve to the server\'s result, as in the Python client', async (t) => {
  const c = await freshWorld(t);
  const id = await c.spawn({ Position: {}, Velocity: {} });
  assert.deepEqual(await c.insert(id, { Health: {} }), { entity: id });
  assert.deepEqual(await c.remove(id, ['Velocity']), { entity: id });
  assert.equal(await c.despawn(id), true);
  await c.createWorld(`${c.world}-gone`, { paused: true });
  assert.deepEqual(await c.destroyWorld(`${c.world}-gone`), { destroyed: `${c.world}-gone` });
  assert.ok((await c.listWorlds()).includes(c.world));
});

const REGEN = `
return function(w)
  for e in w:each() do
    e.Health.hp = math.min(e.Health.hp + 1, e.Health.max)
  end
end
`;

test('Lua system and spell helpers', async (t) => {
  const c = await freshWorld(t);
  const id = await c.spawn({ Health: { hp: 50 } });
  assert.deepEqual(await c.defineSystem('regen', 'Health', REGEN), { name: 'regen', replaced: false, from_tick: 1 });
  await c.step(3);
  assert.equal((await c.get(id, ['Health'])).Health.hp, 53);
  const again = await c.defineSystem('regen', 'Health', REGEN.replace('+ 1', '+ 10'), { phase: 'post', order: 5, every: 2 });
  assert.equal(again.replaced, true);
  const listed = (await c.systems()).find((s) => s.name === 'regen');
  assert.equal(listed.phase, 'post');
  assert.equal(listed.every, 2);
  await c.step(2); // ticks 4 and 5: it runs on the even one
  assert.equal((await c.get(id, ['Health'])).Health.hp, 63);
  await assert.rejects(c.defineSystem('broken', 'Health', 'return function(w)\n  x = = 1\nend'), (e) => {
    assert.ok(e instanceof RpcError);
    assert.equal(e.reason, 'invalid_params');
    assert.match(e.message, /line 2/);
    return true;
  });
  assert.deepEqual(await c.removeSystem('regen'), { name: 'regen', removed: true });
  const smite = 'return function(w, caster, target, amount) target.Health.hp = target.Health.hp - amount end';
  assert.deepEqual(await c.defineSpell('smite', smite), { name: 'smite', replaced: false });
  assert.ok((await c.spells()).some((s) => s.name === 'smite'));
  await c.cast(id, 'smite', { amount: 13 });
  await c.step();
  assert.equal((await c.get(id, ['Health'])).Health.hp, 50);
  const [defined] = await c.pipeline().defineSpell('smite', smite).defineSystem('regen', 'Health', REGEN).exec();
  assert.equal(defined.replaced, true);
  assert.deepEqual(await c.removeSpell('smite'), { name: 'smite', removed: true });
  assert.ok(!(await c.spells()).some((s) => s.name === 'smite'));
});

const HEAL = `
return function(w, caller, args)
  local e = w:get(args.entity)
  if not e then error('no such entity') end
  e.Health.hp = math.min(e.Health.hp + args.amount, e.Health.max)
  return {hp = e.Health.hp, by = caller}
end
`;

const SPAWN_THEN_FAIL = `
return function(w, caller, args)
  w:get(args.entity).Health.hp = 1
  w:spawn({Position = {x = 1}})
  error('not your avatar')
end
`;

test('action helpers: define, call, failures that change nothing, list, remove', async (t) => {
  const c = await freshWorld(t);
  const id = await c.spawn({ Health: { hp: 50 } });
  assert.deepEqual(await c.defineAction('heal', HEAL), { name: 'heal', replaced: false });
  assert.deepEqual(await c.callAction('heal', { entity: id, amount: 20 }), { hp: 70, by: 'anonymous' });
  assert.equal((await c.get(id, ['Health'])).Health.hp, 70); // at once: no tick needed
  await c.defineAction('nothing', 'return function(w, caller, args) end');
  assert.equal(await c.callAction('nothing'), null); // nil is null
  await c.defineAction('echo', 'return function(w, caller, args) return args end');
  assert.deepEqual(await c.callAction('echo', [1, 'two', { x: 3 }]), [1, 'two', { x: 3 }]);
  assert.equal(await c.callAction('echo', 7), 7);

  const before = await c.hash();
  await assert.rejects(c.callAction('heal', { entity: 99, amount: 1 }), {
    name: 'RpcError',
    reason: 'action_failed',
    code: -32019,
    message: 'heal:4: no such entity',
  });
  await c.defineAction('fail', SPAWN_THEN_FAIL);
  await assert.rejects(c.callAction('fail', { entity: id }), { reason: 'action_failed', message: /not your avatar/ });
  assert.equal(await c.hash(), before); // its write and its spawn were both undone
  assert.equal((await c.get(id, ['Health'])).Health.hp, 70);
  assert.deepEqual(await c.query('Position'), []);

  await assert.rejects(c.callAction('teleport'), { reason: 'no_such_action', code: -32018 });
  // The server says who calls, never the client.
  await assert.rejects(c.call('world.call_action', { name: 'echo', caller: 'admin' }), { reason: 'invalid_params' });

  const listed = Object.fromEntries((await c.actions()).map((a) => [a.name, a]));
  assert.deepEqual(Object.keys(listed).sort(), ['echo', 'fail', 'heal', 'nothing']);
  assert.deepEqual([listed.heal.calls, listed.heal.failures, listed.heal.last_error], [1, 1, 'heal:4: no such entity']);
  assert.ok(!('last_error' in listed.echo));
  assert.equal((await c.defineAction('heal', HEAL.replace('+ args.amount', '+ 2 * args.amount'))).replaced, true);
  const [healed, removed, left] = await c // they queue too
    .pipeline()
    .callAction('heal', { entity: id, amount: 5 })
    .removeAction('heal')
    .actions()
    .exec();
  assert.deepEqual(healed, { hp: 80, by: 'anonymous' });
  assert.deepEqual(removed, { name: 'heal', removed: true });
  assert.ok(!left.some((a) => a.name === 'heal'));
  await assert.rejects(c.removeAction('heal'), { reason: 'no_such_action' });
  assert.deepEqual(await client.callAction('echo', 'there', { world: c.world }), 'there'); // another client, { world }
});

test('actions run as the caller\'s identity; players call them, but neither define them nor outpace --action-rate', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ecsd-node-tokens-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const sha256 = (token) => crypto.createHash('sha256').update(token).digest('hex');
  const tokens = path.join(dir, 'tokens');
  fs.writeFileSync(tokens, `${sha256('alice-token')} alice player\n${sha256('gm-token')} gm admin\n`);
  const secure = await EcsdServer.start({ dataDir: false, args: ['--tokens', tokens, '--action-rate', '1'] });
  t.after(() => secure.stop());
  const whoami = 'return function(w, caller, args) return caller end';
  const gm = await secure.client({ token: 'gm-token' });
  assert.deepEqual(await gm.defineAction('whoami', whoami), { name: 'whoami', replaced: false });
  assert.equal(await gm.callAction('whoami'), 'gm');
  assert.equal(await gm.callAction('whoami'), 'gm'); // admins are not held to --action-rate
  const alice = await secure.client({ token: 'alice-token' });
  assert.equal(await alice.callAction('whoami'), 'alice');
  const limited = await alice.callAction('whoami').catch((e) => e); // a second's worth (one call) is spent
  assert.ok(limited instanceof RpcError, limited);
  assert.deepEqual([limited.reason, limited.code], ['rate_limited', -32014]);
  assert.ok(limited.data.retry_after > 0);
  // A player calls actions, never defines them; reading is allowed.
  await assert.rejects(alice.defineAction('mine', whoami), { name: 'RpcError', reason: 'unauthorized' });
  assert.deepEqual((await alice.actions()).map((a) => a.name), ['whoami']);
});

test('prefab, component, describe and spell helpers', async (t) => {
  const c = await freshWorld(t);
  const mana = await c.registerComponent('Mana', { points: 0, regen: 0.5 });
  assert.equal(mana.name, 'Mana');
  assert.deepEqual(mana.fields.map((f) => f.name), ['points', 'regen']);
  assert.equal((await c.registerComponent('Marker')).kind, 'runtime_tag');
  const names = (await c.components()).map((k) => k.name);
  for (const n of ['Mana', 'Marker', 'Position']) assert.ok(names.includes(n), n);
  assert.deepEqual(await c.definePrefab('slime', { Position: { y: 5 }, Health: { hp: 10 }, AI: {} }), { name: 'slime' });
  assert.deepEqual((await c.prefabs()).map((p) => p.name), ['slime']);
  const ids = await c.spawnPrefab('slime', { count: 3, overrides: { Position: { x: 2 } } });
  assert.equal(ids.length, 3);
  assert.deepEqual(await c.get(ids[0], ['Position']), { Position: { x: 2, y: 5 } });
  assert.equal((await c.spawnPrefab('slime')).length, 1);
  const d = await c.describe(ids[0]);
  assert.equal(d.entity, ids[0]);
  assert.deepEqual(Object.keys(d.components).sort(), ['AI', 'Health', 'Position']);
  assert.ok(Array.isArray(d.systems) && d.changes);
  const spells = (await c.spells()).map((s) => s.name);
  assert.ok(spells.includes('kill_all_monsters') && spells.includes('freeze'));
  const [listed, described] = await c.pipeline().prefabs().describe(ids[1]).exec(); // they queue too
  assert.equal(listed[0].name, 'slime');
  assert.equal(described.entity, ids[1]);
});

test('exportWorld and importWorld copy a world in chunks', async (t) => {
  const c = await freshWorld(t);
  const ids = await c.spawnMany(Array.from({ length: 300 }, (_, i) => ({ Position: { x: i }, Name: { name: `crate-é${i}` } })));
  await c.step(3);
  const text = await c.exportWorld({ chunkBytes: 4096 }); // many chunks
  assert.ok(text.startsWith('{') && Buffer.byteLength(text) > 4 * 4096);
  const copy = `${c.world}-copy`;
  const done = await c.importWorld(copy, text, { paused: true, chunkBytes: 1000 });
  assert.equal(done.done, true);
  assert.equal(done.world, copy);
  assert.equal(done.entities, 300);
  t.after(() => client.destroyWorld(copy)); // c closes first
  assert.equal(await c.hash({ world: copy }), await c.hash());
  assert.deepEqual(await c.get(ids[7], ['Name'], { world: copy }), { Name: { name: 'crate-é7' } });
  assert.equal((await c.worldInfo({ world: copy })).paused, true);
});

test('errors reject with RpcError carrying the protocol reason', async (t) => {
  const c = await freshWorld(t);
  const id = await c.spawn({ Position: {} });
  const cases = [
    [c.get(4294967299), 'no_such_entity', -32003],
    [c.get(id, ['Health']), 'no_such_component', -32004],
    [c.spawn({ Position: { x: 'far' } }), 'invalid_value', -32006],
    [c.step(0), 'invalid_params', -32602],
    [c.call('world.teleport'), 'method_not_found', -32601],
    [c.cast(id, 'fireball'), 'no_such_spell', -32008],
    [c.call('world.info', { world: 'nowhere' }), 'no_such_world', -32001],
    [c.createWorld(c.world), 'world_exists', -32002],
    [c.call('world.unwatch', { subscription: 99 }), 'no_such_subscription', -32016],
  ];
  for (const [promise, reason, code] of cases) {
    const err = await promise.then(
      () => assert.fail(`expected ${reason}`),
      (e) => e,
    );
    assert.ok(err instanceof RpcError, err);
    assert.equal(err.reason, reason);
    assert.equal(err.code, code);
    assert.equal(err.data.reason, reason);
    assert.ok(err.message.length > 0);
  }
  const notFound = await c.call('world.teleport').catch((e) => e);
  assert.equal(notFound.data.method, 'world.teleport');
  assert.equal(notFound.method, 'world.teleport');
  assert.equal(await c.ping(), 'pong'); // errors leave the connection usable
});

test('pipeline: one write, answers matched to their calls, helpers give the same values', async (t) => {
  const c = await freshWorld(t);
  const p = c.pipeline();
  for (let i = 0; i < 200; i++) p.spawn({ Position: { x: i } });
  p.step(2).call('world.info').hash();
  assert.equal(p.length, 203);
  const results = await p.exec();
  assert.equal(p.length, 0);
  const ids = results.slice(0, 200);
  assert.ok(ids.every((id, i) => typeof id === 'number' && (i === 0 || id > ids[i - 1])));
  assert.equal(results[200], 2);
  assert.equal(results[201].entities, 200);
  assert.match(results[202], /^[0-9a-f]{16}$/);
  const xs = await c
    .pipeline()
    .get(ids[7], ['Position'])
    .get(ids[150], ['Position'])
    .exec();
  assert.deepEqual(xs, [{ Position: { x: 7, y: 0 } }, { Position: { x: 150, y: 0 } }]);
  assert.deepEqual(await c.pipeline().exec(), []);
});

test('pipeline: a failure rejects exec with the first error and its index, or stands in the array', async (t) => {
  const c = await freshWorld(t);
  const id = await c.spawn({ Position: {} });
  const build = () => c.pipeline().get(id).despawn(12345).get(4294967299).step();
  const err = await build()
    .exec()
    .catch((e) => e);
  assert.ok(err instanceof RpcError);
  assert.equal(err.reason, 'no_such_entity');
  assert.equal(err.index, 1);
  const results = await build().exec({ throwOnError: false });
  assert.deepEqual(results[0], { Position: { x: 0, y: 0 } });
  assert.ok(results[1] instanceof RpcError && results[2] instanceof RpcError);
  assert.equal(results[3], 2); // later calls still ran: the failures changed nothing
});

test('query pages through every match (several pages of 1000 and more than the 10000 cap)', async (t) => {
  const c = await freshWorld(t);
  const ids = [];
  for (let batch = 0; batch < 3; batch++) {
    const entities = Array.from({ length: 4000 }, (_, i) => ({ Position: { x: batch * 4000 + i }, Health: {} }));
    ids.push(...(await c.spawnMany(entities)));
  }
  await c.spawnMany([{ Velocity: {} }, { Velocity: {} }]); // not matched
  const all = await c.query('Position', { fields: ['Position'] });
  assert.equal(all.length, 12000);
  assert.deepEqual(
    all.map((e) => e.entity),
    ids,
  );
  assert.deepEqual(all[11999], { entity: ids[11999], components: { Position: { x: 11999, y: 0 } } });
  const some = await c.query({ all: ['Position', 'Health'] }, { limit: 2500, pageSize: 300 });
  assert.equal(some.length, 2500);
  assert.deepEqual(Object.keys(some[0].components).sort(), ['Health', 'Position']);
  assert.deepEqual(
    some.map((e) => e.entity),
    ids.slice(0, 2500),
  );
  assert.deepEqual(await c.query('Frozen'), []);
});

test('a token: calls need it, server.client() sends it, a wrong one is refused', async (t) => {
  const secure = await EcsdServer.start({ token: 's3cret', dataDir: false });
  t.after(() => secure.stop());
  const anonymous = await Client.connect({ port: secure.port });
  t.after(() => anonymous.close());
  await assert.rejects(anonymous.ping(), { name: 'RpcError', reason: 'unauthorized', code: -32010 });
  const authed = await secure.client();
  assert.equal(await authed.ping(), 'pong');
  assert.equal((await authed.info()).config.token, 'set');
  const manual = await Client.connect({ port: secure.port, token: 's3cret' });
  assert.equal(await manual.ping(), 'pong');
  await manual.close();
  await assert.rejects(Client.connect({ port: secure.port, token: 'wrong' }), { name: 'RpcError', reason: 'unauthorized' });
});

test('connecting to nothing fails clearly; calls after close reject', async () => {
  const c = new Client({ port: 1, timeout: 2000 });
  await assert.rejects(c.connect(), { name: 'ConnectionError', message: /cannot connect to 127\.0\.0\.1:1: .*ECONNREFUSED/ });
  const d = await server.client();
  await d.close();
  await d.close(); // twice is fine
  await assert.rejects(d.ping(), { name: 'ConnectionError', message: /closed/ });
  await assert.rejects(new Client().ping(), { name: 'ConnectionError', message: /call connect\(\) first/ });
});
