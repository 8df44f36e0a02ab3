import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RawData, WebSocket } from 'ws';
import { WebSocketServer } from 'ws';

/** One speech-to-text request (`POST /v1/speech-to-text`) as ElevenLabs received it. */
export interface ScribeRequest {
  apiKey: string | undefined;
  /** The query string (`enable_logging=...`). */
  query: URLSearchParams;
  /** Every multipart field but the file: `model_id`, `language_code`, `tag_audio_events`, ... */
  fields: Record<string, string>;
  fileName: string;
  fileType: string;
  /** The WAV file uploaded. */
  audio: Buffer;
}

/** One utterance to speak, over the multi-context WebSocket (one context) or one HTTP request. */
export interface SpeakRequest {
  transport: 'websocket' | 'http';
  apiKey: string | undefined;
  voiceId: string;
  /** The query string: `model_id`, `output_format`, `language_code`, ... (WebSocket); `output_format`, `enable_logging` (HTTP). */
  query: URLSearchParams;
  /** `model_id` of the WebSocket's query or of the HTTP body. */
  model: string;
  /** `language_code` of the WebSocket's query or of the HTTP body. */
  languageCode: string | undefined;
  /** All the text sent for this utterance, as sent. */
  text: string;
  /** The context is closed (WebSocket) or the response sent (HTTP): the text is complete. */
  done: boolean;
}

export interface ScribeScript {
  /** What was said in the upload: the transcript and the language Scribe reports (ISO 639-3, as it does). */
  transcript(request: ScribeRequest): { text: string; languageCode: string };
}

/**
 * What the stand-in does wrong until told otherwise: Scribe answers 500 (its error body, as
 * ElevenLabs sends one); the WebSocket answers an utterance's first text with an error message and
 * closes (as it refuses a spent quota), drops the connection there, or stalls: from then on that
 * connection takes what it is sent and never answers again, as a half-open socket does.
 */
export interface ElevenLabsFaults {
  scribe?: 'error';
  speech?: 'error' | 'drop' | 'stall';
}

const AUTH_HEADER = 'xi-api-key';
/** The PCM output formats the stand-in speaks (`pcm_<rate>`: 16-bit mono little-endian). */
const PCM_FORMAT = /^pcm_(\d+)$/;

/**
 * A stand-in of ElevenLabs' API on 127.0.0.1, speaking the wire formats the LiveKit plugin sends
 * and parses: Scribe's batch speech-to-text (a multipart upload answered with `text`,
 * `language_code` and `words`), text-to-speech over the multi-context WebSocket
 * (`/text-to-speech/{voice}/multi-stream-input`: JSON messages per `context_id` in, base64 PCM
 * with character alignment and an `isFinal` per context out) and over HTTP
 * (`/text-to-speech/{voice}/stream`: JSON in, raw PCM out). Every request must carry the key in
 * `xi-api-key`; speech is a tone (about 60 ms per word) so the user's side can tell it from silence.
 */
