import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CLIENT_SCHEMA_FILE, clientSchemaSource } from './client-source.js';

await writeFile(CLIENT_SCHEMA_FILE, await clientSchemaSource());
process.stdout.write(`wrote ${fileURLToPath(CLIENT_SCHEMA_FILE)}\n`);
