import { describe, expect, it } from 'vitest';
import { createHarness } from '../support/harness.js';

const KEY = 'health-shown-key';
const PROBES = ['/health', '/health/ready'];

describe('/health says where the store file is only to a caller with a key', () => {
  it('names no path without a key, with a wrong key, or with no API_KEY set', async () => {
    const keyed = createHarness({ env: { STORE: 'sqlite', API_KEY: KEY } });
    const open = createHarness({ env: { STORE: 'sqlite' } });
    const asked = [
      { h: keyed, key: undefined },
      { h: keyed, key: 'not-the-key' },
      { h: open, key: undefined },
      { h: open, key: KEY },
    ];
    for (const { h, key } of asked) {
      for (const probe of PROBES) {
        const request = h.http.get(probe);
        const { status, body, text } = await (key === undefined ? request : request.set('X-API-Key', key));
        expect(status, probe).toBe(200);
        expect(body.store, probe).toEqual({ kind: 'sqlite', status: 'ok' });
        expect(text, probe).not.toContain(h.env.DATA_DIR);
        expect(text, probe).not.toMatch(/\.sqlite/);
      }
    }
  });

  it('names the file to a request carrying one of the keys', async () => {
    const h = createHarness({ env: { STORE: 'sqlite', API_KEY: `other,${KEY}` } });
    for (const probe of PROBES) {
      const { body } = await h.http.get(probe).set('X-API-Key', KEY).expect(200);
      expect(body.store.file, probe).toMatch(/kyc-assistant\.sqlite$/);
      expect(body.store.file.startsWith(h.env.DATA_DIR!), probe).toBe(true);
    }
  });
});
