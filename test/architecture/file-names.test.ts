import { readdirSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The files under src/ that share a name, grouped by it. */
function sharedNames(files: string[]): string[][] {
  const byName = Map.groupBy(files, (file) => basename(file));
  return [...byName.values()].filter((group) => group.length > 1).map((group) => group.map((f) => relative(SRC, f)));
}

// A name says what a file is wherever it is met (an import, a stack trace, an editor tab): a route
// module ends in `.routes.ts`, a request schema in `.schema.ts`, a settings section in `.config.ts`
// (docs/how-to/add-a-route.md names the parts of a route).
describe('source file names', () => {
  it('no two files under src/ share a name', () => {
    expect(sharedNames(sourceFiles(SRC))).toEqual([]);
  });

  it('the check finds two files that do', () => {
    expect(
      sharedNames([join(SRC, 'http/routes/voice.ts'), join(SRC, 'use-cases/voice.ts'), join(SRC, 'a.ts')]),
    ).toEqual([['http/routes/voice.ts', 'use-cases/voice.ts']]);
  });
});
