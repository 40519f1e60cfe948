// The package loads both ways, by its name (as users write it) and by path, with the same classes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import * as esm from 'ecsd-client';
import esmDefault, { Client, EcsdServer, RpcError } from 'ecsd-client';
import * as byPath from '../index.mjs';

const require = createRequire(import.meta.url);

const names = ['Client', 'ConnectionError', 'EcsdServer', 'Pipeline', 'RpcError', 'TimeoutError', 'Watch'];

test('import and require give the same named exports', () => {
  const cjs = require('ecsd-client');
  assert.deepEqual(Object.keys(cjs).sort(), names);
  assert.deepEqual(Object.keys(esm).filter((k) => k !== 'default').sort(), names);
  for (const name of names) {
    assert.equal(typeof cjs[name], 'function', name);
    assert.equal(esm[name], cjs[name], name);
    assert.equal(byPath[name], cjs[name], name);
  }
  assert.equal(esmDefault, cjs);
  assert.equal(require('../index.js'), cjs);
  assert.equal(Client, cjs.Client);
  assert.equal(EcsdServer, cjs.EcsdServer);
  assert.ok(new RpcError({ code: -32003, message: 'm', data: { reason: 'no_such_entity' } }) instanceof Error);
});

test('package.json: no run-time dependencies, exports for import and require', () => {
  const pkg = require('ecsd-client/package.json');
  assert.equal(pkg.name, 'ecsd-client');
  assert.equal(pkg.dependencies, undefined);
  assert.equal(pkg.exports['.'].import.default, './index.mjs');
  assert.equal(pkg.exports['.'].require.default, './index.js');
});

test('a client answers the same through both module systems', async () => {
  const server = await EcsdServer.start({ dataDir: false });
  try {
    const viaImport = await server.client();
    const viaRequire = await require('ecsd-client').Client.connect({ port: server.port });
    assert.equal(await viaImport.ping(), 'pong');
    assert.equal(await viaRequire.ping(), 'pong');
    await viaRequire.close();
  } finally {
    await server.stop();
  }
});
