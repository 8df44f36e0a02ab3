import { getJson, poll } from '../api.js';
import { ago, breakable, emptyState, h, screenName, sessionLink, tableScroll } from '../dom.js';
import { staleness } from '../stale.js';

const PAGE_SIZE = 50;
const REFRESH_MS = 2000;

const flowText = (flow) =>
  flow
    ? `${flow.flow_key} ${flow.position ?? '?'}/${flow.total}${flow.current_step ? ` (${flow.current_step})` : ''}`
    : '—';
const cooldownText = (ms) => (ms > 0 ? `${Math.ceil(ms / 1000)}s` : '—');

/**
 * Every session held, one server page at a time (the server filters, sorts and pages, so 100,000
 * sessions cost one page of rows here). The page in view is fetched again every two seconds.
 */
export function sessionsView({ main, onUnauthorized }) {
  const query = { voice: '', screen: '', q: '', sort: 'last_activity', order: 'desc' };
  // Cursors of the pages before this one, for Previous.
  const cursors = [];
  let cursor;
  let nextCursor = null;

  const rows = h('tbody');
  const summary = h('p', { id: 'sessions-summary', class: 'muted', role: 'status' }, 'Loading…');
  const problem = h('p', { class: 'problem', role: 'alert' });
  const previous = h(
    'button',
    { type: 'button', id: 'previous-page', onclick: () => go(cursors.pop(), false) },
    'Previous',
  );
  const next = h('button', { type: 'button', id: 'next-page', onclick: () => go(nextCursor, true) }, 'Next');
  const field = (id, label, input) => h('div', { class: 'field' }, h('label', { for: id }, label), input);
  const onFilter = (name) => (event) => {
    query[name] = event.target.value.trim();
    cursors.length = 0;
    go(undefined, false);
  };
  const sortButton = (sort, label) =>
    h(
      'button',
      {
        type: 'button',
        class: 'sort',
        'data-sort': sort,
        onclick: () => {
          query.order = query.sort === sort && query.order === 'desc' ? 'asc' : 'desc';
          query.sort = sort;
          cursors.length = 0;
          go(undefined, false);
        },
      },
      label,
    );
  const noSessions = emptyState(
    'no-sessions',
    'No session yet. A session starts with the first event an app sends for it.',
  );
  noSessions.hidden = true;
  const headers = [
    ['Session', 'session_id'],
    ['User'],
    ['Screen'],
    ['Flow'],
    ['Voice'],
    ['Cooldown'],
    ['Last activity', 'last_activity'],
    ['Status'],
  ].map(([label, sort]) => h('th', { scope: 'col', 'data-sort': sort }, sort ? sortButton(sort, label) : label));

  main.append(
    h('h2', {}, 'Sessions'),
    h(
      'div',
      { class: 'toolbar' },
      field(
        'sessions-q',
        'Search',
        h('input', {
          id: 'sessions-q',
          type: 'search',
          placeholder: 'session, user or screen',
          oninput: onFilter('q'),
        }),
      ),
      field(
        'sessions-screen',
        'Screen',
        h('input', { id: 'sessions-screen', type: 'search', oninput: onFilter('screen') }),
      ),
      field(
        'sessions-voice',
        'Voice',
        h(
          'select',
          { id: 'sessions-voice', onchange: onFilter('voice') },
          h('option', { value: '' }, 'any'),
          h('option', { value: 'active' }, 'active'),
          h('option', { value: 'inactive' }, 'inactive'),
        ),
      ),
    ),
    problem,
    h(
      'div',
      { id: 'sessions-content' },
      summary,
      noSessions,
      tableScroll(
        'Sessions',
        h(
          'table',
          { class: 'grid', id: 'sessions-table' },
          h('caption', { class: 'visually-hidden' }, 'Sessions held'),
          h('thead', {}, h('tr', {}, headers)),
          rows,
        ),
      ),
      h('div', { class: 'pager' }, previous, next),
    ),
  );

  // A session's row is kept and its cells updated in place at each refresh: replacing every row
  // took the keyboard focus (on a session link) away every two seconds.
  let rowsById = new Map();
  // Each cell carries its column's name: on a phone the rows are cards, and the names label the values.
  const labels = headers.map((th) => th.textContent);
  const row = (s) =>
    h(
      'tr',
      { 'data-session-id': s.session_id },
      ['wrap session', '', 'wrap', '', '', 'num', 'nowrap', ''].map((cls, index) =>
        h(
          'td',
          { class: cls || undefined, 'data-label': labels[index] },
          index === 0 ? sessionLink(s.session_id) : undefined,
        ),
      ),
    );
  const setText = (cell, text) => {
    if (cell.textContent !== text) cell.textContent = text;
  };
  function update(tr, s) {
    const [, user, screen, flow, voice, cooldown, last, status] = tr.cells;
    setText(user, s.user_id ?? '—');
    // One spelling per screen (dom.js, screenName); what the app sent, when it differs, on hover.
    const shown = s.screen ? screenName(s.screen) : '—';
    if (screen.textContent !== shown) screen.replaceChildren(...breakable(shown));
    if (s.screen && s.screen !== shown) screen.title = `sent as ${s.screen}`;
    else screen.removeAttribute('title');
    setText(flow, flowText(s.flow));
    if (voice.textContent !== s.voice) voice.replaceChildren(h('span', { class: `badge voice-${s.voice}` }, s.voice));
    setText(cooldown, cooldownText(s.cooldown_remaining_ms));
    setText(last, ago(s.last_activity_at));
    last.title = s.last_activity_at ?? '';
    setText(status, s.status);
    return tr;
  }

  /** The page's rows in its order, moving only those out of place; a moved row that held the focus gets it back. */
  function showRows(sessions) {
    const focused = rows.contains(document.activeElement)
      ? document.activeElement.closest('tr')?.dataset.sessionId
      : undefined;
    const wanted = sessions.map((s) => update(rowsById.get(s.session_id) ?? row(s), s));
    wanted.forEach((tr, index) => {
      if (rows.children[index] !== tr) rows.insertBefore(tr, rows.children[index] ?? null);
    });
    while (rows.children.length > wanted.length) rows.lastElementChild.remove();
    rowsById = new Map(wanted.map((tr) => [tr.dataset.sessionId, tr]));
    if (focused !== undefined && !rows.contains(document.activeElement))
      rowsById.get(focused)?.querySelector('a')?.focus();
  }

  async function load(stopped) {
    const params = new URLSearchParams({ limit: String(PAGE_SIZE), sort: query.sort, order: query.order });
    for (const name of ['voice', 'screen', 'q']) if (query[name]) params.set(name, query[name]);
    if (cursor) params.set('cursor', cursor);
    const page = await getJson(`/api/sessions?${params}`);
    if (stopped()) return;
    nextCursor = page.next_cursor;
    showRows(page.sessions);
    const first = cursors.length * PAGE_SIZE + 1;
    const filtered = Boolean(query.voice || query.screen || query.q);
    summary.textContent =
      page.total > 0
        ? `${first}–${first + page.sessions.length - 1} of ${page.total} sessions`
        : filtered
          ? 'No session matches these filters: clear one to see more.'
          : '';
    // No session at all: the empty table and its pager say nothing, the empty state says what to do.
    const none = page.total === 0 && !filtered;
    if (noSessions.hidden === none) {
      noSessions.hidden = !none;
      for (const part of main.querySelectorAll('#sessions-content .scroll-frame, #sessions-content .pager'))
        part.hidden = none;
    }
    previous.disabled = cursors.length === 0;
    next.disabled = nextCursor === null;
    for (const th of headers) {
      const sort = th.dataset.sort;
      if (sort === query.sort) th.setAttribute('aria-sort', query.order === 'asc' ? 'ascending' : 'descending');
      else th.removeAttribute('aria-sort');
    }
  }

  function go(target, forward) {
    if (forward) cursors.push(cursor);
    cursor = target;
    poller.now();
  }

  const poller = poll(load, REFRESH_MS, {
    onUnauthorized,
    onProblem: staleness(problem, main.querySelector('#sessions-content'), 'the sessions'),
  });
  return poller;
}
