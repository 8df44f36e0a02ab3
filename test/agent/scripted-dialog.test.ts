// Runs on one store: the dialog reads the context the service serves; how it is stored is not what is tested.
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import type { AgentContext } from '../../agent/context-source.js';
import { NOT_CAUGHT, NOT_UNDERSTOOD } from '../../agent/scripted-dialog/answers.js';
import type { DialogEmitted } from '../../agent/scripted-dialog/dialog-machine.js';
import { dialogMachine } from '../../agent/scripted-dialog/dialog-machine.js';
import { createHarness } from '../support/harness.js';

const S = 'dialog-1';

/** The context the service serves for a session that sent `events`. */
async function contextAfter(events: Record<string, unknown>[]): Promise<AgentContext> {
  const h = createHarness();
  for (const event of events)
    expect((await h.http.post('/v1/events').send({ session_id: S, ...event })).status).toBe(200);
  const response = await h.http.get(`/v1/assistant/context/${S}`);
  expect(response.status).toBe(200);
  return response.body as AgentContext;
}

/** The dialog on that context: what it says for each thing heard, one answer per call. */
function dialog(context: AgentContext | undefined) {
  const actor = createActor(dialogMachine).start();
  const said: string[][] = [];
  const people: number[] = [];
  actor.on('say', (event: Extract<DialogEmitted, { type: 'say' }>) => said.push(event.sentences));
  actor.on('person.requested', () => people.push(said.length));
  if (context) actor.send({ type: 'context', context });
  actor.send({ type: 'start' });
  const hear = (text: string): string => {
    const before = said.length;
    actor.send({ type: 'heard', text });
    expect(said.length).toBe(before + 1);
    return said.at(-1)!.join(' ');
  };
  return { actor, said, people, hear, greeting: () => said[0]!.join(' ') };
}

const panRejected = [
  { event: 'screen_state', screen: 'N_PAN_DETAILS' },
  {
    event: 'validation_failed',
    screen: 'N_PAN_DETAILS',
    component_id: 'pan',
    component_type: 'text_input',
    errors: ['pan_invalid_format'],
    hint: 'x',
    masked: true,
  },
];

describe('the scripted dialog (no language model)', () => {
  it('greets as a machine, with the screen, the step and the held error in plain words', async () => {
    const { greeting } = dialog(await contextAfter(panRejected));
    expect(greeting()).toContain("I'm an automated assistant");
    expect(greeting()).toContain('You are on the PAN details screen');
    expect(greeting()).toContain('not accepted: the PAN does not have the form of 5 letters, 4 digits and 1 letter');
  });

  it('explains the held error and how to fix it, spoken to the user rather than to an assistant', async () => {
    const { hear } = dialog(await contextAfter(panRejected));
    const answer = hear('why is this field wrong');
    expect(answer).toContain('The PAN does not have the form of 5 letters, 4 digits and 1 letter.');
    expect(answer).toContain('The form is: five letters, four digits, one letter');
    expect(answer).not.toMatch(/the user|Explain the/i);
  });

  it('answers which document, what next, repeat and a person from the context', async () => {
    const { hear, people } = dialog(await contextAfter(panRejected));
    expect(hear('which documents do i need')).toMatch(/PAN card/);
    const next = hear('what should i do next');
    expect(next).toContain('After this step comes personal details.');
    expect(hear('repeat that please')).toBe(next);
    expect(hear('i want to talk to a person')).toContain('I have asked a colleague from our team to join this call.');
    expect(people).toEqual([5]);
  });

  it('says what comes next with no error held: the rule of the step, then the next one', async () => {
    const { hear } = dialog(await contextAfter([{ event: 'screen_state', screen: 'phone_entry' }]));
    const next = hear('what is next');
    expect(next).toContain('An Indian mobile number has exactly 10 digits');
    expect(next).toContain('After this step comes phone otp.');
    expect(hear('which document do i need')).toContain('needs no document');
  });

  it('asks again after one miss and says it did not understand after two in a row', async () => {
    const { hear, actor } = dialog(await contextAfter(panRejected));
    expect(hear('')).toBe(NOT_CAUGHT);
    expect(actor.getSnapshot().value).toBe('unsure');
    expect(hear('what is the weather')).toBe(NOT_UNDERSTOOD);
    expect(actor.getSnapshot().value).toBe('listening');
    // An understood request in between starts the count again.
    expect(hear('')).toBe(NOT_CAUGHT);
    hear('what now');
    expect(hear('')).toBe(NOT_CAUGHT);
  });

  it('masks identity values in everything it says, even in a screen name the app sent', async () => {
    const pan = 'ABCPE1234K';
    const { greeting } = dialog(await contextAfter([{ event: 'screen_state', screen: `review_${pan}` }]));
    expect(greeting()).toContain('screen');
    expect(greeting()).not.toContain(pan);
    expect(greeting()).not.toContain('1234');
  });

  it('with no context, still says it is a machine and helps in general terms', () => {
    const { greeting, hear } = dialog(undefined);
    expect(greeting()).toContain("I'm an automated assistant");
    expect(greeting()).toContain("can't see your screen");
    expect(hear('which document do i need')).toContain('PAN card');
  });
});
