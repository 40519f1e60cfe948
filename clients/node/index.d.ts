// Type declarations for ecsd-client (CommonJS and ES module faces alike).

import type { ChildProcess } from 'node:child_process';

export type EntityId = number;
/** Component values by component name, e.g. `{ Position: { x: 0, y: 1 } }`. */
export type Components = Record<string, any>;
/** A query as text (`"Position, !Frozen"`) or as an object (`{ all: ["Position"] }`). */
export type Query = string | Record<string, unknown>;

export interface WorldOption {
  /** Overrides the client's default world for this call. */
  world?: string;
}

export interface ClientOptions {
  /** Default "127.0.0.1". */
  host?: string;
  /** Default 7777. */
  port?: number;
  /**
   * `ws://HOST:PORT/ws`: a WebSocket to ecsd's HTTP port instead of TCP to host:port (which the url
   * then sets). Everything else is the same.
   */
  url?: string | null;
  /** Sent with server.auth right after connecting. */
  token?: string | null;
  /** Added as params.world to every world.* call that names none (all but world.list). */
  world?: string | null;
  /** Milliseconds to wait for each answer and for the connection; 0 waits for ever. Default 5000. */
  timeout?: number;
}

export interface QueryOptions extends WorldOption {
  /** Components to return (default: all). */
  fields?: string[];
  /** At most this many entities (default: every match). */
  limit?: number;
  /** Entities asked for per world.query call (default 1000, at most 10000). */
  pageSize?: number;
}

export interface WatchOptions extends WorldOption {
  /** Components to carry (default: those the query names, or all). */
  fields?: string[];
  /** At most one notification every N ticks (default 1). */
  every?: number;
  /** Notifications kept for the loop (default 10000); older ones are dropped, `state` keeps them. */
  maxQueue?: number;
}

export interface DefineSystemOptions extends WorldOption {
  /** input, simulation (default), collision or post. */
  phase?: 'input' | 'simulation' | 'collision' | 'post';
  /** Place within the phase, -1000 to 1000 (default 0). */
  order?: number;
  /** Runs on ticks divisible by this (default 1). */
  every?: number;
}

export interface CastOptions extends WorldOption {
  /** Default: the caster. */
  target?: EntityId;
  amount?: number;
}

export interface CreateWorldOptions {
  tick_hz?: number;
  gravity?: number | { x: number; y: number };
  paused?: boolean;
  [param: string]: unknown;
}

export interface QueryRow {
  entity: EntityId;
  components?: Components;
  /** false for a dead entity matched by `died` or `removed(...)`. */
  alive?: boolean;
}

export interface EntityChange {
  entity: EntityId;
  components: Components;
  /** Components the entity no longer has (in `changed`). */
  removed?: string[];
}

/** The params of one world.watch notification (ended ones end the loop instead). */
export interface WatchNotification {
  subscription: number;
  tick: number;
  entered?: EntityChange[];
  changed?: EntityChange[];
  left?: Array<{ entity: EntityId; reason: 'died' | 'unmatched' }>;
  /** Present when it merges this many diffs the client had fallen behind on. */
  coalesced?: number;
  /** true: `entities` is the whole state, replacing the previous one. */
  resync?: boolean;
  entities?: EntityChange[];
}

export interface SystemInfo {
  name: string;
  phase: string;
  order: number;
  enabled: boolean;
  signature: string;
  members: number;
  runs: number;
  last_ms: number;
  p50_ms: number;
  p99_ms: number;
}

/** The server answered with a JSON-RPC error. */
export class RpcError extends Error {
  constructor(error: { code: number; message: string; data?: Record<string, any> }, method?: string);
  name: 'RpcError';
  code: number;
  /** The protocol's stable `error.data.reason`, e.g. "no_such_entity". */
  reason: string;
  /** `error.data`: the reason and any members the method adds (world, method, limit, ...). */
  data: Record<string, any>;
  /** The method called. */
  method?: string;
  /** In a failed Pipeline.exec(): which call. */
  index?: number;
}

/** The connection could not be opened, or closed while something waited on it. */
export class ConnectionError extends Error {
  name: 'ConnectionError';
  index?: number;
}

/** No answer within the client's timeout (or a watch condition within until()'s). */
export class TimeoutError extends Error {
  name: 'TimeoutError';
  index?: number;
}

