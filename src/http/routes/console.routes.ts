import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestHandler } from 'express';
import express, { Router } from 'express';
import type { RouteDoc } from '../route-doc.js';
import type { RouteModule } from '../route-module.js';

/** The page's files: beside the sources, whether the service runs from src (tsx) or dist (npm start). */
function consoleDirectory(): string {
  for (const relative of ['../../console/', '../../../../src/console/']) {
    const directory = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(`${directory}index.html`)) return directory;
  }
  throw new Error('console assets not found beside the service');
}

const packageDirectory = (name: string): string => dirname(createRequire(import.meta.url).resolve(name));
/** eventsource-parser's ESM build, served as it is installed: the page reads the stream with it. */
const eventSourceParserDirectory = (): string => packageDirectory('eventsource-parser');
/** livekit-client's ESM build (one self-contained file), which the voice demo joins its room with. */
const liveKitClientDirectory = (): string => packageDirectory('livekit-client');

export const consoleRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getConsole',
    path: '/console',
    tag: 'operations',
    summary: 'The operator console (HTML)',
    description:
      'The operator console (HTML). The page and its assets (/console/*) hold no data and load without a key; every call it makes needs X-API-Key.',
    authenticated: false,
    rateLimited: false,
    responses: { 200: { description: 'the page', contentType: 'text/html' } },
  },
];

/**
 * The media server's origin under both the WebSocket and the HTTP scheme: the LiveKit client
 * signals over the first and checks a failed connection over the second. Nothing for a URL that
 * does not parse (the service then has no media to join anyway).
 */
export function mediaOrigins(mediaUrl: string | undefined): string[] {
  if (mediaUrl === undefined) return [];
  let url: URL;
  try {
    url = new URL(mediaUrl);
  } catch {
    return [];
  }
  const secure = url.protocol === 'wss:' || url.protocol === 'https:';
  return [`${secure ? 'wss' : 'ws'}://${url.host}`, `${secure ? 'https' : 'http'}://${url.host}`];
}

/**
 * Everything from the service itself: the page works offline, and nothing else may run in it.
 * The one other place it may talk to is the configured media server, for the voice demo's room.
 */
export const contentSecurityPolicy = (mediaUrl: string | undefined): string =>
  [
    "default-src 'self'",
    "img-src 'self' data:",
    "style-src 'self'",
    "script-src 'self'",
    `connect-src ${["'self'", ...mediaOrigins(mediaUrl)].join(' ')}`,
    "frame-ancestors 'none'",
  ].join('; ');

/** Mounted before the key check: the page must load for the key to be entered on it. */
export function consoleRoutes(mediaUrl?: string): Router {
  const policy = contentSecurityPolicy(mediaUrl);
  const label =
    (route: string): RequestHandler =>
    (_req, res, next) => {
      res.locals.route = route;
      res.set({ 'Content-Security-Policy': policy, 'X-Content-Type-Options': 'nosniff' });
      next();
    };
  const router = Router();
  const directory = consoleDirectory();
  const options = { index: false, redirect: false, fallthrough: true, maxAge: 0 };
  router.get('/console', label('/console'), (_req, res) => {
    // Relative to `root`: given a whole path, sendFile refuses any dot-named folder in it, so a
    // service installed under one (`~/.apps/…`) would answer its console 404.
    res.sendFile('index.html', { root: directory, headers: { 'Cache-Control': 'no-cache' } });
  });
  router.use(
    '/console/vendor/eventsource-parser',
    label('/console/vendor'),
    express.static(eventSourceParserDirectory(), options),
  );
  router.use(
    '/console/vendor/livekit-client',
    label('/console/vendor'),
    express.static(liveKitClientDirectory(), options),
  );
  router.use('/console', label('/console/assets'), express.static(directory, options));
  return router;
}

export const consoleRoute: RouteModule = {
  docs: consoleRouteDocs,
  router: (deps) => consoleRoutes(deps.config.media.livekitUrl),
};
