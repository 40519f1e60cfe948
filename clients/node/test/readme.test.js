'use strict';

// Every fenced block of README.md runs here, against a real ecsd, so the README cannot rot.
//
// The convention (also written at the top of README.md's source): the line before each block is
// the HTML comment `<!-- readme-test: NAME -->`; readmeBlocks() finds the blocks by those names,
// and each name has a test below saying how its block runs. A block without a name, a name used
// twice, or a name this file does not know (NAMES) fails 'every README block is named and run'.
//
// How blocks are adapted to this machine, and nothing more:
// - `7777` (scripts/run.sh's port) becomes the port of an ecsd this file started with `--demo`, as
//   scripts/run.sh starts it (`demo`), and `7778` (its HTTP port) that ecsd's HTTP port; where a shell block starts the server with `scripts/run.sh`
//   (which builds a Release tree and serves until stopped), that line is replaced by `demo` and
//   ECSD_PORT points the rest of the block at it.
// - `/path/to/ecsd` becomes this repository; `ECSD_BIN=build/test/bin/ecsd` becomes the ecsd this
//   suite uses. JavaScript files are written to a temporary folder whose node_modules/ecsd-client
//   links to this package, as `npm install /path/to/ecsd/clients/node` makes it.
// - Shell blocks run with `bash -e` in a temporary folder, without this process's ECSD_* variables
//   (ECSD_BIN set, but for server-test and own-tests, which find ecsd by themselves) and with npm's audit, fund and update checks off (nothing to fetch).
// - Fragments (the snippets under "Client", which use `client` and `hero` without defining them)
//   run in this process as the body of an async function given `client` (connected to demo's
//   default world), `hero` (spawned and stepped as in the quick start) and `assert`
//   (node:assert/strict); a block whose output is checked also gets a `console` that keeps it.
// - own-tests runs this whole suite again with ECSD_README_NESTED=1, which skips this file there.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Client, EcsdServer } = require('..');
const { findBinary } = require('../lib/server');

const pkg = path.join(__dirname, '..'); // clients/node
const root = path.join(pkg, '..', '..'); // the repository
const readmePath = path.join(pkg, 'README.md');
const NAMES = ['quick-start', 'npm-install', 'arena', 'arena-run', 'server-test', 'rpc-error', 'actions', 'pipeline', 'watch', 'websocket', 'own-tests'];
const nested = process.env.ECSD_README_NESTED === '1';
const it = nested ? test.skip : test; // run by own-tests, which runs this suite: not again there

function readmeBlocks() {
  const lines = fs.readFileSync(readmePath, 'utf8').split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('```')) continue;
    const lang = lines[i].slice(3).trim();
    const end = lines.indexOf('```', i + 1);
    assert.ok(end > i, `README.md:${i + 1}: the block never closes`);
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === '') before--;
    const mark = before >= 0 && /^<!-- readme-test: (\S+) -->$/.exec(lines[before].trim());
    blocks.push({ name: mark ? mark[1] : null, lang, text: lines.slice(i + 1, end).join('\n') + '\n', line: i + 2 });
    i = end;
  }
  return blocks;
}

function block(name) {
  const found = readmeBlocks().filter((b) => b.name === name);
  assert.equal(found.length, 1, `README.md has one block named ${name}`);
  return found[0];
}

function forThisMachine(text, { port, httpPort } = {}) {
  text = text.replaceAll('/path/to/ecsd', root).replaceAll('ECSD_BIN=build/test/bin/ecsd', `ECSD_BIN=${findBinary()}`);
  if (httpPort !== undefined) text = text.replace(/\b7778\b/g, String(httpPort));
  return port === undefined ? text : text.replace(/\b7777\b/g, String(port));
}

// `withEcsdBin: false` for blocks that promise to find ecsd by themselves (server-test, own-tests).
function childEnv(extra = {}, { withEcsdBin = true } = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ECSD_')));
  delete env.NODE_TEST_CONTEXT; // a test runner of its own, not a child of this one
  Object.assign(env, { npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' });
  if (withEcsdBin) env.ECSD_BIN = findBinary();
  return Object.assign(env, extra);
}

function run(command, args, { cwd, env = childEnv() }) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, timeout: 180_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, output: stdout + stderr }));
  });
}

