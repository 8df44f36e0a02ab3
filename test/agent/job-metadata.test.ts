import { describe, expect, it } from 'vitest';
import { isContextNotice, sessionIdOf, takeoverOf } from '../../agent/job-metadata.js';

describe("a job's dispatch metadata and the service's notices (agent/job-metadata.ts)", () => {
  it('reads the session, and whether the job takes over a call whose agent never came or dropped out', () => {
    expect(sessionIdOf('{"session_id":"s1"}')).toBe('s1');
    expect(takeoverOf('{"session_id":"s1"}')).toBe(false);
    expect(sessionIdOf('{"session_id":"s1","takeover":true}')).toBe('s1');
    expect(takeoverOf('{"session_id":"s1","takeover":true}')).toBe(true);
    // Anything else is no session and no takeover.
    for (const metadata of [
      '',
      'not json',
      '{"takeover":true}',
      '{"session_id":"a b","takeover":true}',
      '{"session_id":"s1","takeover":"yes"}',
    ]) {
      expect(takeoverOf(metadata), metadata).toBe(false);
    }
    expect(sessionIdOf('{"takeover":true}')).toBeUndefined();
  });

  it('knows a context notice for its own session only', () => {
    const notice = (body: unknown) => new TextEncoder().encode(JSON.stringify(body));
    expect(isContextNotice(notice({ type: 'context_updated', session_id: 's1' }), 's1')).toBe(true);
    expect(isContextNotice(notice({ type: 'context_updated', session_id: 's2' }), 's1')).toBe(false);
    expect(isContextNotice(new Uint8Array([0xff, 0xfe]), 's1')).toBe(false);
  });
});
