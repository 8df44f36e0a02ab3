import { ensureRestateServer } from './restate-server.js';

/** Installs the Restate server into the cache if missing (CI, before the cluster tests), and prints where it is. */
process.stdout.write(`${ensureRestateServer((line) => process.stdout.write(`${line}\n`))}\n`);
