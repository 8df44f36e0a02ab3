import { ensureRestateBinary } from './restate-binary.js';

/**
 * Installs the Restate server and restatectl into their caches if missing (CI, before the cluster
 * tests), and prints where they are. restatectl is what `npm run cluster -- --snapshot` runs.
 */
const log = (line: string) => process.stdout.write(`${line}\n`);
for (const binary of ['restate-server', 'restatectl'] as const) log(ensureRestateBinary(binary, log));
