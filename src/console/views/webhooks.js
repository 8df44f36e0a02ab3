import { HttpError, getJson, poll, postJson } from '../api.js';
import { h, tableScroll, time } from '../dom.js';
import { staleness } from '../stale.js';

const REFRESH_MS = 2000;

/** The webhook outbox: every delivery, its attempts and last answer, and a way to send one again. */
export function webhooksView({ main, onUnauthorized }) {
  const problem = h('p', { class: 'problem', role: 'alert' });
  const status = h('select', { id: 'delivery-status', 'aria-label': 'Status' }, ['', 'held', 'pending', 'delivered', 'failed'].map((value) => h('option', { value }, value || 'any status')));
  const body = h('tbody', {});
  const table = h(
    'table',
    { id: 'deliveries', class: 'grid' },
    h('thead', {}, h('tr', {}, ['Id', 'Type', 'Address', 'Status', 'Attempts', 'Last answer', 'Next attempt', ''].map((name) => h('th', { scope: 'col' }, name)))),
    body,
  );
  const content = h('div', { id: 'webhooks-content' }, h('p', {}, h('label', {}, 'Show ', status)), tableScroll('Webhook deliveries', table));
  main.append(h('h2', {}, 'Webhooks'), problem, content);

  async function retry(id) {
    await postJson(`/api/webhooks/deliveries/${id}/retry`, {});
    poller.now();
  }

  async function load(stopped) {
    let deliveries;
    try {
      deliveries = (await getJson(`/api/webhooks/deliveries?limit=200${status.value ? `&status=${status.value}` : ''}`)).deliveries;
    } catch (error) {
      if (!(error instanceof HttpError && error.status === 501)) throw error;
      if (!stopped()) body.replaceChildren(h('tr', {}, h('td', { colspan: '8' }, 'Webhooks are not sent by this service (cluster mode or a shared activity log).')));
      return;
    }
    if (stopped()) return;
    if (deliveries.length === 0) {
      body.replaceChildren(h('tr', {}, h('td', { colspan: '8', class: 'muted' }, 'No delivery: set WEBHOOK_URL and WEBHOOK_SECRET (docs/webhooks.md).')));
      return;
    }
    body.replaceChildren(
      ...deliveries.map((delivery) =>
        h(
          'tr',
          {},
          h('td', {}, String(delivery.id)),
          h('td', {}, delivery.type),
          h('td', {}, delivery.url),
          h('td', {}, h('span', { class: `badge delivery-${delivery.status}` }, delivery.status)),
          h('td', {}, String(delivery.attempts)),
          h('td', {}, delivery.last_status ?? delivery.last_error ?? '—', delivery.last_attempt_at ? ` at ${time(delivery.last_attempt_at)}` : ''),
          h('td', {}, time(delivery.next_attempt_at)),
          h('td', {}, h('button', { type: 'button', onclick: () => void retry(delivery.id) }, 'Send again')),
        ),
      ),
    );
  }

  status.addEventListener('change', () => poller.now());
  const poller = poll(load, REFRESH_MS, { onUnauthorized, onProblem: staleness(problem, content, 'the deliveries') });
  return poller;
}