export async function startElevenLabsStandIn(apiKey: string, initial: ScribeScript) {
  let script = initial;
  let faults: ElevenLabsFaults = {};
  const transcriptions: ScribeRequest[] = [];
  const speeches: SpeakRequest[] = [];

  function refuseKey(res: ServerResponse) {
    res
      .writeHead(401, { 'content-type': 'application/json' })
      .end(JSON.stringify({ detail: { status: 'invalid_api_key', message: 'Invalid API key' } }));
  }

  function tone(text: string, sampleRate: number): Buffer {
    const samples = Math.max(1, text.trim().split(/\s+/).length) * Math.round(sampleRate * 0.06);
    const pcm = Buffer.alloc(samples * 2);
    for (let i = 0; i < samples; i += 1)
      pcm.writeInt16LE(Math.round(10_000 * Math.sin((2 * Math.PI * 440 * i) / sampleRate)), i * 2);
    return pcm;
  }

  async function scribe(req: IncomingMessage, url: URL, raw: Buffer, res: ServerResponse) {
    const form = await new Request('http://stand-in/', {
      method: 'POST',
      headers: { 'content-type': req.headers['content-type'] ?? '' },
      body: new Uint8Array(raw),
    }).formData();
    const file = form.get('file');
    const fields = Object.fromEntries(
      [...form.entries()].filter(([key]) => key !== 'file').map(([key, value]) => [key, String(value)]),
    );
    const request: ScribeRequest = {
      apiKey: req.headers[AUTH_HEADER] as string | undefined,
      query: url.searchParams,
      fields,
      fileName: file instanceof File ? file.name : '',
      fileType: file instanceof Blob ? file.type : '',
      audio: file instanceof Blob ? Buffer.from(await file.arrayBuffer()) : Buffer.alloc(0),
    };
    transcriptions.push(request);
    if (request.apiKey !== apiKey) return refuseKey(res);
    if (!(file instanceof Blob) || !fields.model_id) {
      res
        .writeHead(422, { 'content-type': 'application/json' })
        .end(JSON.stringify({ detail: 'file and model_id are required' }));
      return;
    }
    if (faults.scribe === 'error') {
      res
        .writeHead(500, { 'content-type': 'application/json' })
        .end(JSON.stringify({ detail: { status: 'internal_error', message: 'An internal server error occurred' } }));
      return;
    }
    const { text, languageCode } = script.transcript(request);
    // Words and the spaces between them, timed across the upload, as Scribe lists them.
    const parts = text.split(/(\s+)/).filter((part) => part !== '');
    const step = 0.3;
    const words = parts.map((part, index) => ({
      text: part,
      start: index * step,
      end: (index + 1) * step,
      type: /^\s+$/.test(part) ? 'spacing' : 'word',
      speaker_id: 'speaker_0',
      logprob: -0.05,
    }));
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ language_code: languageCode, language_probability: 0.98, text, words }));
  }

  function speakOverHttp(req: IncomingMessage, url: URL, voiceId: string, raw: Buffer, res: ServerResponse) {
    const body = JSON.parse(raw.toString('utf8')) as { text?: string; model_id?: string; language_code?: string };
    const request: SpeakRequest = {
      transport: 'http',
      apiKey: req.headers[AUTH_HEADER] as string | undefined,
      voiceId,
      query: url.searchParams,
      model: body.model_id ?? '',
      languageCode: body.language_code,
      text: body.text ?? '',
      done: false,
    };
    speeches.push(request);
    if (request.apiKey !== apiKey) return refuseKey(res);
    const rate = PCM_FORMAT.exec(url.searchParams.get('output_format') ?? '')?.[1];
    if (!rate || !body.text || !body.model_id) {
      res
        .writeHead(422, { 'content-type': 'application/json' })
        .end(JSON.stringify({ detail: 'text, model_id and a pcm_* output_format are required here' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'audio/pcm' }).end(tone(body.text, Number(rate)));
    request.done = true;
  }

  /** One multi-context WebSocket: text per context in, audio and alignment per context out. */
  function multiStream(socket: WebSocket, url: URL, voiceId: string, key: string | undefined) {
    const sampleRate = Number(PCM_FORMAT.exec(url.searchParams.get('output_format') ?? '')?.[1] ?? 0);
    const contexts = new Map<string, { request: SpeakRequest; pending: string }>();

    const speak = (contextId: string, text: string) => {
      if (text.trim() === '') return;
      const audio = tone(text, sampleRate);
      // Each character's time, spread evenly over the audio, as ElevenLabs times them.
      const chars = [...text];
      const perChar = ((audio.length / 2 / sampleRate) * 1000) / chars.length;
      const alignment = {
        chars,
        charStartTimesMs: chars.map((_, index) => Math.round(index * perChar)),
        charsDurationsMs: chars.map(() => Math.round(perChar)),
      };
      socket.send(
        JSON.stringify({ audio: audio.toString('base64'), normalizedAlignment: alignment, alignment, contextId }),
      );
    };

    let stalled = false;
    socket.on('message', (data: RawData) => {
      if (stalled) return;
      const message = JSON.parse(data.toString()) as {
        text?: string;
        context_id?: string;
        flush?: boolean;
        close_context?: boolean;
        close_socket?: boolean;
      };
      if (message.close_socket) {
        socket.close(1000);
        return;
      }
      const contextId = message.context_id;
      if (!contextId) {
        socket.send(JSON.stringify({ error: 'context_id is required', message: 'context_id is required' }));
        return;
      }
      let context = contexts.get(contextId);
      if (!context) {
        const request: SpeakRequest = {
          transport: 'websocket',
          apiKey: key,
          voiceId,
          query: url.searchParams,
          model: url.searchParams.get('model_id') ?? '',
          languageCode: url.searchParams.get('language_code') ?? undefined,
          text: '',
          done: false,
        };
        speeches.push(request);
        context = { request, pending: '' };
        contexts.set(contextId, context);
      }
      if (typeof message.text === 'string' && message.text !== ' ') {
        context.request.text += message.text;
        context.pending += message.text;
        if (faults.speech === 'stall') {
          stalled = true;
          return;
        }
        if (faults.speech === 'drop') {
          socket.terminate();
          return;
        }
        if (faults.speech === 'error') {
          // As ElevenLabs refuses a spent quota: the error, then the connection closed as a policy violation.
          socket.send(
            JSON.stringify({
              error: 'quota_exceeded',
              message: 'This request exceeds your quota of 10000.',
              contextId,
            }),
          );
          socket.close(1008, 'quota_exceeded');
          return;
        }
      }
      if (message.flush || message.close_context) {
        speak(contextId, context.pending);
        context.pending = '';
      }
      if (message.close_context) {
        contexts.delete(contextId);
        context.request.done = true;
        socket.send(JSON.stringify({ isFinal: true, contextId }));
      }
    });
  }

  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://stand-in');
      try {
        if (req.method === 'POST' && url.pathname === '/v1/speech-to-text') return await scribe(req, url, raw, res);
        const voice = /^\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(url.pathname);
        if (req.method === 'POST' && voice) return speakOverHttp(req, url, decodeURIComponent(voice[1]!), raw, res);
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ detail: `no route ${req.method} ${url.pathname}` }));
      } catch (error) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: String(error) }));
      }
    })();
  });
  const sockets = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const voice = /^\/v1\/text-to-speech\/([^/]+)\/multi-stream-input$/.exec(url.pathname);
    const key = req.headers[AUTH_HEADER] as string | undefined;
    const refusal = !voice
      ? '404 Not Found'
      : key !== apiKey
        ? '401 Unauthorized'
        : !PCM_FORMAT.test(url.searchParams.get('output_format') ?? '')
          ? '422 Unprocessable Entity'
          : undefined;
    if (refusal) {
      socket.end(`HTTP/1.1 ${refusal}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    sockets.handleUpgrade(req, socket, head, (ws) => multiStream(ws, url, decodeURIComponent(voice![1]!), key));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** What ELEVENLABS_BASE_URL is set to (with /v1, as the real one). */
    baseUrl: `http://127.0.0.1:${port}/v1`,
    transcriptions,
    speeches,
    script(next: ScribeScript) {
      script = next;
    },
    /** From now on, until called again (`{}`: none). */
    fail(next: ElevenLabsFaults) {
      faults = next;
    },
    async close() {
      for (const client of sockets.clients) client.terminate();
      sockets.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type ElevenLabsStandIn = Awaited<ReturnType<typeof startElevenLabsStandIn>>;
