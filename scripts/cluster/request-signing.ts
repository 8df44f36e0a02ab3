import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';

/** A Restate server's request-signing key: the private key file it signs with, the public key endpoints check. */
export interface SigningKey {
  /** PEM (PKCS #8, Ed25519), for the server's `request-identity-private-key-pem-file`. */
  privateKeyFile: string;
  /** `publickeyv1_…`, the form Restate logs at start and endpoints take (RESTATE_IDENTITY_KEYS). */
  publicKey: string;
}

/** Restate's form of an Ed25519 public key: `publickeyv1_` and the base58 of its 32 raw bytes. */
export function restatePublicKey(privateKeyPem: string): string {
  const { x } = createPublicKey(createPrivateKey(privateKeyPem)).export({ format: 'jwk' });
  if (x === undefined) throw new Error('not an Ed25519 key');
  return `publickeyv1_${bs58.encode(Buffer.from(x, 'base64url'))}`;
}

/**
 * The key kept in `dir` (`restate-identity.pem`, mode 0600), made the first time: a cluster kept
 * across restarts keeps its key, so endpoints started with its public key keep taking its calls.
 */
export function ensureSigningKey(dir: string): SigningKey {
  const privateKeyFile = join(dir, 'restate-identity.pem');
  if (!existsSync(privateKeyFile)) {
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(privateKeyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  }
  return { privateKeyFile, publicKey: restatePublicKey(readFileSync(privateKeyFile, 'utf8')) };
}
