import { afterEach, describe, expect, it } from 'vitest';
import type { StatelySnapshotEvent } from '@statelyai/inspect';
import type { Inspection } from '../../src/integrations/inspection.js';
import { openInspection } from '../../src/integrations/inspection.js';
import type { InspectionRelay } from '../../src/integrations/inspection-relay.js';
import { startInspectionRelay } from '../../src/integrations/inspection-relay.js';
import { createLogger } from '../../src/logger.js';
import { RAW_AADHAAR, RAW_PAN, RAW_PHONE, clientJourney } from '../fixtures/client-events.js';
import type { Harness } from '../support/harness.js';
import { createHarness } from '../support/harness.js';
import { InspectionReceiver } from '../support/inspection-receiver.js';

const logger = createLogger('silent');
const open: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((closable) => closable.close()));
});

async function inspectionOnRelay(): Promise<Inspection> {
  const inspection = await openInspection({ kind: 'relay', host: '127.0.0.1', port: 0 }, logger);
  open.push(inspection);
  return inspection;
}

let probes = 0;

/** A receiver that is surely connected: it has seen the machine of a session created for the purpose. */
async function connectedReceiver(h: Harness, relayUrl: string): Promise<InspectionReceiver> {
  const receiver = new InspectionReceiver(relayUrl);
  // A random suffix can read as an identity value (ten characters may form a PAN) and the session
  // would then show under a digest of its id: a counter never does.
  const probe = `probe-${(probes += 1)}`;
  await h.http.post('/v1/events').send({ session_id: probe, event: 'identity' }).expect(200);
  await receiver.until((r) => r.actor(probe) !== undefined);
  return receiver;
}

const valueOf = (snapshot: StatelySnapshotEvent) => (snapshot.snapshot as { value?: Record<string, unknown> }).value;

/** Each state a session's machine went through, with the event that took it there, in order. */
const transitions = (snapshots: StatelySnapshotEvent[]) =>
  snapshots.map((snapshot) => {
    const value = valueOf(snapshot) ?? {};
    return `${snapshot.event.type}: voice=${JSON.stringify(value.voice)} trigger=${String(value.trigger)} reengagement=${String(value.reengagement)}`;
  });

