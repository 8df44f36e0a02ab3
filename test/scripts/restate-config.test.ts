import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { productionExample, restateNodeToml } from '../../scripts/cluster/restate-config.js';

describe('restate.toml for a replicated cluster', () => {
  it('docs/how-to/production.md shows for production the file npm run cluster -- --restate-nodes 3 writes, with production addresses', () => {
    const doc = readFileSync(new URL('../../docs/how-to/production.md', import.meta.url), 'utf8');
    const shown = /## Restate: three nodes[\s\S]*?```toml\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(shown).toBe(restateNodeToml(productionExample()));
  });

  it('differs between the nodes only in their own name, addresses and which one provisions', () => {
    const first = productionExample();
    const second = restateNodeToml({
      ...first,
      nodeName: 'restate-2',
      advertisedAddress: 'http://10.0.1.12:5122/',
      bindAddress: '10.0.1.12:5122',
      autoProvision: false,
      ingressBindAddress: '10.0.1.12:8080',
      adminBindAddress: '10.0.1.12:9070',
    });
    const changed = restateNodeToml(first)
      .split('\n')
      .filter((line, index) => line !== second.split('\n')[index])
      .map((line) => line.split(' = ')[0]);
    expect(changed).toEqual([
      'node-name',
      'advertised-address',
      'bind-address',
      'auto-provision',
      'bind-address',
      'bind-address',
    ]);
  });
});
