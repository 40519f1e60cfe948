'use strict';

// ecsd-client: a JSON-RPC client for ecsd and a helper that runs ecsd for tests. No dependencies.

const { Client } = require('./lib/client');
const { Pipeline } = require('./lib/pipeline');
const { Watch } = require('./lib/watch');
const { EcsdServer } = require('./lib/server');
const { RpcError, ConnectionError, TimeoutError } = require('./lib/errors');

module.exports = { Client, EcsdServer, RpcError, ConnectionError, TimeoutError, Pipeline, Watch };
