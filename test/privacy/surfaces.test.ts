import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Inspection } from '../../src/integrations/inspection.js';
import { openInspection } from '../../src/integrations/inspection.js';
import type { RunningServer } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import { plantedEvent } from '../support/identity-events.js';
import type { IdentityValue } from '../support/identity-values.js';
import { findRaw, leaks } from '../support/identity-values.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';
import { InspectionReceiver } from '../support/inspection-receiver.js';
import { SseTestClient } from '../support/sse-client.js';

/**
 * Decisions 1 from outside: identity values planted anywhere in what a client sends never come
 * back from any read surface: the session, the agent context and its system prompt, the activity
 * feed, the SSE stream, the log lines at trace level and the inspector stream.
 */

interface Surfaces {
  h: Harness;
  server: RunningServer;
  sse: SseTestClient;
  inspection: Inspection;
  receiver: InspectionReceiver;
}

let s: Surfaces;
/** Every raw value posted in this file, searched for at the end in the streamed surfaces. */
const posted: IdentityValue[] = [];
const postedRaw = (...raws: string[]) => posted.push(...raws.map((raw) => ({ kind: 'raw', raw })));

beforeAll(async () => {
  const inspection = await openInspection({ kind: 'relay', host: '127.0.0.1', port: 0 }, createLogger('silent'));
  const h = createHarness({ env: { LOG_LEVEL: 'trace' }, inspect: inspection.inspect });
  const server = await serve(h);
  const sse = await SseTestClient.open(`${server.url}/api/activity/stream`);
  const receiver = new InspectionReceiver(inspection.url);
  await h.http.post('/v1/events').send({ session_id: 'probe', event: 'identity' }).expect(200);
  await receiver.until((r) => r.actor('probe') !== undefined);
  s = { h, server, sse, inspection, receiver };
});

afterAll(async () => {
  s.sse.close();
  await s.server.close(100);
  await s.inspection.close();
});

async function json(path: string): Promise<{ status: number; text: string; body: Record<string, unknown> }> {
  const response = await fetch(`${s.server.url}${path}`);
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as Record<string, unknown> };
}

