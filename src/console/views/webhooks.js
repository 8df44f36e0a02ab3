import { HttpError, getJson, postJson } from '../api.js';
import { h, tableScroll, time } from '../dom.js';

/**
 * The webhook outbox as a section of the Health page: every delivery, its attempts and last
 * answer, filtered by status, and a way to send one again (docs/reference/webhooks.md). `load` is called
 * with the page's refresh; `onChange` asks the page to load again at once.
 */
export function webhooksSection(onChange) {
  const status = h(
    'select',
    { id: 'delivery-status', 'aria-label': 'Delivery status' },
    ['', 'held', 'pending', 'delivered', 'failed'].map((value) => h('option', { value }, value || 'any status')),
  );
  const body = h('tbody', {});
  const table = h(
    'table',
    { id: 'deliveries', class: 'grid' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Id', 'Type', 'Address', 'Status', 'Attempts', 'Last answer', 'Next attempt', ''].map((name) =>
          h('th', { scope: 'col' }, name),
        ),
      ),
    ),
    body,
  );
  const element = h(
    'section',
    { 'aria-labelledby': 'h-webhooks' },
    h('h3', { id: 'h-webhooks' }, 'Webhooks'),
    h('p', {}, h('label', {}, 'Show ', status)),
    tableScroll('Webhook deliveries', table),
  );
  const say = (text) => body.replaceChildren(h('tr', {}, h('td', { colspan: '8', class: 'muted' }, text)));
  status.addEventListener('change', onChange);

  async function retry(id) {
    await postJson(`/api/webhooks/deliveries/${id}/retry`, {});
    onChange();
  }

  async function load(stopped) {
    let deliveries;
    try {
      deliveries = (await getJson(`/api/webhooks/deliveries?limit=200${status.value ? `&status=${status.value}` : ''}`))
        .deliveries;
    } catch (error) {
      if (!(error instanceof HttpError && error.status === 501)) throw error;
      if (!stopped())
        say('Webhooks are not sent by this service (a shared activity log with sessions in the process).');
      return;
    }
    if (stopped()) return;
    if (deliveries.length === 0)
      return say(
        status.value
          ? `No ${status.value} delivery.`
          : 'No delivery: set WEBHOOK_URL and WEBHOOK_SECRET (docs/reference/webhooks.md).',
      );
    body.replaceChildren(
      ...deliveries.map((delivery) =>
        h(
          'tr',
          {},
          h('td', {}, String(delivery.id)),
          h('td', {}, delivery.type),
          h('td', { class: 'wrap' }, delivery.url),
          h('td', {}, h('span', { class: `badge delivery-${delivery.status}` }, delivery.status)),
          h('td', {}, String(delivery.attempts)),
          h(
            'td',
            {},
            delivery.last_status ?? delivery.last_error ?? '—',
            delivery.last_attempt_at ? ` at ${time(delivery.last_attempt_at)}` : '',
          ),
          h('td', {}, time(delivery.next_attempt_at)),
          h('td', {}, h('button', { type: 'button', onclick: () => void retry(delivery.id) }, 'Send again')),
        ),
      ),
    );
  }

  return { element, load };
}
