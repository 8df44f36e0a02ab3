import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { ReloadOutcome, SdkConfigSource } from '../../src/integrations/sdk-config-source.js';
import type { HarnessOptions } from './harness.js';
import { createHarness } from './harness.js';

/**
 * An SDK_CONFIG_FILE in a fresh directory of its own, so that watching it sees nothing else.
 * Removed when the current test finishes.
 */
export function sdkConfigFile(content: unknown) {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-config-'));
  const path = join(dir, 'sdk-config.json');
  const write = (next: unknown) => writeFileSync(path, typeof next === 'string' ? next : JSON.stringify(next));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  write(content);
  onTestFinished(remove);
  return { path, write, remove };
}

/** A harness whose SDK_CONFIG_FILE holds `content`; its watcher is closed when the test finishes. */
export function harnessWithSdkConfig(content: unknown, options: HarnessOptions = {}) {
  const file = sdkConfigFile(content);
  const h = createHarness({ ...options, env: { ...options.env, SDK_CONFIG_FILE: file.path } });
  onTestFinished(() => h.sdkConfig.close());
  return { h, file };
}

/** The outcome of the source's next reload, or a rejection once `timeoutMs` passes without one. */
export function nextReload(source: SdkConfigSource, timeoutMs = 5000): Promise<ReloadOutcome> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`no reload within ${timeoutMs} ms`));
    }, timeoutMs);
    const unsubscribe = source.onReload((outcome) => {
      clearTimeout(timer);
      unsubscribe();
      resolve(outcome);
    });
  });
}
