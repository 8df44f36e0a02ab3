import type { JobContext, JobProcess, VAD } from '@livekit/agents';
import { defineAgent, llm, log, voice } from '@livekit/agents';
import * as silero from '@livekit/agents-plugin-silero';
import { ParticipantKind, RoomEvent } from '@livekit/rtc-node';
import { createServiceClient } from '../src/client/index.js';
import { AGENT_NOTICE_TOPIC } from '../src/domain/agent-notice.js';
import type { NoticeToGive } from './consent-notice.js';
import { noticeFor } from './consent-notice.js';
import { consentTool } from './consent-tool.js';
import { ContextSource } from './context-source.js';
import { Presence } from './presence.js';
import { replacedDispatch } from './replaced-dispatch.js';
import { isContextNotice, sessionIdOf, takeoverOf } from './job-metadata.js';
import { guardedChat } from './guarded-chat.js';
import { AppActions } from './app-actions.js';
import { HANDOFF_LINES, Handoff, isOperator } from './handoff.js';
import { GENERAL_INSTRUCTIONS, OPENING_LINE, TAKEOVER_LINE, UNREACHABLE_LINE } from './prompts.js';
import { localTurnHandling, LOCAL_VAD_MIN_SILENCE_MS, LOCAL_VAD_PREFIX_PADDING_MS } from './local-voice/turn-timing.js';
import { createModels } from './providers.js';
import { inspectDialogs } from './scripted-dialog/inspection.js';
import { ScriptedAssistant } from './scripted-dialog/scripted-assistant.js';
import { redactConversationLogs } from './log-redaction.js';
import { loadAgentSettings } from './settings.js';
import { TurnReporter } from './turn-reporter.js';

// Each job runs in a process of its own: its log output is redacted there too.
redactConversationLogs();

interface ProcessData {
  vad?: VAD;
}

/** The VAD, with a shorter silence wait for the local recogniser (local-voice/turn-timing.ts). */
function loadVad(): Promise<VAD> {
  let local = false;
  try {
    local = loadAgentSettings().stt.provider === 'local';
  } catch {
    // The worker checked the settings before it started this process.
  }
  return silero.VAD.load(
    local ? { minSilenceDuration: LOCAL_VAD_MIN_SILENCE_MS, prefixPaddingDuration: LOCAL_VAD_PREFIX_PADDING_MS } : {},
  );
}

/**
 * The KYC assistant: its instructions are the service's system prompt, refreshed by the
 * context source; every model request goes out with the freshest prompt and with identity
 * values in the user's own words masked (the service's masking, applied to the chat too).
 */
class KycAssistant extends voice.Agent {
  constructor(
    private readonly source: ContextSource,
    instructions: string,
    tools: llm.ToolContextLike,
  ) {
    super({ instructions, tools });
  }

  override async llmNode(chatCtx: llm.ChatContext, toolCtx: llm.ToolContext, modelSettings: voice.ModelSettings) {
    await this.source.beforeReply();
    return voice.Agent.default.llmNode(
      this,
      guardedChat(chatCtx, this.source.current?.system_prompt),
      toolCtx,
      modelSettings,
    );
  }
}

