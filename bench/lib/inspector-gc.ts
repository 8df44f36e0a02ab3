import { WebSocket } from 'ws';

/**
 * Asks a process started with `--inspect=<host:port>` for a full garbage collection over the
 * inspector protocol (`HeapProfiler.collectGarbage`). RSS read afterwards holds what the process
 * keeps alive, not garbage that happens to await the next collection.
 */
export async function collectGarbage(inspectorHostPort: string): Promise<void> {
  const targets = (await (await fetch(`http://${inspectorHostPort}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target at ${inspectorHostPort}`);
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.on('message', (data: Buffer) => {
        const message = JSON.parse(data.toString()) as { id?: number; error?: { message: string } };
        if (message.id !== 1) return;
        if (message.error) reject(new Error(message.error.message));
        else resolve();
      });
      socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    });
  } finally {
    socket.close();
  }
}
