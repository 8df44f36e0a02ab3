import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  SdkConfigFileError,
  openSdkConfigSource,
  parseSdkConfigOverrides,
} from '../../src/integrations/sdk-config-source.js';
import { createLogger } from '../../src/logger.js';
import { LogCapture } from '../support/harness.js';
import { nextReload, sdkConfigFile } from '../support/sdk-config-file.js';

function open(content: unknown) {
  const file = sdkConfigFile(content);
  const logs = new LogCapture();
  const source = openSdkConfigSource({ file: file.path, logger: createLogger('info', logs) });
  onTestFinished(() => source.close());
  return { file, logs, source };
}

describe('parseSdkConfigOverrides refuses a bad file, naming the problem', () => {
  it.each<[string, string, RegExp]>([
    ['wrong JSON', '{"*": {', /^not valid JSON/],
    ['not an object', '[1, 2]', /^the file: must be a JSON object mapping "\*" or a client id to overrides/],
    ['unknown section', '{"*": {"limits": {}}}', /^"\*": Unrecognized key: "limits"/],
    [
      'unknown feature',
      '{"acme": {"features": {"allow_multiple_prompts": true}}}',
      /^"acme"\.features: Unrecognized key: "allow_multiple_prompts"/,
    ],
    [
      'unknown threshold',
      '{"*": {"thresholds": {"min_trigger_interval": 5}}}',
      /^"\*"\.thresholds: Unrecognized key: "min_trigger_interval"/,
    ],
    [
      'a string for a number',
      '{"*": {"thresholds": {"high_time_spent_seconds": "30"}}}',
      /^"\*"\.thresholds\.high_time_spent_seconds: must be a number/,
    ],
    [
      'a number for a boolean',
      '{"*": {"features": {"suppress_high_time_spent_trigger": 1}}}',
      /^"\*"\.features\.suppress_high_time_spent_trigger: must be a boolean/,
    ],
    [
      'a negative number',
      '{"acme": {"thresholds": {"min_trigger_interval_seconds": -1}}}',
      /^"acme"\.thresholds\.min_trigger_interval_seconds: must not be negative/,
    ],
    [
      'an interval no timer can wait',
      '{"*": {"thresholds": {"min_trigger_interval_seconds": 1e12}}}',
      /min_trigger_interval_seconds: must be at most 2147483/,
    ],
    ['a tenant that is not an object', '{"acme": true}', /^"acme": /],
  ])('%s', (_name, text, problem) => {
    expect(() => parseSdkConfigOverrides(text)).toThrow(SdkConfigFileError);
    expect(() => parseSdkConfigOverrides(text)).toThrow(problem);
  });

  it('accepts partial overrides and an empty file object', () => {
    expect(parseSdkConfigOverrides('{}')).toEqual({});
    expect(parseSdkConfigOverrides('{"acme": {"thresholds": {"high_time_spent_seconds": 12.5}}}')).toEqual({
      acme: { thresholds: { high_time_spent_seconds: 12.5 } },
    });
  });
});

