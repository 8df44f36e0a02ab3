import { HttpError, getJson, poll } from '../api.js';
import { h, notFound, screenName, time, voiceStateName } from '../dom.js';
import { staleness } from '../stale.js';
import { drawStatechart } from '../statechart.js';
import { timelineList } from '../timeline.js';
import { callsList } from '../calls.js';

const REFRESH_MS = 1000;
const TIMELINE_LIMIT = 200;

let machine;

const voiceBadge = (name) => h('span', { class: `badge voice-${name}` }, name);

/** One session: its statechart with the current states lit, its timeline and what the agent would get now. */
export function sessionView({ main, onUnauthorized }, sessionId) {
  const id = encodeURIComponent(sessionId);
  let chart;

  const facts = h('dl', { class: 'facts', id: 'session-facts' });
  const chartHolder = h('div', {}, h('p', { class: 'muted' }, 'Loading the statechart…'));
  const timeline = timelineList('timeline');
  const calls = callsList('session-calls');
  const prompt = h('pre', { class: 'prompt', id: 'system-prompt', tabindex: '0' });
  const agentContext = h('pre', { class: 'json', id: 'agent-context', tabindex: '0' });
  const problem = h('p', { class: 'problem', role: 'alert' });

  main.append(
    h('p', {}, h('a', { href: '#/sessions' }, '← Sessions')),
    h('h2', {}, `Session ${sessionId}`),
    problem,
    h(
      'div',
      { id: 'session-content' },
      facts,
      h(
        'section',
        { 'aria-labelledby': 'calls-title' },
        h('h3', { id: 'calls-title' }, 'Calls, newest first'),
        calls.element,
      ),
      // On a narrow screen the chart is several screens tall: the stylesheet moves it below the rest.
      h(
        'div',
        { class: 'session-body' },
        h(
          'section',
          { class: 'chart-section', 'aria-labelledby': 'chart-title' },
          h('h3', { id: 'chart-title' }, 'Statechart'),
          chartHolder,
        ),
        h(
          'div',
          { class: 'columns' },
          h(
            'section',
            { 'aria-labelledby': 'timeline-title' },
            h('h3', { id: 'timeline-title' }, 'Timeline, newest first'),
            timeline.element,
          ),
          h(
            'section',
            { 'aria-labelledby': 'agent-title' },
            h('h3', { id: 'agent-title' }, 'What the agent would get now'),
            h('h4', {}, 'System prompt'),
            prompt,
            h('details', {}, h('summary', {}, 'Context (masked, as served)'), agentContext),
          ),
        ),
      ),
    ),
  );

  const fact = (term, value) => [h('dt', {}, term), h('dd', {}, value ?? '—')];

  async function load(stopped) {
    machine ??= await getJson('/api/machines/session');
    if (!chart) {
      chart = drawStatechart(machine);
      chartHolder.replaceChildren(chart.element);
    }
    let session, activity, context;
    try {
      [session, activity, context] = await Promise.all([
        getJson(`/api/sessions/${id}`),
        getJson(`/api/activity?session_id=${id}&limit=${TIMELINE_LIMIT}`),
        getJson(`/api/sessions/${id}/agent-context`),
      ]);
    } catch (error) {
      // A session the service does not hold (404), or an id that cannot be one (422), does not
      // appear by asking again every second: say so once and stop asking.
      if (!(error instanceof HttpError && (error.status === 404 || error.status === 422))) throw error;
      if (stopped()) return;
      poller.stop();
      notFound(
        main,
        'No such session',
        `The service holds no session “${sessionId}” (it answered ${error.message}). It may have ended and been let go, or the id is mistyped.`,
      );
      return;
    }
    if (stopped()) return;
    chart.highlight(session.state);
    facts.replaceChildren(
      ...fact('User', session.user_id),
      ...fact('Screen', session.screen && screenName(session.screen)),
      // The voice region's state, as the Sessions list shows it: `active` alone reads true while
      // voice is still starting or already stopping.
      ...fact('Voice', voiceBadge(voiceStateName(session.state?.voice))),
      ...fact('Room', session.voice?.room),
      ...fact('Last user activity', time(session.last_user_activity_at)),
      ...fact('Last trigger', time(session.last_trigger_at)),
    );
    timeline.show(activity.items);
    // Calls are not kept where sessions run in the cluster (501): the rest of the page still shows.
    try {
      calls.show((await getJson(`/api/sessions/${id}/calls`)).calls);
    } catch (error) {
      if (!(error instanceof HttpError && error.status === 501)) throw error;
      calls.show([], 'Calls are not kept by this service (a shared activity log with sessions in the process).');
    }
    if (stopped()) return;
    if (prompt.textContent !== context.system_prompt) prompt.textContent = context.system_prompt;
    const contextText = JSON.stringify(context.context, null, 2);
    if (agentContext.textContent !== contextText) agentContext.textContent = contextText;
  }

  const poller = poll(load, REFRESH_MS, {
    onUnauthorized,
    onProblem: staleness(problem, main.querySelector('#session-content'), 'the session'),
  });
  return poller;
}
