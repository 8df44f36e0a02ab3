import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../scripts/cluster/redis-server.js';
import type { RestateServer } from '../scripts/cluster/restate-server.js';
import { startRestateServer } from '../scripts/cluster/restate-server.js';

const dataDir = mkdtempSync(join(tmpdir(), 'restate-partitions-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** The partitions a node runs, as its metrics name them (each partition processor reports under its id). */
async function partitionsOf(server: RestateServer): Promise<string[]> {
  let before: string[] = [];
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const metrics = await (await fetch(`http://127.0.0.1:${server.nodes[0]!.ports.node}/metrics`)).text();
    const ids = [...new Set([...metrics.matchAll(/partition="(\d+)"/g)].map((match) => match[1]!))].sort();
    // A node that has just answered may not have started every partition processor yet: read until two reads agree.
    if (ids.length > 0 && ids.join() === before.join()) return ids;
    before = ids;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return before;
}

describe('a single Restate node (docs/cluster.md, "Partitions")', () => {
  it('is made with the partitions asked, and keeps that count when started again on its data with another', async () => {
    const ports = { ingress: await freePort(), admin: await freePort(), node: await freePort() };
    const first = await startRestateServer(ports, { dataDir, partitions: 3 });
    try {
      expect(await partitionsOf(first)).toEqual(['0', '1', '2']);
    } finally {
      await first.stop();
    }
    const again = await startRestateServer(ports, { dataDir, partitions: 5 });
    try {
      expect(await partitionsOf(again)).toEqual(['0', '1', '2']);
    } finally {
      await again.stop();
    }
  }, 120_000);
});
