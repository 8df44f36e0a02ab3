import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  headers: Record<string, string>;
  body: string;
  /** What `standardwebhooks` made of it: the message, or the error it threw. */
  verified: { type: string; data: Record<string, unknown> } | Error;
}

/**
 * A real HTTP receiver on 127.0.0.1 that verifies each message with the `standardwebhooks`
 * package, as docs/reference/webhooks.md's example does, and answers `status` (200 unless set).
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  status = 200;
  private server: Server | undefined;
  private readonly webhook: Webhook;

  constructor(secret: string) {
    this.webhook = new Webhook(secret);
  }

  /** Listens on `port` (0: a free one); the URL. */
  async start(port = 0): Promise<string> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(Object.entries(req.headers).map(([key, value]) => [key, String(value)]));
        let verified: Received['verified'];
        try {
          verified = this.webhook.verify(body, headers) as Received['verified'];
        } catch (error) {
          verified = error as Error;
        }
        this.received.push({ headers, body, verified });
        res.writeHead(this.status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The verified messages of a type. */
  messages(type: string): { type: string; data: Record<string, unknown> }[] {
    return this.received.flatMap((message) =>
      message.verified instanceof Error || message.verified.type !== type ? [] : [message.verified],
    );
  }
}
