'use strict';

// The wire format: one JSON text per line, LF-terminated (CRLF accepted, blank lines ignored).

const LF = 0x0a;

/**
 * Cuts a byte stream into lines. Feed it chunks as they come off the socket; it returns the
 * complete lines they finish (zero, one or many per chunk) and keeps the unfinished tail. Lines are
 * decoded as UTF-8 only once they are whole, so a character split across chunks is never mangled.
 */
class LineSplitter {
  constructor() {
    this._parts = []; // the unfinished line, as received
  }

  /** @param {Buffer} chunk @returns {string[]} the lines completed by this chunk, without terminators */
  push(chunk) {
    const lines = [];
    let start = 0;
    for (let nl = chunk.indexOf(LF); nl !== -1; nl = chunk.indexOf(LF, start)) {
      let bytes = chunk.subarray(start, nl);
      if (this._parts.length > 0) {
        this._parts.push(bytes);
        bytes = Buffer.concat(this._parts);
        this._parts = [];
      }
      start = nl + 1;
      let line = bytes.toString('utf8');
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line.trim() !== '') lines.push(line);
    }
    if (start < chunk.length) this._parts.push(chunk.subarray(start));
    return lines;
  }

  /** Bytes received after the last line terminator. */
  get pendingBytes() {
    return this._parts.reduce((n, b) => n + b.length, 0);
  }
}

/** One message as a line: JSON text plus LF (JSON.stringify never emits a raw newline). */
function encode(message) {
  return JSON.stringify(message) + '\n';
}

module.exports = { LineSplitter, encode };
