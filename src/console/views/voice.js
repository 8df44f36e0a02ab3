import { Unauthorized, getJson, poll, postJson } from '../api.js';
import { h, sessionLink } from '../dom.js';
import { staleness } from '../stale.js';
import { timelineList } from '../timeline.js';
import { joinVoiceRoom } from '../voice-room.js';

const TIMELINE_MS = 1000;
const TIMELINE_LIMIT = 100;

const NOT_IN_ROOM = 'Not in a room yet: press “Start and join”.';

const newSessionId = () => `demo-${crypto.randomUUID().slice(0, 8)}`;

/**
 * The voice demo: starts a session through the same call the app's SDK makes
 * (POST /v1/assistant/session/start), joins its room as the user with the token it returns, and
 * shows the conversation beside the session's timeline. Stop ends it as the SDK does.
 */
export function voiceView({ main, onUnauthorized }) {
  let voice;
  let timelinePoll;
  let sessionId;
  let viewStopped = false;

  const field = (id, label, input, help) =>
    h(
      'div',
      { class: 'field' },
      h('label', { for: id }, label),
      input,
      help && h('span', { class: 'muted small', id: `${id}-help` }, help),
    );
  const sessionInput = h('input', {
    id: 'voice-session-id',
    required: true,
    value: newSessionId(),
    spellcheck: 'false',
  });
  const userInput = h('input', { id: 'voice-user-id', value: 'demo-user', spellcheck: 'false' });
  const screenInput = h('input', { id: 'voice-screen', value: 'pan_details', spellcheck: 'false' });
  const startButton = h('button', { type: 'submit', id: 'voice-start' }, 'Start and join');
  const stopButton = h(
    'button',
    { type: 'button', id: 'voice-stop', disabled: true, onclick: () => void stop() },
    'Stop',
  );
  const status = h('p', { id: 'voice-status', role: 'status' }, 'Not in a room.');
  const mediaNote = h('p', { id: 'voice-media-note', class: 'note callout', role: 'status' });
  const problem = h('p', { class: 'problem', role: 'alert', id: 'voice-problem' });
  const sessionNote = h('p', { id: 'voice-session-link', class: 'muted' });
  const participants = h('ul', { id: 'voice-participants', class: 'participants' });
  const transcript = h('ol', { id: 'voice-transcript', class: 'transcript', 'aria-live': 'polite' });
  const audio = h('div', { id: 'voice-audio', hidden: true });
  const nothingAsked = h(
    'li',
    { class: 'muted' },
    'Nothing yet: a field the assistant highlights, a screen it opens or a hint it shows appears here.',
  );
  const appActions = h('ul', { id: 'voice-app-actions', class: 'app-actions' }, nothingAsked);
  /** What the agent asked the app to do, as the app would show it: the page stands in for the app. */
  function showAppAction({ action, payload }) {
    const said = {
      highlight_field: `Highlight field ${payload.component_id}`,
      open_screen: `Open screen ${payload.screen}`,
      show_hint: `Hint: ${payload.text}`,
    }[action];
    nothingAsked.remove();
    appActions.append(h('li', { 'data-action': action }, said ?? action));
  }
  const chatInput = h('input', {
    id: 'voice-chat-input',
    disabled: true,
    autocomplete: 'off',
    'aria-describedby': 'voice-chat-help',
  });
  const chatButton = h('button', { type: 'submit', id: 'voice-chat-send', disabled: true }, 'Send');
  const timeline = timelineList(
    'voice-timeline',
    'Start a session above: its activity appears here as it is recorded.',
  );
  timeline.show([]);
  const timelineProblem = h('p', { class: 'problem', role: 'alert' });
  const timelineBox = h('div', {}, timeline.element);

  const lines = new Map();
  function showWords({ segment, speaker, text, final }) {
    let line = lines.get(segment);
    if (!line) {
      line = h(
        'li',
        { 'data-speaker': speaker },
        h('span', { class: 'speaker' }, speaker === 'you' ? 'You' : 'Assistant'),
        h('span', { class: 'words' }),
      );
      lines.set(segment, line);
      transcript.append(line);
    }
    line.querySelector('.words').textContent = text;
    line.classList.toggle('interim', !final);
  }
  let typed = 0;
  const showTyped = (text) => showWords({ segment: `typed-${(typed += 1)}`, speaker: 'you', text, final: true });

  function showParticipants(list, alone = 'Nobody else yet: the assistant joins once its worker takes the dispatch.') {
    participants.replaceChildren(
      ...(list.length === 0
        ? [h('li', { class: 'muted' }, alone)]
        : list.map((p) =>
            h(
              'li',
              { 'data-agent': p.agent ? 'true' : 'false' },
              p.agent ? 'Assistant ' : 'Participant ',
              h('code', {}, p.identity),
              p.state ? ` · ${p.state}` : '',
            ),
          )),
    );
  }

  const setJoined = (joined) => {
    for (const input of [sessionInput, userInput, screenInput, startButton]) input.disabled = joined;
    for (const input of [chatInput, chatButton]) input.disabled = !joined;
    stopButton.disabled = !joined && !sessionId;
  };

  function followTimeline(id) {
    timelinePoll?.stop();
    const query = `session_id=${encodeURIComponent(id)}&limit=${TIMELINE_LIMIT}`;
    timelinePoll = poll(
      async (superseded) => {
        const activity = await getJson(`/api/activity?${query}`);
        if (!superseded()) timeline.show(activity.items);
      },
      TIMELINE_MS,
      { onUnauthorized, onProblem: staleness(timelineProblem, timelineBox, 'the timeline') },
    );
  }

  function fail(error) {
    if (error instanceof Unauthorized) return onUnauthorized(error);
    problem.textContent = error.message || String(error);
  }

  async function start(event) {
    event.preventDefault();
    problem.textContent = '';
    sessionId = sessionInput.value.trim();
    setJoined(true);
    status.textContent = 'Starting the session…';
    try {
      const started = await postJson('/v1/assistant/session/start', {
        session_id: sessionId,
        user_id: userInput.value.trim() || null,
        screen: screenInput.value.trim() || null,
      });
      sessionNote.replaceChildren(
        'Session ',
        sessionLink(started.session_id),
        ` · room ${started.livekit_room}`,
        started.warnings.length ? ` · warnings: ${started.warnings.join(', ')}` : '',
      );
      followTimeline(started.session_id);
      if (!started.livekit_url) {
        status.textContent = 'Session started, but there is no room to join.';
        showParticipants([], 'No room: the service has no media server.');
        throw new Error(
          'The service has no media server configured (LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET).',
        );
      }
      status.textContent = `Joining room ${started.livekit_room}…`;
      voice = await joinVoiceRoom({
        url: started.livekit_url,
        token: started.token,
        onParticipants: showParticipants,
        onWords: showWords,
        onAppAction: showAppAction,
        onAudio: (element) => audio.append(element),
        onLeft: () => {
          voice = undefined;
          showParticipants([], NOT_IN_ROOM);
          setJoined(false);
          if (!viewStopped) status.textContent = 'Left the room.';
        },
      });
      if (viewStopped) return voice.leave();
      status.textContent = `In room ${started.livekit_room} as ${voice.identity}.`;
      try {
        await voice.enableMicrophone();
        status.textContent += ' Microphone on: speak to the assistant.';
      } catch (error) {
        status.textContent += ` No microphone (${error.message}): type to the assistant instead.`;
      }
    } catch (error) {
      if (!voice) setJoined(false);
      fail(error);
    }
  }

  async function say(event) {
    event.preventDefault();
    const text = chatInput.value.trim();
    if (!text || !voice) return;
    chatInput.value = '';
    try {
      await voice.say(text);
      showTyped(text);
    } catch (error) {
      fail(error);
    }
  }

  async function stop() {
    stopButton.disabled = true;
    await voice?.leave();
    if (!sessionId) return;
    try {
      await postJson('/v1/assistant/session/stop', { session_id: sessionId, user_id: userInput.value.trim() || null });
      status.textContent = 'Stopped: the room is deleted.';
    } catch (error) {
      fail(error);
    }
    sessionId = undefined;
    setJoined(false);
    // The next demo is a new session: a stopped one resumed would keep its old engagement.
    sessionInput.value = newSessionId();
  }

  main.append(
    h('h2', {}, 'Voice demo'),
    h(
      'p',
      { class: 'muted' },
      'Starts a session as the app would, joins its room as the user with your microphone, and shows the assistant’s words beside the session’s timeline.',
    ),
    mediaNote,
    h(
      'form',
      { class: 'toolbar', id: 'voice-form', onsubmit: start },
      field('voice-session-id', 'Session', sessionInput),
      field('voice-user-id', 'User', userInput),
      field('voice-screen', 'Screen', screenInput),
      startButton,
      stopButton,
    ),
    status,
    problem,
    sessionNote,
    h(
      'div',
      { class: 'columns' },
      h(
        'section',
        { 'aria-labelledby': 'conversation-title' },
        h('h3', { id: 'conversation-title' }, 'Conversation'),
        h('h4', {}, 'In the room'),
        participants,
        transcript,
        h('h4', {}, 'The app, as the assistant drives it'),
        appActions,
        h(
          'form',
          { class: 'chat', id: 'voice-chat', onsubmit: say },
          field(
            'voice-chat-input',
            'Type to the assistant',
            chatInput,
            'For when speaking is not possible: sent as chat in the room.',
          ),
          chatButton,
        ),
        audio,
      ),
      h(
        'section',
        { 'aria-labelledby': 'voice-timeline-title' },
        h('h3', { id: 'voice-timeline-title' }, 'Session timeline, newest first'),
        timelineProblem,
        timelineBox,
      ),
    ),
  );
  showParticipants([], NOT_IN_ROOM);

  // Said before Start is pressed: without a media server the demo starts a session but has no room to join.
  getJson('/api/status').then(
    (status) => {
      if (!viewStopped && !status.media.configured) {
        mediaNote.textContent =
          'No media server configured (LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET): Start creates the session but has no room to join. See docs/how-to/voice-loop.md.';
      }
    },
    (error) => {
      if (error instanceof Unauthorized) onUnauthorized(error);
    },
  );

  return {
    // Leaving the page leaves the room; the session itself ends as any other would (stop, or silence).
    stop() {
      viewStopped = true;
      timelinePoll?.stop();
      void voice?.leave();
    },
  };
}
