/**
 * Opens `clients` SSE connections to the activity stream and measures, for every item received,
 * the time from its recording (the item's timestamp) to its receipt here. Runs in its own process
 * so the readers do not share an event loop with the server. Prints one JSON line when told to stop
 * (SIGTERM) or after `seconds`.
 */
import { request } from 'node:http';
import { createParser } from 'eventsource-parser';

interface Job {
  url: string;
  clients: number;
  seconds: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as Job;
const latencies: number[] = [];
let connected = 0;
let failures = 0;
const requests: ReturnType<typeof request>[] = [];

function open(): void {
  const req = request(`${job.url}/api/activity/stream`, { headers: { accept: 'text/event-stream' } }, (res) => {
    if (res.statusCode !== 200) {
      failures += 1;
      res.resume();
      return;
    }
    connected += 1;
    if (connected === job.clients) process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
    const parser = createParser({
      onEvent: (message) => {
        if (message.event !== 'activity') return;
        const { timestamp } = JSON.parse(message.data) as { timestamp: string };
        latencies.push(Date.now() - Date.parse(timestamp));
      },
    });
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => parser.feed(chunk));
  });
  req.on('error', () => (failures += 1));
  req.end();
  requests.push(req);
}

function finish(): void {
  for (const req of requests) req.destroy();
  // Exit only once the line is flushed: a pipe write is asynchronous, and exiting early cuts it.
  process.stdout.write(`${JSON.stringify({ latencies, connected, failures })}\n`, () => process.exit(0));
}

for (let i = 0; i < job.clients; i += 1) open();
process.on('SIGTERM', finish);
setTimeout(finish, job.seconds * 1000).unref();