export default defineAgent<ProcessData>({
  // Once per job process, before it is offered a job: a dispatch then finds the VAD loaded.
  prewarm: async (proc: JobProcess<ProcessData>) => {
    proc.userData.vad = await loadVad();
    log().info({ pid: proc.pid }, 'job process ready');
  },

  entry: async (ctx: JobContext<ProcessData>) => {
    const settings = loadAgentSettings();
    const logger = log().child({ job: ctx.job.id });
    const sessionId = sessionIdOf(ctx.job.metadata);
    if (sessionId === undefined) {
      logger.error({ cause: 'dispatch metadata has no session_id' }, 'job refused');
      ctx.shutdown('no session id in the dispatch metadata');
      return;
    }
    const jobLog = logger.child({ session_id: sessionId });
    const client = createServiceClient({ baseUrl: settings.service.url, apiKey: settings.service.apiKey });
    const warn = (message: string, fields?: Record<string, unknown>) => jobLog.warn(fields ?? {}, message);
    const reporter = new TurnReporter({ client, sessionId, timeoutMs: settings.service.timeoutMs, log: warn });

    let session: voice.AgentSession | undefined;
    let agent: KycAssistant | ScriptedAssistant | undefined;
    // A person taking over (docs/explanation/handoff.md): asked for by the tool or the scripted dialog, an
    // operator joining makes the agent say so and step back.
    const handoff = new Handoff({
      client,
      sessionId,
      timeoutMs: settings.handoff.timeoutMs,
      requestTimeoutMs: settings.service.timeoutMs,
      say: (text) => session?.say(text).waitForPlayout() ?? Promise.resolve(),
      stepBack: (said) => {
        // Silent at once, so nothing the operator or the user says next gets an answer from it.
        session?.input.setAudioEnabled(false);
        if (settings.handoff.onOperator === 'leave') void said.finally(() => leave('an operator took over'));
      },
      log: (message, fields) => jobLog.info(fields ?? {}, message),
    });
    let toldUnreachable = false;
    const source = new ContextSource({
      client,
      sessionId,
      dispatchId: ctx.job.dispatchId,
      fallbackPolicy: settings.refreshPolicy,
      timeoutMs: settings.service.timeoutMs,
      retryMaxMs: settings.service.retryMaxMs,
      onPrompt: (prompt) => {
        if (agent instanceof KycAssistant) void agent.updateInstructions(prompt);
      },
      onUnreachable: (cause) => {
        jobLog.warn({ cause }, 'service unreachable: helping in general terms, retrying with backoff');
        // Said once per call: a flapping service must not make the assistant repeat itself.
        if (session && !toldUnreachable) {
          toldUnreachable = true;
          session.say(UNREACHABLE_LINE);
        }
      },
      onRecovered: () => jobLog.info('service reachable again'),
      log: (message, fields) => jobLog.info(fields ?? {}, message),
    });
    // Leaving (the room gone, the conversation closed) ends this job's own work at once: it stops
    // fetching the context, so the service's silence check is not kept alive by a job that has
    // nothing left to help with, and the entry returns instead of waiting on a start the room's
    // end may leave unsettled (docs/reference/voice-agent.md, "Faults").
    let leaving = false;
    const left = Promise.withResolvers<void>();
    const leave = (reason: string) => {
      if (leaving) return;
      leaving = true;
      jobLog.info({ reason }, 'leaving: no more context fetches, the job ends');
      source.close();
      left.resolve();
      ctx.shutdown(reason);
    };
    ctx.addShutdownCallback(async () => {
      source.close();
      handoff.close();
      await reporter.flush();
      jobLog.info('job ended');
    });

    try {
      await ctx.connect();
    } catch (error) {
      // The room is gone (stopped or ended by the silence check while the job started) on a
      // server that does not create rooms on join: nothing to help with here.
      jobLog.warn(
        { cause: error instanceof Error ? `${error.name}: ${error.message}` : String(error) },
        'could not join the room: leaving',
      );
      ctx.shutdown('could not join the room');
      return;
    }
    // The room deleted (stop, the silence check) disconnects the agent: the job ends then, even
    // when the conversation never started (its start failed or was still under way). Listened
    // for as soon as the job is in the room: a stop can come at any moment after.
    ctx.room.on(RoomEvent.Disconnected, (reason) => {
      jobLog.info({ reason }, 'disconnected from the room');
      leave('disconnected from the room');
    });
    // Joining a room that no longer exists creates a new one of that name (the server's auto-create):
    // the session's room was deleted (stopped, or ended by the silence check) before this job got here.
    const dispatchedSid = ctx.job.room?.sid;
    const joinedSid = await ctx.room.getSid();
    if (dispatchedSid && joinedSid && joinedSid !== dispatchedSid) {
      jobLog.warn(
        { dispatched_room: dispatchedSid, joined_room: joinedSid },
        'the room was deleted before the agent joined: leaving',
      );
      await ctx.room.disconnect();
      ctx.shutdown('room deleted before the agent joined');
      return;
    }
    // A media server restarted mid-call forgets its rooms, and the job's reconnect can land in a
    // room of the same name that the service made anew for the user's next call, which has an
    // agent of its own (docs/reference/voice-agent.md, "Faults"): a room that is no longer the one joined is left.
    const leaveIfAnotherRoom = (sid: string) => {
      if (!joinedSid || !sid || sid === joinedSid || leaving) return;
      jobLog.warn({ joined_room: joinedSid, now_in: sid }, 'reconnected into another room of the same name: leaving');
      void ctx.room.disconnect().finally(() => leave('reconnected into another room of the same name'));
    };
    // Held while in the room: this process dying closes it at once, and the service sends a new
    // agent in seconds (agent/presence.ts; docs/reference/voice-agent.md, "Faults").
    const presence = new Presence({
      serviceUrl: settings.service.url,
      apiKey: settings.service.apiKey,
      sessionId,
      identity: ctx.room.localParticipant!.identity,
      log: (message, fields) => jobLog.info(fields ?? {}, message),
    });
    presence.start();
    ctx.addShutdownCallback(async () => presence.close());
    ctx.room.on(RoomEvent.RoomSidChanged, leaveIfAnotherRoom);
    // A dispatch the room no longer holds: the newer agent stays (agent/replaced-dispatch.ts). Asked
    // now, beside the first context fetch, after each reconnect (a media server that restarted
    // knows nothing of this job), and each time another agent joins.
    const replaced = replacedDispatch({
      liveKit: settings.liveKit,
      room: ctx.room.name ?? '',
      dispatchId: ctx.job.dispatchId,
      log: (message, fields) => jobLog.warn(fields ?? {}, message),
    });
    const leaveIfReplaced = async () => {
      if (leaving || !(await replaced()) || leaving) return;
      jobLog.warn({ dispatch_id: ctx.job.dispatchId }, 'the room does not hold the dispatch of this job: leaving');
      await ctx.room.disconnect().finally(() => leave('the room does not hold its dispatch'));
    };
    const checkedAtJoin = leaveIfReplaced();
    ctx.room.on(RoomEvent.Reconnected, () => {
      void ctx.room.getSid().then(leaveIfAnotherRoom);
      void leaveIfReplaced();
    });
    ctx.room.on(RoomEvent.ParticipantConnected, (participant) => {
      if (participant.kind === ParticipantKind.AGENT) void leaveIfReplaced();
      handoff.participantJoined(participant.identity);
    });
    // The agent acts on the user's app by RPC to its participant (docs/reference/voice-agent.md, "Acting on the app").
    const appActions = new AppActions({
      client,
      sessionId,
      requestTimeoutMs: settings.service.timeoutMs,
      app: () =>
        [...ctx.room.remoteParticipants.values()].find(
          (p) => p.kind !== ParticipantKind.AGENT && !isOperator(p.identity),
        )?.identity,
      rpc: (call) => ctx.room.localParticipant!.performRpc(call),
      log: (message, fields) => jobLog.info(fields ?? {}, message),
    });
    // A worker killed leaves this job process an orphan that answers on for a while, then goes
    // (about 15-20 s, the framework's own). Leaving the room at once instead lets the service see the
    // agent gone at its next room check and send a new one, which opens with a sorry
    // (docs/reference/voice-agent.md, "Faults").
    process.once('disconnect', () => {
      jobLog.warn('the worker is gone: leaving the room so the call is taken over');
      void ctx.room.disconnect().finally(() => leave('the worker is gone'));
    });
    ctx.room.on(RoomEvent.DataReceived, (payload, _participant, _kind, topic) => {
      if (topic !== AGENT_NOTICE_TOPIC) return;
      if (!isContextNotice(payload, sessionId)) {
        jobLog.warn({ topic, bytes: payload.byteLength }, 'ignored a context notice that is not one');
        return;
      }
      source.onNotice();
    });

    await Promise.all([source.start(), checkedAtJoin]);
    if (!ctx.room.isConnected) leave('disconnected from the room');
    if (leaving) return;
    // The notice the call opens with; the model records the user's answer to it (consent-tool.ts).
    let notice: NoticeToGive | undefined;
    // With no language model the scripted dialog answers (docs/reference/voice-agent.md, "Local voice").
    const inspection =
      settings.llm.provider === 'none' && settings.inspectUrl ? inspectDialogs(settings.inspectUrl) : undefined;
    if (inspection) ctx.addShutdownCallback(async () => inspection.stop());
    const scripted =
      settings.llm.provider === 'none'
        ? new ScriptedAssistant({
            source,
            ...(inspection ? { inspect: inspection.inspect } : {}),
            onUserTurn: (text, channel) => void reporter.report('user', channel, text),
            onPersonRequested: () =>
              void handoff.request('the user asked for a person').then((asked) => {
                if (!asked) session?.say(HANDOFF_LINES.failed);
              }),
            onRequest: (intent) => {
              jobLog.info({ request: intent ?? 'none' }, 'scripted dialog turn');
              // Explaining what is wrong: the field it is about lights up in the app.
              const field =
                intent === 'explain' ? source.current?.context.last_validation_failure?.component_id : undefined;
              if (field) void appActions.perform('highlight_field', field);
            },
          })
        : undefined;
    const recordConsent = consentTool({
      client,
      sessionId,
      notice: () => notice,
      timeoutMs: settings.service.timeoutMs,
      log: warn,
    });
    const tools = { record_consent: recordConsent, request_human: handoff.tool(), ...appActions.tools() };
    agent = scripted ?? new KycAssistant(source, source.current?.system_prompt ?? GENERAL_INSTRUCTIONS, tools);
    const models = createModels(
      settings,
      () => jobLog.warn({ timeout_ms: settings.modelTimeoutMs }, 'speech stalled: no audio in time, connection closed'),
      () => scripted?.hearNothing(),
    );
    session = new voice.AgentSession({
      vad: ctx.proc.userData.vad ?? (await loadVad()),
      ...models,
      ...(settings.stt.provider === 'local' ? { turnHandling: localTurnHandling() } : {}),
      connOptions: {
        llmConnOptions: { timeoutMs: settings.modelTimeoutMs, maxRetry: 1 },
        sttConnOptions: { timeoutMs: settings.modelTimeoutMs, maxRetry: 1 },
        ttsConnOptions: { timeoutMs: settings.modelTimeoutMs, maxRetry: 1 },
      },
    });

    let typedTurns = 0;
    session.on(voice.AgentSessionEventTypes.ConversationItemAdded, (event) => {
      const item = event.item;
      if (item.type !== 'message' || (item.role !== 'user' && item.role !== 'assistant')) return;
      const text = item.textContent ?? '';
      if (text.trim() === '') return;
      // The scripted dialog reports the user's turns itself (the framework commits none without a model).
      if (scripted && item.role === 'user') return;
      const channel = item.role === 'user' && typedTurns > 0 ? 'chat' : 'voice';
      if (item.role === 'user' && typedTurns > 0) typedTurns -= 1;
      void reporter.report(item.role === 'user' ? 'user' : 'agent', channel, text);
    });
    session.on(voice.AgentSessionEventTypes.Error, (event) => {
      // The event carries the framework's report ({type, error, recoverable}), or an Error itself; the cause is the error inside.
      const report = event.error;
      const error: unknown = report instanceof Error ? report : report.error;
      const cause = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      jobLog.warn(
        { cause, kind: report.type, recoverable: report.recoverable, source: event.source?.constructor.name },
        'model error',
      );
    });
    session.on(voice.AgentSessionEventTypes.Close, (event) => {
      jobLog.info({ reason: event.reason }, 'conversation ended');
      leave(String(event.reason));
    });

    const starting = session.start({
      agent,
      room: ctx.room,
      // Nothing of the call leaves for LiveKit's observability service (LiveKit Cloud): its session
      // report carries the unmasked history and its traces the user's words, past every guard here.
      record: false,
      inputOptions: {
        textInputCallback: (current, event) => {
          // Stepped back for an operator: the person answers now.
          if (handoff.steppedBack) return;
          if (scripted) {
            current.interrupt();
            void scripted.hearTyped(event.text);
            return;
          }
          typedTurns += 1;
          current.interrupt();
          current.generateReply({ userInput: event.text });
        },
        closeOnDisconnect: true,
      },
    });
    // A start the room's end interrupts may reject, or never settle: either way there is nobody left to greet.
    const started = await Promise.race([
      starting.then(
        () => true,
        (error: unknown) => {
          if (leaving) return false;
          throw error;
        },
      ),
      left.promise.then(() => false),
    ]);
    if (!started || leaving) return;
    // An operator who joined before the conversation started (a replaced agent, a slow start).
    for (const participant of ctx.room.remoteParticipants.values()) handoff.participantJoined(participant.identity);
    if (handoff.steppedBack) return;
    // The first turn is the tenant's consent notice, which says a machine is talking and asks to
    // continue (docs/explanation/calls.md); the app or the agent records the answer. Without one, the opening line.
    // The local recogniser hears English only (docs/decisions/0030-local-voice.md), so the notice is in English.
    notice = noticeFor(source.current, settings.stt.provider === 'local' ? 'en' : settings.stt.language);
    if (takeoverOf(ctx.job.metadata)) session.say(TAKEOVER_LINE);
    if (scripted) {
      // The scripted dialog's greeting follows the notice; it says that this is a machine, and that
      // it cannot see the screen when it cannot.
      toldUnreachable ||= !source.reachable;
      if (notice) session.say(notice.text);
      scripted.greet();
      return;
    }
    session.say(notice?.text ?? OPENING_LINE);
    if (!source.reachable && !toldUnreachable) {
      toldUnreachable = true;
      session.say(UNREACHABLE_LINE);
    }
  },
});
