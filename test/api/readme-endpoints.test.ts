import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { apiDocument } from '../../src/http/api-document.js';

/** The README's endpoint table, as `METHOD /path` rows. */
function readmeEndpoints(): string[] {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(
    readme.indexOf('## Endpoints'),
    readme.indexOf('\n## ', readme.indexOf('## Endpoints') + 1),
  );
  return [...section.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \|/gm)].map(
    ([, method, path]) => `${method} ${path}`,
  );
}

/** What the OpenAPI document declares, as `METHOD /path` rows (HEAD and OPTIONS follow GET and CORS). */
function documentedEndpoints(): string[] {
  const paths = (apiDocument() as { paths: Record<string, Record<string, unknown>> }).paths;
  return Object.entries(paths).flatMap(([path, operations]) =>
    Object.keys(operations)
      .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
}

describe("the README's endpoint table", () => {
  it('lists every operation the OpenAPI document declares, and nothing it does not', () => {
    const readme = readmeEndpoints();
    expect(new Set(readme).size, 'a row listed twice').toBe(readme.length);
    expect(readme.sort()).toEqual(documentedEndpoints().sort());
  });
});
