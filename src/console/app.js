import { Unauthorized, storeKey, storedKey } from './api.js';
import { h, notFound } from './dom.js';
import { activityView } from './views/activity.js';
import { handoffsView } from './views/handoffs.js';
import { healthView } from './views/health.js';
import { sessionView } from './views/session.js';
import { sessionsView } from './views/sessions.js';
import { voiceView } from './views/voice.js';

const main = document.getElementById('view');
const keyInput = document.getElementById('api-key');
const keyState = document.getElementById('key-state');
let current;

/** The page shown when the service refuses the key: what it said, and where to put another one. */
function showUnauthorized(error) {
  current?.stop?.();
  current = undefined;
  document.title = '401 · KYC assistant console';
  main.replaceChildren(
    h(
      'section',
      { class: 'unauthorized', 'aria-labelledby': 'unauthorized-title' },
      h('h2', { id: 'unauthorized-title' }, '401: key not accepted'),
      h('p', {}, `The service answered: ${error.message}.`),
      h('p', {}, 'Enter one of the service’s keys (API_KEY) in the field above and press “Use key”.'),
    ),
  );
  keyState.textContent = 'key refused';
  keyInput.focus();
}

const VIEWS = new Map([
  ['activity', activityView],
  ['sessions', sessionsView],
  ['handoffs', handoffsView],
  ['health', healthView],
  ['voice', voiceView],
]);

/** The hash as view and session id; undefined for a malformed escape (`%E0%A4`), which names nothing. */
function parseHash() {
  try {
    const [view, ...rest] = decodeURIComponent(location.hash.replace(/^#\/?/, '')).split('/');
    return { view: view || 'activity', sessionId: rest.join('/') };
  } catch {
    return undefined;
  }
}

function route() {
  current?.stop?.();
  current = undefined;
  const parsed = parseHash();
  const context = { main, onUnauthorized: showUnauthorized };
  // Only the session page takes more after its view name; anything else is not a page here.
  const known = parsed && VIEWS.has(parsed.view) && (parsed.view === 'sessions' || !parsed.sessionId);
  for (const link of document.querySelectorAll('nav a')) {
    if (known && link.dataset.view === parsed.view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  main.replaceChildren();
  if (!known) {
    notFound(main, 'No such page', `Nothing in the console is at “${location.hash}”.`);
    return;
  }
  if (parsed.view === 'sessions' && parsed.sessionId) current = sessionView(context, parsed.sessionId);
  else current = VIEWS.get(parsed.view)(context);
  document.title = `${main.querySelector('h2')?.textContent ?? 'Console'} · KYC assistant console`;
}

document.getElementById('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  storeKey(keyInput.value.trim());
  keyState.textContent = keyInput.value.trim() ? 'key set' : 'no key';
  route();
});

keyInput.value = storedKey();
keyState.textContent = storedKey() ? 'key set' : 'no key';
window.addEventListener('hashchange', route);
window.addEventListener('unhandledrejection', (event) => {
  if (event.reason instanceof Unauthorized) showUnauthorized(event.reason);
});
route();
