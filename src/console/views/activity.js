import { Unauthorized, getJson } from '../api.js';
import { ACTIVITY_KINDS, describeItem, h, sessionLink, time } from '../dom.js';
import { openActivityStream } from '../stream.js';

/** Items kept for re-filtering; rows shown at once. Both bounded so a busy stream costs the same after an hour. */
const KEPT = 5000;
const SHOWN = 200;

/**
 * The live stream as a table, newest first. Items arriving are batched and drawn once per frame,
 * and only the newest SHOWN rows exist in the DOM, so 200 items/s cost a few row insertions a frame.
 */
export function activityView({ main, onUnauthorized }) {
  const items = [];
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
  const pauseButton = h('button', { type: 'button', id: 'pause', onclick: () => (stream ? pause() : resume()) }, 'Pause');
  const field = (id, label, input) => h('div', { class: 'field' }, h('label', { for: id }, label), input);
  const refilter = () => render(true);
  const sessionInput = h('input', { id: 'filter-session', type: 'search', oninput: (e) => ((filters.session = e.target.value.trim()), refilter()) });
  const textInput = h('input', { id: 'filter-text', type: 'search', oninput: (e) => ((filters.text = e.target.value.trim().toLowerCase()), refilter()) });
  const kindSelect = h(
    'select',
    { id: 'filter-kind', onchange: (e) => ((filters.kind = e.target.value), refilter()) },
    h('option', { value: '' }, 'any kind'),
    ACTIVITY_KINDS.map((kind) => h('option', { value: kind }, kind)),
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
      gapNote,
    ),
    h(
      'table',
      { class: 'grid', id: 'activity-table' },
      h('caption', { class: 'visually-hidden' }, 'Activity items, newest first'),
      h('thead', {}, h('tr', {}, ['Id', 'Time', 'Kind', 'Session', 'What'].map((name) => h('th', { scope: 'col' }, name)))),
      rows,
    ),
  );

  const matches = (item) =>
    (!filters.session || item.session_id === filters.session) &&
    (!filters.kind || item.kind === filters.kind) &&
    (!filters.text || `${item.session_id ?? ''} ${item.user_id ?? ''} ${item.kind} ${describeItem(item)}`.toLowerCase().includes(filters.text));

  const row = (item) =>
    h(
      'tr',
      { 'data-id': item.id, 'data-kind': item.kind },
      h('td', { class: 'num' }, item.id),
      h('td', {}, time(item.timestamp)),
      h('td', {}, h('span', { class: `kind kind-${item.kind}` }, item.kind)),
      h('td', {}, sessionLink(item.session_id)),
      h('td', {}, describeItem(item)),
    );

  function render(all) {
    frame = undefined;
    if (all) {
      pending = [];
      const shown = [];
      for (let i = items.length - 1; i >= 0 && shown.length < SHOWN; i -= 1) if (matches(items[i])) shown.push(row(items[i]));
      rows.replaceChildren(...shown);
      return;
    }
    const fragment = document.createDocumentFragment();
    for (let i = pending.length - 1; i >= 0; i -= 1) if (matches(pending[i])) fragment.append(row(pending[i]));
    pending = [];
    rows.prepend(fragment);
    while (rows.childElementCount > SHOWN) rows.lastElementChild.remove();
  }

  function onItem(item) {
    const id = Number(item.id);
    if (lastId !== undefined && id !== lastId + 1) gaps += 1;
    lastId = id;
    received += 1;
    items.push(item);
    if (items.length > KEPT) items.splice(0, items.length - KEPT);
    pending.push(item);
    frame ??= requestAnimationFrame(() => render(false));
  }

  const options = () => ({
    afterId: lastId,
    onItem,
    onReset: (reset) => {
      gapNote.textContent = `the server no longer held some items (${JSON.stringify(reset)})`;
      lastId = undefined;
    },
    onState: (value) => (state.textContent = value),
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
      for (const item of [...recent.items].sort((a, b) => Number(a.id) - Number(b.id))) onItem(item);
      gaps = 0;
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
      if (frame) cancelAnimationFrame(frame);
      stream?.stop();
    },
  };
}
