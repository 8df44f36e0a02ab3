/**
 * Restate's admin SQL over the objects' state (docs/explanation/cluster.md): how a listing, a call found by
 * its id, the webhook deliveries and an erasure's search read what no single object holds.
 */
import type { RestateHttp } from './restate-http.js';

/** The admin API answered with an error status (it was reached). */
export class AdminQueryError extends Error {}

export interface StateRow<T> {
  /** The object's key. */
  key: string;
  value: T;
}

/**
 * Every object of `service` holding `stateKey`, with that value read as JSON. `stateKey` is this
 * code's own or a validated id (`CallParams`): nothing a client sends unchecked reaches the query.
 */
export async function stateRows<T>(
  admin: RestateHttp,
  service: string,
  stateKey: string,
  timeoutMs: number,
): Promise<StateRow<T>[]> {
  const response = await admin.request('query', {
    method: 'POST',
    headers: { accept: 'application/json' },
    body: JSON.stringify({
      query: `SELECT service_key, value_utf8 FROM state WHERE service_name = '${service}' AND key = '${stateKey}'`,
    }),
    timeoutMs,
  });
  if (response.status < 200 || response.status >= 300)
    throw new AdminQueryError(`admin query answered ${response.status}`);
  const { rows } = JSON.parse(response.text) as { rows: { service_key: string; value_utf8: string }[] };
  return rows.map((row) => ({ key: row.service_key, value: JSON.parse(row.value_utf8) as T }));
}
