import type { z } from 'zod';
import { shownCut } from '../privacy/shown-cut.js';
import { HttpError, describeIssues } from './http-error.js';

/** 422 naming every offending field, or the parsed value. */
export function parseOr422<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: 'body' | 'query' | 'path' | 'header' = 'body',
): z.output<S> {
  if (where === 'body' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new HttpError(422, 'body: must be a JSON object');
  }
  if (where === 'query' && value !== null && typeof value === 'object') {
    // `?limit[]=1` reaches a route as the key `limit[]`: read as no limit at all, it would be
    // ignored without a word, and the answer would not be the one the client asked for.
    const bracketed = Object.keys(value).find((key) => key.includes('['));
    if (bracketed !== undefined)
      throw new HttpError(
        422,
        `query.${shownCut(bracketed, 64)}: brackets are not read; send each parameter as name=value`,
      );
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new HttpError(422, describeIssues(parsed.error, where));
  return parsed.data;
}
