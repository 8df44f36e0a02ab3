import type { DestinationStream, Logger, LoggerOptions } from 'pino';
import { pino } from 'pino';
import { redactValue } from './domain/event-redaction.js';
import type { PiiRules } from './domain/pii/rules.js';
import { DEFAULT_PII_RULES } from './domain/pii/rules.js';

/**
 * Secrets never reach a log line: keys and tokens by path here; identity values because every
 * log object goes through the same detectors and key rules as events (domain/pii/), whatever field
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

export function createLogger(level: string, destination?: DestinationStream, rules: PiiRules = DEFAULT_PII_RULES): Logger {
  const options: LoggerOptions = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // Runs only for lines that are written, so a disabled level costs nothing.
    formatters: { log: (object) => redactValue(object, rules) },
  };
  return destination ? pino(options, destination) : pino(options);
}