export class Client {
  constructor(options?: ClientOptions);
  static connect(options?: ClientOptions): Promise<Client>;
  readonly host: string;
  readonly port: number;
  /** The WebSocket address, or null over TCP. */
  readonly url: string | null;
  token: string | null;
  world: string | null;
  timeout: number;
  /** "host:port", or the url over WebSocket. */
  readonly address: string;
  readonly connected: boolean;

  connect(): Promise<this>;
  /** Calls still waiting reject with ConnectionError; watch loops finish. */
  close(): Promise<void>;
  /** Resolves to the result; rejects with RpcError, TimeoutError or ConnectionError. */
  call<T = any>(method: string, params?: Record<string, unknown>): Promise<T>;
  pipeline(): Pipeline;
  /** Every match, paging through world.query. */
  query(query: Query, options?: QueryOptions): Promise<QueryRow[]>;
  /** Subscribes at once; `await watch.ready` or iterate it with `for await`. */
  watch(query: Query, options?: WatchOptions): Watch;

  ping(): Promise<'pong'>;
  info(): Promise<Record<string, any>>;
  createWorld(world: string, options?: CreateWorldOptions): Promise<Record<string, any>>;
  destroyWorld(world: string): Promise<{ destroyed: string }>;
  worldInfo(options?: WorldOption): Promise<Record<string, any>>;
  spawn(components?: Components, options?: WorldOption): Promise<EntityId>;
  spawnMany(entities: Components[], options?: WorldOption): Promise<EntityId[]>;
  get(entity: EntityId, components?: string | string[] | null, options?: WorldOption): Promise<Components>;
  get(entity: EntityId, options: WorldOption): Promise<Components>;
  insert(entity: EntityId, components: Components, options?: WorldOption): Promise<{ entity: EntityId }>;
  /** Sets one field; resolves to the component's whole new value. */
  mutate(entity: EntityId, component: string, path: string, value: unknown, options?: WorldOption): Promise<Record<string, any>>;
  remove(entity: EntityId, components: string | string[], options?: WorldOption): Promise<{ entity: EntityId }>;
  /** One id: resolves to true; an array (world.despawn_entities): to how many died. */
  despawn(entity: EntityId, options?: WorldOption): Promise<true>;
  despawn(entities: EntityId[], options?: WorldOption): Promise<number>;
  /** Resolves to the new tick. */
  step(ticks?: number, options?: WorldOption): Promise<number>;
  step(options: WorldOption): Promise<number>;
  pause(options?: WorldOption): Promise<{ paused: boolean; tick: number }>;
  resume(options?: WorldOption): Promise<{ paused: boolean; tick: number }>;
  cast(caster: EntityId, spell: string, options?: CastOptions): Promise<{ caster: EntityId; spell: string; takes_effect_at_tick: number }>;
  systems(options?: WorldOption): Promise<SystemInfo[]>;
  /** The state hash, 16 hex digits. */
  hash(options?: WorldOption): Promise<string>;
  save(options?: WorldOption): Promise<{ world: string; path: string; bytes: number; tick: number; ms: number }>;
  load(options?: WorldOption): Promise<{ world: string; tick: number; entities: number; replayed: number }>;
  listWorlds(): Promise<string[]>;
  /** world.describe_entity: its components, the systems that work on it, what changed this tick. */
  describe(entity: EntityId | string, options?: WorldOption): Promise<EntityDescription>;
  /** world.list_components: every component type. */
  components(options?: WorldOption): Promise<ComponentType[]>;
  /** No fields: a tag. Resolves to the new type as components() lists it. */
  registerComponent(name: string, fields?: Record<string, unknown>, options?: WorldOption): Promise<ComponentType>;
  spells(options?: WorldOption): Promise<{ name: string; description: string }[]>;
  /** A system written in Lua 5.4 (docs/scripting.md); the same name again replaces it from the next tick. */
  defineSystem(name: string, query: string, source: string, options?: DefineSystemOptions): Promise<{ name: string; replaced: boolean; from_tick: number }>;
  removeSystem(name: string, options?: WorldOption): Promise<{ name: string; removed: boolean }>;
  /** A spell written in Lua 5.4 that cast() casts. */
  defineSpell(name: string, source: string, options?: WorldOption): Promise<{ name: string; replaced: boolean }>;
  removeSpell(name: string, options?: WorldOption): Promise<{ name: string; removed: boolean }>;
  /** An action written in Lua 5.4 (its chunk returns `function(w, caller, args)`) that callAction() runs. */
  defineAction(name: string, source: string, options?: WorldOption): Promise<{ name: string; replaced: boolean }>;
  /**
   * Runs the action now, between two ticks, as this connection's identity; resolves to what it
   * returned (null for nil). Rejects with RpcError `action_failed` (nothing of the call applied),
   * `no_such_action`, or `rate_limited` (`data.retry_after` seconds) for a player past --action-rate.
   */
  callAction<T = any>(name: string, args?: unknown, options?: WorldOption): Promise<T>;
  removeAction(name: string, options?: WorldOption): Promise<{ name: string; removed: boolean }>;
  actions(options?: WorldOption): Promise<ActionInfo[]>;
  definePrefab(name: string, components: Components, options?: WorldOption): Promise<{ name: string }>;
  /** Resolves to the new entities' ids. */
  spawnPrefab(name: string, options?: SpawnPrefabOptions): Promise<EntityId[]>;
  prefabs(options?: WorldOption): Promise<{ name: string; components: Components }[]>;
  /** Every chunk of one world.export: the snapshot text. */
  exportWorld(options?: ExportOptions): Promise<string>;
  /** world.import of `text` in chunks; resolves to the last answer. */
  importWorld(name: string, text: string, options?: ImportOptions): Promise<{ world: string; bytes: number; done: true; tick: number; entities: number }>;
}

