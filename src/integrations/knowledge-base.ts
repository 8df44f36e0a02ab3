import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../config.js';
import type { KnowledgeBase } from '../domain/kyc-knowledge.js';
import { KnowledgeBaseSchema } from '../domain/kyc-knowledge.js';

/** Beside this module in src/ and, copied by the build, in dist/src/: found the same way under tsx and node. */
export const BUNDLED_KB_FILE = fileURLToPath(new URL('./kyc-kb.json', import.meta.url));

// Far above any real knowledge base; a wrong path to some huge file must not be read into memory.
const MAX_KB_BYTES = 1_048_576;

function readText(path: string): string {
  try {
    if (statSync(path).size > MAX_KB_BYTES) throw new Error(`file is larger than ${MAX_KB_BYTES} bytes`);
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw code === undefined ? error : new Error(`cannot read the file (${code})`);
  }
}

function readJson(path: string): unknown {
  const text = readText(path);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(`not valid JSON (${(error as Error).message})`, { cause: error });
  }
}

/**
 * The knowledge base, read and validated once at start-up: `KYC_KB_FILE`, else the bundled one.
 * Any problem refuses start-up with a message naming the file and what is wrong in it.
 */
export function loadKnowledgeBase(file: string | undefined): KnowledgeBase {
  const path = file ?? BUNDLED_KB_FILE;
  const source = file === undefined ? `bundled knowledge base ${path}` : `KYC_KB_FILE ${file}`;
  let raw: unknown;
  try {
    raw = readJson(path);
  } catch (error) {
    throw new ConfigError(`invalid configuration: ${source}: ${(error as Error).message}`);
  }
  const parsed = KnowledgeBaseSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((issue) => {
      // A bad record key says only "Invalid key in record"; the rule it broke is in the nested issue.
      let message = issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message;
      if (issue.code === 'invalid_type' && message.endsWith('received undefined')) message = 'is required';
      return `${issue.path.map(String).join('.') || '(root)'}: ${message}`;
    });
    throw new ConfigError(`invalid configuration: ${source}: ${problems.join('; ')}`);
  }
  return parsed.data;
}
