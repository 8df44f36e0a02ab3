import { isIP } from 'node:net';
import { isLoopbackHost } from '../domain/loopback.js';

/**
 * The names this service answers to, from a request's Host (or a WebSocket's Origin).
 *
 * With no API_KEY, a web page could reach a service on a developer's machine by DNS rebinding: a
 * name of the page's own made to resolve to 127.0.0.1, so the browser sends that name as Host and
 * reads the answers as its own origin's. Loopback names and IP addresses cannot be rebound, so
 * they are always served; any other name only when ALLOWED_HOSTS lists it (docs/explanation/security.md).
 */
export interface ServedHosts {
  /** Whether a request naming `host` (a Host header's value, port and all) is served. */
  serves(host: string | undefined): boolean;
  /**
   * Whether a browser page of `origin` may open a socket to this service reached as `host`. Not
   * any IP address here: a site served by its bare address has one as its origin. The service's
   * own pages (the origin is the host reached), this machine's, and ALLOWED_HOSTS may.
   */
  servesOrigin(origin: string | undefined, host: string | undefined): boolean;
}

/** The name of a Host header's value: brackets kept off an IPv6 address, the port and a trailing dot dropped, lower case. */
export function hostName(host: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(host);
  const name = bracketed ? bracketed[1]! : host.replace(/:\d*$/, '');
  return name.replace(/\.$/, '').toLowerCase();
}

export function servedHosts(allowed: readonly string[]): ServedHosts {
  const listed = new Set(allowed.map((name) => hostName(name)));
  const loopbackName = (name: string) => name === 'localhost' || name.endsWith('.localhost');
  return {
    serves: (host) => {
      // No Host at all (HTTP/1.0): no browser sends a request without one.
      if (host === undefined || host === '') return true;
      const name = hostName(host);
      return isIP(name) !== 0 || loopbackName(name) || listed.has(name);
    },
    servesOrigin: (origin, host) => {
      // Native clients (the mobile SDKs) send none.
      if (origin === undefined || origin === '') return true;
      let url: URL;
      try {
        // An opaque origin (`null`: a sandboxed frame, a file) names no host, and does not parse.
        url = new URL(origin);
      } catch {
        return false;
      }
      const name = hostName(url.host);
      return (
        (host !== undefined && url.host.toLowerCase() === host.toLowerCase()) ||
        loopbackName(name) ||
        isLoopbackHost(name) ||
        listed.has(name)
      );
    },
  };
}

/** The check as configured: with no API_KEY always, with keys only when ALLOWED_HOSTS is set. */
export function servedHostsFor(http: {
  apiKeys: readonly string[];
  allowedHosts: readonly string[] | undefined;
}): ServedHosts | undefined {
  if (http.apiKeys.length > 0 && http.allowedHosts === undefined) return undefined;
  return servedHosts(http.allowedHosts ?? []);
}

/** What a request or an upgrade naming another host is answered with (403). */
export const NOT_SERVED =
  'Host: not a name this service answers to; loopback names, IP addresses and ALLOWED_HOSTS are (docs/explanation/security.md)';
export const ORIGIN_NOT_SERVED =
  "Origin: a page from another site may not open this socket; the service's own pages, this machine's and ALLOWED_HOSTS may (docs/explanation/security.md)";
