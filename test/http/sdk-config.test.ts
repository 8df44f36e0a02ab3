import { describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { createHarness } from '../support/harness.js';
import { harnessWithSdkConfig, nextReload } from '../support/sdk-config-file.js';

const getConfig = (h: Harness, headers: Record<string, string> = {}) => h.http.get('/v1/sdk/config').set(headers);

const overrides = {
  '*': { thresholds: { min_trigger_interval_seconds: 90 } },
  kycis_demo: { features: { allow_multiple_assistant_prompt: true }, thresholds: { high_time_spent_seconds: 30 } },
};

describe('GET /v1/sdk/config', () => {
  it('serves the defaults with metadata, an ETag equal to the version and Cache-Control no-cache', async () => {
    const h = createHarness();
    const res = await getConfig(h, { 'X-SVC-SDK-Version': '2.4.1' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      features: {
        allow_multiple_assistant_prompt: false,
        suppress_high_time_spent_trigger: false,
        component_input_hints_masked: true,
        use_websockets_for_control_plane: true,
      },
      thresholds: {
        min_trigger_interval_seconds: 60,
        high_time_spent_seconds: 20,
        assistant_prompt_cooldown_seconds: 45,
        error_window_seconds: 120,
      },
      consent: {
        notice_version: 'default-1',
        notice: { en: expect.stringContaining('consent'), hi: expect.any(String) },
      },
      sdk_version: '1.0.0',
      client_id: null,
      defaults_version: '1.0.0',
      environment: 'production',
      source: 'merged',
      metadata: {
        source: 'merged',
        version: expect.stringMatching(/^[0-9a-f]{16}$/),
        client_id: null,
        sdk_version: '2.4.1',
      },
    });
    expect(res.headers.etag).toBe(`"${res.body.metadata.version}"`);
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  it('merges "*" and then the X-Client-ID tenant, each with its own version', async () => {
    const { h } = harnessWithSdkConfig(overrides);
    const demo = (await getConfig(h, { 'X-Client-ID': 'kycis_demo' })).body;
    const other = (await getConfig(h, { 'X-Client-ID': 'other_bank' })).body;
    const anonymous = (await getConfig(h)).body;
    expect(demo.features).toEqual({
      allow_multiple_assistant_prompt: true,
      suppress_high_time_spent_trigger: false,
      component_input_hints_masked: true,
      use_websockets_for_control_plane: true,
    });
    expect(demo.thresholds).toEqual({
      min_trigger_interval_seconds: 90,
      high_time_spent_seconds: 30,
      assistant_prompt_cooldown_seconds: 45,
      error_window_seconds: 120,
    });
    expect(demo.metadata).toMatchObject({ client_id: 'kycis_demo', sdk_version: null });
    expect(other.thresholds).toEqual({
      min_trigger_interval_seconds: 90,
      high_time_spent_seconds: 20,
      assistant_prompt_cooldown_seconds: 45,
      error_window_seconds: 120,
    });
    expect(other.metadata.client_id).toBe('other_bank');
    expect(anonymous.thresholds).toEqual(other.thresholds);
    expect(anonymous.metadata.version).toBe(other.metadata.version);
    expect(demo.metadata.version).not.toBe(other.metadata.version);
  });

  it.each([
    ['the quoted ETag', (v: string) => `"${v}"`],
    ['the bare version SDKs echo', (v: string) => v],
    ['a weak ETag', (v: string) => `W/"${v}"`],
    ['a list holding it', (v: string) => `"0000000000000000", "${v}"`],
    ['*', () => '*'],
  ])('If-None-Match with %s → 304 with no body', async (_name, header) => {
    const h = createHarness();
    const { version } = (await getConfig(h)).body.metadata;
    const res = await getConfig(h, { 'If-None-Match': header(version) });
    expect(res.status).toBe(304);
    expect(res.text ?? '').toBe('');
    expect(res.headers.etag).toBe(`"${version}"`);
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  it("If-None-Match with another version, or another tenant's, → 200 with the config", async () => {
    const { h } = harnessWithSdkConfig(overrides);
    const demoVersion = (await getConfig(h, { 'X-Client-ID': 'kycis_demo' })).body.metadata.version;
    const stale = await getConfig(h, { 'If-None-Match': '"0123456789abcdef"' });
    expect(stale.status).toBe(200);
    const otherTenant = await getConfig(h, { 'If-None-Match': `"${demoVersion}"` });
    expect(otherTenant.status).toBe(200);
    expect(otherTenant.body.metadata.version).not.toBe(demoVersion);
  });

  it('refuses an X-Client-ID that is not a plain id, an empty one included, and ignores an odd X-SVC-SDK-Version', async () => {
    const h = createHarness();
    for (const value of ['acme corp', '']) {
      const bad = await getConfig(h, { 'X-Client-ID': value });
      expect(bad.status, JSON.stringify(value)).toBe(422);
      expect(bad.body).toEqual({ detail: 'X-Client-ID: must be 1-128 characters of A-Za-z0-9._:@/+=-' });
    }
    // The header wins over the query, but a bad query beside it is still refused.
    const badQuery = await h.http.get('/v1/sdk/config?client_id=').set('X-Client-ID', 'kycis_demo');
    expect(badQuery.status).toBe(422);
    expect(badQuery.body).toEqual({ detail: 'client_id: must be 1-128 characters of A-Za-z0-9._:@/+=-' });
    expect(
      (await h.http.get('/v1/sdk/config?client_id=other_bank').set('X-Client-ID', 'kycis_demo')).body.client_id,
    ).toBe('kycis_demo');
    expect((await getConfig(h, { 'X-SVC-SDK-Version': '<script>' })).body.metadata.sdk_version).toBeNull();
  });
});

describe('GET /v1/sdk/config after the override file changes', () => {
  it('serves the reloaded config under a new version, and a cached version stops matching', async () => {
    const { h, file } = harnessWithSdkConfig(overrides);
    const before = (await getConfig(h, { 'X-Client-ID': 'kycis_demo' })).body.metadata.version;
    const reloaded = nextReload(h.sdkConfig);
    file.write({ ...overrides, kycis_demo: { thresholds: { high_time_spent_seconds: 45 } } });
    expect(await reloaded).toEqual({ ok: true });
    const res = await getConfig(h, { 'X-Client-ID': 'kycis_demo', 'If-None-Match': `"${before}"` });
    expect(res.status).toBe(200);
    expect(res.body.thresholds.high_time_spent_seconds).toBe(45);
    expect(res.body.metadata.version).not.toBe(before);
  });

  it('the trigger policy of a session follows the reloaded tenant config', async () => {
    const { h, file } = harnessWithSdkConfig({ acme: { thresholds: { high_time_spent_seconds: 100 } } });
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'identity', client_id: 'acme' });
    const evaluate = () =>
      h.http.post('/v1/assistant/trigger/evaluate').send({ session_id: 's1', signals: { time_spent: 50 } });
    expect((await evaluate()).body.reason).toBe('none');
    const reloaded = nextReload(h.sdkConfig);
    file.write({ acme: { thresholds: { high_time_spent_seconds: 40 } } });
    await reloaded;
    expect((await evaluate()).body.reason).toBe('high_time_spent');
  });

  it('keeps serving the last good config after a bad reload, and logs why', async () => {
    const { h, file } = harnessWithSdkConfig(overrides);
    const good = (await getConfig(h, { 'X-Client-ID': 'kycis_demo' })).body;
    const failed = nextReload(h.sdkConfig);
    file.write({ '*': { thresholds: { min_trigger_interval_seconds: -10 } } });
    expect(await failed).toMatchObject({ ok: false });
    expect((await getConfig(h, { 'X-Client-ID': 'kycis_demo' })).body).toEqual(good);
    const warning = h.logs
      .parsed()
      .find((line) => line.msg === 'sdk config reload failed; keeping the last good config');
    expect(warning).toMatchObject({
      level: 40,
      problem: '"*".thresholds.min_trigger_interval_seconds: must not be negative',
    });
  });
});

describe('OpenAPI', () => {
  it('documents the SDK config and trigger routes, the 304 included', async () => {
    const h = createHarness();
    const doc = (await h.http.get('/openapi.json')).body;
    expect(Object.keys(doc.paths['/v1/sdk/config'].get.responses)).toEqual([
      '200',
      '304',
      '401',
      '403',
      '408',
      '422',
      '429',
      '503',
    ]);
    // The tenant by query too, as the route reads it.
    expect(doc.paths['/v1/sdk/config'].get.parameters).toContainEqual(
      expect.objectContaining({ name: 'client_id', in: 'query', required: false }),
    );
    expect(doc.paths['/v1/assistant/trigger/evaluate'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/TriggerEvaluateIn',
    });
    expect(doc.components.schemas.TriggerEvaluateIn.required).toEqual(['signals']);
    expect(doc.components.schemas.TriggerSignals.properties.time_spent.anyOf[0]).toEqual({
      type: 'number',
      minimum: 0,
      maximum: 31_536_000,
    });
  });
});