async function post(path: string, body: unknown): Promise<number> {
  const response = await fetch(`${s.server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.text();
  return response.status;
}

/** The read surfaces of one session that answer on request. */
async function readSurfaces(
  sessionId: string,
): Promise<{ session: Record<string, unknown>; context: Record<string, unknown>; text: string }> {
  const session = await json(`/api/sessions/${sessionId}`);
  const context = await json(`/v1/assistant/context/${sessionId}`);
  const activity = await json(`/api/activity?session_id=${sessionId}&limit=50`);
  expect([session.status, context.status, activity.status]).toEqual([200, 200, 200]);
  return {
    session: session.body,
    context: context.body,
    text: [session.text, context.text, activity.text, String(context.body.system_prompt)].join('\n'),
  };
}

/** The surfaces that stream: everything they carried so far, once they carried `sessionId`. */
async function streamedText(sessionId: string): Promise<string> {
  await s.sse.until((client) => client.items.some((item) => item.session_id === sessionId), 10_000);
  await s.receiver.until((r) => r.snapshotsOf(sessionId).length > 0, 10_000);
  return [s.sse.messages.map((message) => message.data).join('\n'), s.h.logs.text, s.receiver.text].join('\n');
}

let sessionNumber = 0;
const nextSession = () => `priv-${(sessionNumber += 1)}`;

describe('privacy: no raw identity value on any surface, wherever a client puts it', () => {
  it('generated values at random depths of random fields of every event type come back masked from every surface; ids stay readable', async () => {
    let last = '';
    await fc.assert(
      fc.asyncProperty(plantedEvent(fc.constant('')), async ({ value, body, readable }) => {
        last = nextSession();
        posted.push(value);
        expect(await post('/v1/events', { ...body, session_id: last })).toBe(200);
        const { session, text } = await readSurfaces(last);
        expect(leaks(text, value), `${value.kind} ${value.raw}`).toBe(false);
        expect(session.latest_event).toMatchObject({
          screen_id: readable.screen_id,
          validation_rule_id: readable.validation_rule_id,
          flow_key: readable.flow_key,
          errors: readable.errors,
        });
      }),
      { numRuns: 80, seed: 1313 },
    );
    const streamed = await streamedText(last);
    for (const value of posted) expect(leaks(streamed, value), value.raw).toBe(false);
  });

  it(
    'the payloads of the report: old SDK phone, React Native analytics e-mail, values in ' +
      'value/input_value/transcript, a PAN in a dropdown, a date of birth',
    async () => {
      const id = nextSession();
      const raws = [
        '9876543210',
        'jane.doe@example.com',
        'ABCDE1234F',
        'FGHIJ5678K',
        '234567890124',
        '1995-06-15',
        'Jane Doe',
        'harness.tester@example.com',
      ];
      postedRaw(...raws);
      const events = [
        { session_id: id, event: 'user_enrichment', properties: { user_id: 'u-1', phone: '9876543210' } },
        {
          session_id: id,
          event: 'analytics_data',
          event_name: 'email_verified',
          data: { email: 'jane.doe@example.com' },
        },
        {
          session_id: id,
          event: 'component_input',
          screen: 'pan_details',
          component_id: 'pan_field',
          component_type: 'text_input',
          value: 'ABCDE1234F',
          input_value: '234567890124',
          masked: true,
          hint: 'ABCD****',
        },
        {
          session_id: id,
          event: 'voice_conversation_turn',
          screen: 'pan_details',
          properties: {
            role: 'user',
            transcript: 'my PAN is FGHIJ5678K',
            text: 'mail harness.tester@example.com please',
          },
        },
        {
          session_id: id,
          event: 'component_input',
          screen: 'personal_details',
          component_id: 'gender_field',
          component_type: 'DROPDOWN',
          hint: 'FGHIJ5678K',
          masked: false,
        },
        {
          session_id: id,
          event: 'component_input',
          screen: 'pan_details',
          component_id: 'dob_field',
          component_type: 'date_picker',
          hint: '1995-06-15',
          masked: false,
        },
        { session_id: id, event: 'identity', full_name: 'Jane Doe', properties: { fatherName: 'Jane Doe' } },
      ];
      for (const event of events) expect(await post('/v1/events', event)).toBe(200);
      const { session, text } = await readSurfaces(id);
      const streamed = await streamedText(id);
      for (const raw of raws) expect(findRaw(`${text}\n${streamed}`, raw), raw).toBe(false);

      const hints = session.component_hints as {
        component_id: string;
        hint: string;
        shape?: Record<string, unknown>;
      }[];
      expect(hints.find((hint) => hint.component_id === 'gender_field')).toMatchObject({
        hint: '**********',
        shape: { kind: 'pan', length: 10 },
      });
      expect(hints.find((hint) => hint.component_id === 'dob_field')).toMatchObject({
        hint: '****-**-**',
        shape: { kind: 'date', length: 10 },
      });
      // A client-masked hint with nothing detected in it is kept as the client masked it.
      expect(hints.find((hint) => hint.component_id === 'pan_field')).toMatchObject({ hint: 'ABCD****', masked: true });
      const latest = session.latest_event as Record<string, unknown>;
      expect(latest).toMatchObject({
        event: 'identity',
        full_name: '**** ***',
        properties: { fatherName: '**** ***' },
      });
      expect(latest.redacted_fields).toEqual(
        expect.arrayContaining([
          { path: 'full_name', kind: 'text', length: 8, digits: 0, letters: 7 },
          { path: 'properties.fatherName', kind: 'text', length: 8, digits: 0, letters: 7 },
        ]),
      );
    },
  );

  it('done means: the agent still learns that the PAN field holds 10 characters that do not match the PAN pattern', async () => {
    const id = nextSession();
    const panSchema = {
      screen_id: 'pan_details',
      components: [
        {
          id: 'pan_field',
          type: 'text_input',
          validations: [{ rule_id: 'pan_format_v1', pattern: '[A-Z]{5}[0-9]{4}[A-Z]' }],
        },
      ],
    };
    expect(
      await post('/v1/events', {
        session_id: id,
        event: 'screen_schema',
        screen: 'pan_details',
        properties: panSchema,
      }),
    ).toBe(200);
    expect(
      await post('/v1/events', {
        session_id: id,
        event: 'component_input',
        screen: 'pan_details',
        component_id: 'pan_field',
        component_type: 'text_input',
        hint: 'INVALIDPAN',
        masked: false,
      }),
    ).toBe(200);
    const { context } = await readSurfaces(id);
    const agent = context.context as { component_hints: Record<string, unknown>[] };
    expect(agent.component_hints[0]).toMatchObject({
      component_id: 'pan_field',
      hint: '**********',
      shape: { length: 10, digits: 0, letters: 10, matches_pattern: false },
    });
    expect(String(context.system_prompt)).toContain(
      '- "pan_field" ("text_input"): 10 characters (0 digits, 10 letters), does not match the expected pattern.',
    );
    expect(JSON.stringify(context)).not.toContain('INVALIDPAN');
  });

  it('the hint samples of the deployed SDKs: raw ones masked on every surface, client-masked ones kept as sent', async () => {
    const id = nextSession();
    const raw: [string, string, string][] = [
      ['phone_field', 'text_input', '9876543210'],
      ['phone_field', 'phone_number', '12345'],
      ['phone_otp_field', 'otp_input', '1234'],
      ['email_field', 'text_input', 'harness.tester@example.com'],
      ['email_field', 'text_input', 'not-an-email'],
      ['pan_field', 'pan', 'ABCDE1234F'],
      ['pan_field', 'text_input', 'INVALIDPAN'],
      ['dob_field', 'date', '1995-06-15'],
      ['name_field', 'text_input', 'Harness Tester'],
      ['father_name_field', 'text_input', 'Test Father'],
      ['aadhaar_digilocker_field', 'text_input', '123456789012'],
      ['aadhaar_number', 'text_input', '123'],
    ];
    const clientMasked = [
      '******3210',
      'j***@domain.com',
      'ABCD****',
      'jan***@domain.com',
      '1*****',
      'Har***',
      '****9012',
      'redacted',
      'file_uploaded',
    ];
    const choices: [string, string, string][] = [
      ['terms_checkbox', 'checkbox', 'true'],
      ['gender_field', 'dropdown', 'male'],
      ['marital_status_field', 'dropdown', 'single'],
      ['residency_status_field', 'dropdown', 'resident'],
      ['aadhaar_front_field', 'file_upload', 'file_uploaded.png'],
      ['verify_documents_button', 'button', 'proceed_with_aadhaar'],
    ];
    // Values of 6 characters or more are searched for; shorter ones (an OTP, a short phone) occur by
    // chance in ids and counts, so for those the masking itself is checked.
    const searchable = raw.map(([, , value]) => value).filter((value) => value.length >= 6 && value !== 'not-an-email');
    postedRaw(...searchable);
    for (const [component_id, component_type, hint] of raw) {
      expect(
        await post('/v1/events', {
          session_id: id,
          event: 'validation_failed',
          screen: 'kyc',
          component_id,
          component_type,
          hint,
          masked: false,
          errors: [`${component_id}_invalid`],
        }),
      ).toBe(200);
      const { session } = await readSurfaces(id);
      const failure = session.last_validation_failure as { hint: string; masked_by?: string; errors: string[] };
      expect(failure.masked_by, hint).toBe('server');
      expect(failure.hint, hint).not.toBe(hint);
      expect(failure.errors).toEqual([`${component_id}_invalid`]);
    }
    for (const hint of clientMasked) {
      expect(
        await post('/v1/events', {
          session_id: id,
          event: 'component_input',
          screen: 'kyc',
          component_id: 'masked_field',
          component_type: 'text_input',
          hint,
          masked: true,
        }),
      ).toBe(200);
      expect(((await readSurfaces(id)).session.latest_event as { hint: string }).hint).toBe(hint);
    }
    for (const [component_id, component_type, hint] of choices) {
      expect(
        await post('/v1/events', {
          session_id: id,
          event: 'component_input',
          screen: 'kyc',
          component_id,
          component_type,
          hint,
          masked: false,
        }),
      ).toBe(200);
    }
    const { session, text } = await readSurfaces(id);
    const hints = session.component_hints as { component_id: string; hint: string }[];
    for (const [component_id, , hint] of choices)
      expect(hints.find((entry) => entry.component_id === component_id)?.hint).toBe(hint);
    const streamed = await streamedText(id);
    for (const value of searchable) expect(findRaw(`${text}\n${streamed}`, value), value).toBe(false);
  });

  it('trigger evaluation and voice start and stop bodies are redacted too', async () => {
    const id = nextSession();
    postedRaw('9123456789', 'KLMNO4321P');
    const trigger = await fetch(`${s.server.url}/v1/assistant/trigger/evaluate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-client-id': 'kycis_demo' },
      body: JSON.stringify({
        session_id: id,
        user_id: '9123456789',
        signals: { screen: 'pan KLMNO4321P', errors: ['pan_invalid_format', 'KLMNO4321P'], time_spent: 30 },
      }),
    });
    expect(trigger.status).toBe(200);
    expect(
      await post('/v1/assistant/session/start', { session_id: id, user_id: '9123456789', screen: 'KLMNO4321P' }),
    ).toBe(200);
    expect(await post('/v1/assistant/session/stop', { session_id: id, user_id: '9123456789' })).toBe(200);
    const { session, text } = await readSurfaces(id);
    expect(session.user_id).toMatch(/^h-[0-9a-f]{24}$/);
    const streamed = await streamedText(id);
    for (const raw of ['9123456789', 'KLMNO4321P']) expect(findRaw(`${text}\n${streamed}`, raw), raw).toBe(false);
    expect(text).toContain('pan_invalid_format');
  });

  it('a string too long to scan is dropped with a marker, never kept raw', async () => {
    const id = nextSession();
    const long = `${'note '.repeat(900)} ABCDE1234F`;
    expect(await post('/v1/events', { session_id: id, event: 'analytics_data', properties: { notes: long } })).toBe(
      200,
    );
    const { session, text } = await readSurfaces(id);
    expect((session.latest_event as { properties: { notes: string } }).properties.notes).toBe(
      `[dropped: ${long.length} chars]`,
    );
    expect(text).not.toContain('note note');
  });
});

