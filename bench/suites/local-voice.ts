import { dispose } from '@livekit/rtc-node';
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { eventually } from '../../test-media/support/eventually.js';
import { startMediaStack } from '../../test-media/support/media-stack.js';
import { speakAt } from '../../test-media/support/speech.js';
import { startCall } from '../../test-media/support/voice-call.js';
import { percentile } from '../lib/stats.js';
import { speak as espeak } from '../../agent/local-voice/espeak-tts.js';
import { LOCAL_VAD_MIN_SILENCE_MS } from '../../agent/local-voice/turn-timing.js';
import { PocketsphinxStt } from '../../agent/local-voice/pocketsphinx-stt.js';

/** The local parts on their own, in this process: the recogniser's decode and espeak-ng's first audio, p50 of `rounds` each. */
async function partsAlone(rounds: number): Promise<{ decodeMs: number; firstAudioMs: number }> {
  const recogniser = new PocketsphinxStt();
  const decode: number[] = [];
  const firstAudio: number[] = [];
  try {
    for (let round = 0; round < rounds; round += 1) {
      const pcm = trimmed(speakAt(REQUESTS[round % REQUESTS.length]!, 'en-us', 165, SAMPLE_RATE));
      let started = performance.now();
      await recogniser.decode(pcm, SAMPLE_RATE);
      decode.push(performance.now() - started);
      started = performance.now();
      for await (const chunk of espeak('For the PAN details step you need your PAN card.', {
        voice: 'en-us',
        speed: 165,
      })) {
        if (chunk.length > 0) break;
      }
      firstAudio.push(performance.now() - started);
    }
  } finally {
    await recogniser.close();
  }
  return {
    decodeMs: percentile(
      decode.sort((a, b) => a - b),
      50,
    ),
    firstAudioMs: percentile(
      firstAudio.sort((a, b) => a - b),
      50,
    ),
  };
}

/** The requests asked in turn, each answered by the scripted dialog. */
const REQUESTS = [
  'Which document do I need?',
  'What should I do next?',
  'Why is this field wrong?',
  'Repeat that please',
  'What is the next step?',
];
const SAMPLE_RATE = 24_000;

/** The phrase without espeak-ng's trailing silence: its end is the end of the user's speech. */
function trimmed(pcm: Int16Array): Int16Array {
  let end = pcm.length;
  while (end > 0 && Math.abs(pcm[end - 1]!) < 300) end -= 1;
  return pcm.subarray(0, Math.min(pcm.length, end + SAMPLE_RATE / 50));
}

/**
 * The local voice's reply latency (docs/reference/voice-agent.md, "Local voice"): the real LiveKit server,
 * the service and the agent worker with no provider key (espeak-ng, pocketsphinx, the scripted
 * dialog), and a user in the room who speaks each request (espeak-ng) and listens. Measured at the
 * user: from when the last sample of the request left their microphone track to the first
 * audible frame of the answer on the agent's track, so the VAD's silence wait, the recogniser, the
 * dialog, espeak-ng and both legs through the server are all in it.
 */
export async function localVoiceSuite(options: { turns: number }) {
  // The target is for a two-core machine: the call's processes (server, service, worker, the user)
  // get every core, not the load generator's one the runner is pinned to for the other suites.
  try {
    execFileSync('taskset', ['-a', '-p', '-c', `0-${cpus().length - 1}`, String(process.pid)], { stdio: 'ignore' });
  } catch {
    // No taskset: nothing was pinned.
  }
  const load = loadavg()[0]!;
  const stack = await startMediaStack({
    models: { reply: () => 'unused', transcript: () => 'unused' },
    worker: { MODEL_BASE_URL: '', MODEL_API_KEY: '' },
  });
  const latencies: number[] = [];
  let notHeard = 0;
  try {
    const sessionId = 'bench-local-voice';
    await stack.service.postEvent({ session_id: sessionId, event: 'screen_state', screen: 'pan_details' });
    await stack.service.postEvent({
      session_id: sessionId,
      event: 'validation_failed',
      screen: 'pan_details',
      component_id: 'pan',
      errors: ['pan_invalid_format'],
    });
    const users: Awaited<ReturnType<typeof startCall>>['user'][] = [];
    const { user } = await startCall(stack.service, sessionId, users, 'pan_details');
    const state = () => user.agents()[0]?.attributes['lk.agent.state'];
    const untilListening = async () => {
      await eventually(
        () => state(),
        (value) => value === 'speaking',
        30_000,
      ).catch(() => undefined);
      await eventually(
        () => state(),
        (value) => value === 'listening',
        60_000,
      );
    };
    await eventually(
      () => user.transcripts.join(' '),
      (text) => /automated assistant/i.test(text),
      60_000,
    );
    await untilListening();
    for (let turn = 0; turn < options.turns; turn += 1) {
      const pcm = trimmed(speakAt(REQUESTS[turn % REQUESTS.length]!, 'en-us', 165, SAMPLE_RATE));
      const ended = await user.speak(pcm, SAMPLE_RATE, 1500);
      const heard = await eventually(
        () => user.firstAudibleAfter(ended),
        (at) => at !== undefined,
        20_000,
      ).catch(() => undefined);
      if (heard === undefined) notHeard += 1;
      else latencies.push(heard - ended);
      await untilListening();
    }
    for (const each of users) await each.leave();
    if (process.env.BENCH_AGENT_LOG)
      (await import('node:fs')).writeFileSync(process.env.BENCH_AGENT_LOG, stack.worker.output());
  } finally {
    await stack.stop();
    await dispose();
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  const p50 = sorted.length > 0 ? percentile(sorted, 50) : undefined;
  const p90 = sorted.length > 0 ? percentile(sorted, 90) : undefined;
  const ms = (value: number | undefined) =>
    value === undefined ? 'n/a' : `${Math.round(value).toLocaleString('en-US')} ms`;
  const markdown = [
    '| turns | answered | p50 | p90 | fastest | slowest | load average before |',
    '|---|---|---|---|---|---|---|',
    `| ${options.turns} | ${latencies.length} | ${ms(p50)} | ${ms(p90)} | ${ms(sorted[0])} | ${ms(sorted.at(-1))} ` +
      `| ${load.toFixed(1)} on ${cpus().length} cores |`,
  ].join('\n');
  const alone = await partsAlone(options.turns);
  const own =
    `The parts alone, in the bench's process (p50 of ${options.turns}, load average ${loadavg()[0]!.toFixed(1)}): ` +
    `one decode by pocketsphinx ${Math.round(alone.decodeMs)} ms, espeak-ng and sox to their first audio ${Math.round(alone.firstAudioMs)} ` +
    `ms; the VAD waits ${LOCAL_VAD_MIN_SILENCE_MS} ms of silence before either starts.`;
  return { markdown: `${markdown}\n\n${own}`, p50, p90, notHeard, met: p50 !== undefined && p50 <= 1_200 };
}
