import { describe, expect, it } from 'vitest';
import { pinnedVerdict } from '../../bench/lib/pinned-targets.js';

const oneCore = { server: '0', load: '1', serverCores: 1, loadCores: 1 };

describe("the pinned ingestion verdict (docs/reference/benchmark-method.md, 'Pinned')", () => {
  it('leads with the SQLite store, its p99 beside express, and says which goal is missed', () => {
    const verdict = pinnedVerdict(oneCore, {
      serviceOverExpress: 0.97,
      sqliteOverExpress: 0.56,
      p99: { memory: 8.0, sqlite: 19.5, express: 4.4 },
    });
    expect(verdict).toMatch(
      /^Pinned, 1 core per server, the realistic event: STORE=sqlite 0\.56 of bare express, p99 19\.5 ms against express's 4\.4 \(goal ≥ 0\.8 with p99 ≤ 2×: missed\); STORE=memory 0\.97 of bare express, p99 8\.0 ms against express's 4\.4 \(goal ≥ 0\.95 with p99 ≤ 2×: met\)\./,
    );
  });

  it('a ratio met with a p99 past twice express is missed', () => {
    const verdict = pinnedVerdict(oneCore, {
      serviceOverExpress: 1,
      sqliteOverExpress: 0.85,
      p99: { memory: 9.0, sqlite: 9.0, express: 4.4 },
    });
    expect(verdict).toContain('STORE=sqlite 0.85 of bare express, p99 9.0 ms');
    expect(verdict).toMatch(/STORE=sqlite[^;]*missed\)/);
    expect(verdict).toMatch(/STORE=memory[^;]*missed\)/);
  });

  it('fails the bench when a ratio falls more than a fifth below its baseline', () => {
    expect(() =>
      pinnedVerdict(oneCore, {
        serviceOverExpress: 1.0,
        sqliteOverExpress: 0.4,
        p99: { memory: 5, sqlite: 9, express: 4.4 },
      }),
    ).toThrow(/the request path got slower/);
  });
});
