/**
 * The `INSPECT` switch: where the session machines' inspection events go, if anywhere.
 *
 *   off (or unset)          no inspector at all
 *   relay                   start the relay in this process on 127.0.0.1:8081 and send to it
 *   <host>:<port>           start the relay in this process on that address (port 0 = any free port)
 *   ws://… or wss://…       send to a relay that runs elsewhere
 */
export type InspectSetting = { kind: 'relay'; host: string; port: number } | { kind: 'remote'; url: string };

export const DEFAULT_RELAY_HOST = '127.0.0.1';
export const DEFAULT_RELAY_PORT = 8081;

const PROBLEM =
  'must be off, relay, <host>:<port> (start the relay on that address) or the ws:// URL of a running relay';

const HOST_AND_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/** The setting, `undefined` for off, or the problem with the value. */
export function parseInspectSetting(raw: string): InspectSetting | undefined | string {
  const value = raw.trim();
  if (value.toLowerCase() === 'off') return undefined;
  if (value.toLowerCase() === 'relay') return { kind: 'relay', host: DEFAULT_RELAY_HOST, port: DEFAULT_RELAY_PORT };
  if (/^wss?:\/\//i.test(value)) {
    try {
      return { kind: 'remote', url: new URL(value).href };
    } catch {
      return PROBLEM;
    }
  }
  const match = HOST_AND_PORT.exec(value);
  if (!match) return PROBLEM;
  const port = Number(match[2]);
  if (port > 65_535) return 'port must be at most 65535';
  // Brackets belong to URLs, not to the address a server listens on.
  return { kind: 'relay', host: match[1]!.replace(/^\[|\]$/g, ''), port };
}
