'use strict';

// EcsdServer: start-up, data folders, restart, kill, exit codes.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const os = require('node:os');
const path = require('node:path');
const { EcsdServer, Client } = require('..');
const { findBinary } = require('../lib/server');

async function tempDir(t) {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'ecsd-node-test-'));
  t.after(() => fsp.rm(dir, { recursive: true, force: true }));
  return dir;
}

test('start: a free port, a temporary data folder removed by stop(), ECSD_* left out', async () => {
  process.env.ECSD_PORT = '1'; // would make ecsd fail if it were passed on
  let server;
  try {
    server = await EcsdServer.start();
  } finally {
    delete process.env.ECSD_PORT;
  }
  assert.ok(server.port > 0 && server.port !== 7777);
  assert.ok(server.running);
  assert.ok(fs.statSync(server.dataDir).isDirectory());
  const client = await server.client();
  assert.equal(await client.ping(), 'pong');
  await server.stop();
  assert.equal(server.running, false);
  assert.equal(fs.existsSync(server.dataDir), false);
  assert.equal(client.connected, false); // stop() closes the clients it made
  await server.stop(); // twice is fine
});

test('restart keeps the data folder, the entities and the port', async (t) => {
  const dataDir = await tempDir(t);
  const server = await EcsdServer.start({ dataDir });
  t.after(() => server.stop());
  const port = server.port;
  let c = await server.client({ world: 'keep' });
  await c.createWorld('keep', { paused: true });
  const id = await c.spawn({ Position: { x: 4 }, Health: { hp: 9 } });
  await c.step(3);
  const hash = await c.hash();
  await server.restart();
  assert.equal(c.connected, false);
  assert.equal(server.port, port);
  c = await server.client({ world: 'keep' });
  assert.deepEqual(await c.get(id), { Position: { x: 4, y: 0 }, Health: { hp: 9, max: 100 } });
  assert.equal(await c.hash(), hash);
  assert.equal((await c.worldInfo()).tick, 3);
  await server.stop();
  assert.ok(fs.existsSync(path.join(dataDir, 'keep.snapshot')), 'a given data folder is kept');
});

test('kill (SIGKILL) then restart: every answered change is still there', async (t) => {
  const server = await EcsdServer.start();
  t.after(() => server.stop());
  const c = await server.client({ world: 'crash' });
  await c.createWorld('crash', { paused: true });
  const ids = await c.spawnMany([{ Position: {} }, { Position: { x: 1 } }]);
  await c.mutate(ids[1], 'Position', 'y', 2);
  const watch = c.watch('Position');
  await watch.ready;
  const loop = assert.rejects(async () => {
    for await (const n of watch) assert.fail(`unexpected ${JSON.stringify(n)}`);
  }, { name: 'ConnectionError', message: /closed/ }); // the loop says why it stopped
  const waiting = c.call('server.ping').catch((err) => err); // answered before the kill, or not
  await server.kill();
  assert.equal(server.running, false);
  assert.ok(['pong', 'ConnectionError'].includes((await waiting).name ?? (await waiting)));
  await loop;
  assert.equal(watch.endReason, 'failed');
  await server.restart();
  const d = await server.client({ world: 'crash' });
  assert.deepEqual(
    (await d.query('Position')).map((e) => e.components.Position),
    [
      { x: 0, y: 0 },
      { x: 1, y: 2 },
    ],
  );
  await server.stop(); // kill() is not a failure
});

test('stop() rejects when ecsd does not exit 0', async (t) => {
  // A stand-in that runs the real ecsd but exits 3 when it is asked to stop.
  const dir = await tempDir(t);
  const wrapper = path.join(dir, 'ecsd-exit-3');
  const real = findBinary();
  fs.writeFileSync(
    wrapper,
    `#!/bin/sh\n'${real}' "$@" &\nchild=$!\ntrap 'kill -TERM $child; wait $child; exit 3' TERM\nwait $child\n`,
    { mode: 0o755 },
  );
  const server = await EcsdServer.start({ binary: wrapper });
  assert.equal(await (await server.client()).ping(), 'pong');
  const dataDir = server.dataDir;
  await assert.rejects(server.stop(), /ecsd did not exit 0 on SIGTERM \(exit code 3\)/);
  assert.equal(fs.existsSync(dataDir), false, 'the temporary folder goes all the same');
});

test('start() rejects with the exit code and the log when ecsd cannot start', async () => {
  await assert.rejects(EcsdServer.start({ args: ['--max-batch', 'lots'], dataDir: false }), (err) => {
    assert.match(err.message, /exited before listening \(exit code [1-9]\d*\)/);
    assert.match(err.message, /max-batch/); // ecsd's own complaint, from its stderr
    return true;
  });
  await assert.rejects(EcsdServer.start({ binary: '/nonexistent/ecsd' }), /could not be started: .*ENOENT/);
});

test('two servers side by side; a client of one cannot see the other', async (t) => {
  const [a, b] = await Promise.all([EcsdServer.start({ dataDir: false }), EcsdServer.start({ dataDir: false })]);
  t.after(() => Promise.all([a.stop(), b.stop()]));
  assert.notEqual(a.port, b.port);
  const ca = await a.client();
  await ca.createWorld('only_a');
  const cb = await Client.connect({ port: b.port });
  t.after(() => cb.close());
  assert.deepEqual((await cb.call('world.list')).worlds, ['default']);
  await assert.rejects(a.stop({ timeout: 5000 }).then(() => ca.ping()), { name: 'ConnectionError' });
});

test('the binary: ECSD_BIN first', () => {
  const saved = process.env.ECSD_BIN;
  try {
    process.env.ECSD_BIN = '/some/where/ecsd';
    assert.equal(findBinary(), '/some/where/ecsd');
    delete process.env.ECSD_BIN;
    const found = findBinary(); // PATH, else this repository's build folders
    assert.match(found, /\/ecsd$/);
  } finally {
    if (saved === undefined) delete process.env.ECSD_BIN;
    else process.env.ECSD_BIN = saved;
  }
});

test('the binary: without ECSD_BIN, build/release/bin/ecsd from the current directory upward, then build/*/bin/ecsd, then PATH', (t) => {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'ecsd-find-'));
  const fake = (file) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    return file;
  };
  const repo = path.join(top, 'repo');
  const release = fake(path.join(repo, 'build', 'release', 'bin', 'ecsd'));
  const debug = fake(path.join(repo, 'build', 'debug', 'bin', 'ecsd'));
  const onPath = fake(path.join(top, 'path', 'ecsd'));
  fs.mkdirSync(path.join(repo, 'test', 'deep'), { recursive: true });
  const saved = { bin: process.env.ECSD_BIN, PATH: process.env.PATH, cwd: process.cwd() };
  t.after(() => {
    process.chdir(saved.cwd);
    process.env.PATH = saved.PATH;
    if (saved.bin === undefined) delete process.env.ECSD_BIN;
    else process.env.ECSD_BIN = saved.bin;
    fs.rmSync(top, { recursive: true, force: true });
  });
  delete process.env.ECSD_BIN;
  process.env.PATH = path.dirname(onPath);
  process.chdir(repo); // the project root, as a reader runs tests
  assert.equal(findBinary(), release);
  process.chdir(path.join(repo, 'test', 'deep')); // or a folder in it
  assert.equal(findBinary(), release);
  fs.unlinkSync(release);
  assert.equal(findBinary(), debug);
  fs.unlinkSync(debug);
  assert.equal(findBinary(), onPath);
});
