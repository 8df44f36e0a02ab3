import type { DestinationStream, Logger } from 'pino';
import { pino } from 'pino';

/**
 * Secrets never reach a log line: keys and tokens by path here; raw input values because
 * no body is ever logged and hints are masked before a session stores them.
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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
