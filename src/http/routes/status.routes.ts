import { getHeapStatistics } from 'node:v8';
import { Router } from 'express';
import { z } from 'zod';
import { isoTime } from '../../integrations/clock.js';
import { sessionMachine } from '../../machines/session/machine.js';
import type { AppDeps } from '../deps.js';
import type { RouteDoc } from '../route-doc.js';
import type { ActivityStreamHub } from '../sse/activity-stream-hub.js';
import { statechartView } from '../views/statechart-view.js';
import type { RouteModule } from '../route-module.js';

const StatusOut = z
  .object({
    media: z.object({
      configured: z.boolean(),
      recent_calls: z.array(
        z.object({
          call: z.string(),
          outcome: z.enum(['ok', 'failed']),
          duration_ms: z.number(),
          at: z.string().meta({ format: 'date-time' }),
        }),
      ),
    }),
    sessions: z.object({ running: z.int(), hibernated: z.int(), max: z.int() }),
    activity_streams: z.object({ open: z.int(), max: z.int() }),
    memory: z
      .object({
        heap_used_bytes: z.int(),
        heap_committed_bytes: z
          .int()
          .meta({ description: 'what V8 holds for its heap, garbage included until a collection gives it back' }),
        heap_limit_bytes: z.int(),
        heap_trims: z.int().meta({
          description:
            'memory-reducing collections run since the process started: one follows a flood of sessions leaving memory (docs/reference/limits.md)',
        }),
        heap_trims_failed: z.int(),
        heap_trims_deferred: z.int().meta({
          description:
            'trims called for while the event loop was busy and left for a quieter check: one stops the loop (docs/reference/limits.md)',
        }),
        last_heap_trim_at: z.string().meta({ format: 'date-time' }).nullable(),
      })
      .meta({ description: "the process's heap, beside the budget /health reports" }),
    activity: z.object({
      last_id: z.int(),
      oldest_id: z.int().nullable(),
      readers: z.array(z.string()).meta({
        description:
          'what the activity actor feeds each live item to, in the order it does (sse: every open stream at once)',
      }),
    }),
    config_version: z
      .string()
      .meta({ description: 'version of the SDK config in force (defaults plus SDK_CONFIG_FILE)' }),
  })
  .meta({ id: 'Status' });

const StatechartNodeOut: z.ZodType = z
  .object({
    id: z.string(),
    key: z.string(),
    type: z.string(),
    initial: z.string().nullable(),
    invokes: z.array(z.string()),
    transitions: z.array(z.object({ on: z.string(), targets: z.array(z.string()), guard: z.string().nullable() })),
    states: z.array(z.lazy(() => StatechartNodeOut)),
  })
  .meta({ id: 'StatechartNode' });

export const statusRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getStatus',
    path: '/api/status',
    tag: 'operations',
    summary: 'Operator status: media, sessions, streams, heap, config version',
    description:
      'What an operator checks first: media configured and its last calls, sessions running and ' +
      'hibernated, open streams, the heap and its trims, the readers live activity feeds, config ' +
      'version.',
    responses: { 200: { description: 'the status', schema: StatusOut } },
  },
  {
    method: 'get',
    operationId: 'getSessionMachine',
    path: '/api/machines/session',
    tag: 'operations',
    summary: "The session machine's states and transitions",
    description:
      "The session machine's states, transitions and invoked actors, read from its definition (the console's statechart).",
    responses: { 200: { description: 'the root state node', schema: StatechartNodeOut } },
  },
];

export function statusRoutes(
  { system, config, sdkConfig, mediaReady, heapTrim }: AppDeps,
  streams: ActivityStreamHub,
): Router {
  const router = Router();
  router.get('/api/status', (_req, res) => {
    const bounds = system.activity.bounds();
    const heap = getHeapStatistics();
    const trims = heapTrim?.stats() ?? { trims: 0, failed: 0, deferred: 0, lastTrimAt: null };
    res.json({
      media: {
        configured: mediaReady,
        recent_calls: system.mediaCalls.recent().map((call) => ({ ...call, at: isoTime(call.at) })),
      },
      sessions: { ...system.sessionHost.counts, max: config.sessions.maxSessions },
      activity_streams: { open: streams.stats().streams, max: config.stream.maxStreams },
      memory: {
        heap_used_bytes: heap.used_heap_size,
        heap_committed_bytes: heap.total_heap_size,
        heap_limit_bytes: heap.heap_size_limit,
        heap_trims: trims.trims,
        heap_trims_failed: trims.failed,
        heap_trims_deferred: trims.deferred,
        last_heap_trim_at: trims.lastTrimAt === null ? null : isoTime(trims.lastTrimAt),
      },
      activity: {
        last_id: bounds.lastId,
        oldest_id: bounds.oldestId ?? null,
        readers: system.activityActor.readerNames(),
      },
      config_version: sdkConfig.resolve(null).version,
    });
  });
  router.get('/api/machines/session', (_req, res) => {
    res.json(statechartView(sessionMachine));
  });
  return router;
}

export const statusRoute: RouteModule = {
  docs: statusRouteDocs,
  router: (deps) => statusRoutes(deps, deps.activityStreams),
};
