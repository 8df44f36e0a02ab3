import { setTimeout as sleep } from 'node:timers/promises';
import type { ComponentSpec, ScreenSpec } from './kyc-flow.js';
import { KYC_WORKFLOW, screenSchema } from './kyc-flow.js';
import { Random } from './random.js';
import type { Schemas } from '../../src/client/index.js';
import type { Answer, ServiceClient } from './service-client.js';
import { isFailure } from './request-stats.js';

/** What the run's journeys did, as the summary reports it. */
export interface FlowCounts {
  events: number;
  validationFailures: number;
  triggerEvaluations: number;
  triggersFired: number;
  voiceSessions: number;
  conversationTurns: number;
  contextFetches: number;
}

export const noFlow = (): FlowCounts => ({
  events: 0,
  validationFailures: 0,
  triggerEvaluations: 0,
  triggersFired: 0,
  voiceSessions: 0,
  conversationTurns: 0,
  contextFetches: 0,
});

export interface JourneySettings {
  seed: number;
  /** The journey's place in the run (0-based): with the seed, it fixes every choice the journey makes. */
  index: number;
  /** Mean pause between a user's steps; 0 for load runs. */
  thinkMs: number;
  client: ServiceClient;
  counts: FlowCounts;
  /** The end of the run: the journey stops before its next step (stopping its voice session, if one runs). */
  signal: AbortSignal;
}

/** Session ids name the run's seed and the journey, so an operator can follow one: `sim-42-7`. */
export const simulatedSessionId = (seed: number, index: number): string => `sim-${seed}-${index + 1}`;

/** Chances that shape a journey; drop-off, failures and voice uptake as a KYC funnel has them. */
const CHANCE = {
  completesFlow: 0.3,
  reactNative: 0.3,
  workflowModel: 0.5,
  androidScreenState: 0.4,
  registeredSchema: 0.75,
  stepAnalytics: 0.15,
  failsOnScreen: 0.3,
  failsAgain: 0.35,
  clientMasks: 0.15,
  submitError: 0.1,
  manualStart: 0.03,
  passiveEvaluation: 0.35,
  acceptsVoice: 0.7,
};

const CLIENT_ID = 'kycis_demo';

class JourneyCut extends Error {}

type Platform = {
  client: string;
  sdkName: string;
  sdkVersion: string;
  platform: string;
  screenId: (id: string) => string;
};

const ANDROID: Platform = {
  client: 'android-sdk',
  sdkName: 'kycis-android',
  sdkVersion: '2.4.1',
  platform: 'android',
  screenId: (id) => id,
};
// The React Native app sends the same screen ids in upper case.
const REACT_NATIVE: Platform = {
  client: 'react-native-sdk',
  sdkName: 'kycis-react-native',
  sdkVersion: '1.9.0',
  platform: 'ios',
  screenId: (id) => id.toUpperCase(),
};

/** One user through the `kyc_onboarding` flow, in the order and the client flows of docs/reference/events.md. */
class Journey {
  /** Every choice that shapes the journey. */
  private readonly random: Random;
  /** Pauses and span ids: drawn apart, so that --think changes timing only, never the journey. */
  private readonly pacing: Random;
  private readonly sessionId: string;
  private readonly userId: string;
  private readonly platform: Platform;
  private readonly traceId: string;
  private requestNumber = 0;
  private voiceUsed = false;
  private voiceRunning = false;
  /** Whether the service refused any of this user's requests (or never answered one). */
  private refused = false;

  constructor(private readonly settings: JourneySettings) {
    this.random = new Random(settings.seed, settings.index);
    this.pacing = new Random(settings.seed, -1 - settings.index);
    this.sessionId = simulatedSessionId(settings.seed, settings.index);
    this.userId = `user-${settings.seed}-${settings.index + 1}`;
    this.platform = this.random.chance(CHANCE.reactNative) ? REACT_NATIVE : ANDROID;
    this.traceId = this.random.hex(32);
  }

  async run(): Promise<JourneyOutcome> {
    try {
      const screens = this.random.chance(CHANCE.completesFlow)
        ? KYC_WORKFLOW.length
        : this.random.int(2, KYC_WORKFLOW.length - 1);
      await this.call({ endpoint: 'GET /v1/sdk/config', send: (api, init) => api.GET('/v1/sdk/config', init) });
      await this.event({ event: 'identity', properties: { login: 'otp' } });
      if (this.random.chance(CHANCE.workflowModel))
        await this.event({ event: 'workflow_model', properties: workflowModel() });
      for (let index = 0; index < screens; index += 1) await this.visit(KYC_WORKFLOW[index]!, index);
      // Played to the end, but not as a user would have lived it if the service said no on the way.
      return this.refused ? 'refused' : 'completed';
    } catch (error) {
      if (!(error instanceof JourneyCut) && !this.settings.signal.aborted) throw error;
      // A voice session left running would keep its session from eviction: end it as the app would.
      if (this.voiceRunning) await this.stopVoice();
      return 'cut';
    }
  }

