import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

/** Two Restate request-signing public keys (Ed25519, made for this test). */
const SIGNING_KEY = 'publickeyv1_cWVffZwEpBqXwjxAwNBgueNUaZWHoJcX5HZ2LwCQj9U';
const OTHER_SIGNING_KEY = 'publickeyv1_2FDeuzuGxrjVk63izvVBxgmH8pB4fLgcwg1DoAL3XdCd';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    expect(loadConfig({})).toMatchObject({
      http: { port: 8080, host: '127.0.0.1', apiKeys: [], rateLimitPerMinute: 1200 },
      sessions: { idleTtlSeconds: 86_400, maxSessions: 100_000 },
      store: {
        kind: 'sqlite',
        dataDir: './data',
        sync: 'normal',
        activityRetentionItems: 1_000_000,
        activityRetentionDays: 30,
      },
      diagnostics: { logLevel: 'info' },
    });
  });

  it('gives the documented media and voice defaults; media stays unconfigured without LIVEKIT_*', () => {
    expect(loadConfig({})).toMatchObject({
      media: {
        livekitUrl: undefined,
        livekitApiKey: undefined,
        livekitApiSecret: undefined,
        roomPrefix: 'kyc-room',
        agentName: 'kyc-voice-agent',
        tokenTtlSeconds: 3600,
        requestTimeoutSeconds: 3,
      },
      sessions: { reengagementInactivitySeconds: 300 },
    });
    expect(
      loadConfig({
        LIVEKIT_URL: 'wss://example.livekit.cloud',
        LIVEKIT_API_KEY: 'k',
        LIVEKIT_API_SECRET: 's',
        MEDIA_REQUEST_TIMEOUT_SECONDS: '0.5',
      }).media,
    ).toMatchObject({
      livekitUrl: 'wss://example.livekit.cloud',
      requestTimeoutSeconds: 0.5,
    });
  });

  it('keeps state in SQLite under ./data by default; the retention count follows the store, and ACTIVITY_BUFFER_SIZE still sets it', () => {
    expect(loadConfig({ STORE: 'memory' })).toMatchObject({
      store: { kind: 'memory', activityRetentionItems: 10_000 },
    });
    expect(loadConfig({}).store.activityLog).toBeUndefined();
    expect(loadConfig({ ACTIVITY_LOG: 'redis://127.0.0.1:6379/2' }).store.activityLog).toBe('redis://127.0.0.1:6379/2');
    // Redis Sentinel (docs/how-to/production.md, Redis): kept as written; src/store/redis-connection.ts connects to it.
    expect(
      loadConfig({ ACTIVITY_LOG: ' redis+sentinel://10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379/mymaster ' }).store
        .activityLog,
    ).toBe('redis+sentinel://10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379/mymaster');
    expect(loadConfig({}).cluster.sessionHost).toEqual({ kind: 'embedded' });
    expect(
      loadConfig({
        SESSION_HOST: 'restate',
        RESTATE_INGRESS_URL: 'http://127.0.0.1:8080',
        RESTATE_ADMIN_URL: 'http://10.0.0.5:9070/',
        RESTATE_ENDPOINT_PORT: '9080',
        ACTIVITY_LOG: 'redis://127.0.0.1:6379',
        ID_DIGEST_SECRET: 'a-secret-of-the-whole-cluster',
        RESTATE_IDENTITY_KEYS: `${SIGNING_KEY}, ${OTHER_SIGNING_KEY}`,
      }).cluster.sessionHost,
    ).toEqual({
      kind: 'restate',
      ingressUrl: 'http://127.0.0.1:8080/',
      adminUrl: 'http://10.0.0.5:9070/',
      redisUrl: 'redis://127.0.0.1:6379',
      endpoint: {
        host: '127.0.0.1',
        port: 9080,
        identityKeys: [SIGNING_KEY, OTHER_SIGNING_KEY],
        journalRetentionMs: 0,
      },
    });
    const withRetention = (seconds: string) =>
      loadConfig({
        SESSION_HOST: 'restate',
        RESTATE_INGRESS_URL: 'http://127.0.0.1:8080',
        RESTATE_ADMIN_URL: 'http://127.0.0.1:9070',
        RESTATE_ENDPOINT_PORT: '9080',
        ACTIVITY_LOG: 'redis://127.0.0.1:6379',
        ID_DIGEST_SECRET: 'a-secret-of-the-whole-cluster',
        RESTATE_IDENTITY_KEYS: SIGNING_KEY,
        RESTATE_JOURNAL_RETENTION_SECONDS: seconds,
      }).cluster.sessionHost;
    expect(withRetention('600')).toMatchObject({ endpoint: { journalRetentionMs: 600_000 } });
    expect(() => withRetention('-1')).toThrow(/RESTATE_JOURNAL_RETENTION_SECONDS/);
    expect(() => withRetention('a day')).toThrow(/RESTATE_JOURNAL_RETENTION_SECONDS: must be a number of seconds/);
    // A front serves the HTTP API only: no endpoint, so neither its port nor the signing keys.
    expect(
      loadConfig({
        SESSION_HOST: 'restate',
        CLUSTER_ROLE: 'front',
        RESTATE_INGRESS_URL: 'http://127.0.0.1:8080',
        RESTATE_ADMIN_URL: 'http://127.0.0.1:9070',
        ACTIVITY_LOG: 'redis://127.0.0.1:6379',
        ID_DIGEST_SECRET: 'a-secret-of-the-whole-cluster',
      }).cluster.sessionHost,
    ).toEqual({
      kind: 'restate',
      ingressUrl: 'http://127.0.0.1:8080/',
      adminUrl: 'http://127.0.0.1:9070/',
      redisUrl: 'redis://127.0.0.1:6379',
      endpoint: null,
    });
    expect(loadConfig({ DATA_DIR: '/srv/kyc', STORE_SYNC: 'full' })).toMatchObject({
      store: { kind: 'sqlite', dataDir: '/srv/kyc', sync: 'full' },
    });
    expect(loadConfig({ ACTIVITY_BUFFER_SIZE: '5' }).store.activityRetentionItems).toBe(5);
    expect(loadConfig({ ACTIVITY_BUFFER_SIZE: '5', ACTIVITY_RETENTION_ITEMS: '7' }).store.activityRetentionItems).toBe(
      7,
    );
  });

  it('splits API_KEY on commas and treats blank variables as unset', () => {
    expect(loadConfig({ API_KEY: ' k1 , k2,, ', PORT: '' }).http.apiKeys).toEqual(['k1', 'k2']);
    expect(loadConfig({ PORT: '' }).http.port).toBe(8080);
  });

  it('reads SDK_CONFIG_FILE and CRITICAL_STEPS, defaulting to the default critical steps', () => {
    expect(loadConfig({})).toMatchObject({
      sdk: { configFile: undefined },
      sessions: { criticalSteps: expect.arrayContaining(['phone_otp', 'pan_details', 'signature']) },
    });
    expect(loadConfig({}).sessions.criticalSteps).toHaveLength(9);
    expect(
      loadConfig({ SDK_CONFIG_FILE: ' /etc/kyc/sdk.json ', CRITICAL_STEPS: 'PAN_DETAILS, review ,' }),
    ).toMatchObject({
      sdk: { configFile: '/etc/kyc/sdk.json' },
      sessions: { criticalSteps: ['PAN_DETAILS', 'review'] },
    });
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT/],
    [{ MAX_SESSIONS: '0' }, /MAX_SESSIONS/],
    [{ STORE: 'postgres' }, /STORE: must be sqlite or memory/],
    [{ STORE_SYNC: 'sometimes' }, /STORE_SYNC: must be normal or full/],
    [{ ACTIVITY_RETENTION_ITEMS: '0' }, /ACTIVITY_RETENTION_ITEMS/],
    [{ ACTIVITY_RETENTION_DAYS: '-1' }, /ACTIVITY_RETENTION_DAYS/],
    [{ ACTIVITY_LOG: 'http://cache:6379' }, /ACTIVITY_LOG: must be a redis:\/\/ or rediss:\/\/ URL/],
    [
      { ACTIVITY_LOG: 'redis+sentinel://s1:26379,s2:26379' },
      /ACTIVITY_LOG: must be a .*, or redis\+sentinel:\/\/host:port,host:port\/name/,
    ],
    [
      { ACTIVITY_LOG: 'redis+sentinel://s1:26379,s2:port/mymaster' },
      /ACTIVITY_LOG: sentinel "s2:port" is not host or host:port/,
    ],
    [{ SESSION_HOST: 'cloud' }, /SESSION_HOST: must be embedded or restate/],
    [
      { SESSION_HOST: 'restate', RESTATE_INGRESS_URL: '127.0.0.1:8080' },
      /RESTATE_INGRESS_URL: must be an http:\/\/ or https:\/\/ URL/,
    ],
    [
      {
        SESSION_HOST: 'restate',
        RESTATE_ADMIN_URL: 'http://127.0.0.1:9070',
        RESTATE_ENDPOINT_PORT: '9080',
        ACTIVITY_LOG: 'redis://r:6379',
      },
      /^invalid configuration: RESTATE_INGRESS_URL: required when SESSION_HOST=restate$/,
    ],
    [
      {
        SESSION_HOST: 'restate',
        RESTATE_INGRESS_URL: 'http://127.0.0.1:8080',
        RESTATE_ADMIN_URL: 'http://127.0.0.1:9070',
        RESTATE_ENDPOINT_PORT: '9080',
      },
      /^invalid configuration: ACTIVITY_LOG: required when SESSION_HOST=restate$/,
    ],
    [
      {
        SESSION_HOST: 'restate',
        RESTATE_INGRESS_URL: 'http://127.0.0.1:8080',
        RESTATE_ADMIN_URL: 'http://127.0.0.1:9070',
        RESTATE_ENDPOINT_PORT: '9080',
        ACTIVITY_LOG: 'redis://r:6379',
      },
      /^invalid configuration: ID_DIGEST_SECRET: required when SESSION_HOST=restate$/,
    ],
    [
      {
        SESSION_HOST: 'restate',
        RESTATE_INGRESS_URL: 'http://127.0.0.1:8080',
        RESTATE_ADMIN_URL: 'http://127.0.0.1:9070',
        RESTATE_ENDPOINT_PORT: '9080',
        ACTIVITY_LOG: 'redis://r:6379',
        ID_DIGEST_SECRET: 'a-secret-of-the-whole-cluster',
      },
      /^invalid configuration: RESTATE_IDENTITY_KEYS: required when SESSION_HOST=restate$/,
    ],
    [
      { RESTATE_IDENTITY_KEYS: `${SIGNING_KEY},publickeyv1_0OIl` },
      /RESTATE_IDENTITY_KEYS: each key must be a Restate public key/,
    ],
    [{ CLUSTER_ROLE: 'worker' }, /CLUSTER_ROLE: must be both or front/],
    [
      {
        SESSION_HOST: 'restate',
        CLUSTER_ROLE: 'front',
        RESTATE_INGRESS_URL: 'http://127.0.0.1:8080',
        RESTATE_ADMIN_URL: 'http://127.0.0.1:9070',
        ACTIVITY_LOG: 'redis://r:6379',
      },
      /^invalid configuration: ID_DIGEST_SECRET: required when SESSION_HOST=restate and CLUSTER_ROLE=front$/,
    ],
    [
      {
        SESSION_HOST: 'restate',
        CLUSTER_ROLE: 'front',
        RESTATE_INGRESS_URL: 'http://127.0.0.1:8080',
        RESTATE_ADMIN_URL: 'http://127.0.0.1:9070',
        RESTATE_ENDPOINT_PORT: '9080',
        ACTIVITY_LOG: 'redis://r:6379',
        ID_DIGEST_SECRET: 'a-secret-of-the-whole-cluster',
      },
      /^invalid configuration: RESTATE_ENDPOINT_PORT: a front \(CLUSTER_ROLE=front\) serves no Restate endpoint/,
    ],
    [{ ID_DIGEST_SECRET: 'short' }, /^invalid configuration: ID_DIGEST_SECRET: must be at least 16 characters/],
    [{ RESTATE_ENDPOINT_PORT: '70000' }, /RESTATE_ENDPOINT_PORT/],
    [{ RATE_LIMIT_PER_MINUTE: '-5' }, /RATE_LIMIT_PER_MINUTE/],
    [{ FEATURE_FLAGS: '{not json' }, /FEATURE_FLAGS: must be a JSON object/],
    [{ FEATURE_FLAGS: '{"trigger.v2_scoring":"yes"}' }, /FEATURE_FLAGS/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ SESSION_IDLE_TTL_SECONDS: '99999999' }, /SESSION_IDLE_TTL_SECONDS/],
    [{ LIVEKIT_URL: '127.0.0.1:7880' }, /LIVEKIT_URL: must be a ws:\/\/, wss:\/\/, http:\/\/ or https:\/\/ URL/],
    [{ MEDIA_ROOM_PREFIX: 'kyc room' }, /MEDIA_ROOM_PREFIX/],
    [{ TOKEN_TTL_SECONDS: '0' }, /TOKEN_TTL_SECONDS/],
    [{ MEDIA_REQUEST_TIMEOUT_SECONDS: '60' }, /MEDIA_REQUEST_TIMEOUT_SECONDS/],
    [{ REENGAGEMENT_INACTIVITY_SECONDS: 'soon' }, /REENGAGEMENT_INACTIVITY_SECONDS/],
  ])('refuses %o naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('refuses a partial LiveKit configuration, naming what is missing', () => {
    expect(() => loadConfig({ LIVEKIT_URL: 'wss://example.livekit.cloud' })).toThrow(
      /^invalid configuration: LIVEKIT_API_KEY, LIVEKIT_API_SECRET: required with the other LIVEKIT_\* settings/,
    );
    expect(() => loadConfig({ LIVEKIT_URL: 'wss://example.livekit.cloud', LIVEKIT_API_KEY: 'k' })).toThrow(
      /^invalid configuration: LIVEKIT_API_SECRET: required/,
    );
    expect(() => loadConfig({ LIVEKIT_API_SECRET: 's' })).toThrow(
      /^invalid configuration: LIVEKIT_URL, LIVEKIT_API_KEY: required/,
    );
  });

  it('repeats a bad value in its error, but never a credential', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(/^invalid configuration: PORT: .* \(got "abc"\)$/);
    expect(() => loadConfig({ STORE: 'postgres' })).toThrow('STORE: must be sqlite or memory (got "postgres")');
    expect(() => loadConfig({ ID_DIGEST_SECRET: 'short-secret' })).toThrow(
      /^invalid configuration: ID_DIGEST_SECRET: must be at least 16 characters$/,
    );
    expect(() => loadConfig({ PORT: 'x'.repeat(500) })).toThrow(/\(got "x{80}…"\)$/);
  });

  it('refuses TRUST_PROXY=true, saying to give the hop count or the proxy addresses; accepts those', () => {
    for (const value of ['true', 'TRUE', ' True ']) {
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(
        /^invalid configuration: TRUST_PROXY: true trusts any X-Forwarded-For .* give the number of proxy hops \(e\.g\. 1\) or the proxy addresses/,
      );
    }
    expect(loadConfig({ TRUST_PROXY: '1' }).http.trustProxy).toBe('1');
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).http.trustProxy).toBe('loopback, 10.0.0.0/8');
    expect(loadConfig({ TRUST_PROXY: 'false' }).http.trustProxy).toBe('false');
  });

  it('refuses a media timeout whose longest voice start (3 calls) outlasts the shutdown grace, naming both', () => {
    expect(() => loadConfig({ MEDIA_REQUEST_TIMEOUT_SECONDS: '30' })).toThrow(
      'invalid configuration: MEDIA_REQUEST_TIMEOUT_SECONDS (30) × 3 media calls per voice start exceeds SHUTDOWN_GRACE_SECONDS (10)',
    );
    expect(() => loadConfig({ MEDIA_REQUEST_TIMEOUT_SECONDS: '4', SHUTDOWN_GRACE_SECONDS: '11' })).toThrow(
      /MEDIA_REQUEST_TIMEOUT_SECONDS \(4\).*SHUTDOWN_GRACE_SECONDS \(11\)/,
    );
    expect(
      loadConfig({ MEDIA_REQUEST_TIMEOUT_SECONDS: '20', SHUTDOWN_GRACE_SECONDS: '60' }).media.requestTimeoutSeconds,
    ).toBe(20);
    expect(loadConfig({ MEDIA_REQUEST_TIMEOUT_SECONDS: '3' }).http.shutdownGraceSeconds).toBe(10);
  });

  it('gives the hardening settings their defaults and bounds', () => {
    expect(loadConfig({})).toMatchObject({
      http: { maxConnections: 10_000, requestTimeoutSeconds: 10 },
      sessions: { maxBytes: 65_536, memoryBudgetMb: 1024 },
    });
    expect(
      loadConfig({
        MAX_CONNECTIONS: '50',
        REQUEST_TIMEOUT_SECONDS: '3',
        SESSION_MAX_BYTES: '8192',
        MEMORY_BUDGET_MB: '256',
      }),
    ).toMatchObject({
      http: { maxConnections: 50, requestTimeoutSeconds: 3 },
      sessions: { maxBytes: 8192, memoryBudgetMb: 256 },
    });
    expect(() => loadConfig({ MAX_CONNECTIONS: '0' })).toThrow(/MAX_CONNECTIONS/);
    expect(() => loadConfig({ REQUEST_TIMEOUT_SECONDS: '600' })).toThrow(/REQUEST_TIMEOUT_SECONDS/);
    expect(() => loadConfig({ SESSION_MAX_BYTES: '100' })).toThrow(/SESSION_MAX_BYTES/);
    expect(() => loadConfig({ MEMORY_BUDGET_MB: 'lots' })).toThrow(/MEMORY_BUDGET_MB/);
  });

  it('listens with 64 sockets on the port unless HTTP_ACCEPTORS says otherwise, 1 to 1,024', () => {
    expect(loadConfig({}).http.acceptors).toBe(64);
    expect(loadConfig({ HTTP_ACCEPTORS: '1' }).http.acceptors).toBe(1);
    expect(() => loadConfig({ HTTP_ACCEPTORS: '0' })).toThrow(/HTTP_ACCEPTORS/);
    expect(() => loadConfig({ HTTP_ACCEPTORS: '2000' })).toThrow(/HTTP_ACCEPTORS/);
  });

  it('gives the activity stream its defaults and bounds', () => {
    expect(loadConfig({}).stream).toEqual({ maxStreams: 2000, maxBufferBytes: 1_048_576, heartbeatSeconds: 15 });
    expect(
      loadConfig({ SSE_MAX_STREAMS: '5', SSE_MAX_BUFFER_BYTES: '65536', SSE_HEARTBEAT_SECONDS: '30' }).stream,
    ).toEqual({ maxStreams: 5, maxBufferBytes: 65_536, heartbeatSeconds: 30 });
    expect(() => loadConfig({ SSE_MAX_STREAMS: '0' })).toThrow(/SSE_MAX_STREAMS/);
    expect(() => loadConfig({ SSE_MAX_BUFFER_BYTES: '1024' })).toThrow(/SSE_MAX_BUFFER_BYTES/);
    expect(() => loadConfig({ SSE_HEARTBEAT_SECONDS: 'often' })).toThrow(/SSE_HEARTBEAT_SECONDS/);
  });

  it('gives the WebSocket control plane and the SDK environment their defaults and bounds', () => {
    expect(loadConfig({})).toMatchObject({
      websocket: { maxConnections: 2000, maxMessagesPerSecond: 20, maxFrameBytes: 65_536, idleTimeoutSeconds: 90 },
      sdk: { environment: 'production' },
    });
    expect(
      loadConfig({
        WS_MAX_CONNECTIONS: '10',
        WS_MAX_MESSAGES_PER_SECOND: '5',
        WS_MAX_FRAME_BYTES: '4096',
        WS_IDLE_TIMEOUT_SECONDS: '30',
        SDK_ENVIRONMENT: 'dev',
      }),
    ).toMatchObject({
      websocket: { maxConnections: 10, maxMessagesPerSecond: 5, maxFrameBytes: 4096, idleTimeoutSeconds: 30 },
      sdk: { environment: 'dev' },
    });
    expect(() => loadConfig({ WS_MAX_CONNECTIONS: '0' })).toThrow(/^invalid configuration: WS_MAX_CONNECTIONS:/);
    expect(() => loadConfig({ WS_MAX_MESSAGES_PER_SECOND: 'lots' })).toThrow(
      /^invalid configuration: WS_MAX_MESSAGES_PER_SECOND:/,
    );
    expect(() => loadConfig({ WS_MAX_FRAME_BYTES: '1048576' })).toThrow(
      'WS_MAX_FRAME_BYTES: must be at most 65536 (the HTTP body limit)',
    );
    expect(() => loadConfig({ WS_IDLE_TIMEOUT_SECONDS: '7200' })).toThrow(
      /^invalid configuration: WS_IDLE_TIMEOUT_SECONDS:/,
    );
    expect(() => loadConfig({ SDK_ENVIRONMENT: 'Prod East' })).toThrow(
      'SDK_ENVIRONMENT: must be 1-32 characters of a-z0-9_-',
    );
  });
});

