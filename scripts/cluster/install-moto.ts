import { ensureMoto } from './moto.js';

/** Installs moto's S3 server into its venv if missing (CI, before the cluster tests), and prints where it is. */
const log = (line: string) => process.stdout.write(`${line}\n`);
log(ensureMoto(log));
