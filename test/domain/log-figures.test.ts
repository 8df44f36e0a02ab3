import { describe, expect, it } from 'vitest';
import {
  requestBodyBudgetBytes,
  streamBufferBudgetBytes,
  unreadAnswerBudgetBytes,
} from '../../src/actor-system/memory-budget.js';
import { loadConfig } from '../../src/config.js';
import { kib, mib } from '../../src/domain/log-figures.js';
import { createLogger } from '../../src/logger.js';
import { LogCapture } from '../support/harness.js';

// Runs on one store: it reads the log's masking of figures, which no store touches; vitest.config.ts.

describe('byte figures in log lines', () => {
  it('reach the log as figures where the same budgets in bytes are masked as identity values could be', () => {
    const logs = new LogCapture();
    const logger = createLogger('info', logs, loadConfig({}).privacy.piiRules);
    // The shares of the default budget (1,024 MiB) that the cut lines report.
    const budgets = [requestBodyBudgetBytes(1024), streamBufferBudgetBytes(1024), unreadAnswerBudgetBytes(1024)];
    for (const bytes of budgets) logger.warn({ in_bytes: bytes, in_kib: kib(bytes), in_mib: mib(bytes) }, 'figures');
    for (const [i, line] of logs.parsed().entries()) {
      expect(line.in_bytes).toMatch(/^\*+$/);
      expect(line.in_kib).toBe(Math.round(budgets[i]! / 1024));
      expect(line.in_mib).toBe(51);
    }
  });
});
