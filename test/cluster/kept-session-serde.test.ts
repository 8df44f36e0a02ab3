import { describe, expect, it } from 'vitest';
import { keptSessionSerde, UnreadableKeptValue } from '../../src/cluster/kept-session-serde.js';
import { runSessionInvocation } from '../../src/cluster/session-invocation.js';
import { storedDamage } from '../../src/actor-system/stored-session-check.js';
import type { SessionCommand } from '../../src/machines/session/machine-events.js';
import { sessionMachine } from '../../src/machines/session/machine.js';
import type { StoredSession } from '../../src/store/ports.js';
import { fieldSessionEvents } from '../../bench/lib/event-body.js';
import { invocationSettings } from '../support/invocation-settings.js';

/** How the `session` value is kept in Restate: deflated JSON, with plain JSON from earlier releases still read. */

const T0 = 1_800_000_000_000;
const settings = invocationSettings;
const serde = keptSessionSerde<StoredSession>();

/** A session as a deployed SDK leaves it (14 screen schemas, 12 typed fields), made by the session machine itself. */
async function fieldSession(): Promise<StoredSession> {
  let stored: StoredSession | undefined;
  let at = T0;
  for (const event of fieldSessionEvents('s1')) {
    at += 1000;
    const command = (reply: (value: unknown) => void) =>
      ({
        type: 'session.ingest',
        event,
        at,
        trace: { trace_id: 't', request_id: `r${at}` },
        reply,
      }) as unknown as SessionCommand;
    stored =
      (await runSessionInvocation({ logic: sessionMachine, sessionId: 's1', settings, at, stored, command })).stored ??
      undefined;
  }
  return stored!;
}

describe('the kept session value in Restate', () => {
  it('comes back as it was written, and is kept deflated: never JSON text, a fraction of its size', async () => {
    const session = await fieldSession();
    const json = Buffer.byteLength(JSON.stringify(session));
    expect(json).toBeGreaterThan(10_000);
    const bytes = serde.serialize(session);
    expect(bytes[0]).not.toBe('{'.charCodeAt(0));
    expect(bytes.byteLength).toBeLessThan(json / 4);
    const read = serde.deserialize(bytes);
    expect(read).toEqual(session);
    expect(storedDamage(read as StoredSession)).toBeUndefined();
  });

  it('reads a value an earlier release kept as plain JSON, and writes it deflated', async () => {
    const session = await fieldSession();
    const legacy = new Uint8Array(Buffer.from(JSON.stringify(session)));
    const read = serde.deserialize(legacy);
    expect(read).toEqual(session);
    expect(storedDamage(read as StoredSession)).toBeUndefined();
    expect(serde.serialize(read)[0]).not.toBe('{'.charCodeAt(0));
  });

  it('a value damaged in storage reads as unreadable, with why, and nothing throws', async () => {
    const bytes = serde.serialize(await fieldSession());
    const damaged = serde.deserialize(bytes.slice(0, bytes.byteLength / 2));
    expect(damaged).toBeInstanceOf(UnreadableKeptValue);
    expect((damaged as UnreadableKeptValue).reason).toMatch(/^the kept session value could not be read: /);
    expect(serde.deserialize(new Uint8Array(Buffer.from('{"session_id": "s1", trunc')))).toBeInstanceOf(
      UnreadableKeptValue,
    );
  });
});
