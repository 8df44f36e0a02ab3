import { ensureLiveKitServer } from './livekit-install.js';

/** Builds the LiveKit server into the cache if missing (CI, before the media tests), and prints where it is. */
process.stdout.write(`${ensureLiveKitServer((line) => process.stdout.write(`${line}\n`))}\n`);
