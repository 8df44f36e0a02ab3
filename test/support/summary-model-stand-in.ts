import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the stand-in answers: a status, and the summary's text when it is 200. */
export interface SummaryModelAnswer {
  status: number;
  text?: string;
}

export interface SummaryModelStandIn {
  /** The base URL (`CALL_SUMMARY_MODEL_BASE_URL`). */
  url: string;
  requests: { path: string; body: { model: string; messages: { role: string; content: string }[] } }[];
  close(): Promise<void>;
}

/** A stand-in of an OpenAI-compatible chat completions endpoint as the call summary uses it (CALL_SUMMARY_MODEL_*): not streamed, on 127.0.0.1. */
export async function startSummaryModelStandIn(answer: SummaryModelAnswer): Promise<SummaryModelStandIn> {
  const requests: SummaryModelStandIn['requests'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      if (answer.status !== 200)
        return void res
          .writeHead(answer.status, { 'content-type': 'application/json' })
          .end('{"error":{"message":"down"}}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          model: 'stand-in',
          choices: [{ index: 0, message: { role: 'assistant', content: answer.text }, finish_reason: 'stop' }],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
