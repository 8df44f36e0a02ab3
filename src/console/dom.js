/** h('td', { class: 'x' }, 'text', child): a small element builder; text is always set as text, never as HTML. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/**
 * A table in its own sideways scroll box: a wide table scrolls there, and the page never does.
 * Focusable and named, so the box can be scrolled from the keyboard too. While the table is wider
 * than the box, a line above it says so: a scroll bar alone sits at the table's foot, out of sight
 * on a long table, and a cut column would look like the whole table.
 */
export function tableScroll(label, table) {
  const box = h('div', { class: 'table-scroll', role: 'region', 'aria-label': label, tabindex: '0' }, table);
  const hint = h(
    'p',
    { class: 'scroll-hint', hidden: true },
    'Wider than the screen: scroll the table sideways for the other columns →',
  );
  const check = () => {
    const wider = box.scrollWidth > box.clientWidth + 1;
    if (hint.hidden === wider) hint.hidden = !wider;
    box.toggleAttribute('data-overflowing', wider);
  };
  const watcher = new ResizeObserver(check);
  watcher.observe(box);
  watcher.observe(table);
  return h('div', { class: 'scroll-frame' }, hint, box);
}

/**
 * A screen id in the one spelling the service compares screens by (src/domain/step-id.ts):
 * trimmed, lower case, without the `n_`/`new_` prefix of older builds. React Native sends
 * `SIGNATURE` for `signature`; shown as sent, one screen would read as two. A copy, as
 * ACTIVITY_KINDS is; test/http/console.test.ts holds it to the service's.
 */
export function screenName(raw) {
  if (typeof raw !== 'string') return raw;
  const id = raw.trim().toLowerCase();
  const unprefixed = id.replace(/^(?:n|new)_/, '');
  return unprefixed === '' ? id : unprefixed;
}

/** How to get traffic to look at: the simulator, pointed at this service (docs/how-to/simulator.md). */
export function simulatorHint() {
  return [
    h('p', {}, 'To see the console at work, run the simulator from the service’s checkout (docs/how-to/simulator.md):'),
    h('pre', { class: 'command' }, `npm run simulate -- --url ${location.origin} --key <API key>`),
    h('p', { class: 'muted' }, 'Leave out --key when the service has no API_KEY.'),
  ];
}

/** What a page shows in place of data it has none of yet: what is missing, and how to get some. */
export const emptyState = (id, text) =>
  h('div', { class: 'empty-state', id, role: 'status' }, h('p', { class: 'empty-title' }, text), simulatorHint());

/** Text that may break after each underscore (`voice_agent_context_fetch`), its text unchanged. */
export const breakable = (text) =>
  String(text)
    .split('_')
    .flatMap((part, index) => (index === 0 ? [part] : ['_', h('wbr'), part]));

/** A clock time, with the date before it when that is not today: the service keeps activity and sessions across days. */
export function time(iso) {
  if (!iso) return '—';
  const at = new Date(iso);
  const clock = at.toLocaleTimeString([], { hour12: false });
  if (at.toDateString() === new Date().toDateString()) return clock;
  return `${at.toLocaleDateString([], { year: 'numeric', month: 'short', day: 'numeric' })} ${clock}`;
}

export function ago(iso, now = Date.now()) {
  if (!iso) return '—';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  return `${Math.floor(seconds / 3600)}h ago`;
}

/** A region's state value as one name: `'active'`, or `{ starting: 'creatingRoom' }` as `starting`. */
export function voiceStateName(value) {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') return Object.keys(value)[0] ?? 'unknown';
  return 'unknown';
}

/**
 * Every kind the activity list records, as src/domain/activity.ts names them: the Kind filter
 * offers each, and describeItem words each. A copy, because the console is static browser files
 * that cannot import the service's TypeScript; test/http/console.test.ts holds the two lists equal.
 */
export const ACTIVITY_KINDS = [
  'event',
  'trigger',
  'session_start',
  'session_stop',
  'reengagement',
  'schema_push',
  'voice_agent_context_fetch',
  'voice_agent',
  'popup_evaluate',
  'flow_graph_recorded',
  'dropoff_registered',
  'dropoff_cancelled',
  'consent',
];

const DROPOFF_CANCELLED_BY = new Map([
  ['user_returned', 'the user came back'],
  ['client', 'the app cancelled it'],
]);

