import { WebSocket } from 'ws';

/** One connection to a process started with `--inspect=<host:port>`, speaking the inspector protocol. */
export interface InspectorSession {
  call<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
  close(): void;
}

export async function openInspector(inspectorHostPort: string): Promise<InspectorSession> {
  const targets = (await (await fetch(`http://${inspectorHostPort}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target at ${inspectorHostPort}`);
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let nextId = 1;
  const waiting = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: { message: string } };
    const pending = message.id === undefined ? undefined : waiting.get(message.id);
    if (!pending) return;
    waiting.delete(message.id!);
    if (message.error) pending.reject(new Error(message.error.message));
    else pending.resolve(message.result);
  });
  return {
    call: <T>(method: string, params: Record<string, unknown> = {}) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve: (result) => resolve(result as T), reject });
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

/**
 * Asks the process for a full garbage collection (`HeapProfiler.collectGarbage`). RSS read
 * afterwards holds what the process keeps alive, not garbage that happens to await the next collection.
 */
export async function collectGarbage(inspectorHostPort: string): Promise<void> {
  const session = await openInspector(inspectorHostPort);
  try {
    await session.call('HeapProfiler.collectGarbage');
  } finally {
    session.close();
  }
}
