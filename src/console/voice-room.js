// The demo's side of the LiveKit room: joining as the user, the assistant's audio and words, typed chat.
// livekit-client is loaded only when a demo joins: the rest of the console never needs its 1.4 MB.
const CLIENT = '/console/vendor/livekit-client/livekit-client.esm.mjs';

/** LiveKit Agents' text-stream topics: spoken words as they are transcribed, and typed chat. */
export const TRANSCRIPTION_TOPIC = 'lk.transcription';
export const CHAT_TOPIC = 'lk.chat';
/** The RPC methods the agent calls on the app (agent/app-actions.ts). */
const APP_METHODS = {
  highlight_field: 'kyc.highlight_field',
  open_screen: 'kyc.open_screen',
  show_hint: 'kyc.show_hint',
};
/** The attribute a LiveKit agent keeps its state in: listening, thinking, speaking. */
const AGENT_STATE = 'lk.agent.state';

/**
 * Joins `url` with `token` and reports what happens through the callbacks:
 * - `onParticipants(list)`: everyone else in the room, `{ identity, agent, state }` each;
 * - `onWords({ segment, speaker, text, final })`: a transcript line, the whole line so far each time;
 * - `onAudio(element)`: an <audio> element playing a remote track, to be put in the page;
 * - `onLeft(reason)`: the room was left, by us or not;
 * - `onAppAction({ action, payload })`: the agent asked the app to act (highlight a field, open a
 *   screen, show a hint: LiveKit RPC, docs/reference/voice-agent.md "Acting on the app"); the page plays the app.
 * Resolves once joined to `{ identity, enableMicrophone(), say(text), leave() }`.
 */
export async function joinVoiceRoom({
  url,
  token,
  onParticipants,
  onWords,
  onAudio,
  onLeft,
  onAppAction = () => undefined,
}) {
  const { Room, RoomEvent, Track } = await import(CLIENT);
  const room = new Room();

  const participants = () =>
    [...room.remoteParticipants.values()].map((p) => ({
      identity: p.identity,
      agent: p.isAgent,
      state: p.attributes[AGENT_STATE] ?? '',
    }));
  const showParticipants = () => onParticipants(participants());
  room
    .on(RoomEvent.ParticipantConnected, showParticipants)
    .on(RoomEvent.ParticipantDisconnected, showParticipants)
    .on(RoomEvent.ParticipantAttributesChanged, showParticipants)
    .on(RoomEvent.TrackSubscribed, (track) => {
      if (track.kind === Track.Kind.Audio) onAudio(track.attach());
    })
    .on(RoomEvent.TrackUnsubscribed, (track) => {
      for (const element of track.detach()) element.remove();
    })
    .on(RoomEvent.Disconnected, (reason) => onLeft(reason));

  const ownTrack = (trackId) => trackId !== undefined && room.localParticipant.trackPublications.has(trackId);
  /**
   * An agent sends each reply as one stream of pieces, and each update of what it heard from the
   * user as a new stream holding the whole line so far, both under one segment id: so a line is
   * the text of its segment's latest stream. A reply is whole when its stream ends; what was heard
   * is whole when a stream says it is final.
   */
  async function readWords(reader, { identity }) {
    const attributes = reader.info.attributes ?? {};
    const segment = attributes['lk.segment_id'] ?? reader.info.id;
    const speaker =
      identity === room.localParticipant.identity || ownTrack(attributes['lk.transcribed_track_id'])
        ? 'you'
        : 'assistant';
    let text = '';
    for await (const piece of reader) {
      text += piece;
      onWords({ segment, speaker, text, final: false });
    }
    onWords({
      segment,
      speaker,
      text,
      final: speaker === 'assistant' || attributes['lk.transcription_final'] !== 'false',
    });
  }
  const readSafely = (reader, from) =>
    readWords(reader, from).catch((error) => console.warn('transcript stream failed', error));
  room.registerTextStreamHandler(TRANSCRIPTION_TOPIC, readSafely);
  // Typed replies, from an agent that answers chat on the chat topic rather than as a transcript.
  room.registerTextStreamHandler(CHAT_TOPIC, readSafely);
  // The app's side of the agent's actions: each method answers once the page has shown it.
  for (const [action, method] of Object.entries(APP_METHODS)) {
    room.registerRpcMethod(method, async (data) => {
      onAppAction({ action, payload: JSON.parse(data.payload) });
      return 'ok';
    });
  }

  await room.connect(url, token);
  // Joined from a click: the browser lets the page play the assistant's voice.
  await room.startAudio();
  showParticipants();

  return {
    identity: room.localParticipant.identity,
    enableMicrophone: () => room.localParticipant.setMicrophoneEnabled(true),
    async say(text) {
      await room.localParticipant.sendText(text, { topic: CHAT_TOPIC });
    },
    leave: () => room.disconnect(),
  };
}
