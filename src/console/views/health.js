import { authHeaders, getJson, poll, reach } from '../api.js';
import { emptyState, h, tableScroll, time } from '../dom.js';
import { staleness } from '../stale.js';
import { webhooksSection } from './webhooks.js';

const REFRESH_MS = 2000;

const MIB = 2 ** 20;

/** A byte count as an operator reads one: `512 MiB`, `6.5 KiB`. */
function bytes(count) {
  if (count >= MIB) return `${(count / MIB).toFixed(count >= 100 * MIB ? 0 : 1)} MiB`;
  if (count >= 1024) return `${(count / 1024).toFixed(1)} KiB`;
  return `${count} bytes`;
}

/** /health's names that are abbreviations, in words; any other name shows with its underscores as spaces. */
const WORDS = new Map([
  ['http', 'requests'],
  ['sse', 'activity streams'],
  ['websocket', 'SDK sockets'],
]);

/** Any JSON value as a definition list: /health grows fields, and this shows whichever it has. */
function valueView(value, key = '') {
  if (typeof value === 'number' && key.endsWith('_bytes')) return bytes(value);
  if (value === null || typeof value !== 'object') return String(value);
  if (Array.isArray(value))
    return value.length === 0
      ? '—'
      : h(
          'ul',
          {},
          value.map((item) => h('li', {}, valueView(item))),
        );
  return h(
    'dl',
    { class: 'facts' },
    Object.entries(value).flatMap(([name, inner]) => [
      h('dt', {}, WORDS.get(name) ?? name.replace(/_bytes$/, '').replaceAll('_', ' ')),
      h('dd', {}, valueView(inner, name)),
    ]),
  );
}

/** Liveness as /health says it, and the operator status: media, sessions, streams, config version. */
export function healthView({ main, onUnauthorized }) {
  const health = h('div', { id: 'health-body' });
  const media = h('div', { id: 'media-status' });
  const counts = h('div', { id: 'counts' });
  const nothingYet = emptyState('no-data', 'The service holds no session and has recorded no activity yet.');
  nothingYet.hidden = true;
  const problem = h('p', { class: 'problem', role: 'alert' });
  const webhooks = webhooksSection(() => poller.now());
  const content = h(
    'div',
    { id: 'health-content' },
    h(
      'div',
      { class: 'columns' },
      h('section', { 'aria-labelledby': 'h-health' }, h('h3', { id: 'h-health' }, 'Service (/health)'), health),
      h('section', { 'aria-labelledby': 'h-counts' }, h('h3', { id: 'h-counts' }, 'Sessions and streams'), counts),
    ),
    h('section', { 'aria-labelledby': 'h-media' }, h('h3', { id: 'h-media' }, 'Media'), media),
    webhooks.element,
  );

  main.append(h('h2', {}, 'Health'), problem, nothingYet, content);

  async function load(stopped) {
    // /health answers 503 with its body when a dependency is down: shown as it is, whatever the status.
    // With the key, /health also names the store's file; without one it names no path.
    const [liveness, status] = await Promise.all([
      reach('/health', { headers: authHeaders() }).then((response) => response.json()),
      getJson('/api/status'),
    ]);
    if (stopped()) return;
    await webhooks.load(stopped);
    if (stopped()) return;
    health.replaceChildren(valueView(liveness));
    counts.replaceChildren(
      valueView({
        sessions_running: status.sessions.running,
        sessions_hibernated: status.sessions.hibernated,
        max_sessions: status.sessions.max,
        activity_streams: `${status.activity_streams.open} of ${status.activity_streams.max}`,
        // The log's ids start past 1 (docs/reference/console.md, Resume): with nothing in it, the number means nothing.
        last_activity_id: status.activity.oldest_id === null ? 'none yet' : status.activity.last_id,
        config_version: status.config_version,
      }),
    );
    const empty = status.sessions.running + status.sessions.hibernated === 0 && status.activity.oldest_id === null;
    if (nothingYet.hidden === empty) nothingYet.hidden = !empty;
    const calls = status.media.recent_calls;
    media.replaceChildren(
      h(
        'p',
        { id: 'media-configured' },
        status.media.configured
          ? 'Media is configured (LiveKit).'
          : 'Media is not configured: voice starts get placeholder tokens.',
      ),
      calls.length === 0
        ? h('p', { class: 'muted' }, 'No media call made yet.')
        : tableScroll(
            'Last media calls',
            h(
              'table',
              { class: 'grid' },
              h('caption', {}, 'Last media calls, newest first'),
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['Time', 'Call', 'Outcome', 'Duration'].map((name) => h('th', { scope: 'col' }, name)),
                ),
              ),
              h(
                'tbody',
                {},
                calls.map((call) =>
                  h(
                    'tr',
                    {},
                    h('td', { class: 'nowrap' }, time(call.at)),
                    h('td', {}, call.call),
                    h('td', {}, h('span', { class: `badge outcome-${call.outcome}` }, call.outcome)),
                    h('td', { class: 'num' }, `${call.duration_ms} ms`),
                  ),
                ),
              ),
            ),
          ),
    );
  }

  const poller = poll(load, REFRESH_MS, { onUnauthorized, onProblem: staleness(problem, content, 'the status') });
  return poller;
}