async function runSh(script, options) {
  const result = await run('bash', ['-e', '-c', script], options);
  assert.equal(result.code, 0, `${script}\n${result.output}`);
  return result;
}

function tmpdir(t, { link = false } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ecsd-readme-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  if (link) {
    fs.mkdirSync(path.join(dir, 'node_modules'));
    fs.symlinkSync(pkg, path.join(dir, 'node_modules', 'ecsd-client'), 'dir');
  }
  return dir;
}

const AsyncFunction = (async () => {}).constructor;

async function runFragment(name, names, epilogue = '') {
  const b = block(name);
  assert.equal(b.lang, 'js');
  try {
    return await new AsyncFunction(...Object.keys(names), b.text + epilogue)(...Object.values(names));
  } catch (err) {
    err.message = `README.md:${b.line} (block ${name}): ${err.message}`;
    throw err;
  }
}

let demo; // what scripts/run.sh serves: ecsd --demo (the default world, running, the demo scene)
before(async () => {
  if (!nested) demo = await EcsdServer.start({ dataDir: false, args: ['--demo'], http: true });
});
after(() => demo?.stop());

async function quickStart(t) {
  const client = await Client.connect({ port: demo.port });
  t.after(() => client.close());
  const hero = await client.spawn({ Position: { x: 0, y: 10 }, Velocity: { x: 1 } });
  await client.step(60);
  return { client, hero };
}

it('every README block is named and run', () => {
  const blocks = readmeBlocks();
  const unnamed = blocks.filter((b) => b.name === null).map((b) => b.line);
  assert.deepEqual(unnamed, [], 'README.md blocks at these lines have no <!-- readme-test: NAME --> before them');
  const names = blocks.map((b) => b.name);
  assert.equal(new Set(names).size, names.length, `a name is used twice: ${names}`);
  assert.deepEqual([...names].sort(), [...NAMES].sort(), 'each README block needs a test here, and each test here its block');
});

it('quick-start', async (t) => {
  const b = block('quick-start');
  assert.match(b.text, /port: 7777/);
  const dir = tmpdir(t, { link: true });
  fs.writeFileSync(path.join(dir, 'quick-start.mjs'), forThisMachine(b.text, { port: demo.port }));
  const result = await run(process.execPath, ['quick-start.mjs'], { cwd: dir });
  assert.equal(result.code, 0, result.output);
  const printed = /^\{ Position: \{ x: ([\d.]+), y: 10 \} \}\n$/.exec(result.stdout);
  assert.ok(printed, result.output);
  // 60 ticks at 60 Hz at 1 unit/s; the running world may tick once or twice more by itself.
  assert.ok(Number(printed[1]) >= 1 - 1e-9 && Number(printed[1]) < 1.2, printed[1]);
});

it('npm-install, then both module systems (and the import by path that Getting it shows)', async (t) => {
  const dir = tmpdir(t);
  await runSh(forThisMachine(block('npm-install').text), { cwd: dir });
  const installed = path.join(dir, 'node_modules', 'ecsd-client');
  assert.ok(fs.lstatSync(installed).isSymbolicLink(), 'a link to this folder');
  assert.equal(fs.realpathSync(installed), fs.realpathSync(pkg));
  const readme = fs.readFileSync(readmePath, 'utf8');
  const byPath = /`(import \{ Client \} from '\/path\/to\/ecsd\/[^`]+')`/.exec(readme);
  const requirePath = /`(require\('\/path\/to\/ecsd\/[^`]+'\))`/.exec(readme);
  assert.ok(byPath && requirePath, 'Getting it shows an import and a require by path');
  const checks = [
    ['--input-type=module', '-e', "import { Client } from 'ecsd-client'; if (typeof Client !== 'function') process.exit(1);"],
    ['-e', "if (typeof require('ecsd-client').Client !== 'function') process.exit(1);"],
    ['--input-type=module', '-e', `${forThisMachine(byPath[1])}; if (typeof Client !== 'function') process.exit(1);`],
    ['-e', `if (typeof ${forThisMachine(requirePath[1])}.Client !== 'function') process.exit(1);`],
  ];
  for (const args of checks) {
    const result = await run(process.execPath, args, { cwd: dir });
    assert.equal(result.code, 0, `${args.join(' ')}\n${result.output}`);
  }
});

