import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { apiDocument } from '../../src/http/api-document.js';

/**
 * The finding accepted, because the fix would make the document say something false: the
 * WebSocket control plane answers an upgrade with 101, never with a 2xx.
 */
const ACCEPTED = [
  'warn operation-2xx-response: Operation must have at least one `2XX` response. at #/paths/~1v1~1events~1ws/get/responses',
];

describe('the OpenAPI document under Redocly recommended rules', () => {
  it('has no error and no warning, over every route, but the accepted one', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({
      source: JSON.stringify(apiDocument()),
      absoluteRef: 'openapi.json',
      config,
    });
    const readable = problems.map(
      (problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer ?? ''}`,
    );
    expect(readable).toEqual(ACCEPTED);
  });
});

/** Swagger UI sets the summary on the operation's line beside its path: past this it wraps. */
const MAX_SUMMARY_CHARS = 80;

describe('the OpenAPI summaries', () => {
  const operations = Object.entries(
    apiDocument().paths as Record<
      string,
      Record<string, { operationId: string; summary: string; description?: string }>
    >,
  ).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ at: `${method.toUpperCase()} ${path}`, ...operation })),
  );

  it('are short phrases, one line in the reference, with the details in the description', () => {
    expect(operations.length).toBeGreaterThan(20);
    const long = operations
      .filter(({ summary }) => summary.length > MAX_SUMMARY_CHARS)
      .map(({ at, summary }) => `${at}: ${summary.length} chars`);
    expect(long).toEqual([]);
    // A phrase, not sentences: no full stop at its end or between two sentences.
    const sentences = operations
      .filter(({ summary }) => /\.$|\.\s/.test(summary))
      .map(({ at, summary }) => `${at}: ${summary}`);
    expect(sentences).toEqual([]);
    // The summary does not lose what a longer text said: the description says it.
    for (const { at, summary, description } of operations)
      if (description !== undefined) expect(description.length, at).toBeGreaterThan(summary.length);
  });
});
