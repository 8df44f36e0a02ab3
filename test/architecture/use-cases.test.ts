import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Every TypeScript file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('transport reaches sessions through the use cases of src/use-cases', () => {
  it('no route, middleware or socket handler builds a session command and asks a session host itself', () => {
    const asking = sources('src/http').filter((path) => /\.ask\s*[<(]/.test(readFileSync(path, 'utf8')));
    expect(asking).toEqual([]);
  });
});
