// A tiny multiplayer game in the browser (issue 43): two players, alice and bob, each with a page of
// their own (the viewer, opened with their token) and a WebSocket to ecsd, move their own avatars
// through the `move` action of docs/scripting.md, and each page sees the other avatar move. Neither
// can move the other's avatar, write a component or call an admin method. The admin's page lists
// both players among the connected clients; the players' pages show no control that writes.
//   ECSD_BINARY=build/test/bin/ecsd tests/browser/run.sh      (CTest: label `browser`)
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import puppeteer from "puppeteer-core";
import { TcpClient, startEcsd, until } from "./harness.mjs";

const shots = process.env.ECSD_SCREENSHOTS || process.cwd();
const chromium = process.env.CHROMIUM || "/usr/bin/chromium";
const here = path.dirname(fileURLToPath(import.meta.url));
mkdirSync(shots, { recursive: true });
const sha256 = (t) => createHash("sha256").update(t).digest("hex");

// The action as docs/scripting.md shows it: the file the docs test runs too.
const moveLua = (() => {
  const doc = readFileSync(path.join(here, "../../docs/scripting.md"), "utf8");
  const m = /<!-- docs-test: file move\.lua -->\n```lua\n([\s\S]*?)```/.exec(doc);
  if (!m) throw new Error("docs/scripting.md has no move.lua block");
  return m[1];
})();

let dir, server, admin, browser;
const pages = {};
let avatars = {};

/** Opens the viewer as `token` in a page of its own; its WebSocket game client is window.game. */
async function openPlayer(token) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1000, height: 600 });
  page.on("pageerror", (e) => assert.fail("page error: " + e.message));
  await page.goto(server.url + "?token=" + token);
  await until("the viewer knows who it is", () => page.evaluate(() => window.ecsdViewer.role));
  // The game's client: a WebSocket to the same server, authenticated with the player's token.
  await page.evaluate(async (t) => {
    const ws = new WebSocket(`ws://${location.host}/ws`);
    const pending = new Map();
    let nextId = 1;
    ws.onmessage = (e) => {
      const m = JSON.parse(e.data);
      const p = pending.get(m.id);
      if (p) { pending.delete(m.id); p(m); }
    };
    await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = () => reject(new Error("no WebSocket")); });
    const call = (method, params) => new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
    window.game = { call, move: (entity, dx, dy) => call("world.call_action", { name: "move", args: { entity, dx, dy } }) };
    const auth = await call("server.auth", { token: t });
    if (!auth.result) throw new Error("server.auth: " + JSON.stringify(auth));
  }, token);
  return page;
}

/** Where a page's viewer shows an entity, from its own watch of the world. */
const seen = (page, id) => page.evaluate((id) => {
  const c = window.ecsdViewer.entities.get(id);
  return c && c.Position ? { x: c.Position.x, y: c.Position.y } : null;
}, id);

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "ecsd-game-"));
  const tokens = path.join(dir, "tokens.txt");
  writeFileSync(tokens, `${sha256("ops-token")} ops admin\n${sha256("alice-token")} alice player\n` +
                        `${sha256("bob-token")} bob player\n`);
  server = await startEcsd(["--tokens", tokens]);
  admin = new TcpClient(server.tcp);
  await admin.call("server.auth", { token: "ops-token" });
  await admin.call("world.register_component", { name: "Owner", fields: { identity: "" } });
  const a = await admin.call("world.spawn_entity", { components: { Position: { x: -3, y: 0 }, Player: {}, Owner: { identity: "alice" } } });
  const b = await admin.call("world.spawn_entity", { components: { Position: { x: 3, y: 0 }, Player: {}, Owner: { identity: "bob" } } });
  avatars = { alice: a.entity, bob: b.entity };
  await admin.call("world.define_action", { name: "move", source: moveLua });
  browser = await puppeteer.launch({ executablePath: chromium, headless: "new",
                                     args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  pages.alice = await openPlayer("alice-token");
  pages.bob = await openPlayer("bob-token");
});

after(async () => {
  if (browser) await browser.close();
  if (admin) admin.close();
  if (server) server.proc.kill("SIGTERM");
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("each player moves their own avatar, and each page sees the other move", async () => {
  for (let i = 0; i < 3; i++) {
    const r = await pages.alice.evaluate((e) => window.game.move(e, 1, 0), avatars.alice);
    assert.deepEqual(r.result, { x: -2 + i, y: 0 }, JSON.stringify(r));
  }
  const r = await pages.bob.evaluate((e) => window.game.move(e, 0, 1), avatars.bob);
  assert.deepEqual(r.result, { x: 3, y: 1 }, JSON.stringify(r));
  // Bob's page sees alice at x = 0; alice's sees bob at y = 1: through their viewers' own watches.
  await until("bob's page to see alice move", async () => (await seen(pages.bob, avatars.alice))?.x === 0);
  await until("alice's page to see bob move", async () => (await seen(pages.alice, avatars.bob))?.y === 1);
  await pages.alice.screenshot({ path: path.join(shots, "game-alice.png") });
});

test("a player cannot move the other's avatar, write a component, or call an admin method", async () => {
  const other = await pages.alice.evaluate((e) => window.game.move(e, -1, 0), avatars.bob);
  assert.equal(other.error?.data?.reason, "action_failed", JSON.stringify(other));
  assert.match(other.error.message, /not your avatar/);
  const write = await pages.alice.evaluate((e) => window.game.call("world.mutate_components",
    { entity: e, component: "Position", path: "x", value: 100 }), avatars.bob);
  assert.equal(write.error?.data?.reason, "unauthorized", JSON.stringify(write));
  for (const [method, params] of [["world.destroy", { world: "default" }], ["world.define_action", { name: "cheat", source: "return function() end" }],
                                  ["server.clients", {}], ["world.pause", {}]]) {
    const r = await pages.bob.evaluate((m, p) => window.game.call(m, p), method, params);
    assert.equal(r.error?.data?.reason, "unauthorized", method + ": " + JSON.stringify(r));
    assert.equal(r.error.data.role, "player");
  }
  const bob = await admin.call("world.get_components", { entity: avatars.bob, components: ["Position"] });
  assert.deepEqual(bob.components.Position, { x: 3, y: 1 }, "bob's avatar is where bob left it");
  assert.deepEqual((await admin.call("world.list")).worlds, ["default"]);
});

test("a player's page shows no control that writes; the admin's shows who is connected", async () => {
  const page = pages.alice;
  assert.equal(await page.$eval("#me", (e) => e.textContent), "alice (player)");
  for (const sel of ["#pause", "#step", "#prefab", "#cast", "#clients"])
    assert.equal(await page.$eval(sel, (e) => e.offsetParent === null), true, sel + " is hidden");
  const ops = await browser.newPage();
  await ops.setViewport({ width: 1000, height: 600 });
  await ops.goto(server.url + "?token=ops-token");
  const rows = await until("the admin's page to list the players", async () => {
    const clients = await ops.evaluate(() => window.ecsdViewer.clients || []);
    const names = new Set(clients.map((c) => c.identity + "/" + c.role + "/" + c.face));
    return names.has("alice/player/websocket") && names.has("bob/player/websocket") ? clients : null;
  });
  assert.ok(rows.length >= 3);
  assert.equal(await ops.$eval("#pause", (e) => e.offsetParent !== null), true, "the admin sees pause");
  assert.match(await ops.$eval("#clients", (e) => e.textContent), /alice.*player.*websocket/);
  await ops.screenshot({ path: path.join(shots, "game-admin.png") });
  await ops.close();
});
