import { dispose } from '@livekit/rtc-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { APP_METHODS } from '../agent/app-actions.js';
import { intentOf } from '../agent/local-voice/intents.js';
import { PocketsphinxStt } from '../agent/local-voice/pocketsphinx-stt.js';
import { eventually } from './support/eventually.js';
import { KYC_PHRASES, SPEAKERS } from './support/kyc-phrases.js';
import type { MediaStack } from './support/media-stack.js';
import { startMediaStack } from './support/media-stack.js';
import type { SimulatedUser } from './support/simulated-user.js';
import { speak, speakAt } from './support/speech.js';
import { startCall } from './support/voice-call.js';

/**
 * The local voice (docs/reference/voice-agent.md, "Local voice"): the worker with no key of any provider,
 * so espeak-ng speaks, pocketsphinx listens and the scripted dialog answers; the user's phrases
 * are spoken by espeak-ng into the room.
 */
let stack: MediaStack;
const users: SimulatedUser[] = [];

beforeAll(async () => {
  stack = await startMediaStack({
    // The stand-ins run, but the worker is pointed at none of them.
    models: { reply: () => 'a model answered', transcript: () => 'a model transcribed' },
    worker: { MODEL_BASE_URL: '', MODEL_API_KEY: '' },
  });
});

afterEach(async () => {
  for (const user of users.splice(0)) await user.leave().catch(() => {});
});

afterAll(async () => {
  console.log(
    `[local-voice] requests said again in the room: ${retries.length}${retries.map((retry) => `\n[local-voice]   ${retry}`).join('')}`,
  );
  if (process.env.MEDIA_TEST_LOG)
    (await import('node:fs')).writeFileSync(process.env.MEDIA_TEST_LOG, stack?.worker.output() ?? '');
  await stack?.stop();
  await dispose();
});

/** The agent's state as the framework publishes it on its participant. */
const agentState = (user: SimulatedUser) => user.agents()[0]?.attributes['lk.agent.state'];

/** Waits until the agent has finished speaking and listens again. */
async function untilListening(user: SimulatedUser) {
  await eventually(
    () => agentState(user),
    (state) => state === 'speaking',
    30_000,
  ).catch(() => undefined);
  await eventually(
    () => agentState(user),
    (state) => state === 'listening',
    60_000,
  );
}

/** Phrases the agent did not answer as expected at the first try, with what it said, printed at the end. */
const retries: string[] = [];

/**
 * The user says `phrase` (espeak-ng) into the room; resolves with what the agent then said, as its
 * transcript, once that matches `expected`. Not answered so (the recogniser heard another request or
 * none: on the loaded two-core test machine the VAD runs slower than real time and now and then
 * cuts an utterance badly), the user says it again, as a person would, up to five times in all;
 * every retry is printed. Three were once not enough in a fresh-clone CI run: "Why is this field
 * wrong?" was not heard, then heard twice as a request for a person. The VAD's lead-in then held the
 * end of the previous request, heard as a word before the new one; with the local voice's shorter
 * lead-in no retry was needed in the runs since (docs/decisions/0030-local-voice.md), but the first
 * syllable of a request can still be lost after the user's track sat idle, so the retries stay.
 */
async function ask(user: SimulatedUser, phrase: string, expected: RegExp) {
  let said = '';
  for (let attempt = 1; attempt <= 5; attempt += 1) {
    const before = user.transcripts.length;
    user.resetLoudest();
    const spoken = speak(phrase, 'en-us');
    await user.speak(spoken.samples, spoken.sampleRate);
    // The dialog answers every turn, a miss included: wait for that answer to be over.
    await untilListening(user);
    said = user.transcripts.slice(before).join(' ');
    if (expected.test(said)) {
      // Heard as sound, not only read: espeak-ng's answer reached the user's track.
      expect(user.loudestAgentAudio()).toBeGreaterThan(1000);
      return said;
    }
    retries.push(`"${phrase}" (attempt ${attempt}: ${said.slice(0, 120)})`);
  }
  return said;
}

