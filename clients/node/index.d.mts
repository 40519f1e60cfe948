// Type declarations for `import ... from 'ecsd-client'`: the same as for require().
import * as ecsd from './index.js';
export * from './index.js';
export default ecsd;
