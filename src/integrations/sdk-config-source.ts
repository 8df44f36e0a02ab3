import type { FSWatcher } from 'node:fs';
import { readFileSync, watch } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { SdkConfig, SdkConfigOverrides } from '../domain/sdk-config.js';
import {
  NO_OVERRIDES,
  SdkConfigOverridesSchema,
  mergeSdkConfig,
  overrideKeyFor,
  sdkConfigVersion,
} from '../domain/sdk-config.js';

export interface VersionedSdkConfig {
  config: SdkConfig;
  version: string;
}

export type ReloadOutcome = { ok: true } | { ok: false; problem: string };

/** Defaults plus the overrides of `SDK_CONFIG_FILE` (docs/decisions/0007-sdk-config-overrides.md), kept current while the file changes. */
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

/** What reading the file gave: its text, or why it could not be read. */
type FileRead = { text: string } | { unreadable: string };

/** Read synchronously: the file is small, and start-up needs it before serving. */
function readFile(file: string): FileRead {
  try {
    return { text: readFileSync(file, 'utf8') };
  } catch (error) {
    return { unreadable: `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
}

function overridesOf(read: FileRead): SdkConfigOverrides {
  if ('unreadable' in read) throw new SdkConfigFileError(read.unreadable);
  return parseSdkConfigOverrides(read.text);
}

/** Equal for two reads that would give the same outcome, so that a repeat is not reloaded or logged again. */
const fingerprint = (read: FileRead): string =>
  'text' in read ? `text:${read.text}` : `unreadable:${read.unreadable}`;

/**
 * Loads and validates the override file now (throwing SdkConfigFileError when it is bad), then
 * watches its directory: a file replaced by rename, or a Kubernetes ConfigMap whose `..data`
 * symlink is swapped, changes the directory and not the file's own entry. Any change there
 * re-reads the file; only a different content counts as a reload. A bad reload keeps the last
 * good table and logs why.
 */
export function openSdkConfigSource(options: {
  file: string | undefined;
  logger: Logger;
  watch?: boolean;
}): SdkConfigSource {
  const { logger } = options;
  const file = options.file === undefined ? undefined : resolve(options.file);
  const first = file === undefined ? undefined : readFile(file);
  let overrides = NO_OVERRIDES;
  if (first !== undefined) {
    try {
      overrides = overridesOf(first);
    } catch (error) {
      throw new SdkConfigFileError(`invalid SDK_CONFIG_FILE ${file}: ${(error as Error).message}`);
    }
  }
  let lastRead = first === undefined ? undefined : fingerprint(first);
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
    const read = readFile(path);
    if (fingerprint(read) === lastRead) return;
    lastRead = fingerprint(read);
    let outcome: ReloadOutcome;
    try {
      overrides = overridesOf(read);
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
    watcher = watch(dirname(file), { persistent: false }, () => {
      clearTimeout(debounce);
      debounce = setTimeout(() => reload(file), RELOAD_DEBOUNCE_MS);
      debounce.unref();
    });
    watcher.on('error', (error) =>
      logger.warn({ err: error, file }, 'sdk config file watch failed; the config will not reload'),
    );
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
