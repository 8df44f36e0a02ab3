import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    expect(loadConfig({})).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      apiKeys: [],
      sessionIdleTtlSeconds: 86_400,
      maxSessions: 100_000,
      activityBufferSize: 10_000,
      rateLimitPerMinute: 1200,
      logLevel: 'info',
    });
  });

  it('splits API_KEY on commas and treats blank variables as unset', () => {
    expect(loadConfig({ API_KEY: ' k1 , k2,, ', PORT: '' }).apiKeys).toEqual(['k1', 'k2']);
    expect(loadConfig({ PORT: '' }).port).toBe(8080);
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT/],
    [{ MAX_SESSIONS: '0' }, /MAX_SESSIONS/],
    [{ RATE_LIMIT_PER_MINUTE: '-5' }, /RATE_LIMIT_PER_MINUTE/],
    [{ FEATURE_FLAGS: '{not json' }, /FEATURE_FLAGS: must be a JSON object/],
    [{ FEATURE_FLAGS: '{"trigger.v2_scoring":"yes"}' }, /FEATURE_FLAGS/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ SESSION_IDLE_TTL_SECONDS: '99999999' }, /SESSION_IDLE_TTL_SECONDS/],
  ])('refuses %o naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('gives the activity stream its defaults and bounds', () => {
    expect(loadConfig({})).toMatchObject({ sseMaxStreams: 2000, sseMaxBufferBytes: 1_048_576, sseHeartbeatSeconds: 15 });
    expect(loadConfig({ SSE_MAX_STREAMS: '5', SSE_MAX_BUFFER_BYTES: '65536', SSE_HEARTBEAT_SECONDS: '30' })).toMatchObject({ sseMaxStreams: 5, sseMaxBufferBytes: 65_536, sseHeartbeatSeconds: 30 });
    expect(() => loadConfig({ SSE_MAX_STREAMS: '0' })).toThrow(/SSE_MAX_STREAMS/);
    expect(() => loadConfig({ SSE_MAX_BUFFER_BYTES: '1024' })).toThrow(/SSE_MAX_BUFFER_BYTES/);
    expect(() => loadConfig({ SSE_HEARTBEAT_SECONDS: 'often' })).toThrow(/SSE_HEARTBEAT_SECONDS/);
  });
});
