import type { LocalCluster } from '../scripts/cluster/local-cluster.js';
import { keptSessionSerde, UnreadableKeptValue } from '../src/cluster/kept-session-serde.js';
import { STATE } from '../src/cluster/session-object.js';

export interface Item {
  id: string;
  kind: string;
  timestamp: string;
  session_id: string;
  payload: Record<string, unknown>;
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * What the cluster tests ask of a running cluster: its HTTP API through the front (or `base`, one
 * process past it), and Restate's own tables.
 */
export function clusterCalls(cluster: () => LocalCluster, base: () => string = () => cluster().url) {
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const response = await fetch(base() + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const get = async (path: string): Promise<Answer> => {
    const response = await fetch(base() + path);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return {
    post,
    get,
    activityOf: async (sessionId: string, kind?: string) =>
      (await get(`/api/activity?session_id=${sessionId}&limit=500${kind ? `&kind=${kind}` : ''}`)).body.items as Item[],
    /** One of the session object's state keys as Restate holds it, read as the service reads it (the `session` value is kept deflated). */
    stateOf: async <T>(sessionId: string, key: string): Promise<T | undefined> => {
      // Restate's SQL gives a value's bytes as hex.
      const rows = await cluster().restate.query<{ value: string }>(
        `SELECT value FROM state WHERE service_name = 'KycSession' AND service_key = '${sessionId}' AND key = '${key}'`,
      );
      if (!rows[0]) return undefined;
      const bytes = Buffer.from(rows[0].value, 'hex');
      if (key !== STATE.session) return JSON.parse(bytes.toString('utf8')) as T;
      const session = keptSessionSerde<T>().deserialize(bytes);
      if (session instanceof UnreadableKeptValue) throw new Error(`${sessionId}: ${session.reason}`);
      return session;
    },
    invocations: (sessionId: string, handler: string, status?: string) =>
      cluster().restate.query<{ status: string; pinned_deployment_id: string | null }>(
        `SELECT status, pinned_deployment_id FROM sys_invocation WHERE target_service_name = 'KycSession' AND target_service_key = '${sessionId}' AND target_handler_name = '${handler}'${status ? ` AND status = '${status}'` : ''}`,
      ),
  };
}

/** Reads until `done` holds or `timeoutMs` has passed, and gives the last read: the cluster applies and records after it answers. */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
