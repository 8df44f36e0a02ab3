import type { z } from 'zod';
import { redactText } from '../privacy/scrub.js';

/** An error whose status and detail go to the client as they are: `{"detail": ...}`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'HttpError';
  }
}

/**
 * One line per problem, each naming the field. Built from paths and zod's messages only:
 * zod does not put input values in its messages, and nothing here adds them, so a
 * rejected raw value is never echoed back. A path is made of the client's keys, and a key can be
 * an identity value: it is masked like any client text.
 */
export function describeIssues(error: z.ZodError, where = 'body'): string {
  const problems = error.issues.slice(0, 5).map((issue) => {
    const field = issue.path.length > 0 ? redactText(issue.path.map(String).join('.')) : where;
    const missing = issue.code === 'invalid_type' && issue.message.endsWith('received undefined');
    return `${field}: ${missing ? 'is required' : issue.message}`;
  });
  const more = error.issues.length > 5 ? ` (and ${error.issues.length - 5} more)` : '';
  return problems.join('; ') + more;
}
