import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AudioBuffer } from '@livekit/agents';
import { asLanguageCode, mergeFrames, stt } from '@livekit/agents';
import type { AudioFrame } from '@livekit/rtc-node';
import { INTENT_GRAMMAR } from './intents.js';
import { speechSpan, withNoiseFloor } from './utterance.js';

/** Silence after the utterance, in seconds, so the last word is decoded in full. */
const TRAILING_SILENCE_SECONDS = 0.5;
/** An utterance longer than this is cut: a request to the dialog is a sentence, not a speech. */
const MAX_UTTERANCE_SECONDS = 20;

export interface PocketsphinxOptions {
  /** `pocketsphinx_continuous` from Debian's `pocketsphinx` package. */
  binary?: string;
  /** The acoustic model and dictionary from `pocketsphinx-en-us`. */
  modelDir?: string;
  /** How long one utterance may take to decode before it is given up. */
  timeoutMs?: number;
  /** Speech was heard, but no sentence of the grammar in it (the framework drops an empty transcript). */
  onNothingHeard?: () => void;
}

export const DEBIAN_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

/**
 * Speech in with no provider (docs/decisions/0030-local-voice.md): Debian's pocketsphinx with its
 * US-English model, decoding against the grammar of the dialog's requests (local-voice/intents.ts).
 * The agent's VAD cuts the user's speech into utterances (the framework wraps a non-streaming STT
 * so); each is decoded, at the room's sample rate, by one run of `pocketsphinx_continuous`, which
 * loads in about a tenth of a second and decodes a sentence in about as long again on a quiet core.
 */
export class PocketsphinxStt extends stt.STT {
  label = 'local.PocketsphinxStt';
  private workDir: Promise<string> | undefined;
  private grammarPath: Promise<string> | undefined;
  private sequence = 0;

  constructor(private readonly options: PocketsphinxOptions = {}) {
    super({ streaming: false, interimResults: false });
  }

  override get model(): string {
    return 'pocketsphinx en-us (grammar)';
  }

  override get provider(): string {
    return 'local';
  }

  protected async _recognize(buffer: AudioBuffer, abortSignal?: AbortSignal): Promise<stt.SpeechEvent> {
    const frame = mergeFrames(buffer);
    const pcm = mono(frame);
    const text = await this.decode(pcm, frame.sampleRate, abortSignal);
    if (text === '') this.options.onNothingHeard?.();
    return {
      type: stt.SpeechEventType.FINAL_TRANSCRIPT,
      alternatives: [
        {
          language: asLanguageCode('en'),
          text,
          startTime: 0,
          endTime: pcm.length / frame.sampleRate,
          confidence: text === '' ? 0 : 1,
        },
      ],
    };
  }

  /** The words heard in mono 16-bit PCM at `sampleRate` ('' for none). */
  async decode(pcm: Int16Array, sampleRate: number, abortSignal?: AbortSignal): Promise<string> {
    const dir = await (this.workDir ??= mkdtemp(join(tmpdir(), 'kyc-asr-')));
    const grammar = await (this.grammarPath ??= writeFile(join(dir, 'kyc.gram'), INTENT_GRAMMAR).then(() =>
      join(dir, 'kyc.gram'),
    ));
    const audio = join(dir, `utterance-${(this.sequence += 1)}.raw`);
    // The speech alone, then silence, over a faint noise floor (local-voice/utterance.ts).
    const speech = speechSpan(pcm.subarray(0, MAX_UTTERANCE_SECONDS * sampleRate), sampleRate);
    const conditioned = withNoiseFloor(speech, sampleRate, TRAILING_SILENCE_SECONDS);
    await writeFile(audio, new Uint8Array(conditioned.buffer));
    try {
      return await runDecoder(this.options, grammar, audio, sampleRate, abortSignal);
    } finally {
      await rm(audio, { force: true });
    }
  }

  stream(): stt.SpeechStream {
    throw new Error('PocketsphinxStt decodes whole utterances: the agent session wraps it with its VAD');
  }

  override async close(): Promise<void> {
    const dir = this.workDir;
    this.workDir = undefined;
    this.grammarPath = undefined;
    if (dir) await rm(await dir, { recursive: true, force: true });
  }
}

/** The utterance's first channel. */
function mono(frame: AudioFrame): Int16Array {
  if (frame.channels === 1) return frame.data.subarray(0, frame.samplesPerChannel);
  const out = new Int16Array(frame.samplesPerChannel);
  for (let i = 0; i < frame.samplesPerChannel; i += 1) out[i] = frame.data[i * frame.channels]!;
  return out;
}

/**
 * The FFT size the decoder needs at a sample rate: its analysis window (25.6 ms) must fit. At the
 * room's 24 kHz that is 1,024 points, and the features (filters up to 6,855 Hz, the model's) are
 * the same as at 16 kHz: no resampling, which cost more than the decoding itself here.
 */
function fftSizeFor(sampleRate: number): number {
  let size = 512;
  while (size < sampleRate * 0.025625) size *= 2;
  return size;
}

/**
 * One run of `pocketsphinx_continuous` on a file of raw PCM: every segment it hears, joined.
 * `-remove_silence no` decodes the file as one utterance (the VAD already cut it).
 */
function runDecoder(
  options: PocketsphinxOptions,
  grammar: string,
  audio: string,
  sampleRate: number,
  abortSignal?: AbortSignal,
): Promise<string> {
  const modelDir = options.modelDir ?? DEBIAN_MODEL_DIR;
  const args = [
    ['-hmm', join(modelDir, 'en-us')],
    ['-dict', join(modelDir, 'cmudict-en-us.dict')],
    ['-jsgf', grammar],
    ['-infile', audio],
    ['-samprate', String(sampleRate)],
    ['-nfft', String(fftSizeFor(sampleRate))],
    ['-remove_silence', 'no'],
    // Twice the grammar's default language weight: fewer short words slipped in where the speech
    // did not have them (docs/decisions/0030-local-voice.md).
    ['-lw', '13'],
    ['-logfn', '/dev/null'],
  ].flat();
  return new Promise((resolve, reject) => {
    const child = spawn(options.binary ?? 'pocketsphinx_continuous', args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: abortSignal,
      timeout: options.timeoutMs ?? 10_000,
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', (error) =>
      reject(
        error.name === 'AbortError'
          ? error
          : new Error(
              `pocketsphinx_continuous could not run: ${error.message} (is it installed? see docs/reference/voice-agent.md, "Local voice")`,
            ),
      ),
    );
    child.once('close', (code, signal) => {
      if (code === 0)
        resolve(
          out
            .split('\n')
            .map((line) => line.trim())
            .filter(Boolean)
            .join(' '),
        );
      else reject(new Error(`pocketsphinx_continuous exited with ${code ?? signal}: ${err.trim().slice(0, 300)}`));
    });
  });
}
