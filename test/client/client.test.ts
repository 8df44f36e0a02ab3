import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { CLIENT_SCHEMA_FILE, clientSchemaSource } from '../../scripts/client-source.js';
import { createServiceClient } from '../../src/client/index.js';
import { createHarness, serve } from '../support/harness.js';

// Runs on one store: the generated client against the HTTP API, which answers the same over either; vitest.config.ts.

describe('the generated client', () => {
  it('is current with the document (npm run generate:client)', async () => {
    expect(await readFile(CLIENT_SCHEMA_FILE, 'utf8')).toBe(await clientSchemaSource());
  });

  it('is exported from the package as ./client, built from src/client', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
    };
    expect(pkg.exports['./client']).toEqual({
      types: './dist/src/client/index.d.ts',
      default: './dist/src/client/index.js',
    });
  });

  it('turns a wrong field into a compile error in a TypeScript project', () => {
    const file = fileURLToPath(new URL('./wrong-fields.typecheck.ts', import.meta.url));
    const config = ts.getParsedCommandLineOfConfigFile(
      fileURLToPath(new URL('../../tsconfig.json', import.meta.url)),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
    );
    const options = { ...config!.options, noEmit: true, incremental: false };
    let program: ts.Program | undefined;
    // The second compile reuses the first one's unchanged files (the client, openapi-fetch, lib).
    const diagnosticsOf = (host: ts.CompilerHost) => {
      program = ts.createProgram({ rootNames: [file], options, host, ...(program ? { oldProgram: program } : {}) });
      return ts
        .getPreEmitDiagnostics(program, program.getSourceFile(file))
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    };

    // As written, every expected error is there (an unused @ts-expect-error is itself an error).
    expect(diagnosticsOf(ts.createCompilerHost(options))).toEqual([]);

    // Without the directives, each marked line is reported.
    const host = ts.createCompilerHost(options);
    const readFileOf = host.readFile.bind(host);
    host.readFile = (name) => {
      const text = readFileOf(name);
      return name === file ? text?.replaceAll('// @ts-expect-error', '// expected:') : text;
    };
    const marked = (ts.sys.readFile(file) ?? '').split('// @ts-expect-error').length - 1;
    expect(marked).toBeGreaterThanOrEqual(8);
    expect(diagnosticsOf(host)).toHaveLength(marked);
  }, 60_000);

  it('talks to the real service, with the key', async () => {
    const h = createHarness({ env: { API_KEY: 'client-key' } });
    const server = await serve(h);
    try {
      const client = createServiceClient({ baseUrl: `${server.url}/`, apiKey: 'client-key' });
      const ingested = await client.POST('/v1/events', {
        body: { session_id: 's1', user_id: 'u1', event: 'screen_state', screen: 'pan_details' },
      });
      expect(ingested.response.status).toBe(200);
      expect(ingested.data?.status).toBe('ok');
      const session = await client.GET('/api/sessions/{session_id}', { params: { path: { session_id: 's1' } } });
      expect(session.data?.session_id).toBe('s1');
      const activity = await client.GET('/api/activity', { params: { query: { limit: 1 } } });
      expect(activity.data?.items).toHaveLength(1);

      const keyless = createServiceClient({ baseUrl: server.url });
      const refused = await keyless.GET('/api/features');
      expect(refused.response.status).toBe(401);
      expect(refused.error).toEqual({ detail: 'missing X-API-Key header' });
    } finally {
      await server.close(0);
    }
  });
});
