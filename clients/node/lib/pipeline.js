'use strict';

const { mixinRequests } = require('./requests');

/**
 * Queues calls and sends them in one write; exec() matches the answers by id and resolves to the
 * results in the order the calls were queued. The typed helpers (spawn, get, step, ...) queue too
 * and give the same values as on the client; query and watch are not available (they take several
 * round trips).
 *
 *   const p = client.pipeline();
 *   p.spawn({ Position: {} });
 *   p.call('world.info');
 *   const [id, info] = await p.exec();
 */
class Pipeline {
  constructor(client) {
    this.client = client;
    this._queued = [];
  }

  /** Queues a raw call; returns the pipeline so calls can be chained. */
  call(method, params = {}) {
    return this._run({ method, params, pick: (result) => result });
  }

  _run(request) {
    this._queued.push(request);
    return this;
  }

  get length() {
    return this._queued.length;
  }

  /**
   * Sends every queued call at once and empties the queue. Resolves to their results, in order.
   * If any failed, rejects with the first failure (its `index` says which call) once all have
   * answered; with `{throwOnError: false}` failures stand in the array as their errors instead.
   */
  async exec({ throwOnError = true } = {}) {
    const queued = this._queued;
    this._queued = [];
    if (queued.length === 0) return [];
    const settled = await Promise.allSettled(this.client._send(queued));
    const results = settled.map((s, i) => (s.status === 'fulfilled' ? queued[i].pick(s.value) : s.reason));
    const failed = settled.findIndex((s) => s.status === 'rejected');
    if (throwOnError && failed !== -1) {
      const err = settled[failed].reason;
      err.index = failed;
      throw err;
    }
    return results;
  }
}

mixinRequests(Pipeline);

module.exports = { Pipeline };