/** One line saying what an activity item is about, for tables and timelines. */
export function describeItem(item) {
  const p = item.payload ?? {};
  switch (item.kind) {
    case 'event':
      // A voice turn's text is masked as served (docs/explanation/calls.md).
      if (p.event === 'voice_conversation_turn')
        return `${p.role ?? 'user'} said${p.screen ? ` on ${screenName(p.screen)}` : ''}: ${p.text ?? '(no text)'}`;
      if (p.event === 'agent_action')
        return `agent asked the app to ${(p.action ?? 'act').replaceAll('_', ' ')}: ${p.target ?? ''} (${(p.outcome ?? 'no answer').replaceAll('_', ' ')})`;
      return [
        p.event,
        p.screen && `on ${screenName(p.screen)}`,
        p.component_id && `(${p.component_id})`,
        p.hint && `hint ${p.hint}`,
        p.failure_reason_code,
      ]
        .filter(Boolean)
        .join(' ');
    case 'trigger': {
      const d = p.decision ?? {};
      if (d.trigger) return `triggered: ${d.reason} → ${d.action}`;
      if (d.reason === 'none') return 'not triggered: no rule matched';
      return `suppressed: ${d.reason}${d.suppressed_reason ? ` (would have been ${d.suppressed_reason})` : ''}`;
    }
    case 'session_start':
      return `voice started${p.resumed ? ' (resumed)' : ''}${p.warnings?.length ? `, warnings: ${p.warnings.join(', ')}` : ''}`;
    case 'session_stop':
      return `voice stopped${p.ended_by ? ` (${p.ended_by.replaceAll('_', ' ')})` : ''}${p.warnings?.length ? `, warnings: ${p.warnings.join(', ')}` : ''}`;
    case 'reengagement':
      return `reengagement: ${p.should_reengage ? 'offer' : 'no'}${p.reason ? ` (${p.reason})` : ''}`;
    case 'schema_push':
      return `schema for ${screenName(p.screen_id)}${p.replaced ? ' replaced' : ''}`;
    case 'voice_agent_context_fetch':
      return `agent context on ${p.screen ? screenName(p.screen) : 'no screen'} (${p.prompt_chars} chars)`;
    case 'voice_agent':
      if (p.outcome === 'redispatched') return `no agent joined: dispatched again (attempt ${p.attempt})`;
      if (p.outcome === 'dispatch_failed') return `no agent joined: dispatching again failed (attempt ${p.attempt})`;
      if (p.outcome === 'agent_left') return 'the agent left the call';
      return `agent: ${p.outcome}`;
    // The four below say what the payload says, no more: it is masked as served (the phone only by its last four).
    case 'popup_evaluate': {
      const d = p.decision ?? {};
      const where = p.screen ? ` on ${screenName(p.screen)}` : '';
      if (d.show) return `popup shown${where}: ${d.popup_reason_code}${d.delay_ms ? ` after ${d.delay_ms} ms` : ''}`;
      return `popup not shown${where}: ${d.popup_reason_code ?? 'no reason'}${d.retry_after_seconds ? ` (retry in ${d.retry_after_seconds}s)` : ''}`;
    }
    case 'flow_graph_recorded':
      return `new flow ${p.flow_key}${p.client_id ? ` for ${p.client_id}` : ''}: ${p.total_steps} steps`;
    case 'dropoff_registered': {
      const phone = p.has_dialable_phone
        ? `dialable phone${p.phone_last4 ? ` ending ${p.phone_last4}` : ''}`
        : 'no dialable phone';
      return `drop-off registered${p.reason ? ` (${p.reason})` : ''}, ${phone}`;
    }
    case 'dropoff_cancelled':
      return `drop-off cancelled: ${DROPOFF_CANCELLED_BY.get(p.by) ?? p.by ?? 'no reason given'}`;
    case 'consent':
      return `consent ${p.decision} (notice ${p.notice_version}, ${p.language})`;
    default:
      return JSON.stringify(p);
  }
}

/**
 * The console's pages, as the menu at the top lists them: a page that offers ways on (not-found)
 * offers the same ones, read from that menu so the two never differ.
 */
export const menuLinks = () =>
  [...document.querySelectorAll('header nav a')].map((link) =>
    h('a', { href: link.getAttribute('href') }, link.textContent),
  );

/** In place of a view: what was asked for is not there, and where to go instead. */
export function notFound(main, heading, text) {
  main.replaceChildren(
    h(
      'section',
      { class: 'not-found', 'aria-labelledby': 'not-found-title' },
      h('h2', { id: 'not-found-title' }, heading),
      h('p', {}, text),
      h(
        'nav',
        { 'aria-label': 'Pages', class: 'page-links' },
        menuLinks().flatMap((link, index) => (index === 0 ? [link] : [' · ', link])),
      ),
    ),
  );
  document.title = `${heading} · KYC assistant console`;
}

export const sessionLink = (sessionId) =>
  sessionId ? h('a', { href: `#/sessions/${encodeURIComponent(sessionId)}` }, sessionId) : '—';
