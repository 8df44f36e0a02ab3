import { Unauthorized, storeKey, storedKey } from './api.js';
import { h } from './dom.js';
import { activityView } from './views/activity.js';
import { healthView } from './views/health.js';
import { sessionView } from './views/session.js';
import { sessionsView } from './views/sessions.js';

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

function route() {
  current?.stop?.();
  const hash = decodeURIComponent(location.hash.replace(/^#\/?/, ''));
  const [view, ...rest] = hash.split('/');
  const sessionId = rest.join('/');
  const context = { main, onUnauthorized: showUnauthorized };
  for (const link of document.querySelectorAll('nav a')) {
    const selected = link.dataset.view === (view || 'activity');
    if (selected) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  main.replaceChildren();
  if (view === 'sessions' && sessionId) current = sessionView(context, sessionId);
  else if (view === 'sessions') current = sessionsView(context);
  else if (view === 'health') current = healthView(context);
  else current = activityView(context);
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
