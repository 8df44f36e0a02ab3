import type { RemoteParticipant, RemoteTrack } from '@livekit/rtc-node';
import {
  AudioFrame,
  AudioSource,
  AudioStream,
  LocalAudioTrack,
  ParticipantKind,
  Room,
  RoomEvent,
  TrackKind,
  TrackPublishOptions,
  TrackSource,
} from '@livekit/rtc-node';

/** A frame louder than this (RMS of 16-bit samples) is speech a user hears, not the silence between words. */
export const AUDIBLE_RMS = 1000;

/** The agents framework's topics: typed chat in, the agent's words out. */
const CHAT_TOPIC = 'lk.chat';
const TRANSCRIPTION_TOPIC = 'lk.transcription';

/**
 * A user in the room, as the app would be: joins with the token the service issued, types in the
 * chat, speaks into a microphone track, reads the agent's transcript and listens to its audio.
 */
export async function joinAsUser(url: string, token: string) {
  const room = new Room();
  const transcripts: string[] = [];
  /** Loudest agent audio heard so far, as RMS of 16-bit samples. */
  let loudest = 0;
  let agentAudioFrames = 0;
  /** When each audible agent frame arrived (performance.now()), the last few hundred. */
  const audibleAt: number[] = [];

  room.registerTextStreamHandler(TRANSCRIPTION_TOPIC, (reader) => {
    // A stream cut by the room going away (stop, silence timeout) is simply not a transcript.
    reader.readAll().then(
      (text) => {
        if (text.trim() !== '') transcripts.push(text);
      },
      () => {},
    );
  });
  /** Loudest audio heard from each participant that is not an agent (an operator who joined), by identity. */
  const loudestOthers = new Map<string, number>();
  room.on(RoomEvent.TrackSubscribed, (track: RemoteTrack, _publication, participant: RemoteParticipant) => {
    if (track.kind !== TrackKind.KIND_AUDIO) return;
    const agent = participant.kind === ParticipantKind.AGENT;
    void (async () => {
      for await (const frame of new AudioStream(track, 24_000, 1)) {
        let sum = 0;
        for (const sample of frame.data) sum += sample * sample;
        const rms = Math.sqrt(sum / Math.max(1, frame.data.length));
        if (!agent) {
          loudestOthers.set(participant.identity, Math.max(loudestOthers.get(participant.identity) ?? 0, rms));
          continue;
        }
        agentAudioFrames += 1;
        loudest = Math.max(loudest, rms);
        if (rms > AUDIBLE_RMS) {
          audibleAt.push(performance.now());
          if (audibleAt.length > 500) audibleAt.splice(0, 250);
        }
      }
    })().catch(() => {});
  });
  await room.connect(url, token, { autoSubscribe: true, dynacast: false });

  let microphone: AudioSource | undefined;
  return {
    room,
    transcripts,
    loudestAgentAudio: () => loudest,
    /** Loudest audio heard from participants that are not agents, by identity. */
    loudestOtherAudio: () => new Map(loudestOthers),
    /** Forgets the loudest audio heard so far: what comes after is measured on its own. */
    resetLoudest() {
      loudest = 0;
    },
    agentAudioFrames: () => agentAudioFrames,
    /** The first audible agent frame that arrived after `since` (performance.now()), if any yet. */
    firstAudibleAfter: (since: number) => audibleAt.find((at) => at > since),
    agents: () =>
      [...room.remoteParticipants.values()].filter((participant) => participant.kind === ParticipantKind.AGENT),
    async type(text: string) {
      await room.localParticipant!.sendText(text, { topic: CHAT_TOPIC });
    },
    /**
     * Plays 16-bit mono PCM into a microphone track in real time, then `silenceMs` of silence so the
     * VAD hears the end. Resolves with when the last sample of speech had left for the room
     * (performance.now()), which `onSpeechEnd` is also called with as soon as it is known.
     */
    async speak(pcm: Int16Array, sampleRate: number, silenceMs = 1500, onSpeechEnd?: (at: number) => void) {
      if (!microphone) {
        microphone = new AudioSource(sampleRate, 1);
        const track = LocalAudioTrack.createAudioTrack('microphone', microphone);
        await room.localParticipant!.publishTrack(
          track,
          new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
        );
      }
      const chunk = Math.floor(sampleRate / 100);
      const silence = new Int16Array(Math.round((sampleRate * silenceMs) / 1000));
      let speechEnd = 0;
      for (const samples of [pcm, silence]) {
        for (let offset = 0; offset < samples.length; offset += chunk) {
          const part = samples.slice(offset, offset + chunk);
          const padded = part.length === chunk ? part : Int16Array.from({ length: chunk }, (_, i) => part[i] ?? 0);
          await microphone.captureFrame(new AudioFrame(padded, sampleRate, 1, chunk));
        }
        if (samples === pcm) {
          // The source queues ahead; the speech has left once its queue is empty.
          await microphone.waitForPlayout();
          speechEnd = performance.now();
          onSpeechEnd?.(speechEnd);
        }
      }
      return speechEnd;
    },
    async leave() {
      await room.disconnect();
    },
  };
}

export type SimulatedUser = Awaited<ReturnType<typeof joinAsUser>>;
