import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SECTION_ENV } from '../../src/config.js';
import { ROOT, markdownFiles } from './markdown.js';

/**
 * A setting's default is stated on one page, docs/reference/configuration.md; every other page
 * links there. A page states a default when a table with a "Default" column gives one in the row
 * naming the setting, or when a sentence naming the setting says "default". Decision records are
 * left out: each tells what was decided then.
 */
const HOME = 'docs/reference/configuration.md';
const SETTINGS = Object.values(SECTION_ENV).flatMap((section) => Object.keys(section.shape));

/** The table rows and the sentences of a page, outside fenced code. */
function statements(text: string): { rows: { header: string[]; cells: string[] }[]; sentences: string[] } {
  const rows: { header: string[]; cells: string[] }[] = [];
  const paragraphs: string[][] = [[]];
  let header: string[] = [];
  let fenced = false;
  const cellsOf = (line: string) =>
    line
      .trim()
      .replace(/^\||\|$/g, '')
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim());
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) return;
    if (/^\s*\|/.test(line)) {
      if (/^\s*\|?\s*:?-{3,}/.test(line)) return;
      if (/^\s*\|?\s*:?-{3,}/.test(lines[index + 1] ?? '')) header = cellsOf(line);
      else rows.push({ header, cells: cellsOf(line) });
      return;
    }
    if (line.trim() === '' || /^#/.test(line)) paragraphs.push([]);
    else if (/^\s*([-*]|\d+\.) /.test(line)) paragraphs.push([line.trim()]);
    else paragraphs.at(-1)!.push(line.trim());
  });
  const sentences = paragraphs.flatMap((paragraph) => paragraph.join(' ').split(/(?<=[.;:])\s+(?=[A-Z`(])/));
  return { rows, sentences };
}

/**
 * The settings whose default a page states. `anyCell`: a row states the default of every setting
 * it names (a former name is told in the row of the name it gave way to), not only of its first cell's.
 */
function defaultsStated(text: string, settings: readonly string[] = SETTINGS, anyCell = false): string[] {
  const { rows, sentences } = statements(text);
  const named = (part: string, setting: string) => new RegExp(`\`${setting}(?![A-Z0-9_])`).test(part);
  const stated = new Set<string>();
  for (const { header, cells } of rows) {
    const column = header.findIndex((title) => /default/i.test(title));
    if (column < 0 || !cells[column] || /^[-—–]?$/.test(cells[column])) continue;
    const naming = anyCell ? cells.join(' | ') : (cells[0] ?? '');
    for (const setting of settings) if (named(naming, setting)) stated.add(setting);
  }
  for (const sentence of sentences) {
    if (!/\bdefaults?\b/i.test(sentence)) continue;
    for (const setting of settings) if (named(sentence, setting)) stated.add(setting);
  }
  return [...stated];
}

const pages = markdownFiles().filter((page) => !page.startsWith('docs/decisions/'));

describe('each setting’s default', () => {
  it('is found as a page states it', () => {
    expect(defaultsStated('| Variable | Default |\n|---|---|\n| `PORT` | `8080` |\n', ['PORT'])).toEqual(['PORT']);
    expect(defaultsStated('`MEMORY_BUDGET_MB` (default 1024) is split into shares.', ['MEMORY_BUDGET_MB'])).toEqual([
      'MEMORY_BUDGET_MB',
    ]);
    expect(defaultsStated('| Variable | Meaning |\n|---|---|\n| `PORT` | where to listen |\n', ['PORT'])).toEqual([]);
    expect(defaultsStated('Set `PORT` to listen elsewhere.', ['PORT'])).toEqual([]);
  });

  it(`is stated on ${HOME}`, () => {
    const home = defaultsStated(readFileSync(join(ROOT, HOME), 'utf8'), SETTINGS, true);
    expect(SETTINGS.filter((setting) => !home.includes(setting))).toEqual([]);
  });

  it('is stated on no other page', () => {
    const elsewhere = pages
      .filter((page) => page !== HOME)
      .flatMap((page) =>
        defaultsStated(readFileSync(join(ROOT, page), 'utf8')).map((setting) => `${page}: ${setting}`),
      );
    expect(elsewhere).toEqual([]);
  });
});
