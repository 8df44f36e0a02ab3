import { describe, expect, it } from 'vitest';
import type { ErrorWindow, IngestChannel } from '../../src/domain/error-window.js';
import {
  afterEvent,
  heldCodes,
  newErrorWindow,
  onScreen,
  prune,
  restartAfterTrigger,
  withRequestCodes,
} from '../../src/domain/error-window.js';
import type { SdkEvent } from '../../src/domain/sdk-event.js';
import { normaliseStepId } from '../../src/domain/step-id.js';

const WINDOW_MS = 120_000;
const failed = (code: string, screen = 'pan_details'): SdkEvent => ({
  session_id: 's',
  event: 'validation_failed',
  screen,
  errors: [code],
});

/** Events at the given seconds (on HTTP unless named), then one evaluation with `codes` at `evalAt` seconds: how many failures count. */
function countAt(steps: {
  events: ([number, SdkEvent] | [number, SdkEvent, IngestChannel])[];
  codes: string[];
  evalAt: number;
  screen?: string;
}): number {
  let window: ErrorWindow = newErrorWindow();
  for (const [at, event, channel] of steps.events)
    window = afterEvent(window, event, event.screen ?? null, at * 1000, channel);
  const now = steps.evalAt * 1000;
  const evaluated = withRequestCodes(
    prune(onScreen(window, steps.screen ?? 'pan_details'), now, WINDOW_MS),
    steps.codes,
    now,
  );
  return heldCodes(evaluated).length;
}

