import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AnyStateNode } from 'xstate';
import { ACTIVITY_KINDS } from '../../src/domain/activity.js';
import { screenKey } from '../../src/domain/screen-schema.js';
import { sessionMachine } from '../../src/machines/session/machine.js';
import { createHarness, serve } from '../support/harness.js';
import { SseTestClient } from '../support/sse-client.js';
import type { LiveKitStandIn } from '../support/livekit-stand-in.js';
import { startLiveKitStandIn } from '../support/livekit-stand-in.js';

interface ChartNode {
  id: string;
  type: string;
  initial: string | null;
  invokes: string[];
  transitions: { on: string; targets: string[]; guard: string | null }[];
  states: ChartNode[];
}

const ids = (node: ChartNode): string[] => [node.id, ...node.states.flatMap(ids)];
const find = (node: ChartNode, id: string): ChartNode | undefined =>
  node.id === id ? node : node.states.map((child) => find(child, id)).find(Boolean);

describe('/console', () => {
  it('serves the page and its assets without a key, from the service itself, under a policy allowing nothing else', async () => {
    const h = createHarness({ env: { API_KEY: 'k' } });
    const page = await h.http.get('/console').expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('<script type="module" src="/console/app.js">');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    // Every script and stylesheet the page names is served here, and none is absolute.
    expect(page.text).not.toMatch(/(src|href)="https?:/);
    for (const asset of [
      '/console/app.js',
      '/console/console.css',
      '/console/stream.js',
      '/console/views/session.js',
    ]) {
      expect((await h.http.get(asset)).status, asset).toBe(200);
    }
    const parser = await h.http.get('/console/vendor/eventsource-parser/index.js').expect(200);
    expect(parser.headers['content-type']).toMatch(/javascript/);
    expect(parser.text).toContain('createParser');
    expect((await h.http.get('/console/vendor/eventsource-parser/parse.js')).status).toBe(200);
  });

  it('serves the LiveKit client from its installed package, and lets the page reach the configured media server and nothing else', async () => {
    const withMedia = createHarness({
      env: {
        API_KEY: 'k',
        LIVEKIT_URL: 'wss://media.example.test:7443',
        LIVEKIT_API_KEY: 'devkey',
        LIVEKIT_API_SECRET: 'secret',
      },
    });
    const client = await withMedia.http.get('/console/vendor/livekit-client/livekit-client.esm.mjs').expect(200);
    expect(client.headers['content-type']).toMatch(/javascript/);
    // Self-contained: a bare import would fail in the browser, which has no node_modules to look in.
    expect(client.text).not.toMatch(/^\s*import\s[^;]*from\s*['"][^./]/m);
    expect(client.text).toContain('registerTextStreamHandler');
    const policy = (await withMedia.http.get('/console').expect(200)).headers['content-security-policy'] as string;
    expect(policy).toContain("connect-src 'self' wss://media.example.test:7443 https://media.example.test:7443;");
    expect(policy).toContain("script-src 'self';");

    const plain = createHarness({
      env: {
        API_KEY: 'k',
        LIVEKIT_URL: 'http://127.0.0.1:7880',
        LIVEKIT_API_KEY: 'devkey',
        LIVEKIT_API_SECRET: 'secret',
      },
    });
    expect((await plain.http.get('/console').expect(200)).headers['content-security-policy']).toContain(
      "connect-src 'self' ws://127.0.0.1:7880 http://127.0.0.1:7880;",
    );
    const none = createHarness({ env: { API_KEY: 'k' } });
    expect((await none.http.get('/console').expect(200)).headers['content-security-policy']).toContain(
      "connect-src 'self';",
    );
  });

  it('ships scripts that parse, so a syntax slip fails here and not only in a browser', () => {
    const folder = new URL('../../src/console/', import.meta.url);
    const scripts = readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.js'));
    expect(scripts.length).toBeGreaterThanOrEqual(9);
    for (const script of scripts) {
      expect(
        () => execFileSync(process.execPath, ['--check', new URL(script, folder).pathname], { stdio: 'pipe' }),
        script,
      ).not.toThrow();
    }
  });

  it('offers every activity kind in its Kind filter, and words each one rather than printing its payload', async () => {
    // dom.js imports nothing and touches the document only when building elements, so it loads here.
    const dom = (await import(new URL('../../src/console/dom.js', import.meta.url).href)) as {
      ACTIVITY_KINDS: string[];
      describeItem: (item: { kind: string; payload: Record<string, unknown> }) => string;
    };
    expect(dom.ACTIVITY_KINDS).toEqual([...ACTIVITY_KINDS]);
    for (const kind of ACTIVITY_KINDS) {
      // The fallback prints the payload as JSON: a kind reaching it has no wording.
      expect(dom.describeItem({ kind, payload: { unworded: true } }), kind).not.toContain('unworded');
    }
    expect(
      dom.describeItem({
        kind: 'dropoff_registered',
        payload: { has_dialable_phone: true, phone_last4: '3210', reason: 'app_backgrounded' },
      }),
    ).toBe('drop-off registered (app_backgrounded), dialable phone ending 3210');
  });

  it('shows each screen in the one spelling the service compares screens by, however the app sent it', async () => {
    const dom = (await import(new URL('../../src/console/dom.js', import.meta.url).href)) as {
      screenName: (raw: string) => string;
      describeItem: (item: { kind: string; payload: Record<string, unknown> }) => string;
    };
    const sent = [
      'signature',
      'SIGNATURE',
      ' Signature ',
      'n_pan_details',
      'NEW_PAN_DETAILS',
      'new_',
      'n_',
      'newsletter',
      'n__x',
      'Ünïcode_Screen',
      '',
    ];
    for (const raw of sent) expect(dom.screenName(raw), JSON.stringify(raw)).toBe(screenKey(raw));
    // Upper case from React Native and lower case from the web read as one screen in every line.
    expect(dom.describeItem({ kind: 'event', payload: { event: 'screen_view', screen: 'SIGNATURE' } })).toBe(
      'screen_view on signature',
    );
    expect(dom.describeItem({ kind: 'schema_push', payload: { screen_id: 'N_PAN_DETAILS' } })).toBe(
      'schema for pan_details',
    );
    expect(
      dom.describeItem({
        kind: 'popup_evaluate',
        payload: { screen: 'PAN_DETAILS', decision: { show: false, popup_reason_code: 'none' } },
      }),
    ).toBe('popup not shown on pan_details: none');
  });

  it('serves nothing outside its folders, and every data call still needs the key', async () => {
    const h = createHarness({ env: { API_KEY: 'k' } });
    for (const path of [
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/vendor/eventsource-parser/../../package.json',
      '/console/missing.js',
    ]) {
      const res = await h.http.get(path);
      expect(res.status, path).toBe(401);
    }
    expect((await h.http.get('/console/missing.js').set('X-API-Key', 'k')).status).toBe(404);
    for (const path of ['/api/status', '/api/machines/session', '/api/sessions', '/metrics']) {
      expect((await h.http.get(path)).status, path).toBe(401);
    }
  });
});

describe('the OpenAPI document', () => {
  it('documents the console, the session listing, the status, the machine and the metrics', async () => {
    const h = createHarness();
    const doc = (await h.http.get('/openapi.json').expect(200)).body;
    for (const path of [
      '/console',
      '/api/sessions',
      '/api/sessions/{session_id}/agent-context',
      '/api/status',
      '/api/machines/session',
      '/metrics',
    ]) {
      expect(doc.paths[path]?.get, path).toBeDefined();
    }
    expect(doc.paths['/console'].get.security).toEqual([]);
    expect(doc.paths['/metrics'].get.security).toBeUndefined();
    const names = doc.paths['/api/sessions'].get.parameters.map((parameter: { name: string }) => parameter.name);
    expect(names).toEqual(['limit', 'cursor', 'voice', 'screen', 'q', 'sort', 'order']);
    expect(doc.components.schemas.SessionSummary.required).toContain('cooldown_remaining_ms');
  });
});

describe('GET /api/machines/session', () => {
  it('is read from the machine definition: every state node, with its type, initial state, transitions and actors', async () => {
    const h = createHarness();
    const chart = (await h.http.get('/api/machines/session').expect(200)).body as ChartNode;
    const definitionIds: string[] = [];
    const walk = (node: AnyStateNode) => {
      definitionIds.push(node.id);
      for (const child of Object.values(node.states)) walk(child);
    };
    walk(sessionMachine.root);
    expect(ids(chart)).toEqual(definitionIds);
    expect(chart.type).toBe('parallel');
    expect(find(chart, 'session.voice')).toMatchObject({ type: 'compound', initial: 'inactive' });
    expect(find(chart, 'session.voice.inactive')!.transitions).toContainEqual({
      on: 'voice.start',
      targets: ['session.voice.starting'],
      guard: null,
    });
    expect(find(chart, 'session.voice.starting.creatingRoom')!.invokes).toEqual(['createRoom']);
    expect(find(chart, 'session.trigger.cooldown')!.transitions).toContainEqual({
      on: 'after triggerCooldown',
      targets: ['session.trigger.ready'],
      guard: null,
    });
    expect(find(chart, 'session.presence.live')!.transitions[1]).toEqual({
      on: 'session.idle_check',
      targets: ['session.presence.expired'],
      guard: 'voiceInactive and noReengagementArmed and idleForTtl',
    });
  });
});

describe('GET /api/status', () => {
  let lk: LiveKitStandIn;
  beforeAll(async () => {
    lk = await startLiveKitStandIn();
  });
  afterAll(() => lk.close());
  beforeEach(() => lk.reset());

  it('says media is not configured, and counts sessions, streams and activity', async () => {
    const h = createHarness({ env: { SESSION_HIBERNATE_SECONDS: '60', MAX_SESSIONS: '50' } });
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'identity' }).expect(200);
    const status = (await h.http.get('/api/status').expect(200)).body;
    const onlyId = Number((await h.http.get('/api/activity').expect(200)).body.items[0].id);
    expect(status).toEqual({
      media: { configured: false, recent_calls: [] },
      sessions: { running: 1, hibernated: 0, max: 50 },
      activity_streams: { open: 0, max: h.config.stream.maxStreams },
      // No heap trim runs in an app built for a test: none counted.
      memory: {
        heap_used_bytes: expect.any(Number),
        heap_committed_bytes: expect.any(Number),
        heap_limit_bytes: expect.any(Number),
        heap_trims: 0,
        heap_trims_failed: 0,
        heap_trims_deferred: 0,
        last_heap_trim_at: null,
      },
      activity: { last_id: onlyId, oldest_id: onlyId, readers: ['metrics', 'flow_graphs'] },
      config_version: h.sdkConfig.resolve(null).version,
    });
    expect(status.memory.heap_used_bytes).toBeGreaterThan(0);
    expect(status.memory.heap_committed_bytes).toBeGreaterThanOrEqual(status.memory.heap_used_bytes);
    expect(status.memory.heap_limit_bytes).toBeGreaterThan(status.memory.heap_committed_bytes);
  });

  it('names the readers the activity actor feeds: the SSE hub among them while a stream is open', async () => {
    const h = createHarness();
    const server = await serve(h);
    try {
      const client = await SseTestClient.open(`${server.url}/api/activity/stream`);
      await client.until((c) => c.retry !== undefined);
      expect((await h.http.get('/api/status').expect(200)).body.activity.readers).toEqual([
        'metrics',
        'flow_graphs',
        'sse',
      ]);
      client.close();
      await vi.waitFor(
        async () =>
          expect((await h.http.get('/api/status').expect(200)).body.activity.readers).toEqual([
            'metrics',
            'flow_graphs',
          ]),
        { timeout: 5000 },
      );
    } finally {
      await server.close(100);
    }
  });

  it('lists the last media calls, newest first, failed ones as failed', async () => {
    const h = createHarness({ env: { ...lk.env(), MEDIA_REQUEST_TIMEOUT_SECONDS: '1' } });
    lk.failNext('CreateRoom', { status: 500, code: 'internal', msg: 'boom' });
    await h.http.post('/v1/assistant/session/start').send({ session_id: 's1', screen: 'pan_details' }).expect(200);
    const status = (await h.http.get('/api/status').expect(200)).body;
    expect(status.media.configured).toBe(true);
    const calls = status.media.recent_calls as { call: string; outcome: string; duration_ms: number; at: string }[];
    expect(calls.map(({ call, outcome }) => [call, outcome])).toEqual([
      ['mintToken', 'ok'],
      ['createRoom', 'failed'],
    ]);
    expect(calls.every((call) => call.duration_ms >= 0 && !Number.isNaN(Date.parse(call.at)))).toBe(true);
  });
});
