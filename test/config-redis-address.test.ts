import { describe, expect, it } from 'vitest';
import { redisAddress, redisAddressProblem } from '../src/config/redis-address.js';

describe('ACTIVITY_LOG as a Redis address', () => {
  it('takes one server URL as it is', () => {
    expect(redisAddress('redis://127.0.0.1:6379/2')).toEqual({ kind: 'url', url: 'redis://127.0.0.1:6379/2' });
    expect(redisAddress('rediss://:secret@cache:6380')).toEqual({ kind: 'url', url: 'rediss://:secret@cache:6380' });
  });

  it('reads a Sentinel address as the sentinels and the primary they name, with the port 26379 unless given', () => {
    expect(redisAddress('redis+sentinel://10.0.0.1:26379,10.0.0.2,[::1]:26380/mymaster')).toEqual({
      kind: 'sentinel',
      options: {
        sentinels: [
          { host: '10.0.0.1', port: 26_379 },
          { host: '10.0.0.2', port: 26_379 },
          { host: '::1', port: 26_380 },
        ],
        name: 'mymaster',
      },
    });
  });

  it('takes the servers’ user and password from the userinfo, and TLS from rediss+sentinel://', () => {
    expect(redisAddress('redis+sentinel://:p%40ss@s1:26379/kyc')).toEqual({
      kind: 'sentinel',
      options: { sentinels: [{ host: 's1', port: 26_379 }], name: 'kyc', password: 'p@ss' },
    });
    expect(redisAddress('rediss+sentinel://app:pw@s1,s2/kyc/')).toEqual({
      kind: 'sentinel',
      options: {
        sentinels: [
          { host: 's1', port: 26_379 },
          { host: 's2', port: 26_379 },
        ],
        name: 'kyc',
        username: 'app',
        password: 'pw',
        tls: {},
        sentinelTLS: {},
        enableTLSForSentinelMode: true,
      },
    });
  });

  it.each([
    ['http://cache:6379', /must be a redis:\/\/ or rediss:\/\/ URL, or redis\+sentinel:\/\//],
    ['redis+sentinel://s1:26379,s2:26379', /must be a redis:\/\//],
    ['redis+sentinel://s1:26379,,s2/mymaster', /sentinel "" is not host or host:port/],
    ['redis+sentinel://s1:99999/mymaster', /sentinel "s1:99999" is not host or host:port/],
    ['redis+sentinel://s1:port/mymaster', /sentinel "s1:port" is not host or host:port/],
    ['redis+sentinel://:%E0%A4%A@s1/mymaster', /is not percent-encoded correctly/],
  ])('refuses %s, saying why', (value, problem) => {
    expect(redisAddressProblem(value)).toMatch(problem);
  });
});
