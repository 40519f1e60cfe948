// The ES module face of ecsd-client: the same classes as require('ecsd-client').
import cjs from './index.js';

export const { Client, EcsdServer, RpcError, ConnectionError, TimeoutError, Pipeline, Watch } = cjs;
export default cjs;
