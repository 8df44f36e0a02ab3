import { WebSocket } from 'ws';

/** Live objects of one kind in a heap snapshot: V8's node type and constructor (or string) name. */
export interface HeapGroup {
  key: string;
  count: number;
  bytes: number;
}

/**
 * Takes a full heap snapshot of a process started with `--inspect=<host:port>` over the inspector
 * protocol (`HeapProfiler.takeHeapSnapshot`, which collects garbage first) and sums its nodes by
 * type and name. Two such summaries diffed show what a run left alive.
 */
export async function heapSummary(inspectorHostPort: string): Promise<Map<string, HeapGroup>> {
  const targets = (await (await fetch(`http://${inspectorHostPort}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target at ${inspectorHostPort}`);
  const socket = new WebSocket(url, { maxPayload: 2 ** 30 });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const chunks: string[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      socket.on('message', (data: Buffer) => {
        const message = JSON.parse(data.toString()) as {
          id?: number;
          method?: string;
          params?: { chunk: string };
          error?: { message: string };
        };
        if (message.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(message.params!.chunk);
        else if (message.id === 1 && message.error) reject(new Error(message.error.message));
        else if (message.id === 1) resolve();
      });
      socket.send(
        JSON.stringify({ id: 1, method: 'HeapProfiler.takeHeapSnapshot', params: { reportProgress: false } }),
      );
    });
  } finally {
    socket.close();
  }
  return summarize(JSON.parse(chunks.join('')) as RawSnapshot);
}

interface RawSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

function summarize(raw: RawSnapshot): Map<string, HeapGroup> {
  const fields = raw.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const typeNames = raw.snapshot.meta.node_types[0];
  const groups = new Map<string, HeapGroup>();
  for (let offset = 0; offset < raw.nodes.length; offset += width) {
    const type = typeNames[raw.nodes[offset + typeAt]!] ?? 'unknown';
    // Strings are named by their content: group them by type alone, never print client data.
    const name =
      type === 'string' || type === 'concatenated string' || type === 'sliced string'
        ? ''
        : (raw.strings[raw.nodes[offset + nameAt]!] ?? '');
    const key = name ? `${type}:${name.slice(0, 60)}` : type;
    const group = groups.get(key) ?? { key, count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += raw.nodes[offset + sizeAt]!;
    groups.set(key, group);
  }
  return groups;
}

/** Groups that grew most between two summaries, by bytes. */
export function heapGrowth(
  before: Map<string, HeapGroup>,
  after: Map<string, HeapGroup>,
  top: number,
): { key: string; count: number; bytes: number }[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys]
    .map((key) => ({
      key,
      count: (after.get(key)?.count ?? 0) - (before.get(key)?.count ?? 0),
      bytes: (after.get(key)?.bytes ?? 0) - (before.get(key)?.bytes ?? 0),
    }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top);
}

export const totalBytes = (summary: Map<string, HeapGroup>): number =>
  [...summary.values()].reduce((sum, group) => sum + group.bytes, 0);