describe('the error window: failures per screen, request codes and events counted once', () => {
  it.each([
    ['one code in the request, nothing held', { events: [], codes: ['pan_invalid_format'], evalAt: 1 }, 1],
    ['two codes in one request', { events: [], codes: ['pan_invalid_format', 'dob_required'], evalAt: 1 }, 2],
    [
      'an event then the same code in the request counts once',
      { events: [[1, failed('pan_invalid_format')]], codes: ['pan_invalid_format'], evalAt: 1 },
      1,
    ],
    [
      'two events, then the second code in the request',
      {
        events: [
          [1, failed('pan_invalid_format')],
          [5, failed('pan_invalid_format')],
        ],
        codes: ['pan_invalid_format'],
        evalAt: 5,
      },
      2,
    ],
    [
      'two events, evaluated with no codes (passive loop)',
      {
        events: [
          [1, failed('pan_required')],
          [5, failed('pan_invalid_format')],
        ],
        codes: [],
        evalAt: 10,
      },
      2,
    ],
    [
      'an event and another code in the request',
      { events: [[1, failed('pan_required')]], codes: ['dob_required'], evalAt: 2 },
      2,
    ],
    [
      'a failure older than the window no longer counts',
      { events: [[1, failed('pan_required')]], codes: ['pan_required'], evalAt: 122 },
      1,
    ],
    [
      'a failure just inside the window counts',
      { events: [[1, failed('pan_required')]], codes: ['dob_required'], evalAt: 120 },
      2,
    ],
    [
      'a screen change empties the window',
      { events: [[1, failed('phone_invalid', 'phone_entry')]], codes: ['pan_required'], evalAt: 2 },
      1,
    ],
    [
      'upper-case and legacy ids are the same screen',
      {
        events: [
          [1, failed('pan_required', 'PAN_DETAILS')],
          [2, failed('pan_required', 'n_pan_details')],
        ],
        codes: [],
        evalAt: 3,
      },
      2,
    ],
    [
      'error_reported counts as a failure',
      {
        events: [
          [
            1,
            {
              session_id: 's',
              event: 'error_reported',
              screen: 'pan_details',
              properties: { error_code: 'pan_check_failed' },
            },
          ],
        ],
        codes: ['pan_required'],
        evalAt: 2,
      },
      2,
    ],
    [
      'error_reported with its code beside the properties is that code',
      {
        events: [
          [
            1,
            {
              session_id: 's',
              event: 'error_reported',
              screen: 'pan_details',
              error_code: 'pan_check_failed',
            },
          ],
        ],
        codes: ['pan_check_failed'],
        evalAt: 2,
      },
      1,
    ],
    [
      'error_reported without any code stands for itself',
      {
        events: [[1, { session_id: 's', event: 'error_reported', screen: 'pan_details' }]],
        codes: ['pan_check_failed'],
        evalAt: 2,
      },
      2,
    ],
    [
      'other events on the screen do not count',
      {
        events: [
          [
            1,
            {
              session_id: 's',
              event: 'component_input',
              screen: 'pan_details',
              component_id: 'pan_field',
              hint: 'x',
            },
          ],
        ],
        codes: [],
        evalAt: 2,
      },
      0,
    ],
    // With the control plane on (docs/decisions/0017-what-the-deployed-sdks-do.md), one failure arrives on both channels.
    [
      'one failure on the socket and over HTTP counts once',
      {
        events: [
          [1, failed('pan_invalid_format'), 'control_plane'],
          [1, failed('pan_invalid_format')],
        ],
        codes: [],
        evalAt: 2,
      },
      1,
    ],
    [
      'the HTTP copy first, the socket copy late within 10 s',
      {
        events: [
          [1, failed('pan_invalid_format')],
          [11, failed('pan_invalid_format'), 'control_plane'],
        ],
        codes: [],
        evalAt: 12,
      },
      1,
    ],
    [
      'the same code on both channels more than 10 s apart is two failures',
      {
        events: [
          [1, failed('pan_invalid_format')],
          [11.5, failed('pan_invalid_format'), 'control_plane'],
        ],
        codes: [],
        evalAt: 12,
      },
      2,
    ],
    [
      'both copies then the trigger request with its code: still one',
      {
        events: [
          [1, failed('pan_invalid_format'), 'control_plane'],
          [1, failed('pan_invalid_format')],
        ],
        codes: ['pan_invalid_format'],
        evalAt: 2,
      },
      1,
    ],
    [
      'two failures, each on both channels, is two',
      {
        events: [
          [1, failed('pan_required'), 'control_plane'],
          [1, failed('pan_required')],
          [6, failed('pan_required'), 'control_plane'],
          [6, failed('pan_required')],
        ],
        codes: [],
        evalAt: 7,
      },
      2,
    ],
    [
      'the same channel twice never pairs',
      {
        events: [
          [1, failed('pan_required'), 'control_plane'],
          [2, failed('pan_required'), 'control_plane'],
        ],
        codes: [],
        evalAt: 3,
      },
      2,
    ],
    [
      'different codes on the two channels are two failures',
      {
        events: [
          [1, failed('pan_required'), 'control_plane'],
          [1, failed('dob_required')],
        ],
        codes: [],
        evalAt: 2,
      },
      2,
    ],
  ] as const)('%s → %d', (_name, steps, expected) => {
    expect(
      countAt({
        ...steps,
        events: [...steps.events] as ([number, SdkEvent] | [number, SdkEvent, IngestChannel])[],
        codes: [...steps.codes],
      }),
    ).toBe(expected);
  });

  it('a failure paired with its copy keeps its place in the window, and a stored one without a channel is HTTP', () => {
    const stored = afterEvent(newErrorWindow(), failed('pan_required'), 'pan_details', 1000);
    expect(stored.failures[0]).toEqual({ codes: ['pan_required'], at: 1000, kind: 'validation', claimed: false });
    const paired = afterEvent(stored, failed('pan_required'), 'pan_details', 1500, 'control_plane');
    expect(paired.failures).toEqual([
      { codes: ['pan_required'], at: 1000, kind: 'validation', claimed: false, mirrored: true },
    ]);
    // A third copy is a failure of its own: a pair is one failure on each channel.
    expect(afterEvent(paired, failed('pan_required'), 'pan_details', 1600, 'control_plane').failures).toHaveLength(2);
  });

  it('after a trigger, failures held count until the cooldown ends and only later ones after', () => {
    let window = withRequestCodes(newErrorWindow(), ['a', 'b'], 1000);
    window = restartAfterTrigger(window, 1000, 61_000);
    expect(heldCodes(withRequestCodes(prune(window, 30_000, WINDOW_MS), ['c'], 30_000))).toHaveLength(3);
    const later = withRequestCodes(prune(window, 62_000, WINDOW_MS), ['d'], 62_000);
    expect(heldCodes(later)).toEqual(['d']);
  });

  it('stays bounded whatever a client sends', () => {
    let window = newErrorWindow();
    for (let i = 0; i < 1000; i += 1) window = afterEvent(window, failed(`code_${i}`), 'pan_details', i);
    window = withRequestCodes(
      window,
      Array.from({ length: 100 }, (_, i) => `req_${i}`),
      2000,
    );
    expect(window.failures.length).toBeLessThanOrEqual(20);
  });
});

describe('normaliseStepId: one spelling for trigger policy, knowledge base and critical steps', () => {
  it.each([
    ['pan_details', 'pan_details'],
    ['PAN_DETAILS', 'pan_details'],
    [' Pan_Details ', 'pan_details'],
    ['n_pan_details', 'pan_details'],
    ['new_pan_details', 'pan_details'],
    ['NEW_PAN_DETAILS', 'pan_details'],
    ['n_', 'n_'],
    ['news_feed', 'news_feed'],
  ])('%s → %s', (raw, expected) => {
    expect(normaliseStepId(raw)).toBe(expected);
  });

  it('keeps a prefixed id that is itself a step', () => {
    expect(normaliseStepId('new_address', (id) => id === 'new_address')).toBe('new_address');
  });
});
