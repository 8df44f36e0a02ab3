import type { z } from 'zod';
import { HttpError, describeIssues } from './http-error.js';

/** 422 naming every offending field, or the parsed value. */
export function parseOr422<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'path' | 'header' = 'body'): z.output<S> {
  if (where === 'body' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new HttpError(422, 'body: must be a JSON object');
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new HttpError(422, describeIssues(parsed.error, where));
  return parsed.data;
}
