import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, anchors, markdownFiles, relativeLinks } from './markdown.js';

/**
 * The pages link to files that exist, and to headings those files have: a page moved or a heading
 * renamed fails here, not in a reader's browser. Every page under docs/ is linked from another.
 */
const pages = markdownFiles();
const text = new Map(pages.map((page) => [page, readFileSync(join(ROOT, page), 'utf8')]));
const anchorsOf = new Map<string, Set<string>>();
const anchorsIn = (page: string): Set<string> => {
  if (!anchorsOf.has(page)) anchorsOf.set(page, anchors(text.get(page) ?? readFileSync(join(ROOT, page), 'utf8')));
  return anchorsOf.get(page)!;
};

/** Each link as the page it is on, what it says and the file (from the root) and anchor it names. */
const links = pages.flatMap((page) =>
  relativeLinks(text.get(page)!).map(({ target, line }) => {
    const [path, anchor] = target.split('#', 2) as [string, string | undefined];
    const file = path === '' ? page : normalize(join(dirname(page), decodeURI(path)));
    return { page, line, target, file, anchor };
  }),
);

describe('the links between pages', () => {
  it('find the pages', () => {
    expect(pages).toContain('README.md');
    expect(pages).toContain('docs/README.md');
  });

  it('each name a file that exists', () => {
    const broken = links
      .filter(({ file }) => file.startsWith('..') || !existsSync(join(ROOT, file)))
      .map(({ page, line, target }) => `${page}:${line} ${target}`);
    expect(broken).toEqual([]);
  });

  it('each name, with an anchor, a heading of the page they lead to', () => {
    const broken = links
      .filter(({ file, anchor }) => anchor !== undefined && file.endsWith('.md') && existsSync(join(ROOT, file)))
      .filter(({ file }) => statSync(join(ROOT, file)).isFile())
      .filter(({ file, anchor }) => !anchorsIn(file).has(anchor!.toLowerCase()))
      .map(({ page, line, target }) => `${page}:${line} ${target}`);
    expect(broken).toEqual([]);
  });

  it('leave no page of docs/ unlinked from another page', () => {
    const linked = new Set(links.filter(({ page, file }) => page !== file).map(({ file }) => file.replace(/\/$/, '')));
    const orphans = pages.filter((page) => page.startsWith('docs/') && !linked.has(page));
    expect(orphans).toEqual([]);
  });
});
