import { z } from 'zod';
import { SessionId, optionalText, text } from '../../domain/sdk-event.js';
import { TriggerSignalsIn } from '../schemas/trigger.schema.js';

/**
 * Frames of the WebSocket control plane (docs/decisions/0017-what-the-deployed-sdks-do.md), validated as HTTP bodies are:
 * same field rules, unknown fields kept out of the way (loose), a clear error naming the field.
 */
const messageId = optionalText(128);

export const ConnectFrame = z.looseObject({
  type: z.literal('connect'),
  message_id: messageId,
  session_id: SessionId,
  user_id: optionalText(256),
  api_key: optionalText(256),
  sdk_version: optionalText(64),
  client: optionalText(64),
  client_id: optionalText(256),
});

export const HeartbeatFrame = z.looseObject({ type: z.literal('heartbeat'), message_id: messageId });

/** The control events a socket may carry; durable telemetry is HTTP only. */
export const CONTROL_EVENTS = ['screen_state', 'validation_failed'] as const;

export const ControlStateFrame = z.looseObject({
  type: z.literal('control_state'),
  message_id: messageId,
  session_id: SessionId.nullish(),
  event: text(64).min(1, { error: 'must not be empty' }),
  screen: optionalText(256),
  failure_reason_code: optionalText(256),
  errors: z
    .array(text(256), { error: 'must be an array of strings' })
    .max(100, { error: 'must hold at most 100 codes' })
    .nullish(),
  signal_strength: optionalText(32),
  component_id: optionalText(256),
  component_type: optionalText(64),
});

export const TriggerEvaluateFrame = z.looseObject({
  type: z.literal('trigger_evaluate'),
  message_id: messageId,
  session_id: SessionId.nullish(),
  user_id: optionalText(256),
  signals: TriggerSignalsIn,
});

/** What every frame has: a type; the rest is checked against that type's schema. */
export const AnyFrame = z.looseObject({ type: text(64) });

export type ConnectFrame = z.infer<typeof ConnectFrame>;
export type ControlStateFrame = z.infer<typeof ControlStateFrame>;
export type TriggerEvaluateFrame = z.infer<typeof TriggerEvaluateFrame>;

/** Close codes the control plane uses besides the standard ones (1001 going away, 1009 too big). */
export const WsClose = {
  unauthorized: { code: 4401, reason: 'invalid or missing api key' },
  idle: { code: 4408, reason: 'idle timeout' },
  rateLimited: { code: 4429, reason: 'too many messages' },
  shutdown: { code: 1001, reason: 'server shutting down' },
  capacity: { code: 1013, reason: 'too many connections; retry later' },
} as const;
