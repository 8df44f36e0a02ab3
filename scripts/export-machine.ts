/**
 * Writes the session machine as JSON for Stately's editor:
 *
 *   npm run export:machine [-- PATH]      (default docs/session-machine.json)
 *
 * Import it in the editor with Import (Code panel), wrapped as `createMachine(<the JSON>)`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { exportableConfig } from '../src/machines/machine-export.js';
import { sessionMachine } from '../src/machines/session/machine.js';

const DEFAULT_EXPORT_PATH = 'docs/session-machine.json';

const path = resolve(process.argv[2] ?? DEFAULT_EXPORT_PATH);
mkdirSync(dirname(path), { recursive: true });
writeFileSync(path, `${JSON.stringify(exportableConfig(sessionMachine), null, 2)}\n`);
process.stdout.write(`wrote ${path}\n`);
