import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { sessionKeys } from '../../src/domain/session-key.js';
import { ID_DIGEST_SECRET_FILE, idDigestSecret } from '../../src/store/id-digest-secret.js';
import { tempDataDir } from '../support/harness.js';
import { startService } from '../support/service-process.js';

const PHONE = '9876543210';

describe('the digest that stands for an identity-looking session id', () => {
  it('is keyed: not the plain SHA-256 anyone could compute for every phone number, and another key gives another digest', () => {
    const keys = sessionKeys('first-secret-of-sixteen');
    const first = keys.routingKey(PHONE);
    expect(first).toMatch(/^h-[0-9a-f]{24}$/);
    expect(first).not.toBe(`h-${createHash('sha256').update(PHONE).digest('hex').slice(0, 24)}`);
    expect(keys.routingKey(PHONE)).toBe(first);
    expect(sessionKeys('first-secret-of-sixteen').routingKey(PHONE)).toBe(first);
    expect(sessionKeys('second-secret-of-sixteen').routingKey(PHONE)).not.toBe(first);
  });

  it('a SQLite DATA_DIR keeps its own, made once, readable by its user alone; ID_DIGEST_SECRET wins; the memory store takes a fresh one', () => {
    const dir = tempDataDir();
    const config = loadConfig({ STORE: 'sqlite', DATA_DIR: dir });
    const made = idDigestSecret(config);
    expect(made).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(join(dir, ID_DIGEST_SECRET_FILE)).mode & 0o777).toBe(0o600);
    expect(idDigestSecret(config)).toBe(made);
    expect(
      idDigestSecret(loadConfig({ STORE: 'sqlite', DATA_DIR: dir, ID_DIGEST_SECRET: 'set-by-the-operator' })),
    ).toBe('set-by-the-operator');
    expect(readFileSync(join(dir, ID_DIGEST_SECRET_FILE), 'utf8').trim()).toBe(made);
    const memory = loadConfig({ STORE: 'memory' });
    expect(idDigestSecret(memory)).not.toBe(idDigestSecret(memory));
  });

  it('a secret file that holds none, or a DATA_DIR it cannot be kept in, stops the start with a line naming DATA_DIR', () => {
    const dir = tempDataDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, ID_DIGEST_SECRET_FILE), 'short\n');
    expect(() => idDigestSecret(loadConfig({ STORE: 'sqlite', DATA_DIR: dir }))).toThrow(ConfigError);
    expect(() => idDigestSecret(loadConfig({ STORE: 'sqlite', DATA_DIR: dir }))).toThrow(
      /^DATA_DIR: .*kyc-assistant\.secret holds no secret/,
    );
    const locked = tempDataDir();
    mkdirSync(locked, { recursive: true });
    chmodSync(locked, 0o500);
    try {
      // Root writes anywhere: the refusal can only be seen as another user.
      if (process.getuid?.() !== 0)
        expect(() => idDigestSecret(loadConfig({ STORE: 'sqlite', DATA_DIR: locked }))).toThrow(
          /^DATA_DIR: cannot keep the id digest secret in /,
        );
    } finally {
      chmodSync(locked, 0o700);
    }
  });

  it(
    'the real process: a session keyed by a phone number is found by it again after a restart',
    { timeout: 60_000 },
    async () => {
      const dir = tempDataDir();
      const post = (url: string, path: string, body: unknown) =>
        fetch(`${url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const first = startService({ STORE: 'sqlite', DATA_DIR: dir });
      const firstUrl = await first.url;
      expect(
        (await post(firstUrl, '/v1/events', { session_id: PHONE, event: 'screen_state', screen: 'pan_details' }))
          .status,
      ).toBe(200);
      first.child.kill('SIGKILL');
      await new Promise((resolve) => first.child.once('exit', resolve));
      const second = startService({ STORE: 'sqlite', DATA_DIR: dir });
      try {
        const context = (await (await fetch(`${await second.url}/v1/assistant/context/${PHONE}`)).json()) as {
          session_id: string;
          current_screen: string;
        };
        expect(context.current_screen).toBe('pan_details');
        expect(context.session_id).toMatch(/^h-[0-9a-f]{24}$/);
      } finally {
        second.child.kill('SIGKILL');
      }
    },
  );
});
