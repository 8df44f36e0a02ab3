import { isIP } from 'node:net';

/**
 * The names this service answers to, from a request's Host (or a WebSocket's Origin).
 *
 * With no API_KEY, a web page could reach a service on a developer's machine by DNS rebinding: a
 * name of the page's own made to resolve to 127.0.0.1, so the browser sends that name as Host and
 * reads the answers as its own origin's. Loopback names and IP addresses cannot be rebound, so
 * they are always served; any other name only when ALLOWED_HOSTS lists it (docs/security.md).
 */
export interface ServedHosts {
  /** Whether a request naming `host` (a Host header's value, port and all) is served. */
  serves(host: string | undefined): boolean;
}

/** The name of a Host header's value: brackets kept off an IPv6 address, the port and a trailing dot dropped, lower case. */
export function hostName(host: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(host);
  const name = bracketed ? bracketed[1]! : host.replace(/:\d*$/, '');
  return name.replace(/\.$/, '').toLowerCase();
}

export function servedHosts(allowed: readonly string[]): ServedHosts {
  const listed = new Set(allowed.map((name) => hostName(name)));
  return {
    serves: (host) => {
      // No Host at all (HTTP/1.0): no browser sends a request without one.
      if (host === undefined || host === '') return true;
      const name = hostName(host);
      return isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost') || listed.has(name);
    },
  };
}

/** The check as configured: with no API_KEY always, with keys only when ALLOWED_HOSTS is set. */
export function servedHostsFor(http: { apiKeys: readonly string[]; allowedHosts: readonly string[] | undefined }): ServedHosts | undefined {
  if (http.apiKeys.length > 0 && http.allowedHosts === undefined) return undefined;
  return servedHosts(http.allowedHosts ?? []);
}

/** What a request or an upgrade naming another host is answered with (403). */
export const NOT_SERVED = 'Host: not a name this service answers to; loopback names, IP addresses and ALLOWED_HOSTS are (docs/security.md)';
export const ORIGIN_NOT_SERVED = 'Origin: a page from another site may not open this socket; loopback names, IP addresses and ALLOWED_HOSTS may (docs/security.md)';

/** A WebSocket's Origin, when a browser sent one: its host must be served too, or any site's page could open the socket. */
export function originServed(hosts: ServedHosts, origin: string | undefined): boolean {
  // Native clients (the mobile SDKs) send none.
  if (origin === undefined || origin === '') return true;
  // An opaque origin (a sandboxed frame, a file) names no host at all.
  if (origin === 'null') return false;
  try {
    return hosts.serves(new URL(origin).host);
  } catch {
    return false;
  }
}
