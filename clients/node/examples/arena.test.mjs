// arena.test.mjs: an integration test against a running ecsd (scripts/run.sh: 127.0.0.1:7777).
// Run it with `node --test arena.test.mjs`; ECSD_HOST, ECSD_PORT and ECSD_TOKEN point it elsewhere.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'ecsd-client';

// A world of its own, so the test leaves everything else on the server alone.
const world = `arena-${process.pid}-${Date.now()}`;
let client;

before(async () => {
  client = await Client.connect({
    host: process.env.ECSD_HOST ?? '127.0.0.1',
    port: Number(process.env.ECSD_PORT ?? 7777),
    token: process.env.ECSD_TOKEN ?? null,
    world, // every world.* call goes to it
  });
  await client.createWorld(world, { paused: true, gravity: 0 }); // it ticks only when we step it
});

after(async () => {
  await client?.destroyWorld(world);
  await client?.close();
});

test('kill_all_monsters kills every monster and nothing else', async () => {
  const hero = await client.spawn({ Position: { x: 0, y: 0 }, Health: {}, Player: {} });
  // A monster is an entity with Health and AI.
  const monsters = await client.spawnMany(
    [1, 2, 3, 4, 5].map((x) => ({ Position: { x, y: 0 }, Health: { hp: 30 }, AI: { kind: 'orc' } })),
  );
  const watch = client.watch('Health, AI'); // follows the monsters live
  await watch.ready;
  assert.equal(watch.state.size, 5);

  const cast = await client.cast(hero, 'kill_all_monsters'); // queued on the hero
  assert.equal(cast.takes_effect_at_tick, 1); // the start of the next tick
  assert.equal(await client.step(1), 1);

  assert.equal(watch.state.size, 0); // the world is paused: the step's news came before its answer
  assert.deepEqual(await client.query('Health, AI'), []);
  await assert.rejects(client.get(monsters[0]), { name: 'RpcError', reason: 'no_such_entity' });
  assert.deepEqual(Object.keys(await client.get(hero)).sort(), ['Health', 'Player', 'Position']);
  await watch.unwatch();
});
