'use strict';

const { TimeoutError } = require('./errors');

const DEFAULT_MAX_QUEUE = 10000;

/**
 * One `world.watch` subscription. `state` (a Map from entity id to its components) holds the
 * answer with every notification received so far applied to it: it is exact as soon as a
 * notification arrives, whether or not the loop has reached it. Iterating (`for await`) yields the
 * notifications' params in order; leaving the loop (break, return, throw) unsubscribes.
 */
class Watch {
  constructor(client, params, { maxQueue = DEFAULT_MAX_QUEUE } = {}) {
    this.client = client;
    this.params = params; // as sent to world.watch (world, query, fields, every)
    /** @type {Map<number, Record<string, any>>} */
    this.state = new Map();
    this.subscription = null;
    this.tick = null;
    this.ended = false;
    this.endReason = null; // 'unwatched', 'closed', 'failed' (see the error), or the server's: world_destroyed, ...
    this.dropped = 0; // notifications dropped from the queue because nobody iterated (state has them)
    this._maxQueue = maxQueue;
    this._queue = [];
    this._error = null;
    this._waiters = new Set();
    this.ready = client.call('world.watch', params).then(
      (result) => {
        this.subscription = result.subscription;
        this.tick = result.tick;
        for (const e of result.entities) this.state.set(e.entity, { ...e.components });
        return this;
      },
      (err) => {
        this._finish('failed', err);
        throw err;
      },
    );
    this.ready.catch(() => {}); // a failed start surfaces where the watch is used, never as unhandled
  }

  /** Applies one notification (called by the client in arrival order). */
  _deliver(n) {
    if (this.ended) return;
    if (typeof n.tick === 'number') this.tick = n.tick;
    if (n.ended) {
      this._finish(n.reason || 'ended');
      return;
    }
    if (n.resync) {
      this.state.clear();
      for (const e of n.entities || []) this.state.set(e.entity, { ...e.components });
    }
    for (const e of n.entered || []) this.state.set(e.entity, { ...e.components });
    for (const e of n.changed || []) {
      const components = this.state.get(e.entity) || {};
      Object.assign(components, e.components);
      for (const name of e.removed || []) delete components[name];
      this.state.set(e.entity, components);
    }
    for (const e of n.left || []) this.state.delete(e.entity);
    this._queue.push(n);
    if (this._queue.length > this._maxQueue) {
      this._queue.shift();
      this.dropped += 1;
    }
    this._wake();
  }

  /** Ends the watch locally: no more notifications; waiting loops finish (or throw `error`). */
  _finish(reason, error = null) {
    if (this.ended) return;
    this.ended = true;
    this.endReason = reason;
    this._error = error;
    this.client._forgetWatch(this);
    this._wake();
  }

  _wake() {
    const waiters = [...this._waiters];
    this._waiters.clear();
    this.client._holdChanged();
    for (const wake of waiters) wake();
  }

  /** Resolves to true at the next notification or end, to false after `timeout` ms (0: never). */
  _changed(timeout) {
    return new Promise((resolve) => {
      let timer = null;
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      if (timeout) {
        timer = setTimeout(() => {
          this._waiters.delete(wake);
          this.client._holdChanged();
          resolve(false);
        }, timeout);
      }
      this._waiters.add(wake);
      this.client._holdChanged();
    });
  }

  /** Number of loops or until() calls waiting on this watch (they keep the socket referenced). */
  get _waiting() {
    return this._waiters.size;
  }

  async next() {
    await this.ready;
    for (;;) {
      if (this._queue.length > 0) return { value: this._queue.shift(), done: false };
      if (this._error) throw this._error;
      if (this.ended) return { value: undefined, done: true };
      await this._changed(0);
    }
  }

  async return() {
    await this.unwatch();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  /**
   * Waits until `predicate(state, watch)` is true, checking now and after every notification.
   * Resolves to the state; rejects with TimeoutError after `timeout` ms (default: the client's),
   * or with the error that ended the watch.
   */
  async until(predicate, { timeout = this.client.timeout } = {}) {
    await this.ready;
    const deadline = timeout ? Date.now() + timeout : null;
    for (;;) {
      if (predicate(this.state, this)) return this.state;
      if (this._error) throw this._error;
      if (this.ended) throw new Error(`${this._what()} ended (${this.endReason}) before the condition held`);
      const left = deadline === null ? 0 : deadline - Date.now();
      if (deadline !== null && (left <= 0 || !(await this._changed(left))))
        throw new TimeoutError(`${this._what()}: the condition did not hold within ${timeout} ms (tick ${this.tick})`);
      if (deadline === null) await this._changed(0);
    }
  }

  _what() {
    return `watch of ${JSON.stringify(this.params.query)}`;
  }

  /** Ends the subscription (world.unwatch); safe to call twice or after the watch ended. */
  async unwatch() {
    try {
      await this.ready;
    } catch {
      return; // never started
    }
    if (this.ended) return;
    this._finish('unwatched');
    try {
      await this.client.call('world.unwatch', { world: this.params.world, subscription: this.subscription });
    } catch (err) {
      // Ended meanwhile on the server (its `ended` notification is on the way), or the connection is gone.
      if (err.reason !== 'no_such_subscription' && err.name !== 'ConnectionError') throw err;
    }
  }
}

module.exports = { Watch };
