import type { DestinationStream, Logger, LoggerOptions } from 'pino';
import { once } from 'node:events';
import { pino } from 'pino';
import { redactValue } from './domain/event-redaction.js';
import type { PiiRules } from './privacy/rules.js';
import { DEFAULT_PII_RULES } from './privacy/rules.js';

/**
 * Secrets never reach a log line: keys and tokens by path here; identity values because every
 * log object goes through the same rule and key rules as events (src/privacy/), whatever field
 * they hide in, and no body is ever logged.
 */
export const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.token',
  '*.apiKey',
  '*.apiSecret',
  'hint',
  '*.hint',
];

export function createLogger(
  level: string,
  destination?: DestinationStream,
  rules: PiiRules = DEFAULT_PII_RULES,
): Logger {
  const options: LoggerOptions = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // Runs only for lines that are written, so a disabled level costs nothing.
    formatters: { log: (object) => redactValue(object, rules) },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * The most log the process holds for stdout while its reader is slow or stopped (a paused pager, a
 * stalled collector). Each request writes a line, so without a bound a client's requests grew the
 * heap by about 300 B each, past the memory budget (docs/reference/limits.md, Logs).
 */
export const LOG_BUFFER_BYTES = 4 * 1024 * 1024;

/** The service's log on stdout, and how to let its last lines out before the process exits. */
export interface StdoutLog {
  destination: DestinationStream;
  /** Resolves once every line is written, or once stdout's reader is gone. */
  settled(): Promise<void>;
  /** Called with how many lines were dropped, once stdout has taken everything held since. */
  onDropped(listener: (lines: number) => void): void;
}

/**
 * stdout, written off the event loop. A reader that went away (`npm start | filter` and Ctrl-C:
 * EPIPE) ends logging, not the process: later lines are dropped rather than buffered without end.
 * Owning the stream lets shutdown wait for a write in flight; exiting with one pending left pino's
 * own exit hook retrying the broken pipe forever, so a SIGTERM never ended the process.
 */
export function stdoutLog(): StdoutLog {
  const stream = pino.destination({ dest: 1, sync: false, maxLength: LOG_BUFFER_BYTES });
  let dropped = 0;
  let droppedListener: ((lines: number) => void) | undefined;
  // A line past the bound is dropped whole; the count is told once stdout has caught up.
  stream.on('drop', () => (dropped += 1));
  stream.on('drain', () => {
    if (dropped === 0 || droppedListener === undefined) return;
    const lines = dropped;
    dropped = 0;
    droppedListener(lines);
  });
  let gone = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    gone = true;
  });
  // A line that comes once the stream is ending (a connection's close noted late) is dropped:
  // written to the ended stream, it threw, and the process exited 1 in place of 0.
  let ending: Promise<void> | undefined;
  const destination: DestinationStream = {
    write: (line: string) => (gone || ending ? undefined : stream.write(line)),
  };
  const end = async () => {
    if (gone) return;
    stream.end();
    // once() rejects on 'error': a write that fails while ending settles it as well.
    await once(stream, 'close').catch(() => undefined);
  };
  const settled = () => (ending ??= end());
  return { destination, settled, onDropped: (listener) => (droppedListener = listener) };
}
