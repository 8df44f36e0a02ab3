// What the agent adds to the ElevenLabs plugin so that one failing request does not end or silence
// a call (docs/reference/voice-agent.md, "Faults"; each is tested in test-media/voice-elevenlabs.test.ts).
import type { stt } from '@livekit/agents';
import * as elevenlabs from '@livekit/agents-plugin-elevenlabs';

type SttError = Parameters<stt.STTCallbacks['error']>[0];

/**
 * ElevenLabs' Scribe with one lost utterance kept from ending the call. The plugin reports an
 * utterance it could not transcribe (after its retries) as an unrecoverable error, and the
 * framework ends the whole session on an unrecoverable speech-to-text error (it counts only
 * language-model and text-to-speech errors against a limit). The next utterance is sent anew either
 * way, as with the OpenAI-compatible STT, which reports none: so the error is passed on as
 * recoverable, and still logged with its cause ('model error', agent/job.ts).
 */
export class ScribeStt extends elevenlabs.STT {
  override emit<E extends keyof stt.STTCallbacks>(event: E, ...args: Parameters<stt.STTCallbacks[E]>): boolean {
    if (event !== 'error') return super.emit(event, ...args);
    const [error] = args as [SttError];
    return super.emit('error', { ...error, recoverable: true });
  }
}

/**
 * ElevenLabs' WebSocket speech with a deadline. The plugin waits for an utterance's audio with no
 * deadline of its own, on one connection it keeps for the whole call: a connection that stops
 * answering (a stalled server, a half-open socket) would leave that answer and every later one
 * unspoken. An utterance whose text went out and no audio came back within the model budget
 * closes the connection (`onStall` says so): that utterance is dropped unspoken, and the next one
 * opens a new connection.
 */
export class DeadlineSpeech extends elevenlabs.TTS {
  readonly #timeoutMs: number;
  readonly #onStall: () => void;

  constructor(options: elevenlabs.TTSOptions, timeoutMs: number, onStall: () => void) {
    super(options);
    this.#timeoutMs = timeoutMs;
    this.#onStall = onStall;
  }

  override stream(options?: Parameters<elevenlabs.TTS['stream']>[0]): ReturnType<elevenlabs.TTS['stream']> {
    const stream = super.stream(options);
    let deadline: NodeJS.Timeout | undefined;
    const settled = () => clearTimeout(deadline);
    const [pushText, pushAudio, close] = [
      stream.pushText.bind(stream),
      stream.pushAudio.bind(stream),
      stream.close.bind(stream),
    ];
    stream.pushText = (text) => {
      if (deadline === undefined && text.trim() !== '') {
        deadline = setTimeout(() => {
          this.#onStall();
          void this.close();
        }, this.#timeoutMs);
        deadline.unref();
      }
      pushText(text);
    };
    stream.pushAudio = (data) => {
      settled();
      pushAudio(data);
    };
    stream.close = () => {
      settled();
      close();
    };
    return stream;
  }
}