describe('openSdkConfigSource', () => {
  it('refuses to open a bad or missing file, naming the variable, the file and the problem', () => {
    const logger = createLogger('silent');
    const bad = sdkConfigFile('{"*": {"thresholds": {"high_time_spent_seconds": -5}}}');
    expect(() => openSdkConfigSource({ file: bad.path, logger })).toThrow(
      `invalid SDK_CONFIG_FILE ${bad.path}: "*".thresholds.high_time_spent_seconds: must not be negative`,
    );
    expect(() => openSdkConfigSource({ file: `${bad.path}.missing`, logger })).toThrow(
      /^invalid SDK_CONFIG_FILE .*\.missing: cannot be read \(ENOENT\)$/,
    );
  });

  it('serves the defaults when no file is configured', () => {
    const source = openSdkConfigSource({ file: undefined, logger: createLogger('silent') });
    expect(source.resolve('acme').config.thresholds.min_trigger_interval_seconds).toBe(60);
    expect(source.overrides()).toEqual({});
    source.close();
  });

  it('reloads when the file changes', async () => {
    const { file, logs, source } = open({ acme: { thresholds: { high_time_spent_seconds: 30 } } });
    const before = source.resolve('acme');
    expect(before.config.thresholds.high_time_spent_seconds).toBe(30);
    const reloaded = nextReload(source);
    file.write({ acme: { thresholds: { high_time_spent_seconds: 40 } } });
    expect(await reloaded).toEqual({ ok: true });
    const after = source.resolve('acme');
    expect(after.config.thresholds.high_time_spent_seconds).toBe(40);
    expect(after.version).not.toBe(before.version);
    expect(logs.parsed().find((line) => line.msg === 'sdk config reloaded')).toMatchObject({
      level: 30,
      tenants: ['acme'],
    });
  });

  it('keeps the last good config when a reload is bad, logs why at warn, and recovers on the next good one', async () => {
    const { file, logs, source } = open({ '*': { thresholds: { min_trigger_interval_seconds: 30 } } });
    const good = source.resolve(undefined);

    for (const bad of ['{"*": {"thresholds": {"min_trigger_interval_seconds": "soon"}}}', '{"*": ']) {
      const failed = nextReload(source);
      file.write(bad);
      expect(await failed).toMatchObject({ ok: false });
      expect(source.resolve(undefined)).toEqual(good);
    }
    const warnings = logs
      .parsed()
      .filter((line) => line.msg === 'sdk config reload failed; keeping the last good config');
    expect(warnings.map((line) => line.level)).toEqual([40, 40]);
    expect(warnings[0]!.problem).toBe('"*".thresholds.min_trigger_interval_seconds: must be a number');
    expect(warnings[1]!.problem).toMatch(/^not valid JSON/);

    const recovered = nextReload(source);
    file.write({ '*': { thresholds: { min_trigger_interval_seconds: 15 } } });
    expect(await recovered).toEqual({ ok: true });
    expect(source.resolve(undefined).config.thresholds.min_trigger_interval_seconds).toBe(15);
  });

  it('reloads only on a different content: rewriting the same file or touching a neighbour is not a reload', async () => {
    const { file, logs, source } = open({ acme: { thresholds: { high_time_spent_seconds: 30 } } });
    const reloaded = nextReload(source);
    file.write({ acme: { thresholds: { high_time_spent_seconds: 30 } } });
    writeFileSync(join(file.path, '..', 'neighbour.txt'), 'x');
    file.write({ acme: { thresholds: { high_time_spent_seconds: 35 } } });
    expect(await reloaded).toEqual({ ok: true });
    expect(source.resolve('acme').config.thresholds.high_time_spent_seconds).toBe(35);
    expect(logs.parsed().filter((line) => line.msg === 'sdk config reloaded')).toHaveLength(1);
  });

  it('follows a Kubernetes ConfigMap update, where the ..data symlink is swapped and the file itself never changes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdk-configmap-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const publish = (version: string, content: unknown) => {
      mkdirSync(join(dir, version));
      writeFileSync(join(dir, version, 'sdk.json'), JSON.stringify(content));
      symlinkSync(version, join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    };
    publish('..v1', { '*': { thresholds: { min_trigger_interval_seconds: 30 } } });
    symlinkSync(join('..data', 'sdk.json'), join(dir, 'sdk.json'));
    const source = openSdkConfigSource({ file: join(dir, 'sdk.json'), logger: createLogger('silent') });
    onTestFinished(() => source.close());
    expect(source.resolve(undefined).config.thresholds.min_trigger_interval_seconds).toBe(30);

    const reloaded = nextReload(source);
    publish('..v2', { '*': { thresholds: { min_trigger_interval_seconds: 45 } } });
    expect(await reloaded).toEqual({ ok: true });
    expect(source.resolve(undefined).config.thresholds.min_trigger_interval_seconds).toBe(45);
  });

  it('keeps the last good config when the file is removed', async () => {
    const { file, source } = open({ '*': { thresholds: { min_trigger_interval_seconds: 30 } } });
    const failed = nextReload(source);
    file.remove();
    expect(await failed).toEqual({ ok: false, problem: 'cannot be read (ENOENT)' });
    expect(source.resolve(undefined).config.thresholds.min_trigger_interval_seconds).toBe(30);
  });
});