export interface EntityDescription {
  entity: EntityId;
  components: Components;
  systems: string[];
  changes: { added: string[]; changed: string[]; removed: string[] };
}

export interface ComponentType {
  name: string;
  kind: 'builtin' | 'tag' | 'runtime' | 'runtime_tag';
  fields: { name: string; type: string; default: unknown }[];
  count: number;
}

/** One action as world.list_actions lists it: calls that applied and failed since the world loaded. */
export interface ActionInfo {
  name: string;
  calls: number;
  failures: number;
  /** The last failure's message, once one failed. */
  last_error?: string;
}

export interface SpawnPrefabOptions extends WorldOption {
  /** Default 1. */
  count?: number;
  /** Merged field by field into the prefab's values. */
  overrides?: Components;
}

export interface ExportOptions extends WorldOption {
  /** Seal the world as the snapshot is taken (a move to another server). */
  seal?: boolean;
  /** Bytes per world.export chunk (16 to 524288; default the server's 262144). */
  chunkBytes?: number;
}

export interface ImportOptions {
  /** Create it paused or ticking, whatever the snapshot says. */
  paused?: boolean;
  /** Bytes per world.import chunk (default 200000). */
  chunkBytes?: number;
}

/** Calls queued and sent in one write; exec() resolves to their results in order. */
export class Pipeline {
  constructor(client: Client);
  readonly client: Client;
  readonly length: number;
  call(method: string, params?: Record<string, unknown>): this;
  /**
   * Rejects with the first failure (its `index` says which call) once every call has answered;
   * with `throwOnError: false` a failure stands in the array as its error.
   */
  exec(options?: { throwOnError?: boolean }): Promise<any[]>;

  ping(): this;
  info(): this;
  createWorld(world: string, options?: CreateWorldOptions): this;
  destroyWorld(world: string): this;
  worldInfo(options?: WorldOption): this;
  spawn(components?: Components, options?: WorldOption): this;
  spawnMany(entities: Components[], options?: WorldOption): this;
  get(entity: EntityId, components?: string | string[] | null, options?: WorldOption): this;
  get(entity: EntityId, options: WorldOption): this;
  insert(entity: EntityId, components: Components, options?: WorldOption): this;
  mutate(entity: EntityId, component: string, path: string, value: unknown, options?: WorldOption): this;
  remove(entity: EntityId, components: string | string[], options?: WorldOption): this;
  despawn(entity: EntityId | EntityId[], options?: WorldOption): this;
  step(ticks?: number, options?: WorldOption): this;
  step(options: WorldOption): this;
  pause(options?: WorldOption): this;
  resume(options?: WorldOption): this;
  cast(caster: EntityId, spell: string, options?: CastOptions): this;
  systems(options?: WorldOption): this;
  hash(options?: WorldOption): this;
  save(options?: WorldOption): this;
  load(options?: WorldOption): this;
  listWorlds(): this;
  describe(entity: EntityId | string, options?: WorldOption): this;
  components(options?: WorldOption): this;
  registerComponent(name: string, fields?: Record<string, unknown>, options?: WorldOption): this;
  spells(options?: WorldOption): this;
  defineSystem(name: string, query: string, source: string, options?: DefineSystemOptions): this;
  removeSystem(name: string, options?: WorldOption): this;
  defineSpell(name: string, source: string, options?: WorldOption): this;
  removeSpell(name: string, options?: WorldOption): this;
  defineAction(name: string, source: string, options?: WorldOption): this;
  callAction(name: string, args?: unknown, options?: WorldOption): this;
  removeAction(name: string, options?: WorldOption): this;
  actions(options?: WorldOption): this;
  definePrefab(name: string, components: Components, options?: WorldOption): this;
  spawnPrefab(name: string, options?: SpawnPrefabOptions): this;
  prefabs(options?: WorldOption): this;
}

