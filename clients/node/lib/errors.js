'use strict';

/**
 * The server answered a request with a JSON-RPC error. Branch on `reason` (the protocol's stable
 * `error.data.reason`, e.g. "no_such_entity"), not on the message.
 */
class RpcError extends Error {
  /**
   * @param {{code: number, message: string, data?: object}} error the response's `error` member
   * @param {string} [method] the method that was called, when known
   */
  constructor(error, method) {
    super(typeof error.message === 'string' ? error.message : 'unknown error');
    this.name = 'RpcError';
    this.code = error.code;
    this.data = error.data && typeof error.data === 'object' ? error.data : {};
    this.reason = typeof this.data.reason === 'string' ? this.data.reason : 'unknown';
    this.method = method;
  }
}

/** The connection could not be opened, or it closed while a call or a watch was waiting on it. */
class ConnectionError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'ConnectionError';
  }
}

/** No answer arrived within the client's `timeout` (or a server did not start in time). */
class TimeoutError extends Error {
  constructor(message) {
    super(message);
    this.name = 'TimeoutError';
  }
}

module.exports = { RpcError, ConnectionError, TimeoutError };
