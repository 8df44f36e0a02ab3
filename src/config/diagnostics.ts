/** What the service tells about itself while it runs: how much it logs, and where its session machines are inspected from. */
import { z } from 'zod';
import type { InspectSetting } from './inspection-setting.js';
import { parseInspectSetting } from './inspection-setting.js';

export const diagnosticsEnv = z.object({
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Live inspection of session machines (Stately inspector).
  INSPECT: z
    .string()
    .transform((raw, ctx) => {
      const parsed = parseInspectSetting(raw);
      if (typeof parsed === 'string') {
        ctx.addIssue({ code: 'custom', message: parsed });
        return z.NEVER;
      }
      return parsed;
    })
    .optional(),
});

export interface DiagnosticsSection {
  logLevel: string;
  /** Where session machines are inspected from; undefined = off (no inspector exists at all). */
  inspect: InspectSetting | undefined;
}

export function diagnosticsSection(e: z.infer<typeof diagnosticsEnv>): DiagnosticsSection {
  return { logLevel: e.LOG_LEVEL, inspect: e.INSPECT ?? undefined };
}
