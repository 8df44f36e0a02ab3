import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { BUNDLED_KB_FILE, loadKnowledgeBase } from '../../src/integrations/knowledge-base.js';

const dir = mkdtempSync(join(tmpdir(), 'kyc-kb-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bundled = JSON.parse(readFileSync(BUNDLED_KB_FILE, 'utf8')) as {
  general: Record<string, unknown>;
  steps: Record<string, Record<string, unknown>>;
};

function kbFile(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('loadKnowledgeBase', () => {
  it('loads the bundled file when KYC_KB_FILE is unset', () => {
    const kb = loadKnowledgeBase(undefined);
    expect(kb.general.journey).toHaveLength(12);
    expect(kb.steps.pan_details?.title).toBe('PAN details');
  });

  it('ships the bundled file in the build: it sits beside its loader and is part of the emitted program', () => {
    const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
    expect(relative(root, BUNDLED_KB_FILE)).toBe(join('src', 'integrations', 'kyc-kb.json'));
    // `npm start` runs `tsc -p tsconfig.build.json`, which copies the JSON files it includes to dist, beside the loader.
    const host = {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic: ts.Diagnostic) => expect.fail(String(diagnostic.messageText)),
    };
    const build = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.build.json'), {}, host);
    expect(build?.fileNames).toContain(BUNDLED_KB_FILE);
    expect(build?.fileNames).toContain(join(root, 'src', 'integrations', 'knowledge-base.ts'));
  });

  it('loads KYC_KB_FILE instead, with defaults for the optional parts', () => {
    const path = kbFile('custom.json', {
      version: 'tenant-7',
      general: { ...bundled.general, journey: ['welcome'], common_failures: undefined },
      steps: { welcome: { title: 'Welcome', purpose: 'The user starts the journey.' } },
    });
    const kb = loadKnowledgeBase(path);
    expect(kb.version).toBe('tenant-7');
    expect(kb.steps.welcome).toEqual({
      title: 'Welcome',
      purpose: 'The user starts the journey.',
      guidance: [],
      failures: {},
      never_ask_for: [],
    });
    expect(kb.general.common_failures).toEqual({});
  });

  const withStep = (step: Record<string, unknown>) => ({
    version: 'v',
    general: bundled.general,
    steps: { ...bundled.steps, pan_details: { ...bundled.steps.pan_details, ...step } },
  });

  it.each([
    ['a missing file', () => join(dir, 'nope.json'), /cannot read the file \(ENOENT\)/],
    ['a directory', () => dir, /cannot read the file \(EISDIR\)/],
    ['text that is not JSON', () => kbFile('bad.json', '{"version": '), /not valid JSON/],
    ['a file over 1 MiB', () => kbFile('big.json', ' '.repeat(1_048_577)), /file is larger than 1048576 bytes/],
    ['a JSON array', () => kbFile('array.json', []), /\(root\): /],
    [
      'a misspelt field',
      () => kbFile('typo.json', withStep({ recovry: 'x' })),
      /steps\.pan_details: Unrecognized key: "recovry"/,
    ],
    [
      'an empty purpose',
      () => kbFile('empty.json', withStep({ purpose: '  ' })),
      /steps\.pan_details\.purpose: must not be empty/,
    ],
    [
      'a failure without recovery',
      () => kbFile('norecovery.json', withStep({ failures: { pan_invalid: { meaning: 'x' } } })),
      /steps\.pan_details\.failures\.pan_invalid\.recovery: is required/,
    ],
    [
      'an upper-case step id',
      () =>
        kbFile('upper.json', {
          version: 'v',
          general: { ...bundled.general, journey: ['PAN'] },
          steps: { PAN: bundled.steps.pan_details },
        }),
      /steps\.PAN: keys must be 1-64 characters of a-z, 0-9 and _/,
    ],
    [
      'a journey naming a step without a section',
      () =>
        kbFile('journey.json', {
          version: 'v',
          general: { ...bundled.general, journey: ['pan_details', 'video_kyc'] },
          steps: { pan_details: bundled.steps.pan_details },
        }),
      /general\.journey\.1: names step video_kyc, which has no section in steps/,
    ],
  ])('refuses %s, naming KYC_KB_FILE and the problem', (_name, file, problem) => {
    const path = file();
    expect(() => loadKnowledgeBase(path)).toThrow(ConfigError);
    expect(() => loadKnowledgeBase(path)).toThrow(
      new RegExp(`^invalid configuration: KYC_KB_FILE ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `),
    );
    expect(() => loadKnowledgeBase(path)).toThrow(problem);
  });
});