describe('loadConfig: voice-agent context', () => {
  it('defaults to the bundled knowledge base and the refresh policy of spec 8', () => {
    const config = loadConfig({});
    expect(config.voice.knowledgeBaseFile).toBeUndefined();
    expect(config.voice.contextRefresh).toEqual({ interval_seconds: 60, on_user_turn: true, min_interval_seconds: 5 });
  });

  it.each([
    ['true', true],
    ['FALSE', false],
    ['1', true],
    ['0', false],
    [' True ', true],
  ])('reads VOICE_CONTEXT_REFRESH_ON_USER_TURN=%j as %s', (raw, value) => {
    expect(loadConfig({ VOICE_CONTEXT_REFRESH_ON_USER_TURN: raw }).voice.contextRefresh.on_user_turn).toBe(value);
  });

  it('reads the file and the intervals', () => {
    const config = loadConfig({
      KYC_KB_FILE: ' /etc/kyc/kb.json ',
      VOICE_CONTEXT_REFRESH_SECONDS: '30',
      VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: '0',
    });
    expect(config.voice.knowledgeBaseFile).toBe('/etc/kyc/kb.json');
    expect(config.voice.contextRefresh).toEqual({ interval_seconds: 30, on_user_turn: true, min_interval_seconds: 0 });
  });

  it.each([
    [{ VOICE_CONTEXT_REFRESH_ON_USER_TURN: 'yes' }, /VOICE_CONTEXT_REFRESH_ON_USER_TURN: must be true, false, 1 or 0/],
    [{ VOICE_CONTEXT_REFRESH_SECONDS: '0' }, /VOICE_CONTEXT_REFRESH_SECONDS/],
    [{ VOICE_CONTEXT_REFRESH_SECONDS: '1.5' }, /VOICE_CONTEXT_REFRESH_SECONDS/],
    [{ VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: '-1' }, /VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS/],
    [
      { VOICE_CONTEXT_REFRESH_SECONDS: '10', VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: '11' },
      /VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: must not exceed VOICE_CONTEXT_REFRESH_SECONDS/,
    ],
  ])('refuses %o naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('loadConfig: INSPECT', () => {
  it('is off unless set, and off when set to off', () => {
    expect(loadConfig({}).diagnostics.inspect).toBeUndefined();
    expect(loadConfig({ INSPECT: 'OFF' }).diagnostics.inspect).toBeUndefined();
  });

  it.each([
    ['relay', { kind: 'relay', host: '127.0.0.1', port: 8081 }],
    [' Relay ', { kind: 'relay', host: '127.0.0.1', port: 8081 }],
    ['127.0.0.1:9001', { kind: 'relay', host: '127.0.0.1', port: 9001 }],
    ['0.0.0.0:0', { kind: 'relay', host: '0.0.0.0', port: 0 }],
    ['[::1]:8081', { kind: 'relay', host: '::1', port: 8081 }],
    ['localhost:8081', { kind: 'relay', host: 'localhost', port: 8081 }],
    ['ws://127.0.0.1:8081', { kind: 'remote', url: 'ws://127.0.0.1:8081/' }],
    ['wss://inspect.internal.example/relay', { kind: 'remote', url: 'wss://inspect.internal.example/relay' }],
  ])('reads INSPECT=%j', (raw, setting) => {
    expect(loadConfig({ INSPECT: raw }).diagnostics.inspect).toEqual(setting);
  });

  it.each(['on', 'true', '8081', 'http://127.0.0.1:8081', '127.0.0.1:70000', 'ws://'])(
    'refuses INSPECT=%j naming the variable and the forms it takes',
    (raw) => {
      expect(() => loadConfig({ INSPECT: raw })).toThrow(ConfigError);
      expect(() => loadConfig({ INSPECT: raw })).toThrow(
        /^invalid configuration: INSPECT: (must be off, relay, <host>:<port>|port must be at most 65535)/,
      );
    },
  );
});

describe('PII_EXTRA_KEYS', () => {
  it('adds keys to the built-in ones: none by default', () => {
    expect(loadConfig({}).privacy.piiExtraKeys).toEqual([]);
    const config = loadConfig({ PII_EXTRA_KEYS: 'employee_code, ckycNumber,,' });
    expect(config.privacy.piiExtraKeys).toEqual(['employee_code', 'ckycNumber']);
    expect(config.privacy.piiRules.isSensitiveKey('employeeCode')).toBe(true);
    expect(config.privacy.piiRules.isSensitiveKey('phone')).toBe(true);
  });

  it.each(['1abc', 'a.b', 'phone;email', `k${'x'.repeat(64)}`])(
    'refuses PII_EXTRA_KEYS=%j naming the variable',
    (raw) => {
      expect(() => loadConfig({ PII_EXTRA_KEYS: raw })).toThrow(
        /^invalid configuration: PII_EXTRA_KEYS\.0: must be a comma-separated list of field names/,
      );
    },
  );
});
