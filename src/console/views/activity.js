import { Unauthorized, getJson } from '../api.js';
import { ACTIVITY_KINDS, breakable, describeItem, emptyState, h, sessionLink, tableScroll, time } from '../dom.js';
import { openActivityStream } from '../stream.js';

/** Items kept for re-filtering; rows shown at once. Both bounded so a busy stream costs the same after an hour. */
const KEPT = 5000;
const SHOWN = 200;
/** Typing a session id waits this long for a pause before asking the service. */
const FILTER_DELAY_MS = 250;
/** How often the line on where new items go is asked for again (GET /api/status). */
const READERS_EVERY_MS = 5000;

/** The readers GET /api/status names (subscribed in src/actor-system/system.ts and src/http/sse/activity-stream-hub.ts), as an operator knows them; another shows by its name. */
const READER_WORDS = new Map([
  ['sse', 'every live page open (this one too)'],
  ['metrics', 'the metrics (/metrics)'],
  ['flow_graphs', 'the flow recorder'],
]);

const listed = (words) => (words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`);

/**
 * The live stream as a table, newest first. Items arriving are batched and drawn once per frame,
 * and only the newest SHOWN rows exist in the DOM, so 200 items/s cost a few row insertions a frame.
 * A session or kind filter also asks the service for its newest matching items: the page holds
 * only what arrived since it opened, the service holds far more.
 */
export function activityView({ main, onUnauthorized }) {
  const items = [];
  // The newest items the service holds for the session and kind filters, in id order; replaced at each filter change.
  let matching = [];
  let matchingState = '';
  let matchingLoad;
  // The session filter as the service keys it (an id that reads as an identity value is keyed by its
  // digest, h-…): what the items carry, live ones included. Until the service has said, the id as typed.
  let sessionKey;
  let filterTimer;
  let pending = [];
  let frame;
  let stream;
  let lastId;
  let received = 0;
  let gaps = 0;
  let stopped = false;
  const filters = { session: '', kind: '', text: '' };

  const rows = h('tbody');
  const rate = h('output', { id: 'rate', 'aria-live': 'off' }, '0');
  const state = h('span', { id: 'stream-state', class: 'badge' }, 'connecting');
  const gapNote = h('span', { id: 'gap-note', class: 'muted' }, '');
  const readersNote = h('span', { id: 'activity-readers', class: 'muted' }, '');
  const filterNote = h('p', { id: 'filter-note', class: 'muted note', role: 'status' }, '');
  const problem = h('p', { class: 'problem', role: 'alert' });
  const emptyNote = h('p', { id: 'empty-note', class: 'muted note', role: 'status' }, '');
  // Until the service has said what it holds, the page cannot tell an empty log from a slow answer.
  let loadedRecent = false;
  const noActivity = emptyState(
    'no-activity',
    'No activity yet. Items appear here as apps send events and ask for the assistant.',
  );
  noActivity.hidden = true;
  // When the stream dropped, while it has not come back.
  let downSince;
  const pauseButton = h(
    'button',
    { type: 'button', id: 'pause', onclick: () => (stream ? pause() : resume()) },
    'Pause',
  );
  const field = (id, label, input) => h('div', { class: 'field' }, h('label', { for: id }, label), input);
  const refilter = () => render(true);
  const serverFilter = (delay) => {
    clearTimeout(filterTimer);
    matchingLoad?.abort();
    matching = [];
    sessionKey = undefined;
    matchingState = filters.session || filters.kind ? 'loading' : '';
    filterTimer = setTimeout(loadMatching, delay);
    refilter();
  };
  const sessionInput = h('input', {
    id: 'filter-session',
    type: 'search',
    oninput: (e) => ((filters.session = e.target.value.trim()), serverFilter(FILTER_DELAY_MS)),
  });
  const textInput = h('input', {
    id: 'filter-text',
    type: 'search',
    oninput: (e) => ((filters.text = e.target.value.trim().toLowerCase()), refilter()),
  });
  const kindSelect = h(
    'select',
    { id: 'filter-kind', onchange: (e) => ((filters.kind = e.target.value), serverFilter(0)) },
    h('option', { value: '' }, 'any kind'),
    ACTIVITY_KINDS.map((kind) => h('option', { value: kind }, kind)),
  );

  const tableFrame = tableScroll(
    'Activity items',
    h(
      'table',
      { class: 'grid', id: 'activity-table' },
      h('caption', { class: 'visually-hidden' }, 'Activity items, newest first'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Id', 'Time', 'Kind', 'Session', 'What'].map((name) =>
            h('th', { scope: 'col', class: { What: 'what', Session: 'session' }[name] }, name),
          ),
        ),
      ),
      rows,
    ),
  );

  main.append(
    h('h2', {}, 'Live activity'),
    h(
      'div',
      { class: 'toolbar' },
      field('filter-session', 'Session', sessionInput),
      field('filter-kind', 'Kind', kindSelect),
      field('filter-text', 'Text', textInput),
      pauseButton,
      h('span', {}, state),
      h('span', {}, rate, ' items/s'),
      readersNote,
      gapNote,
    ),
    problem,
    filterNote,
    noActivity,
    tableFrame,
    emptyNote,
  );

  const matchesServerFilters = (item) =>
    (!filters.session || item.session_id === (sessionKey ?? filters.session)) &&
    (!filters.kind || item.kind === filters.kind);
  const matches = (item) =>
    matchesServerFilters(item) &&
    (!filters.text ||
      `${item.session_id ?? ''} ${item.user_id ?? ''} ${item.kind} ${describeItem(item)}`
        .toLowerCase()
        .includes(filters.text));

  const row = (item) =>
    h(
      'tr',
      { 'data-id': item.id, 'data-kind': item.kind },
      h('td', { class: 'num id' }, item.id),
      h('td', { class: 'nowrap time' }, time(item.timestamp)),
      h('td', { class: 'kind-cell' }, h('span', { class: `kind kind-${item.kind}` }, breakable(item.kind))),
      h('td', { class: 'wrap session' }, sessionLink(item.session_id)),
      h('td', { class: 'wrap what' }, describeItem(item)),
    );

  /** What the rows are drawn from, so a filter that finds little is not mistaken for one that found everything. */
  function describeFilters() {
    const serverSide = filters.session || filters.kind;
    const oldest = (serverSide && matching[0]) || items.find(matchesServerFilters);
    const since = oldest ? `since ${time(oldest.timestamp)} (#${oldest.id})` : 'none yet';
    let line = '';
    if (serverSide && matchingState === 'loading') line = 'Asking the service for the matching items…';
    else if (serverSide && matchingState === 'loaded')
      line = `The newest matching items the service holds (up to ${SHOWN}), then live ones.`;
    else if (serverSide) line = `${matchingState}; showing the matching items this page received, ${since}.`;
    if (filters.text) line += `${line ? ' ' : ''}Text searches the items this page holds: ${since}.`;
    // Set only when it changes: a status region set again on every keystroke is read out again.
    if (filterNote.textContent !== line) filterNote.textContent = line;
  }

  /** An empty table under a filter says so, once the service has answered for it. */
  function sayIfEmpty() {
    const filtered = filters.session || filters.kind || filters.text;
    const text =
      filtered && rows.childElementCount === 0 && matchingState !== 'loading'
        ? 'No item matches: clear a filter to see more.'
        : '';
    if (emptyNote.textContent !== text) emptyNote.textContent = text;
    // Nothing recorded at all (not a filter finding nothing): say what would fill the page.
    const none = loadedRecent && items.length === 0 && matching.length === 0 && !filtered;
    if (noActivity.hidden === none) {
      noActivity.hidden = !none;
      // An empty table's header row says nothing: the empty state stands in its place.
      tableFrame.hidden = none;
    }
  }

  function render(all) {
    frame = undefined;
    if (all) {
      pending = [];
      const shown = [];
      // Newest first from both lists, each id once (an item can be in both).
      let i = items.length - 1;
      let j = matching.length - 1;
      let previous;
      while (shown.length < SHOWN && (i >= 0 || j >= 0)) {
        const fromItems = j < 0 || (i >= 0 && Number(items[i].id) >= Number(matching[j].id));
        const item = fromItems ? items[i--] : matching[j--];
        if (item.id === previous) continue;
        previous = item.id;
        if (matches(item)) shown.push(row(item));
      }
      rows.replaceChildren(...shown);
      describeFilters();
      sayIfEmpty();
      return;
    }
    // Only items newer than the top row: one the service already gave for a filter is not drawn twice.
    const top = Number(rows.firstElementChild?.dataset.id ?? -1);
    const fragment = document.createDocumentFragment();
    for (let i = pending.length - 1; i >= 0; i -= 1)
      if (Number(pending[i].id) > top && matches(pending[i])) fragment.append(row(pending[i]));
    pending = [];
    rows.prepend(fragment);
    while (rows.childElementCount > SHOWN) rows.lastElementChild.remove();
    sayIfEmpty();
  }

  /** An item from the stream, or (`live` false) from the recent past loaded on arrival, which the items/s counter leaves out. */
  function onItem(item, live = true) {
    const id = Number(item.id);
    if (lastId !== undefined && id !== lastId + 1) gaps += 1;
    lastId = id;
    if (live) received += 1;
    items.push(item);
    if (items.length > KEPT) items.splice(0, items.length - KEPT);
    pending.push(item);
    frame ??= requestAnimationFrame(() => render(false));
  }

  /** The service's newest items for the session and kind filters; the stream adds the live ones. */
  async function loadMatching() {
    if (!filters.session && !filters.kind) return;
    const load = (matchingLoad = new AbortController());
    const params = new URLSearchParams({ limit: String(SHOWN) });
    if (filters.session) params.set('session_id', filters.session);
    if (filters.kind) params.set('kind', filters.kind);
    try {
      const found = await getJson(`/api/activity?${params}`, { signal: load.signal });
      if (load.signal.aborted || stopped) return;
      matching = [...found.items].sort((a, b) => Number(a.id) - Number(b.id));
      sessionKey = found.session_id ?? undefined;
      matchingState = 'loaded';
    } catch (error) {
      if (load.signal.aborted || stopped) return;
      if (error instanceof Unauthorized) return onUnauthorized(error);
      matchingState = `Could not ask the service for the matching items (${error.message})`;
    }
    render(true);
  }

  const options = () => ({
    afterId: lastId,
    onItem,
    onReset: (reset) => {
      gapNote.textContent = `the server no longer held some items (${JSON.stringify(reset)})`;
      lastId = undefined;
    },
    onState: (value) => {
      state.textContent = value;
      // This page's stream is one the hub serves: asked again once it is open, the line counts it.
      if (value === 'live') loadReaders();
      if (value === 'reconnecting') downSince ??= new Date().toISOString();
      else if (value !== 'connecting') downSince = undefined;
      const text = downSince
        ? `The stream dropped at ${time(downSince)}; reconnecting every few seconds. Items recorded meanwhile arrive once it is back.`
        : '';
      if (problem.textContent !== text) problem.textContent = text;
    },
    onUnauthorized,
  });

  function pause() {
    lastId = stream.stop();
    stream = undefined;
    pauseButton.textContent = 'Resume';
  }

  function resume() {
    stream = openActivityStream(options());
    pauseButton.textContent = 'Pause';
  }

  /** Where each new item goes besides this table, in the words an operator knows them by: this page's stream is `sse`. */
  async function loadReaders() {
    try {
      const { readers } = (await getJson('/api/status')).activity;
      if (stopped) return;
      const text = `Each new item also goes to ${listed(readers.map((reader) => READER_WORDS.get(reader) ?? reader.replaceAll('_', ' ')))}.`;
      if (readersNote.textContent !== text) readersNote.textContent = text;
    } catch (error) {
      // The stream's state already says when the service is unreachable.
      if (error instanceof Unauthorized) onUnauthorized(error);
    }
  }
  loadReaders();
  const readersTicker = setInterval(loadReaders, READERS_EVERY_MS);

  let counted = 0;
  const ticker = setInterval(() => {
    rate.textContent = String(received - counted);
    counted = received;
    gapNote.dataset.gaps = String(gaps);
  }, 1000);

  // The recent past first, then the stream from just after it: the table is never empty on arrival.
  getJson('/api/activity?limit=200')
    .then((recent) => {
      if (stopped) return;
      for (const item of [...recent.items].sort((a, b) => Number(a.id) - Number(b.id))) onItem(item, false);
      gaps = 0;
      loadedRecent = true;
      sayIfEmpty();
    })
    .then(
      () => {
        if (!stopped) resume();
      },
      (error) => {
        if (error instanceof Unauthorized) onUnauthorized(error);
        else if (!stopped) resume();
      },
    );
  return {
    stop() {
      stopped = true;
      clearInterval(ticker);
      clearInterval(readersTicker);
      clearTimeout(filterTimer);
      matchingLoad?.abort();
      if (frame) cancelAnimationFrame(frame);
      stream?.stop();
    },
  };
}
