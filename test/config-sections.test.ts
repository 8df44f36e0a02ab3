import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SECTION_ENV, loadConfig } from '../src/config.js';

/**
 * The settings' sections as docs/reference/configuration.md tells them: each section's table lists exactly
 * the variables its module reads, and no variable belongs to two sections.
 */
const DOC = readFileSync(resolve(import.meta.dirname, '../docs/reference/configuration.md'), 'utf8');

/** The text under `### <section> (...)`, up to the next heading. */
function docSection(name: string): string {
  const start = DOC.search(new RegExp(`^### ${name} \\(`, 'm'));
  if (start < 0) return '';
  const rest = DOC.slice(start + 4);
  const next = rest.search(/^#{2,3} /m);
  return next < 0 ? rest : rest.slice(0, next);
}

/** The variables a table row names in its first cell (`LIVEKIT_API_KEY`, `LIVEKIT_API_SECRET` is two). */
const tableVariables = (text: string): string[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1]!));

const sections = Object.entries(SECTION_ENV).map(([name, env]) => ({ name, variables: Object.keys(env.shape) }));

describe('configuration sections', () => {
  it('give each variable one section', () => {
    const all = sections.flatMap((section) => section.variables);
    expect(all.filter((variable, i) => all.indexOf(variable) !== i)).toEqual([]);
  });

  it.each(sections)(
    '$name: its table in docs/reference/configuration.md lists what it reads, and only that',
    ({ name, variables }) => {
      const text = docSection(name);
      expect(text, `docs/reference/configuration.md has no "### ${name} (" section`).not.toBe('');
      const documented = tableVariables(text);
      // A former name is read too, and told in the row of the name it gave way to.
      expect(variables.filter((variable) => !text.includes(`\`${variable}\``))).toEqual([]);
      expect(documented.filter((variable) => !variables.includes(variable))).toEqual([]);
    },
  );

  it('each build the section of AppConfig named for them', () => {
    expect(Object.keys(loadConfig({})).sort()).toEqual(Object.keys(SECTION_ENV).sort());
  });
});
