import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReloadOutcome, SdkConfigSource } from '../../src/integrations/sdk-config-source.js';

/** An SDK_CONFIG_FILE in a fresh directory of its own, so that watching it sees nothing else. */
export function sdkConfigFile(content: unknown) {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-config-'));
  const path = join(dir, 'sdk-config.json');
  const write = (next: unknown) => writeFileSync(path, typeof next === 'string' ? next : JSON.stringify(next));
  write(content);
  return { path, write, remove: () => rmSync(dir, { recursive: true, force: true }) };
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
