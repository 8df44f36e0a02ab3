import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layers of src/ and what each may import, as docs/explanation/architecture.md draws them: lower layers
 * never import higher ones, and no module reaches itself through its imports. The generated
 * client and the console's browser files stand apart from the service and import none of it.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  privacy: [],
  domain: ['privacy'],
  machines: ['privacy', 'domain'],
  config: ['privacy', 'domain'],
  logger: ['privacy', 'domain', 'config'],
  integrations: ['privacy', 'domain', 'config'],
  store: ['privacy', 'domain', 'config', 'integrations'],
  metrics: ['privacy', 'domain', 'store'],
  'actor-system': ['privacy', 'domain', 'machines', 'config', 'integrations', 'store', 'metrics'],
  // The use cases the routes, the WebSocket and the cluster's wire share, when they get a layer of their own.
  'use-cases': ['privacy', 'domain', 'machines', 'config', 'integrations', 'store', 'metrics', 'actor-system'],
  cluster: ['privacy', 'domain', 'machines', 'config', 'integrations', 'store', 'metrics', 'actor-system', 'use-cases'],
  http: [
    'privacy',
    'domain',
    'machines',
    'config',
    'integrations',
    'store',
    'metrics',
    'actor-system',
    'use-cases',
    'cluster',
  ],
  client: [],
  'sqlite-warning': [],
  main: [
    'privacy',
    'domain',
    'machines',
    'config',
    'logger',
    'integrations',
    'store',
    'metrics',
    'actor-system',
    'use-cases',
    'cluster',
    'http',
    'sqlite-warning',
  ],
};

const SRC = resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The layer of a file: its folder under src/, or its name for a file directly in src/ (config.ts and config/ are one). */
function layerOf(file: string): string {
  const [first, ...rest] = relative(SRC, file).split(/[\\/]/);
  return rest.length > 0 ? first! : first!.replace(/\.ts$/, '');
}

/** Each source file and the source files it imports (`import type` too: a type couples layers as much). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map((imported) => imported.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => resolve(dirname(file), name).replace(/\.js$/, '.ts'));
    graph.set(file, targets);
  }
  return graph;
}

/** Every set of modules that reach each other through their imports (Tarjan's strongly connected components). */
function circles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(relative(SRC, member));
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('imports', () => {
  const graph = importGraph();

  it('resolve to source files', () => {
    const missing = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => !graph.has(target))
        .map((target) => `${relative(SRC, file)} -> ${relative(SRC, target)}`),
    );
    expect(missing, 'relative imports that name no file under src/').toEqual([]);
  });

  it('run down the layers only', () => {
    const layers = new Set([...graph.keys()].map(layerOf));
    expect(
      [...layers].filter((layer) => MAY_IMPORT[layer] === undefined),
      'folders of src/ with no row in MAY_IMPORT: give each its place (docs/explanation/architecture.md, "Layers")',
    ).toEqual([]);
    const backArrows = [...graph].flatMap(([file, targets]) => {
      const from = layerOf(file);
      return targets
        .filter((target) => layerOf(target) !== from && !MAY_IMPORT[from]!.includes(layerOf(target)))
        .map((target) => `${relative(SRC, file)} -> ${relative(SRC, target)}`);
    });
    expect(backArrows, 'imports that run back up a layer (docs/explanation/architecture.md, "Layers")').toEqual([]);
  });

  it('form no circle', () => {
    expect(circles(graph), 'modules that import each other in a circle').toEqual([]);
  });

  it('the rule holds against a back arrow and a circle', () => {
    const a = join(SRC, 'domain/a.ts');
    const b = join(SRC, 'domain/b.ts');
    const route = join(SRC, 'http/routes/x.ts');
    expect(
      circles(
        new Map([
          [a, [b]],
          [b, [a]],
          [route, [a]],
        ]),
      ),
    ).toEqual([['domain/a.ts', 'domain/b.ts']]);
    expect(MAY_IMPORT[layerOf(a)]).not.toContain(layerOf(route));
  });
});
