/**
 * The ceiling object's endpoint (bench/lib/ceiling-object.ts), in a process of its own as a service
 * process serves the session objects. Prints `port <n>` once it listens on 127.0.0.1.
 */
import { createServer } from 'node:http2';
import { createEndpointHandler } from '@restatedev/restate-sdk';
import { ceilingObject } from '../lib/ceiling-object.js';

const server = createServer(createEndpointHandler({ services: [ceilingObject], logger: () => {} }));
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`port ${typeof address === 'object' && address !== null ? address.port : 0}\n`);
});
process.on('SIGTERM', () => process.exit(0));
