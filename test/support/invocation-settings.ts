import type { SessionSettings } from '../../src/machines/session/session-context.js';

/** Session settings for running one invocation of a session hosted in Restate outside a server: placeholder media, an hour's idle TTL. */
export const invocationSettings: SessionSettings = {
  schemaRegistry: true,
  criticalSteps: ['pan_details'],
  mediaReady: false,
  mediaRoomPrefix: 'kyc-room',
  reengagementInactivitySeconds: 120,
  idleTtlMs: 3_600_000,
  sessionMaxBytes: 65_536,
  voiceSilenceMs: 300_000,
  agentJoinMs: 10_000,
  agentDispatchAttempts: 3,
  roomCheckMs: 30_000,
};
