import type { RequestHandler } from 'express';
import { HttpError } from '../http-error.js';
import type { RouteDoc } from '../route-doc.js';
import { shownPath } from '../shown-path.js';

/** The methods one documented path answers, as `Allow` lists them. */
interface PathMethods {
  methods: ReadonlySet<string>;
  allow: string;
}

function pathMethods(methods: Iterable<string>): PathMethods {
  const all = new Set<string>();
  for (const method of methods) {
    all.add(method.toUpperCase());
    // express answers HEAD with the GET route.
    if (method === 'get') all.add('HEAD');
  }
  all.add('OPTIONS');
  return { methods: all, allow: [...all].join(', ') };
}

/** Paths as express routes them: case-insensitive, a trailing slash ignored. */
const normalised = (path: string): string =>
  (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).toLowerCase();

const escaped = (text: string): string => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

/**
 * For a path the document declares, a method it does not declare is answered 405 with `Allow`
 * (and OPTIONS 204 with `Allow`), ahead of the key check, the body parsing and the routes: the
 * document is public, so this tells nothing it does not, and an undeclared method never reaches a
 * route that would read it as something else (a body refused 415, a path answered 404).
 * Paths outside the document are left to the routes and the 404.
 */
export function methodGate(routes: RouteDoc[]): RequestHandler {
  const byPath = new Map<string, string[]>();
  for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route.method]);
  const exact = new Map<string, PathMethods>();
  const templated: { pattern: RegExp; methods: PathMethods }[] = [];
  for (const [path, methods] of byPath) {
    if (!path.includes('{')) {
      exact.set(normalised(path), pathMethods(methods));
      continue;
    }
    const source = path
      .split(/(\{[^}]+\})/)
      .map((part) => (part.startsWith('{') ? '[^/]+' : escaped(part)))
      .join('');
    templated.push({ pattern: new RegExp(`^${source}/?$`, 'i'), methods: pathMethods(methods) });
  }

  return (req, res, next) => {
    const declared =
      exact.get(normalised(req.path)) ?? templated.find(({ pattern }) => pattern.test(req.path))?.methods;
    if (!declared || (declared.methods.has(req.method) && req.method !== 'OPTIONS')) return next();
    res.setHeader('Allow', declared.allow);
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    throw new HttpError(405, `${req.method} is not a method of ${shownPath(req.path)}; it answers ${declared.allow}`, {
      Allow: declared.allow,
    });
  };
}
