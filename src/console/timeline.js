import { describeItem, h, time } from './dom.js';

/**
 * A session's activity as a list, newest first, as Live activity: a new item lands at the top of
 * the box, in sight, not below its fold. `show(items)` redraws only when the items changed.
 */
export function timelineList(id) {
  const element = h('ol', { class: 'timeline', id });
  let shown = '';
  function show(items) {
    const newestFirst = [...items].sort((a, b) => Number(b.id) - Number(a.id));
    const key = newestFirst.map((item) => item.id).join(',');
    if (key === shown) return;
    shown = key;
    element.replaceChildren(
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
  return { element, show };
}