describe('INSPECT: the session machines in a Stately inspector', () => {
  it(
    'a receiver on the relay sees a session machine and its transitions as requests arrive, ' +
      'with no hint, token, reply or knowledge base in anything',
    async () => {
      const inspection = await inspectionOnRelay();
      const h = createHarness({ inspect: inspection.inspect });
      const receiver = await connectedReceiver(h, inspection.url);

      for (const event of clientJourney('s1')) await h.http.post('/v1/events').send(event).expect(200);
      const decision = await h.http
        .post('/v1/assistant/trigger/evaluate')
        .send({ session_id: 's1', signals: { errors: ['pan_invalid', 'pan_invalid_format'] } });
      expect(decision.body.trigger).toBe(true);
      const started = await h.http
        .post('/v1/assistant/session/start')
        .send({ session_id: 's1', user_id: 'u1', screen: 'pan_details' })
        .expect(200);
      const context = await h.http.get('/v1/assistant/context/s1').expect(200);
      await h.http.post('/v1/assistant/session/stop').send({ session_id: 's1' }).expect(200);
      await receiver.until((r) => r.snapshotsOf('s1').some((s) => s.event.type === 'voice.stop'));

      const registration = receiver.actor('s1')!;
      const definition = JSON.parse(registration.definition!) as {
        id: string;
        type: string;
        states: Record<string, { states: Record<string, unknown> }>;
      };
      expect(definition).toMatchObject({ id: 'session', type: 'parallel' });
      expect(Object.keys(definition.states).sort()).toEqual(['agent', 'presence', 'reengagement', 'trigger', 'voice']);
      expect(Object.keys(definition.states.voice!.states).sort()).toEqual([
        'active',
        'inactive',
        'starting',
        'stopping',
      ]);

      const changes = transitions(receiver.snapshotsOf('s1'));
      expect(changes[0]).toBe('xstate.init: voice="inactive" trigger=ready reengagement=idle');
      expect(changes.filter((change) => !change.startsWith('session.ingest'))).toEqual([
        'xstate.init: voice="inactive" trigger=ready reengagement=idle',
        'trigger.evaluate: voice="inactive" trigger=cooldown reengagement=idle',
        'voice.start: voice={"starting":"mintingToken"} trigger=cooldown reengagement=idle',
        'xstate.done.actor.0.session.voice.starting.mintingToken: voice="active" trigger=cooldown reengagement=idle',
        'context.fetch: voice="active" trigger=cooldown reengagement=idle',
        'voice.stop: voice="inactive" trigger=cooldown reengagement=armed',
      ]);
      expect(changes.filter((change) => change.startsWith('session.ingest'))).toHaveLength(clientJourney('s1').length);
      // The invoked token actor shows up as an actor of its own.
      expect(
        receiver.events.some(
          (event) => event.type === '@xstate.actor' && event.name.endsWith('voice.starting.mintingToken'),
        ),
      ).toBe(true);

      const seen = receiver.text;
      for (const raw of [RAW_PAN, RAW_PHONE, RAW_AADHAAR, 'INVALIDPAN']) expect(seen, raw).not.toContain(raw);
      expect(seen).not.toContain('******234F');
      expect(seen).not.toContain(started.body.token);
      expect(seen).not.toMatch(/"reply"/);
      expect(seen).not.toContain(context.body.context.kyc_kb.general.role);
      // What is withheld is shown as such, so a viewer knows a hint was there.
      expect(seen).toContain('"hint":"[redacted]"');
      expect(seen).toContain('"token":"[redacted]"');
    },
  );

  it('a viewer that connects later is given the machines still running, at their latest state', async () => {
    const inspection = await inspectionOnRelay();
    const h = createHarness({ inspect: inspection.inspect });
    const first = await connectedReceiver(h, inspection.url);
    await h.http.post('/v1/assistant/session/start').send({ session_id: 's1', screen: 'pan_details' }).expect(200);
    await h.http.post('/v1/events').send({ session_id: 's2', event: 'identity' }).expect(200);
    await first.until(
      (r) => r.snapshotsOf('s1').some((s) => valueOf(s)?.voice === 'active') && r.actor('s2') !== undefined,
    );

    const later = new InspectionReceiver(inspection.url);
    await later.until(
      (r) => r.actor('s1') !== undefined && r.actor('s2') !== undefined && r.snapshotsOf('s1').length > 0,
    );
    expect(valueOf(later.snapshotsOf('s1').at(-1)!)?.voice).toBe('active');
    // The token actor finished: nothing of it is replayed.
    expect(later.events.some((event) => event.type === '@xstate.actor' && event.name.endsWith('mintingToken'))).toBe(
      false,
    );
  });

  it('shows the activity actor beside the session actors: each item it takes as an event, its tail as its snapshot, no identity value in either', async () => {
    const inspection = await inspectionOnRelay();
    const h = createHarness({ inspect: inspection.inspect });
    const receiver = await connectedReceiver(h, inspection.url);
    // Registered when the system started, before this viewer connected: the relay kept it.
    await receiver.until((r) => r.actor('activity') !== undefined);

    for (const event of clientJourney('s1')) await h.http.post('/v1/events').send(event).expect(200);
    await h.system.activity.commit();
    const newest = h.system.activity.bounds().lastId;
    const snapshots = () =>
      receiver.snapshotsOf('activity') as unknown as {
        event: { type: string; item?: { id: string; session_id: string } };
        snapshot: { context: { newest_id: number; readers: { reader: string }[]; by_kind: Record<string, number> } };
      }[];
    await receiver.until(() => snapshots().some((s) => s.snapshot.context.newest_id === newest));

    const taken = snapshots().filter((s) => s.event.type === 'item.committed');
    // Each item moves the tail on (its id as the item carries it may be masked: a long number reads as a card number).
    const ids = taken.map((s) => s.snapshot.context.newest_id);
    expect(ids.length).toBeGreaterThanOrEqual(clientJourney('s1').length);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids.at(-1)).toBe(newest);
    expect(taken.some((s) => s.event.item!.session_id === 's1')).toBe(true);
    const last = snapshots().at(-1)!.snapshot.context;
    expect(last.readers.map((entry) => entry.reader)).toEqual(['metrics', 'flow_graphs']);
    expect(last.by_kind.event).toBeGreaterThanOrEqual(clientJourney('s1').length);
    const registration = JSON.stringify(receiver.actor('activity'));
    const seen = receiver.text;
    for (const raw of [RAW_PAN, RAW_PHONE, RAW_AADHAAR]) {
      expect(seen, raw).not.toContain(raw);
      expect(registration, raw).not.toContain(raw);
    }
    h.system.stop();
  });

  it('sends to a relay that runs elsewhere (INSPECT=ws://…)', async () => {
    const relay: InspectionRelay = await startInspectionRelay({ host: '127.0.0.1', port: 0, logger });
    const inspection = await openInspection({ kind: 'remote', url: relay.url }, logger);
    open.push(inspection, relay);
    expect(inspection.viewerUrl).toBeUndefined();
    const h = createHarness({ inspect: inspection.inspect });
    const receiver = await connectedReceiver(h, relay.url);
    await h.http
      .post('/v1/events')
      .send({ session_id: 's1', event: 'screen_state', screen: 'pan_details' })
      .expect(200);
    await receiver.until((r) => r.snapshotsOf('s1').some((s) => s.event.type === 'session.ingest'));
  });
});
