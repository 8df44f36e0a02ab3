import { describeItem, h, time } from './dom.js';

/**
 * A session's activity as a list, newest first, as Live activity: a new item lands at the top of
 * the box, in sight, not below its fold. `show(items)` redraws only when the items changed; with
 * no item it shows `emptyText` instead of an empty box.
 */
export function timelineList(id, emptyText = 'Nothing recorded for this session yet.') {
  // Focusable: a long timeline scrolls in its box, and a keyboard must be able to scroll it too.
  const list = h('ol', { class: 'timeline', id, tabindex: '0', 'aria-label': 'Timeline, newest first' });
  const empty = h('p', { class: 'muted timeline-empty', id: `${id}-empty`, hidden: true }, emptyText);
  let shown;
  function show(items) {
    const newestFirst = [...items].sort((a, b) => Number(b.id) - Number(a.id));
    const key = newestFirst.map((item) => item.id).join(',');
    if (key === shown) return;
    shown = key;
    empty.hidden = newestFirst.length > 0;
    list.hidden = newestFirst.length === 0;
    list.replaceChildren(
      ...newestFirst.map((item) =>
        h(
          'li',
          { 'data-id': item.id, 'data-kind': item.kind },
          h('span', { class: 'muted' }, `${time(item.timestamp)} #${item.id} `),
          h('span', { class: `kind kind-${item.kind}` }, item.kind),
          ' ',
          describeItem(item),
        ),
      ),
    );
  }
  return { element: h('div', {}, empty, list), show };
}
