/**
 * `npm run test:route-guide`: follows docs/how-to/add-a-route.md in a temporary copy of the
 * repository, block by block, and runs the commands its last step names. It fails when a step
 * as written does not work: a file the guide shows does not compile, the list or the README
 * does not take the lines it gives, or a check it names fails.
 *
 * The guide's fenced blocks say what they are in their info string:
 * `ts file=<path>` a file to write, `ts route-list` the lines to add to src/http/route-list.ts
 * (imports after its imports, the rest at the end of ROUTES), `md readme-row` a row for the
 * README's endpoint table, `ts contract-case` the entry for test/api/contract.test.ts's CASES
 * (the representative requests every documented operation has), `sh check` commands to run in
 * the copy, one per line.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const GUIDE = 'docs/how-to/add-a-route.md';

interface Block {
  info: string;
  body: string;
}

function blocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)].map(([, info, body]) => ({
    info: info!.trim(),
    body: body!,
  }));
}

/** The lines of a `route-list` block put where the guide says: imports after the last import, entries before `];`. */
function addToList(source: string, lines: string[]): string {
  const imports = lines.filter((line) => line.startsWith('import '));
  const entries = lines.filter((line) => line.trim() !== '' && !line.startsWith('import '));
  const lastImport = source.lastIndexOf('\nimport ');
  const afterImports = source.indexOf('\n', source.indexOf(';', lastImport)) + 1;
  let out = source.slice(0, afterImports) + imports.map((line) => `${line}\n`).join('') + source.slice(afterImports);
  const listStart = out.indexOf('export const ROUTES');
  const listEnd = out.indexOf('\n];', listStart);
  if (listStart < 0 || listEnd < 0) throw new Error('src/http/route-list.ts has no `export const ROUTES = [ ... ];`');
  out = out.slice(0, listEnd) + entries.map((line) => `\n  ${line.trim()}`).join('') + out.slice(listEnd);
  return out;
}

/** The README with `row` after the last row of its endpoint table. */
function addReadmeRow(readme: string, row: string): string {
  const section = readme.indexOf('## Endpoints');
  if (section < 0) throw new Error('README.md has no "## Endpoints" section');
  const end = readme.indexOf('\n## ', section + 1);
  const body = readme.slice(section, end < 0 ? undefined : end);
  const lastRow = body.lastIndexOf('\n|');
  const insertAt = section + body.indexOf('\n', lastRow + 1);
  return `${readme.slice(0, insertAt)}\n${row.trim()}${readme.slice(insertAt)}`;
}

/** The contract test with `entry` added at the end of its CASES. */
function addContractCase(source: string, entry: string): string {
  const start = source.indexOf('const CASES: Record<string, Case[]> = {');
  const end = source.indexOf('\n};', start);
  if (start < 0 || end < 0)
    throw new Error('test/api/contract.test.ts has no `const CASES: Record<string, Case[]> = { ... };`');
  const indented = entry
    .trimEnd()
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
  return `${source.slice(0, end)}\n${indented}${source.slice(end)}`;
}

function copyOfRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), 'route-guide-'));
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file !== '');
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    try {
      cpSync(join(ROOT, file), join(dir, file));
    } catch {
      // A file listed but deleted in the working tree is not part of it.
    }
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

function main(): void {
  const guide = blocks(readFileSync(join(ROOT, GUIDE), 'utf8'));
  const checks = guide.filter((block) => block.info === 'sh check');
  if (checks.length === 0) throw new Error(`${GUIDE} names no check (a \`sh check\` block)`);
  const dir = copyOfRepository();
  try {
    for (const block of guide) {
      const file = /^ts file=(\S+)$/.exec(block.info)?.[1];
      if (file) {
        mkdirSync(dirname(join(dir, file)), { recursive: true });
        writeFileSync(join(dir, file), block.body);
        console.log(`wrote ${file}`);
      } else if (block.info === 'ts route-list') {
        const list = join(dir, 'src/http/route-list.ts');
        writeFileSync(list, addToList(readFileSync(list, 'utf8'), block.body.split('\n')));
        console.log('added to src/http/route-list.ts');
      } else if (block.info === 'ts contract-case') {
        const contract = join(dir, 'test/api/contract.test.ts');
        writeFileSync(contract, addContractCase(readFileSync(contract, 'utf8'), block.body));
        console.log('added the contract case');
      } else if (block.info === 'md readme-row') {
        const readme = join(dir, 'README.md');
        writeFileSync(readme, addReadmeRow(readFileSync(readme, 'utf8'), block.body));
        console.log("added the README's row");
      }
    }
    for (const command of checks.flatMap((block) => block.body.split('\n')).filter((line) => line.trim() !== '')) {
      console.log(`$ ${command}`);
      const run = spawnSync('bash', ['-c', command], { cwd: dir, stdio: 'inherit' });
      if (run.status !== 0) {
        console.error(`route guide: "${command}" failed (exit ${run.status}) following ${GUIDE}`);
        process.exitCode = 1;
        return;
      }
    }
    console.log(`route guide: every step of ${GUIDE} worked`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
