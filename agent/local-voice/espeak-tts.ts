import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import type { APIConnectOptions } from '@livekit/agents';
import { AudioByteStream, shortuuid, tokenize, tts } from '@livekit/agents';

/** The rate the agent's room output runs at (the agents framework's room I/O default): no resampling there. */
export const LOCAL_TTS_SAMPLE_RATE = 24_000;
/** 20 ms frames: the first one reaches the room as soon as espeak-ng has written that much. */
const FRAME_SAMPLES = LOCAL_TTS_SAMPLE_RATE / 50;

/**
 * The languages spoken locally and the espeak-ng voice of each: English and the Indian languages
 * espeak-ng has a voice for (docs/reference/voice-agent.md, "Local voice").
 */
export const ESPEAK_VOICES: Readonly<Record<string, string>> = {
  en: 'en-us',
  hi: 'hi',
  bn: 'bn',
  gu: 'gu',
  kn: 'kn',
  ml: 'ml',
  mr: 'mr',
  pa: 'pa',
  ta: 'ta',
  te: 'te',
  or: 'or',
  ur: 'ur',
  as: 'as',
};

export interface EspeakOptions {
  /** An espeak-ng voice name (`en-us`, `hi`, `en-gb+f3`). */
  voice: string;
  /** Words per minute. */
  speed: number;
  /** The programs, for a machine that has them elsewhere. */
  espeakBinary?: string;
  soxBinary?: string;
}

/**
 * Speech out with no provider: espeak-ng (Debian's package) speaks the text, sox turns its
 * 22,050 Hz WAV into 24 kHz 16-bit PCM, and the frames go to the room as they come, while the
 * rest of the sentence is still being synthesised. One pair of processes per sentence (the
 * stream adapter cuts an answer into sentences), each ended if the answer is interrupted.
 */
export class EspeakTts extends tts.TTS {
  label = 'local.EspeakTts';

  constructor(private readonly options: EspeakOptions) {
    super(LOCAL_TTS_SAMPLE_RATE, 1, { streaming: false });
  }

  override get model(): string {
    return `espeak-ng ${this.options.voice}`;
  }

  override get provider(): string {
    return 'local';
  }

  synthesize(text: string, connOptions?: APIConnectOptions, abortSignal?: AbortSignal): tts.ChunkedStream {
    return new EspeakStream(this, text, this.options, connOptions, abortSignal);
  }

  stream(): tts.SynthesizeStream {
    throw new Error('EspeakTts synthesises one sentence at a time: wrap it in tts.StreamAdapter (createLocalTts does)');
  }
}

/** The espeak-ng voice as the framework uses it: answers cut into sentences, each spoken as soon as it is complete. */
export function createLocalTts(options: EspeakOptions): tts.TTS {
  return new tts.StreamAdapter(new EspeakTts(options), new tokenize.basic.SentenceTokenizer());
}

class EspeakStream extends tts.ChunkedStream {
  label = 'local.EspeakStream';

  constructor(
    engine: EspeakTts,
    private readonly text: string,
    private readonly options: EspeakOptions,
    connOptions?: APIConnectOptions,
    abortSignal?: AbortSignal,
  ) {
    super(text, engine, connOptions, abortSignal);
  }

  protected async run(): Promise<void> {
    const requestId = shortuuid();
    const frames = new AudioByteStream(LOCAL_TTS_SAMPLE_RATE, 1, FRAME_SAMPLES);
    try {
      let pending: tts.SynthesizedAudio | undefined;
      const put = (frame: tts.SynthesizedAudio['frame']) => {
        if (pending) this.queue.put(pending);
        pending = { requestId, segmentId: requestId, frame, final: false };
      };
      for await (const chunk of speak(this.text, this.options, this.abortSignal))
        for (const frame of frames.write(chunk)) put(frame);
      for (const frame of frames.flush()) put(frame);
      if (pending) this.queue.put({ ...pending, final: true });
    } finally {
      this.queue.close();
    }
  }
}

/** A process's exit, as a promise that rejects when it failed. */
function exited(child: ChildProcess, name: string, stderr: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once('error', (error) =>
      reject(
        new Error(
          `${name} could not run: ${error.message} (is it installed? see docs/reference/voice-agent.md, "Local voice")`,
        ),
      ),
    );
    child.once('close', (code, signal) => {
      if (code === 0 || signal === 'SIGTERM') resolve();
      else reject(new Error(`${name} exited with ${code ?? signal}: ${stderr().trim().slice(0, 300)}`));
    });
  });
}

/**
 * The PCM of `text` spoken by espeak-ng, as it is produced. The text goes in on standard input,
 * never as an argument, so nothing in it is read as an option.
 */
export async function* speak(text: string, options: EspeakOptions, signal?: AbortSignal): AsyncGenerator<Buffer> {
  const args = ['--stdout', '-v', options.voice, '-s', String(options.speed)];
  const espeak = spawn(options.espeakBinary ?? 'espeak-ng', args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const sox = spawn(
    options.soxBinary ?? 'sox',
    [
      '-q',
      '-t',
      'wav',
      '-',
      '-t',
      'raw',
      '-r',
      String(LOCAL_TTS_SAMPLE_RATE),
      '-e',
      'signed-integer',
      '-b',
      '16',
      '-c',
      '1',
      '-',
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let espeakErr = '';
  let soxErr = '';
  espeak.stderr.on('data', (d: Buffer) => (espeakErr += d.toString()));
  sox.stderr.on('data', (d: Buffer) => (soxErr += d.toString()));
  const done = Promise.all([exited(espeak, 'espeak-ng', () => espeakErr), exited(sox, 'sox', () => soxErr)]);
  // A failure before the audio is read must not go unhandled; it is awaited below.
  done.catch(() => undefined);
  const stop = () => {
    espeak.kill('SIGTERM');
    sox.kill('SIGTERM');
  };
  signal?.addEventListener('abort', stop, { once: true });
  // A process that is gone makes writes to it fail (EPIPE): the exit says why.
  espeak.stdin.on('error', () => undefined);
  sox.stdin.on('error', () => undefined);
  espeak.stdout.pipe(sox.stdin);
  espeak.stdin.end(text);
  try {
    for await (const chunk of sox.stdout) {
      if (signal?.aborted) break;
      yield chunk as Buffer;
    }
    if (!signal?.aborted) await done;
  } finally {
    signal?.removeEventListener('abort', stop);
    if (espeak.exitCode === null || sox.exitCode === null) stop();
  }
}