  private async visit(spec: ScreenSpec, index: number): Promise<void> {
    const screen = this.platform.screenId(spec.id);
    const onScreen = { screen, screen_id: screen };
    if (this.platform === REACT_NATIVE || this.random.chance(CHANCE.androidScreenState))
      await this.event({ event: 'screen_state', ...onScreen });
    if (this.random.chance(CHANCE.registeredSchema))
      await this.event({ event: 'screen_schema', ...onScreen, properties: screenSchema(spec, index) });
    else await this.event({ event: 'screen_schema_lazy', ...onScreen });
    if (this.random.chance(CHANCE.stepAnalytics))
      await this.event({ event: 'analytics_data', event_name: 'kyc_step_started', data: { step: spec.id } });

    const fallible = spec.components.filter((component) => component.invalid);
    const failing =
      fallible.length > 0 && this.random.chance(CHANCE.failsOnScreen) ? this.random.pick(fallible) : undefined;
    const errors: string[] = [];
    for (const component of spec.components) {
      if (component === failing) {
        do {
          const { value, codes } = component.invalid!(this.random);
          await this.input(screen, component, value);
          await this.failure(screen, component, value, codes);
          errors.push(...codes);
          // The error-driven flow of 6.4: evaluate right after the failure.
          await this.evaluate({ screen, time_spent: this.random.int(5, 20), errors: [...errors], idle_seconds: 0 });
        } while (errors.length < 3 && this.random.chance(CHANCE.failsAgain));
      }
      await this.input(screen, component, component.valid(this.random));
    }

    if (spec.id === 'personal_details' && this.random.chance(CHANCE.submitError)) {
      await this.event({ event: 'error_reported', ...onScreen, errors: ['personal_details_submit_failed'] });
    }
    if (!this.voiceUsed && this.random.chance(CHANCE.manualStart)) await this.voice(screen);
    if (this.random.chance(CHANCE.passiveEvaluation)) {
      await this.evaluate({
        screen,
        time_spent: this.random.int(2, 35),
        errors: [],
        idle_seconds: this.random.int(0, 20),
      });
    }
    if (this.random.chance(CHANCE.stepAnalytics))
      await this.event({ event: 'analytics_data', event_name: 'kyc_step_completed', data: { step: spec.id } });
  }

  private async input(screen: string, component: ComponentSpec, raw: string): Promise<void> {
    const clientMasks = component.clientMasked !== undefined && this.random.chance(CHANCE.clientMasks);
    await this.event({
      event: 'component_input',
      screen,
      screen_id: screen,
      component_id: component.id,
      component_type: component.type,
      hint: clientMasks ? component.clientMasked!(raw) : raw,
      masked: clientMasks,
      properties: {
        field_status: 'FILLED',
        ...(component.slot ? { semantic_slot: component.slot } : {}),
        ...(/^\d+$/.test(raw) ? { digits_filled: raw.length } : {}),
      },
    });
  }

  private async failure(screen: string, component: ComponentSpec, raw: string, codes: string[]): Promise<void> {
    this.settings.counts.validationFailures += 1;
    await this.event({
      event: 'validation_failed',
      screen,
      screen_id: screen,
      errors: codes,
      failure_reason_code: codes[0],
      component_id: component.id,
      component_type: component.type,
      hint: raw,
      masked: false,
      ...(component.rule
        ? {
            validation_rule_id: component.rule.rule_id,
            ...(component.rule.pattern ? { expected_pattern: component.rule.pattern } : {}),
          }
        : {}),
      properties: { error_code: codes[0], signal_strength: 'strong' },
    });
  }

  private async evaluate(signals: {
    screen: string;
    time_spent: number;
    errors: string[];
    idle_seconds: number;
  }): Promise<void> {
    this.settings.counts.triggerEvaluations += 1;
    const answer = await this.call({
      endpoint: 'POST /v1/assistant/trigger/evaluate',
      send: (api, init) =>
        api.POST('/v1/assistant/trigger/evaluate', {
          ...init,
          body: { user_id: this.userId, session_id: this.sessionId, signals },
        }),
    });
    const decision = answer.body as { trigger?: unknown; action?: unknown } | undefined;
    // Clients start voice only on trigger == true and action == start_voice_agent.
    if (decision?.trigger !== true || decision.action !== 'start_voice_agent') return;
    this.settings.counts.triggersFired += 1;
    if (!this.voiceUsed && this.random.chance(CHANCE.acceptsVoice)) await this.voice(signals.screen);
  }

