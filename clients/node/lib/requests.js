'use strict';

// The typed helpers, each as one JSON-RPC request: the method, its params and what to keep of the
// result. Client runs them at once; Pipeline queues them. Every world-bound helper takes a last
// `{world}` to override the client's default world for that one call.

function request(method, params, opts, pick = (result) => result) {
  const p = { ...params };
  if (opts && opts.world !== undefined) p.world = opts.world;
  return { method, params: p, pick };
}

// `get(id, {world})` and `step({world})`: a plain object where an optional argument may stand.
const isOptions = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const names = (v) => (Array.isArray(v) ? v : [v]);

const requests = {
  ping: () => request('server.ping', {}),
  info: () => request('server.info', {}),
  createWorld: (world, options = {}) => request('world.create', { ...options, world }),
  destroyWorld: (world) => request('world.destroy', { world }),
  listWorlds: () => request('world.list', {}, undefined, (r) => r.worlds),
  worldInfo: (opts) => request('world.info', {}, opts),

  spawn: (components = {}, opts) => request('world.spawn_entity', { components }, opts, (r) => r.entity),
  spawnMany: (entities, opts) => request('world.spawn_entities', { entities }, opts, (r) => r.entities),
  get(entity, components, opts) {
    if (isOptions(components)) [components, opts] = [undefined, components];
    const params = components === undefined || components === null ? { entity } : { entity, components: names(components) };
    return request('world.get_components', params, opts, (r) => r.components);
  },
  insert: (entity, components, opts) => request('world.insert_components', { entity, components }, opts),
  mutate: (entity, component, path, value, opts) =>
    request('world.mutate_components', { entity, component, path, value }, opts, (r) => r.value),
  remove: (entity, components, opts) =>
    request('world.remove_components', { entity, components: names(components) }, opts),
  despawn: (entity, opts) =>
    Array.isArray(entity)
      ? request('world.despawn_entities', { entities: entity }, opts, (r) => r.despawned)
      : request('world.despawn_entity', { entity }, opts, (r) => r.despawned),

  step(ticks = 1, opts) {
    if (isOptions(ticks)) [ticks, opts] = [1, ticks];
    return request('world.step', { ticks }, opts, (r) => r.tick);
  },
  pause: (opts) => request('world.pause', {}, opts),
  resume: (opts) => request('world.resume', {}, opts),
  cast(caster, spell, { target, amount, world } = {}) {
    const params = { caster, spell };
    if (target !== undefined) params.target = target;
    if (amount !== undefined) params.amount = amount;
    return request('world.cast_spell', params, { world });
  },
  systems: (opts) => request('world.list_systems', {}, opts, (r) => r.systems),
  hash: (opts) => request('world.hash', {}, opts, (r) => r.hash),
  save: (opts) => request('world.save', {}, opts),
  load: (opts) => request('world.load', {}, opts),

  describe: (entity, opts) => request('world.describe_entity', { entity }, opts),
  components: (opts) => request('world.list_components', {}, opts, (r) => r.components),
  registerComponent: (name, fields = {}, opts) => request('world.register_component', { name, fields }, opts),
  spells: (opts) => request('world.list_spells', {}, opts, (r) => r.spells),
  defineSystem(name, query, source, { phase = 'simulation', order, every, world } = {}) {
    const params = { name, query, phase, source };
    if (order !== undefined) params.order = order;
    if (every !== undefined) params.every = every;
    return request('world.define_system', params, { world });
  },
  removeSystem: (name, opts) => request('world.remove_system', { name }, opts),
  defineSpell: (name, source, opts) => request('world.define_spell', { name, source }, opts),
  removeSpell: (name, opts) => request('world.remove_spell', { name }, opts),
  defineAction: (name, source, opts) => request('world.define_action', { name, source }, opts),
  // `args` is any JSON value, so options cannot stand in its place: callAction(name, undefined, { world }).
  // No `caller`: the server sets it from the connection's identity and refuses one sent.
  callAction: (name, args, opts) => request('world.call_action', { name, args }, opts),
  removeAction: (name, opts) => request('world.remove_action', { name }, opts),
  actions: (opts) => request('world.list_actions', {}, opts, (r) => r.actions),
  definePrefab: (name, components, opts) => request('world.define_prefab', { name, components }, opts),
  spawnPrefab(name, { count, overrides, world } = {}) {
    const params = { name };
    if (count !== undefined) params.count = count;
    if (overrides !== undefined) params.overrides = overrides;
    return request('world.spawn_prefab', params, { world }, (r) => r.entities);
  },
  prefabs: (opts) => request('world.list_prefabs', {}, opts, (r) => r.prefabs),
};

/** Adds one method per helper to `cls`; each hands its request to `this._run(request)`. */
function mixinRequests(cls) {
  for (const [name, build] of Object.entries(requests)) {
    const method = {
      [name](...args) {
        return this._run(build(...args));
      },
    }[name];
    Object.defineProperty(cls.prototype, name, { value: method, writable: true, configurable: true });
  }
}

module.exports = { requests, request, mixinRequests };