it('arena is examples/arena.test.mjs (example.test.js runs that file)', () => {
  assert.equal(block('arena').text, fs.readFileSync(path.join(pkg, 'examples', 'arena.test.mjs'), 'utf8'));
});

it('arena-run', async (t) => {
  const lines = block('arena-run').text.split('\n');
  assert.match(lines[0], /^scripts\/run\.sh /); // demo stands in for it
  const dir = tmpdir(t);
  const result = await runSh(forThisMachine(lines.slice(1).join('\n')), { cwd: dir, env: childEnv({ ECSD_PORT: String(demo.port) }) });
  assert.match(result.stdout, /^# pass 1$/m);
  assert.match(result.stdout, /^# fail 0$/m);
  const client = await Client.connect({ port: demo.port });
  t.after(() => client.close());
  assert.deepEqual((await client.call('world.list')).worlds, ['default']); // its world is gone again
});

it('server-test', async (t) => {
  const dir = tmpdir(t, { link: true });
  fs.writeFileSync(path.join(dir, 'mine.test.mjs'), forThisMachine(block('server-test').text));
  // Run in a project root holding build/release/bin/ecsd, as scripts/run.sh leaves it: found there.
  fs.mkdirSync(path.join(dir, 'build', 'release', 'bin'), { recursive: true });
  fs.symlinkSync(findBinary(), path.join(dir, 'build', 'release', 'bin', 'ecsd'));
  const result = await run(process.execPath, ['--test', 'mine.test.mjs'], { cwd: dir, env: childEnv({}, { withEcsdBin: false }) });
  assert.equal(result.code, 0, result.output);
  assert.match(result.stdout, /^# pass 1$/m);
});

it('rpc-error', async (t) => {
  await runFragment('rpc-error', { ...(await quickStart(t)), assert });
});

it('actions', async (t) => {
  const { client, hero } = await quickStart(t);
  const printed = [];
  const console = { log: (value) => printed.push(value) }; // what the block prints, kept to check
  await runFragment('actions', { client, hero, assert, console });
  assert.equal(printed.length, 2);
  assert.deepEqual(printed[0], { x: 5, y: 5, by: 'anonymous' });
  assert.ok(printed[1].some((row) => JSON.stringify(row) === '["teleport",1,1]'), JSON.stringify(printed[1]));
  await client.removeAction('teleport'); // the demo world as the other fragments expect it
});

it('pipeline', async (t) => {
  const { client, hero } = await quickStart(t);
  const { entities } = await client.worldInfo();
  const { a, b, c, tick, info } = await runFragment('pipeline', { client, hero }, '\nreturn { a, b, c, tick, info };');
  for (const id of [a, b, c]) assert.equal(typeof id, 'number');
  assert.ok(tick > 60, String(tick));
  assert.equal(info.entities, entities + 3);
});

it('watch', async (t) => {
  const { client, hero } = await quickStart(t);
  await runFragment('watch', { client, hero, assert });
  assert.deepEqual(Object.keys(await client.get(hero)), ['Position']); // it lost its Velocity
});

it('websocket', async (t) => {
  const b = block('websocket');
  assert.match(b.text, /url: 'ws:\/\/127\.0\.0\.1:7778\/ws'/);
  const dir = tmpdir(t, { link: true });
  fs.writeFileSync(path.join(dir, 'websocket.mjs'), forThisMachine(b.text, { httpPort: demo.httpPort }));
  const result = await run(process.execPath, ['websocket.mjs'], { cwd: dir });
  assert.equal(result.code, 0, result.output);
  assert.equal(result.stdout, 'pong true\n'); // the demo scene has entities with a Position
});

it('own-tests (this suite, with this file skipped there)', async () => {
  const result = await runSh(forThisMachine(block('own-tests').text), { cwd: root, env: childEnv({ ECSD_README_NESTED: '1' }, { withEcsdBin: false }) });
  assert.match(result.stdout, /^# fail 0$/m);
  assert.match(result.stdout, /^# pass [1-9]\d*$/m);
  assert.match(result.stdout, /^# skipped [1-9]\d*$/m); // this file's tests
});
