/**
 * Compiled by tsc (npm run typecheck, and test/client/client.test.ts), never run: each
 * @ts-expect-error fails the compile if the line under it stops being a type error, so this file
 * proves that a TypeScript project using the client is told about a wrong field.
 */
import type { Schemas } from '../../src/client/index.js';
import { createServiceClient } from '../../src/client/index.js';

const client = createServiceClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: 'key' });

export async function wrongFields(): Promise<void> {
  await client.POST('/v1/events', { body: { session_id: 's1', event: 'screen_state', screen: 'pan_details' } });

  // @ts-expect-error the event type is required
  await client.POST('/v1/events', { body: { session_id: 's1' } });

  // @ts-expect-error session_id is a string, not a number
  await client.POST('/v1/events', { body: { session_id: 42, event: 'screen_state' } });

  // @ts-expect-error no such route
  await client.POST('/v1/event', { body: { session_id: 's1', event: 'screen_state' } });

  // @ts-expect-error the context route is a GET
  await client.POST('/v1/assistant/context/{session_id}', { params: { path: { session_id: 's1' } } });

  // @ts-expect-error the path parameter is required
  await client.GET('/api/sessions/{session_id}', {});

  // @ts-expect-error limit is a number, not a string
  await client.GET('/api/activity', { params: { query: { limit: '10' } } });

  // @ts-expect-error kind is one of the activity kinds
  await client.GET('/api/activity', { params: { query: { kind: 'everything' } } });

  const { data } = await client.POST('/v1/assistant/trigger/evaluate', {
    body: { session_id: 's1', signals: { errors: ['pan_invalid'] } },
  });
  if (data) {
    const offered: boolean = data.trigger;
    // @ts-expect-error the answer has no such field
    const nothing: unknown = data.triggered;
    void offered;
    void nothing;
  }

  const item: Schemas['ActivityItem'] | undefined = (await client.GET('/api/activity')).data?.items[0];
  // @ts-expect-error an activity item's id is a string
  const id: number | undefined = item?.id;
  void id;
}