describe('privacy: the log lines', () => {
  it('any field of a log object goes through the same detectors and key rules, error messages included', () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    h.logger.info(
      {
        detail: 'user typed ABCDE1234F',
        phone: 'n/a',
        nested: { list: ['9876543210'] },
        err: new Error('lookup failed for jane@example.com'),
      },
      'something happened',
    );
    const [line] = h.logs.parsed();
    expect(JSON.stringify(line)).not.toMatch(/ABCDE1234F|9876543210|jane@example\.com/);
    expect(line).toMatchObject({
      detail: 'user typed **********',
      phone: '*/*',
      nested: { list: ['******3210'] },
      err: { message: 'lookup failed for ****@*******.***' },
    });
  });
});

describe('privacy: sizes under a key named for one', () => {
  it("the service's own figures in MiB stay readable in its log, and a number past a measure is still masked", () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    h.logger.warn({ heap_limit_mb: 4144, memory_budget_mb: 1024, heapCommittedMiB: 2048 }, 'sizes');
    h.logger.warn({ memory_budget_mb: 98765432101 }, 'not a size');
    const [sizes, notASize] = h.logs.parsed();
    expect(sizes).toMatchObject({ heap_limit_mb: 4144, memory_budget_mb: 1024, heapCommittedMiB: 2048 });
    expect(JSON.stringify(notASize)).not.toContain('98765432101');
  });

  it("the service's counts and answer times stay readable in its log under the names its lines give them", () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    // As the cut lines (request bodies, answers, streams) and the request log write them; a flood cuts thousands.
    h.logger.warn({ cut_count: 10_500, open_count: 2_000, response_ms: 11_013 }, 'figures');
    // The names they had before: four digits under a key that names no measure are read as an identity value.
    h.logger.warn({ cut: 10_500, open_streams: 2_000, responseTime: 11_013, port: 38_125 }, 'unnamed');
    const [figures, unnamed] = h.logs.parsed();
    expect(figures).toMatchObject({ cut_count: 10_500, open_count: 2_000, response_ms: 11_013 });
    expect(unnamed).toMatchObject({ cut: '*****', open_streams: '****', responseTime: '*****', port: '*****' });
  });

  it('an event keeps a size in KB under its key, and masks the same digits under a key that names no measure', async () => {
    const h = createHarness();
    await h.http
      .post('/v1/events')
      .send({ session_id: 'kb1', event: 'upload', properties: { photo_size_kb: 2048, photo_ref: 2048 } })
      .expect(200);
    const { body } = await h.http.get('/api/sessions/kb1').expect(200);
    expect(body.latest_event.properties).toEqual({ photo_size_kb: 2048, photo_ref: '****' });
  });
});

describe('privacy: PII_EXTRA_KEYS', () => {
  it("a deployment's extra keys are masked like the built-in ones, in events and logs", async () => {
    const h = createHarness({ env: { PII_EXTRA_KEYS: 'employee_code, ckycNumber' } });
    await h.http
      .post('/v1/events')
      .send({
        session_id: 'x1',
        event: 'identity',
        properties: { employeeCode: 'EMP-4242', 'ckyc-number': 'K-77', display_name: 'Jane' },
      })
      .expect(200);
    const { body } = await h.http.get('/api/sessions/x1').expect(200);
    expect(body.latest_event.properties).toEqual({
      employeeCode: '***-****',
      'ckyc-number': '*-**',
      display_name: 'Jane',
    });
    h.logger.info({ employee_code: 'EMP-4242' }, 'x');
    expect(h.logs.text).not.toContain('EMP-4242');
  });
});
