import { afterEach, describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import type { AgentContext } from '../../agent/context-source.js';
import { DIALOG_ACTOR_ID, dialogMachine } from '../../agent/scripted-dialog/dialog-machine.js';
import { inspectDialogs } from '../../agent/scripted-dialog/inspection.js';
import type { InspectionRelay } from '../../src/integrations/inspection-relay.js';
import { startInspectionRelay } from '../../src/integrations/inspection-relay.js';
import { createLogger } from '../../src/logger.js';
import { InspectionReceiver } from '../support/inspection-receiver.js';

const PAN = 'ABCPE1234K';
const open: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((closable) => closable.close()));
});

/** The least of a context the dialog reads: an unknown screen whose name holds a PAN. */
const context = {
  session_id: 's1',
  current_screen: `review_${PAN}`,
  context: {
    screen: `review_${PAN}`,
    last_validation_failure: null,
    flow: null,
    kyc_kb: {
      version: 'v',
      general: { journey: ['a'], common_failures: {}, when_stuck: 'Use Help.' },
      step_id: null,
      step: null,
    },
  },
  system_prompt: '',
} as unknown as AgentContext;

describe('AGENT_INSPECT: the scripted dialog in the Stately inspector', () => {
  it('shows the dialog and its transitions on the service relay, with identity values masked', async () => {
    const relay: InspectionRelay = await startInspectionRelay({
      host: '127.0.0.1',
      port: 0,
      logger: createLogger('silent'),
    });
    open.push(relay);
    const receiver = new InspectionReceiver(relay.url);
    const inspection = inspectDialogs(relay.url);
    open.push({ close: async () => inspection.stop() });
    // The receiver may connect after the first events: a fresh dialog until it has seen one.
    await receiver.until((r) => {
      const actor = createActor(dialogMachine, { id: DIALOG_ACTOR_ID, inspect: inspection.inspect }).start();
      actor.send({ type: 'context', context });
      actor.send({ type: 'start' });
      actor.send({ type: 'heard', text: `my PAN is ${PAN}` });
      return r.snapshotsOf(DIALOG_ACTOR_ID).some((snapshot) => snapshot.event.type === 'heard');
    });
    const states = receiver
      .snapshotsOf(DIALOG_ACTOR_ID)
      .map((snapshot) => (snapshot.snapshot as { value?: unknown }).value);
    expect(states).toContain('listening');
    expect(states).toContain('unsure');
    expect(receiver.text).not.toContain(PAN);
  });
});
