import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { apiDocument } from '../../src/http/api-document.js';

describe('the OpenAPI document under Redocly recommended rules', () => {
  it('has no error and no warning, over every route', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(apiDocument()), absoluteRef: 'openapi.json', config });
    const readable = problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer ?? ''}`);
    expect(readable).toEqual([]);
  });
});
