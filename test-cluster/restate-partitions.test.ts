import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../scripts/cluster/redis-server.js';
import { partitionsOf, startRestateServer } from '../scripts/cluster/restate-server.js';

const dataDir = mkdtempSync(join(tmpdir(), 'restate-partitions-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('a single Restate node (docs/explanation/cluster.md, "Partitions")', () => {
  it('is made with the partitions asked, and keeps that count when started again on its data with another', async () => {
    const ports = { ingress: await freePort(), admin: await freePort(), node: await freePort() };
    const first = await startRestateServer(ports, { dataDir, partitions: 3 });
    try {
      expect(await partitionsOf(first.nodes[0]!)).toBe(3);
    } finally {
      await first.stop();
    }
    const again = await startRestateServer(ports, { dataDir, partitions: 5 });
    try {
      expect(await partitionsOf(again.nodes[0]!)).toBe(3);
    } finally {
      await again.stop();
    }
  }, 120_000);
});
