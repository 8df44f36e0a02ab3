import type { FSWatcher } from 'node:fs';
import { readFileSync, watch } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { SdkConfig, SdkConfigOverrides } from '../domain/sdk-config.js';
import { NO_OVERRIDES, SdkConfigOverridesSchema, mergeSdkConfig, overrideKeyFor, sdkConfigVersion } from '../domain/sdk-config.js';

export interface VersionedSdkConfig {
  config: SdkConfig;
  version: string;
}

export type ReloadOutcome = { ok: true } | { ok: false; problem: string };

/** Defaults plus the overrides of `SDK_CONFIG_FILE` (decisions 6), kept current while the file changes. */
export interface SdkConfigSource {
  /** The override table in force. */
  overrides(): SdkConfigOverrides;
  /** The merged config of a tenant (or of every tenant, for no client id) and its version. */
  resolve(clientId: string | null | undefined): VersionedSdkConfig;
  /** Called after every reload attempt, good or bad; returns the unsubscribe function. */
  onReload(listener: (outcome: ReloadOutcome) => void): () => void;
  close(): void;
}

/** A bad override file at start-up: the message names the file and the problem. */
export class SdkConfigFileError extends Error {
  override name = 'SdkConfigFileError';
}

// Editors and deploy tools write a file in several steps; one reload after they settle is enough.
const RELOAD_DEBOUNCE_MS = 100;

function describeProblems(error: z.ZodError): string {
  const problems = error.issues.slice(0, 5).map((issue) => {
    const [tenant, ...rest] = issue.path.map(String);
    const where = tenant === undefined ? 'the file' : [JSON.stringify(tenant), ...rest].join('.');
    return `${where}: ${issue.message}`;
  });
  const more = error.issues.length > 5 ? ` (and ${error.issues.length - 5} more)` : '';
  return problems.join('; ') + more;
}

/** The override table of a file's text, or an error saying what is wrong with it. */
export function parseSdkConfigOverrides(text: string): SdkConfigOverrides {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new SdkConfigFileError(`not valid JSON (${(error as Error).message})`);
  }
  const parsed = SdkConfigOverridesSchema.safeParse(json);
  if (!parsed.success) throw new SdkConfigFileError(describeProblems(parsed.error));
  return parsed.data;
}

/** Read synchronously: the file is small, and start-up needs it before serving. */
function readOverrides(file: string): SdkConfigOverrides {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new SdkConfigFileError(`cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  return parseSdkConfigOverrides(text);
}

function loadAtStart(file: string): SdkConfigOverrides {
  try {
    return readOverrides(file);
  } catch (error) {
    throw new SdkConfigFileError(`invalid SDK_CONFIG_FILE ${file}: ${(error as Error).message}`);
  }
}

/**
 * Loads and validates the override file now (throwing SdkConfigFileError when it is bad), then
 * watches its directory, so that a file replaced by rename is seen too. A bad reload keeps the
 * last good table and logs why.
 */
export function openSdkConfigSource(options: { file: string | undefined; logger: Logger; watch?: boolean }): SdkConfigSource {
  const { logger } = options;
  const file = options.file === undefined ? undefined : resolve(options.file);
  let overrides = file === undefined ? NO_OVERRIDES : loadAtStart(file);
  const resolved = new Map<string, VersionedSdkConfig>();
  const listeners = new Set<(outcome: ReloadOutcome) => void>();
  let watcher: FSWatcher | undefined;
  let debounce: NodeJS.Timeout | undefined;

  const announce = (outcome: ReloadOutcome) => {
    for (const listener of listeners) {
      // Runs in a timer callback, where a throw would take the process down.
      try {
        listener(outcome);
      } catch (error) {
        logger.error({ err: error }, 'sdk config reload listener failed');
      }
    }
  };

  const reload = (path: string) => {
    let outcome: ReloadOutcome;
    try {
      overrides = readOverrides(path);
      resolved.clear();
      logger.info({ file: path, tenants: Object.keys(overrides) }, 'sdk config reloaded');
      outcome = { ok: true };
    } catch (error) {
      const problem = error instanceof SdkConfigFileError ? error.message : String(error);
      logger.warn({ file: path, problem }, 'sdk config reload failed; keeping the last good config');
      outcome = { ok: false, problem };
    }
    announce(outcome);
  };

  if (file !== undefined && options.watch !== false) {
    watcher = watch(dirname(file), { persistent: false }, (_event, changed) => {
      if (changed !== null && changed !== basename(file)) return;
      clearTimeout(debounce);
      debounce = setTimeout(() => reload(file), RELOAD_DEBOUNCE_MS);
      debounce.unref();
    });
    watcher.on('error', (error) => logger.warn({ err: error, file }, 'sdk config file watch failed; the config will not reload'));
  }

  return {
    overrides: () => overrides,
    resolve(clientId) {
      const key = overrideKeyFor(overrides, clientId);
      let entry = resolved.get(key);
      if (!entry) {
        const config = mergeSdkConfig(overrides, clientId);
        entry = { config, version: sdkConfigVersion(config) };
        resolved.set(key, entry);
      }
      return entry;
    },
    onReload(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      clearTimeout(debounce);
      watcher?.close();
      listeners.clear();
    },
  };
}