describe('the local voice on a real LiveKit server, with no provider key', () => {
  it('says at start that it is local', () => {
    expect(stack.worker.output()).toContain('voice: local, no provider key needed');
  });

  it('greets with the screen and the held error, answers spoken requests aloud, and the turns reach the service', async () => {
    const sessionId = 'local-voice-1';
    const { service, models } = stack;
    await service.postEvent({ session_id: sessionId, event: 'screen_state', screen: 'pan_details' });
    await service.postEvent({
      session_id: sessionId,
      event: 'validation_failed',
      screen: 'pan_details',
      component_id: 'pan',
      errors: ['pan_invalid_format'],
    });
    const watch = service.watchTurns(sessionId);
    const { user } = await startCall(service, sessionId, users, 'pan_details');

    // The call opens with the tenant's consent notice (docs/explanation/calls.md), then the greeting: both are spoken
    // at espeak-ng's pace before the greeting's last words are transcribed.
    const greeting = await eventually(
      () => user.transcripts.join(' '),
      (text) => /consent/i.test(text) && /PAN details screen/.test(text),
      60_000,
    );
    expect(greeting).toContain('not accepted: the PAN does not have the form of 5 letters, 4 digits and 1 letter');
    await eventually(
      () => user.loudestAgentAudio(),
      (rms) => rms > 1000,
      30_000,
    );
    await untilListening(user);

    expect(await ask(user, 'Which document do I need?', /PAN card/)).toContain('you need your PAN card');
    expect(await ask(user, 'What should I do next?', /After this step/)).toContain(
      'After this step comes personal details.',
    );
    // The app's side of the agent's actions: explaining the field, the agent highlights it in the app.
    const highlighted: string[] = [];
    user.room.localParticipant!.registerRpcMethod(APP_METHODS.highlight_field, async (data) => {
      highlighted.push(String((JSON.parse(data.payload) as { component_id: string }).component_id));
      return 'ok';
    });
    const explained = await ask(user, 'Why is this field wrong?', /five letters/);
    expect(explained).toContain('The form is: five letters, four digits, one letter');
    await eventually(
      () => highlighted,
      (ids) => ids.includes('pan'),
      15_000,
    );

    // Typed words the dialog does not know: asked once to say it again, then told what it can do.
    const before = user.transcripts.length;
    await user.type('blue elephant');
    await eventually(
      () => user.transcripts.slice(before).join(' '),
      (text) => text.includes("didn't catch that"),
      30_000,
    );
    await user.type('purple train');
    await eventually(
      () => user.transcripts.slice(before).join(' '),
      (text) => text.includes('I did not understand'),
      30_000,
    );

    // Each turn reached the service: the user's as recognised, the agent's as spoken.
    await eventually(
      () => [...watch.turns.values()].filter((turn) => (turn.properties as { role: string }).role === 'agent').length,
      (count) => count >= 6,
      15_000,
    );
    await watch.stop();
    const stored = [...watch.turns.values()].map(
      (event) => event.properties as { role: string; channel: string; text: string },
    );
    // The user's spoken turns as the recogniser heard them: sentences of its grammar, one per request.
    // (A request said again after a mishearing adds a turn of its own.)
    expect(
      stored.filter((turn) => turn.role === 'user' && turn.channel === 'voice').map((turn) => intentOf(turn.text)),
    ).toEqual(expect.arrayContaining(['document', 'next', 'explain']));
    expect(stored).toContainEqual(expect.objectContaining({ role: 'user', channel: 'chat', text: 'blue elephant' }));
    expect(
      stored
        .filter((turn) => turn.role === 'agent')
        .map((turn) => turn.text)
        .join(' '),
    ).toContain('PAN card');
    const events = await service.activity(sessionId, 'event');
    expect(events.filter((item) => item.payload.event === 'voice_conversation_turn').length).toBeGreaterThanOrEqual(10);
    // No model provider was asked anything.
    expect(models.chats).toHaveLength(0);
    expect(models.transcriptions).toHaveLength(0);
  }, 240_000);
});

describe('the local recogniser on spoken KYC phrases', () => {
  const requestCount = KYC_PHRASES.filter((p) => p.intent).length;
  const voices = SPEAKERS.length;
  it(`understands at least 90 % of ${requestCount} requests, each spoken by two of ${voices} voices at several speeds, and rejects some others`, async () => {
    const recogniser = new PocketsphinxStt();
    const misses: string[] = [];
    let understood = 0;
    let requests = 0;
    let rejected = 0;
    let others = 0;
    try {
      // Each phrase by two of the speakers, in turn.
      for (const [index, phrase] of KYC_PHRASES.flatMap(
        (p, i) =>
          [
            [i, p],
            [i + 2, p],
          ] as const,
      )) {
        const speaker = SPEAKERS[index % SPEAKERS.length]!;
        // At the room's rate, as the agent receives it.
        const pcm = speakAt(phrase.text, speaker.voice, speaker.speed, 24_000);
        const heard = await recogniser.decode(pcm, 24_000);
        const intent = intentOf(heard);
        if (phrase.intent === undefined) {
          others += 1;
          if (intent === undefined) rejected += 1;
          continue;
        }
        requests += 1;
        if (intent === phrase.intent) understood += 1;
        else misses.push(`[${speaker.voice} ${speaker.speed}] "${phrase.text}" → "${heard}" (${intent ?? 'nothing'})`);
      }
    } finally {
      await recogniser.close();
    }
    const accuracy = understood / requests;
    console.log(
      `[local-asr] requests understood: ${understood}/${requests} = ${(accuracy * 100).toFixed(1)} %; other sentences rejected: ${rejected}/${others}`,
    );
    for (const miss of misses) console.log(`[local-asr] miss ${miss}`);
    expect(requests).toBeGreaterThanOrEqual(80);
    // The same samples every run (speakAt resamples without dither; the recogniser's noise floor has
    // a fixed seed), so the figure is the same on every run and every machine with the same Debian
    // packages: 92 of 96 (95.8 %) when this floor was set (docs/decisions/0030-local-voice.md).
    expect(accuracy).toBeGreaterThanOrEqual(0.9);
    // A sentence on another subject must not always come out as a request: 6 of 12 were rejected then.
    expect(others).toBeGreaterThanOrEqual(12);
    expect(rejected).toBeGreaterThanOrEqual(3);
  }, 180_000);
});
