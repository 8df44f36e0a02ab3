import { HttpError, getJson, poll, postJson } from '../api.js';
import { ago, h, screenName, sessionLink, tableScroll } from '../dom.js';
import { staleness } from '../stale.js';
import { joinVoiceRoom } from '../voice-room.js';

const REFRESH_MS = 2000;

/** One turn of a waiting call's transcript, who said it first. */
const turnLine = (turn) => h('li', {}, h('strong', {}, turn.role === 'agent' ? 'Agent ' : 'User '), turn.text);
const OPERATOR_NAME = 'kyc-console-operator';
/** The last turns shown with a waiting call: enough to know why the user asked. */
const LAST_TURNS = 4;
const EMPTY =
  'No call is waiting for a person. A call shows here when its user asks for one: the assistant asks for them, or the app sends handoff_requested (docs/explanation/handoff.md).';

/**
 * Calls waiting for a person (docs/explanation/handoff.md): each running call in which the user asked for one,
 * with its screen and last words, and a Join button that enters its room from this browser with
 * the microphone on. The agent in the room says a colleague is joining and steps back.
 */
export function handoffsView({ main, onUnauthorized }) {
  const operator = h('input', {
    id: 'operator-name',
    autocomplete: 'name',
    value: localStorage.getItem(OPERATOR_NAME) ?? '',
    placeholder: 'your name or desk',
  });
  const body = h('tbody', {});
  const table = h(
    'table',
    { id: 'handoffs', class: 'grid' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['', 'Waiting', 'Session', 'Screen', 'Reason', 'Last words'].map((name) => h('th', { scope: 'col' }, name)),
      ),
    ),
    body,
  );
  const status = h('p', { id: 'handoff-status', role: 'status' });
  const participants = h('ul', { id: 'handoff-participants' });
  const audio = h('div', { hidden: true });
  const leaveButton = h(
    'button',
    { type: 'button', id: 'handoff-leave', hidden: true, onclick: () => void room?.leave() },
    'Leave the call',
  );
  const problem = h('p', { class: 'problem', role: 'alert' });
  const content = h('div', {}, tableScroll('Calls waiting for a person', table));
  let room;

  main.append(
    h('h2', {}, 'Handoffs'),
    h(
      'p',
      { class: 'muted' },
      'Calls in which the user asked for a person, longest waiting first. Join one to talk to the user; the assistant steps back.',
    ),
    h('p', {}, h('label', {}, 'Join as ', operator)),
    problem,
    content,
    h(
      'section',
      { 'aria-labelledby': 'h-joined' },
      h('h3', { id: 'h-joined' }, 'Your call'),
      status,
      participants,
      leaveButton,
      audio,
    ),
  );
  status.textContent = 'Not in a call.';
  const say = (text) => body.replaceChildren(h('tr', {}, h('td', { colspan: '6', class: 'muted' }, text)));

  async function join(call) {
    const name = operator.value.trim();
    if (!name) {
      status.textContent = 'Type your name or desk first: the call’s record keeps who joined.';
      operator.focus();
      return;
    }
    localStorage.setItem(OPERATOR_NAME, name);
    await room?.leave();
    status.textContent = `Joining the call of ${call.session_id}…`;
    try {
      const joined = await postJson(`/api/calls/${encodeURIComponent(call.call_id)}/join`, { operator: name });
      poller.now();
      if (!joined.media_url) throw new Error('the service has no media server configured (LIVEKIT_URL)');
      room = await joinVoiceRoom({
        url: joined.media_url,
        token: joined.token,
        onParticipants: (list) =>
          participants.replaceChildren(
            ...list.map((p) => h('li', {}, p.agent ? `${p.identity} (assistant)` : p.identity)),
          ),
        onWords: () => undefined,
        onAudio: (element) => audio.append(element),
        onLeft: () => {
          room = undefined;
          leaveButton.hidden = true;
          participants.replaceChildren();
          status.textContent = 'Left the call.';
        },
      });
      leaveButton.hidden = false;
      status.textContent = `In the call of ${joined.session_id} as ${room.identity}.`;
      try {
        await room.enableMicrophone();
        status.textContent += ' Microphone on: the user hears you.';
      } catch (error) {
        status.textContent += ` No microphone (${error.message}).`;
      }
    } catch (error) {
      status.textContent = `Could not join: ${error.message}`;
    }
  }

  async function load(stopped) {
    let handoffs;
    try {
      handoffs = (await getJson('/api/handoffs')).handoffs;
    } catch (error) {
      if (!(error instanceof HttpError && error.status === 501)) throw error;
      if (!stopped()) say('Calls are not kept by this service (a shared activity log with sessions in the process).');
      return;
    }
    if (stopped()) return;
    if (handoffs.length === 0) return say(EMPTY);
    body.replaceChildren(
      ...handoffs.map((call) =>
        h(
          'tr',
          {},
          // First, so it is in reach on a phone, where the other columns scroll.
          h('td', {}, h('button', { type: 'button', class: 'join', onclick: () => void join(call) }, 'Join')),
          h('td', { class: 'nowrap' }, ago(call.handoff.at)),
          h('td', {}, sessionLink(call.session_id)),
          h('td', {}, screenName(call.handoff.screen ?? call.start.screen ?? '—')),
          h('td', { class: 'wrap' }, call.handoff.reason ?? '—'),
          h(
            'td',
            { class: 'wrap' },
            call.transcript.length === 0
              ? h('span', { class: 'muted' }, call.transcript_kept ? 'nothing said yet' : 'words not kept (no consent)')
              : h('ul', { class: 'turns' }, call.transcript.slice(-LAST_TURNS).map(turnLine)),
          ),
        ),
      ),
    );
  }

  const poller = poll(load, REFRESH_MS, {
    onUnauthorized,
    onProblem: staleness(problem, content, 'the waiting calls'),
  });
  return {
    stop() {
      poller.stop();
      void room?.leave();
    },
  };
}