  /** A voice session: start, the agent's turns, its context fetch, stop (steps 6 to 9 of docs/reference/events.md, "The order of a journey's activity"). */
  private async voice(screen: string): Promise<void> {
    this.voiceUsed = true;
    const started = await this.call({
      endpoint: 'POST /v1/assistant/session/start',
      send: (api, init) =>
        api.POST('/v1/assistant/session/start', {
          ...init,
          body: { user_id: this.userId, session_id: this.sessionId, screen },
        }),
    });
    if (typeof started.outcome !== 'number' || started.outcome >= 300) return;
    this.voiceRunning = true;
    this.settings.counts.voiceSessions += 1;
    const turns = this.random.int(2, 4);
    for (let turn = 0; turn < turns; turn += 1) {
      this.settings.counts.conversationTurns += 1;
      // Posted by the voice agent, not the app: no SDK envelope.
      await this.call({
        endpoint: 'POST /v1/events',
        send: (api, init) =>
          api.POST('/v1/events', {
            ...init,
            body: {
              session_id: this.sessionId,
              user_id: this.userId,
              event: 'voice_conversation_turn',
              screen,
              timestamp: unixNow(),
              properties: {
                role: turn % 2 === 0 ? 'agent' : 'user',
                text_chars: this.random.int(20, 160),
                turn_index: turn,
              },
            },
          }),
      });
      this.settings.counts.events += 1;
    }
    this.settings.counts.contextFetches += 1;
    await this.call({
      endpoint: 'GET /v1/assistant/context/{session_id}',
      send: (api, init) =>
        api.GET('/v1/assistant/context/{session_id}', { ...init, params: { path: { session_id: this.sessionId } } }),
    });
    await this.stopVoice();
  }

  private async stopVoice(): Promise<void> {
    this.voiceRunning = false;
    await this.call(
      {
        endpoint: 'POST /v1/assistant/session/stop',
        send: (api, init) =>
          api.POST('/v1/assistant/session/stop', {
            ...init,
            body: { user_id: this.userId, session_id: this.sessionId },
          }),
      },
      { evenIfCut: true },
    );
  }

  private async event(fields: Pick<Schemas['EventIn'], 'event'> & Record<string, unknown>): Promise<void> {
    this.settings.counts.events += 1;
    await this.call({
      endpoint: 'POST /v1/events',
      send: (api, init) => api.POST('/v1/events', { ...init, body: Object.assign(this.envelope(), fields) }),
    });
  }

  private envelope(): Pick<Schemas['EventIn'], 'session_id'> & Record<string, unknown> {
    const { platform } = this;
    return {
      user_id: this.userId,
      session_id: this.sessionId,
      client_id: CLIENT_ID,
      mapping_version: 'v1',
      timestamp: unixNow(),
      invoke_source: 'traffic_simulator',
      sdk_version: platform.sdkVersion,
      client: platform.client,
      sdk: { sdk_name: platform.sdkName, sdk_version: platform.sdkVersion, platform: platform.platform },
      flow_key: 'kyc_onboarding',
    };
  }

  /** A user's pause, then the request with the headers SDKs send. */
  private async call(
    call: Parameters<ServiceClient['call']>[0],
    options: { evenIfCut?: boolean } = {},
  ): Promise<Answer> {
    const { signal, thinkMs } = this.settings;
    if (!options.evenIfCut) {
      if (signal.aborted) throw new JourneyCut();
      if (thinkMs > 0) {
        try {
          await sleep((thinkMs * this.pacing.int(50, 150)) / 100, undefined, { signal });
        } catch {
          throw new JourneyCut();
        }
      }
    }
    this.requestNumber += 1;
    const answer = await this.settings.client.call({
      ...call,
      headers: {
        'x-request-id': `${this.sessionId}-${this.requestNumber}`,
        traceparent: `00-${this.traceId}-${this.pacing.hex(16)}-01`,
        'x-client-id': CLIENT_ID,
        'x-svc-sdk-version': this.platform.sdkVersion,
        'x-svc-session-id': this.sessionId,
      },
    });
    if (isFailure(answer.outcome)) this.refused = true;
    return answer;
  }
}

const unixNow = () => Math.floor(Date.now() / 1000);

function workflowModel(): Record<string, unknown> {
  return {
    workflow_name: 'kyc_onboarding',
    stages: KYC_WORKFLOW.map((screen, index) => ({
      id: screen.id,
      expected_next: KYC_WORKFLOW[index + 1]?.id ?? null,
      display_name: screen.display_name,
      blocker_code: null,
    })),
  };
}

/** `refused`: played to its end, but at least one request was refused or went unanswered. */
export type JourneyOutcome = 'completed' | 'refused' | 'cut';

export function runJourney(settings: JourneySettings): Promise<JourneyOutcome> {
  return new Journey(settings).run();
}