/**
 * A world.watch subscription. `state` is the answer with every notification received so far
 * applied; iterating yields the notifications; leaving the loop unsubscribes.
 */
export class Watch implements AsyncIterableIterator<WatchNotification> {
  readonly client: Client;
  /** The params sent to world.watch. */
  readonly params: { query: Query; world?: string; fields?: string[]; every?: number };
  readonly state: Map<EntityId, Components>;
  /** Resolves (to the watch) once the first answer is applied; rejects with its RpcError. */
  readonly ready: Promise<this>;
  readonly subscription: number | null;
  readonly tick: number | null;
  readonly ended: boolean;
  /** "unwatched", "closed", "failed", or the server's: world_destroyed, world_reloaded, server_shutdown. */
  readonly endReason: string | null;
  /** Notifications dropped from the loop's queue because nobody read them (state has them all). */
  readonly dropped: number;

  next(): Promise<IteratorResult<WatchNotification, undefined>>;
  /** Called when a for-await loop is left: unsubscribes. */
  return(): Promise<IteratorResult<WatchNotification, undefined>>;
  [Symbol.asyncIterator](): this;
  /**
   * Resolves to the state once `predicate` holds (checked now and after each notification);
   * rejects with TimeoutError after `timeout` ms (default: the client's), or if the watch ends.
   */
  until(predicate: (state: Map<EntityId, Components>, watch: this) => boolean, options?: { timeout?: number }): Promise<Map<EntityId, Components>>;
  unwatch(): Promise<void>;
}

export interface EcsdServerOptions {
  /** Default: $ECSD_BIN, `ecsd` on PATH, then this repository's build/test/bin/ecsd and build/<any>/bin/ecsd. */
  binary?: string;
  /** Default: a temporary folder removed by stop(); false: no --data-dir (worlds in memory only). */
  dataDir?: string | false;
  /** More ecsd flags, e.g. ['--max-watches', '2']. */
  args?: string[];
  /** Passed as --token; client() authenticates with it. */
  token?: string | null;
  /** More environment variables for ecsd (the caller's ECSD_* are dropped). */
  env?: Record<string, string>;
  /** Milliseconds to wait for the listening line and a pong (default 20000). */
  startTimeout?: number;
  /** The HTTP face (and its WebSocket endpoint) on a free port too; default off. */
  http?: boolean;
}

/** An ecsd child process on a free port, for tests. */
export class EcsdServer {
  static start(options?: EcsdServerOptions): Promise<EcsdServer>;
  readonly binary: string;
  readonly host: string;
  readonly port: number;
  /** The HTTP face's port, or null when it is off. */
  readonly httpPort: number | null;
  /** `ws://HOST:PORT/ws` (a Client's `url`), or null when the HTTP face is off. */
  readonly wsUrl: string | null;
  /** null when started with dataDir: false. */
  readonly dataDir: string | null;
  readonly process: ChildProcess | null;
  readonly pid: number | null;
  readonly running: boolean;
  /** The last 64 KiB of ecsd's stderr. */
  readonly log: string;
  /** A connected Client (with the server's token); closed by stop(), kill() and restart(). */
  client(options?: ClientOptions): Promise<Client>;
  /** SIGTERM, then the same command again with the same data folder (and port, when free). */
  restart(): Promise<void>;
  /** SIGKILL; resolves once ecsd is gone. */
  kill(): Promise<void>;
  /** SIGTERM; rejects if ecsd did not exit 0 (unless kill() ended it). Removes a temporary data folder. */
  stop(options?: { timeout?: number }): Promise<void>;
}
