import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One chat completion request as the provider received it. */
export interface ChatRequest {
  model: string;
  stream?: boolean;
  messages: { role: string; content: unknown; tool_calls?: unknown[] }[];
  tools?: { type: string; function: { name: string } }[];
  /** The whole body as sent, for "nothing raw anywhere" checks. */
  raw: string;
}

export interface TranscriptionRequest {
  model: string;
  /** The WAV file the agent uploaded. */
  audio: Buffer;
  raw: string;
}

export interface SpeechRequest {
  input: string;
  model: string;
  voice: string;
  response_format: string;
}

/** The sample rate of OpenAI's `pcm` speech format: 24 kHz, 16-bit, mono. */
export const SPEECH_SAMPLE_RATE = 24_000;

export interface ModelScript {
  /**
   * The assistant's answer to a chat request. The provider failing: a status and body, 'hang'
   * (never answers), or `malformed`, sent as the body of a 200 event stream.
   */
  reply(
    request: ChatRequest,
  ):
    | string
    | { status: number; body: string }
    | { malformed: string }
    | { toolCall: { name: string; arguments: Record<string, unknown> } };
  /** The text of a transcription. */
  transcript(request: TranscriptionRequest): string;
}

/**
 * Stand-ins of an OpenAI-compatible provider's three endpoints, on 127.0.0.1, speaking their
 * wire formats: chat completions streamed as server-sent `chat.completion.chunk` events ending
 * in `[DONE]`, transcriptions from a multipart upload answered `{"text": ...}`, and speech as raw
 * 24 kHz 16-bit PCM (a tone: audible, so the user's side can tell it from silence).
 */
export async function startModelStandIn(initial: ModelScript) {
  let script = initial;
  const chats: ChatRequest[] = [];
  const transcriptions: TranscriptionRequest[] = [];
  const speeches: SpeechRequest[] = [];
  const hanging = new Set<ServerResponse>();

  async function body(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  function chat(raw: string, res: ServerResponse) {
    const parsed = JSON.parse(raw) as Omit<ChatRequest, 'raw'>;
    const request = { ...parsed, raw };
    chats.push(request);
    const answer = script.reply(request);
    if (answer === 'hang') {
      hanging.add(res);
      return;
    }
    if (typeof answer !== 'string' && 'toolCall' in answer) {
      // A function call, streamed as the provider streams one: the call's name first, its arguments after, finish_reason tool_calls.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const base = {
        id: `chatcmpl-${chats.length}`,
        object: 'chat.completion.chunk',
        created: Math.floor(Date.now() / 1000),
        model: parsed.model,
      };
      const send = (chunk: object) => res.write(`data: ${JSON.stringify({ ...base, ...chunk })}\n\n`);
      const call = {
        index: 0,
        id: `call_${chats.length}`,
        type: 'function',
        function: { name: answer.toolCall.name, arguments: '' },
      };
      send({
        choices: [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: null }],
      });
      send({
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, function: { arguments: JSON.stringify(answer.toolCall.arguments) } }] },
            finish_reason: null,
          },
        ],
      });
      send({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
      res.end('data: [DONE]\n\n');
      return;
    }
    if (typeof answer !== 'string' && 'malformed' in answer) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }).end(answer.malformed);
      return;
    }
    if (typeof answer !== 'string') {
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const base = {
      id: `chatcmpl-${chats.length}`,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: parsed.model,
    };
    const send = (chunk: object) => res.write(`data: ${JSON.stringify({ ...base, ...chunk })}\n\n`);
    send({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    for (const word of answer.split(/(?<= )/))
      send({ choices: [{ index: 0, delta: { content: word }, finish_reason: null }] });
    send({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    send({
      choices: [],
      usage: {
        prompt_tokens: 10,
        completion_tokens: answer.split(' ').length,
        total_tokens: 10 + answer.split(' ').length,
      },
    });
    res.end('data: [DONE]\n\n');
  }

  async function transcription(req: IncomingMessage, raw: Buffer, res: ServerResponse) {
    const form = await new Request('http://stand-in/', {
      method: 'POST',
      headers: { 'content-type': req.headers['content-type'] ?? '' },
      body: new Uint8Array(raw),
    }).formData();
    const file = form.get('file');
    const request: TranscriptionRequest = {
      model: String(form.get('model')),
      audio: file instanceof Blob ? Buffer.from(await file.arrayBuffer()) : Buffer.alloc(0),
      raw: [...form.entries()]
        .filter(([key]) => key !== 'file')
        .map(([key, value]) => `${key}=${String(value)}`)
        .join('&'),
    };
    transcriptions.push(request);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ text: script.transcript(request) }));
  }

  function speech(raw: string, res: ServerResponse) {
    const request = JSON.parse(raw) as SpeechRequest;
    speeches.push(request);
    // About 60 ms of a 440 Hz tone per word, at a third of full scale.
    const samples = Math.max(1, request.input.split(/\s+/).length) * Math.round(SPEECH_SAMPLE_RATE * 0.06);
    const pcm = Buffer.alloc(samples * 2);
    for (let i = 0; i < samples; i += 1)
      pcm.writeInt16LE(Math.round(10_000 * Math.sin((2 * Math.PI * 440 * i) / SPEECH_SAMPLE_RATE)), i * 2);
    res.writeHead(200, { 'content-type': 'audio/pcm' }).end(pcm);
  }

  const server = createServer((req, res) => {
    void (async () => {
      const raw = await body(req);
      const path = new URL(req.url ?? '/', 'http://stand-in').pathname;
      try {
        if (req.method === 'POST' && path === '/v1/chat/completions') return chat(raw.toString('utf8'), res);
        if (req.method === 'POST' && path === '/v1/audio/transcriptions') return await transcription(req, raw, res);
        if (req.method === 'POST' && path === '/v1/audio/speech') return speech(raw.toString('utf8'), res);
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } }));
      } catch (error) {
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** The base URL an OpenAI client is given (with /v1, as the real one). */
    baseUrl: `http://127.0.0.1:${port}/v1`,
    chats,
    transcriptions,
    speeches,
    script(next: ModelScript) {
      script = next;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type ModelStandIn = Awaited<ReturnType<typeof startModelStandIn>>;
