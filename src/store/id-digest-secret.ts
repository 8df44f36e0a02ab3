import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '../config.js';
import { ConfigError } from '../config.js';

/** Beside the SQLite file: the secret lives as long as the sessions keyed with it. */
export const ID_DIGEST_SECRET_FILE = 'kyc-assistant.secret';

/**
 * The key of the digests that stand for identity-looking session ids (session-key.ts). A stored
 * session is found again only under the same key, so a durable store keeps its own: made once,
 * readable by this user alone, and read at every start. ID_DIGEST_SECRET wins (cluster mode
 * requires it); the memory store keeps nothing across restarts and takes a random one.
 */
export function idDigestSecret(config: Pick<AppConfig, 'privacy' | 'store'>): string {
  const { idDigestSecret: given } = config.privacy;
  if (given !== undefined) return given;
  if (config.store.kind === 'memory') return randomBytes(32).toString('hex');
  const file = join(config.store.dataDir, ID_DIGEST_SECRET_FILE);
  let secret: string;
  try {
    mkdirSync(config.store.dataDir, { recursive: true });
    try {
      // `wx`: made once; every later start reads it.
      writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    secret = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(
      `DATA_DIR: cannot keep the id digest secret in ${file}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (secret.length < 16)
    throw new ConfigError(
      `DATA_DIR: ${file} holds no secret (at least 16 characters); set ID_DIGEST_SECRET, or remove the file to have one made (sessions stored under identity-looking ids are then not found again)`,
    );
  return secret;
}
