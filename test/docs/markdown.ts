import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The repository's root, where README.md is. */
export const ROOT = join(import.meta.dirname, '../..');

/** Folders no page of the project lives in. */
const SKIPPED = new Set(['node_modules', 'dist', 'data', 'coverage']);

/** Every Markdown file of the repository, as a path from its root (`docs/reference/api.md`). */
export function markdownFiles(folder = ROOT): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith('.') || SKIPPED.has(entry.name)) return [];
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [relative(ROOT, path)] : [];
  });
}

/** A page's text with its fenced code blocks and inline code blanked out, lines kept. */
export function prose(text: string): string {
  return text
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (code) => ' '.repeat(code.length));
}

/** A heading's anchor as GitHub makes it: lowercase, punctuation dropped but hyphens, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a page's headings (a repeated one numbered `-1`, `-2` as GitHub does). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  const withoutCode = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = slug(heading!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** The relative links of a page (`[text](target)`, `![alt](target)`, `[label]: target`), outside code. */
export function relativeLinks(text: string): { target: string; line: number }[] {
  const lines = prose(text).split('\n');
  return lines.flatMap((line, index) =>
    [...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|^\s*\[[^\]]+\]:\s+(\S+)/g)]
      .map((match) => (match[1] ?? match[2])!)
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('/'))
      .map((target) => ({ target, line: index + 1 })),
  );
}
