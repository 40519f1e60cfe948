'use strict';

// The README's example is examples/arena.test.mjs, run here as a user would run it (node --test,
// pointed at a server by ECSD_PORT); readme.test.js checks that the README quotes it whole.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { EcsdServer } = require('..');

const root = path.join(__dirname, '..');
const example = path.join(root, 'examples', 'arena.test.mjs');

test('the example passes under node --test against a running ecsd', async (t) => {
  const server = await EcsdServer.start({ dataDir: false });
  t.after(() => server.stop());
  const env = { ...process.env, ECSD_PORT: String(server.port) };
  delete env.NODE_TEST_CONTEXT; // a test runner of its own, not a child of this one
  delete env.ECSD_HOST;
  delete env.ECSD_TOKEN;
  const child = spawn(process.execPath, ['--test', example], { env, cwd: root });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 0, output);
  assert.match(output, /^# pass 1$/m);
  assert.match(output, /^# fail 0$/m);
  // It cleaned up after itself: only the default world is left.
  const client = await server.client();
  assert.deepEqual((await client.call('world.list')).worlds, ['default']);
});
