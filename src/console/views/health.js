import { getJson, poll, reach } from '../api.js';
import { h, tableScroll, time } from '../dom.js';
import { staleness } from '../stale.js';

const REFRESH_MS = 2000;

/** Any JSON value as a definition list: /health grows fields, and this shows whichever it has. */
function valueView(value) {
  if (value === null || typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? '—' : h('ul', {}, value.map((item) => h('li', {}, valueView(item))));
  return h('dl', { class: 'facts' }, Object.entries(value).flatMap(([key, inner]) => [h('dt', {}, key.replaceAll('_', ' ')), h('dd', {}, valueView(inner))]));
}

/** Liveness as /health says it, and the operator status: media, sessions, streams, config version. */
export function healthView({ main, onUnauthorized }) {
  const health = h('div', { id: 'health-body' });
  const media = h('div', { id: 'media-status' });
  const counts = h('div', { id: 'counts' });
  const problem = h('p', { class: 'problem', role: 'alert' });
  const content = h(
    'div',
    { id: 'health-content' },
    h('div', { class: 'columns' }, h('section', { 'aria-labelledby': 'h-health' }, h('h3', { id: 'h-health' }, 'Service (/health)'), health), h('section', { 'aria-labelledby': 'h-counts' }, h('h3', { id: 'h-counts' }, 'Sessions and streams'), counts)),
    h('section', { 'aria-labelledby': 'h-media' }, h('h3', { id: 'h-media' }, 'Media'), media),
  );

  main.append(h('h2', {}, 'Health'), problem, content);

  async function load(stopped) {
    // /health answers 503 with its body when a dependency is down: shown as it is, whatever the status.
    const [liveness, status] = await Promise.all([reach('/health').then((response) => response.json()), getJson('/api/status')]);
    if (stopped()) return;
    health.replaceChildren(valueView(liveness));
    counts.replaceChildren(
      valueView({
        sessions_running: status.sessions.running,
        sessions_hibernated: status.sessions.hibernated,
        max_sessions: status.sessions.max,
        activity_streams: `${status.activity_streams.open} of ${status.activity_streams.max}`,
        last_activity_id: status.activity.last_id,
        config_version: status.config_version,
      }),
    );
    const calls = status.media.recent_calls;
    media.replaceChildren(
      h('p', { id: 'media-configured' }, status.media.configured ? 'Media is configured (LiveKit).' : 'Media is not configured: voice starts get placeholder tokens.'),
      calls.length === 0
        ? h('p', { class: 'muted' }, 'No media call made yet.')
        : tableScroll(
            'Last media calls',
            h(
              'table',
              { class: 'grid' },
              h('caption', {}, 'Last media calls, newest first'),
              h('thead', {}, h('tr', {}, ['Time', 'Call', 'Outcome', 'Duration'].map((name) => h('th', { scope: 'col' }, name)))),
              h('tbody', {}, calls.map((call) => h('tr', {}, h('td', { class: 'nowrap' }, time(call.at)), h('td', {}, call.call), h('td', {}, h('span', { class: `badge outcome-${call.outcome}` }, call.outcome)), h('td', { class: 'num' }, `${call.duration_ms} ms`)))),
            ),
          ),
    );
  }

  return poll(load, REFRESH_MS, { onUnauthorized, onProblem: staleness(problem, content, 'the status') });
}
