import { h } from './dom.js';

/**
 * The statechart drawn from the machine definition the service serves (GET /api/machines/session):
 * nested boxes, parallel regions side by side, each state listing what leaves it. Drawn once;
 * `highlight` then only moves the `current` class, so polling costs no redraw.
 */
export function drawStatechart(root) {
  const boxes = new Map();

  function transitionText(t) {
    const targets = t.targets.map((id) => id.split('.').slice(-1)[0]).join(', ');
    return `${t.on}${t.guard ? ` [${t.guard}]` : ''}${targets ? ` → ${targets}` : ''}`;
  }

  function draw(node, depth) {
    const children = node.states.map((child) => draw(child, depth + 1));
    const box = h(
      'div',
      { class: `state state-${node.type}`, 'data-state-id': node.id, role: 'group', 'aria-label': `state ${node.key}` },
      h(
        'div',
        { class: 'state-name' },
        node.key,
        node.type === 'parallel' ? h('span', { class: 'muted' }, ' (parallel)') : null,
        node.type === 'final' ? h('span', { class: 'muted' }, ' (final)') : null,
      ),
      node.invokes.length ? h('div', { class: 'state-invoke' }, `invokes ${node.invokes.join(', ')}`) : null,
      node.transitions.length
        ? h(
            'ul',
            { class: 'transitions' },
            node.transitions.map((t) => h('li', {}, transitionText(t))),
          )
        : null,
      children.length ? h('div', { class: node.type === 'parallel' ? 'regions' : 'substates' }, children) : null,
    );
    if (node.initial) box.dataset.initial = node.initial;
    boxes.set(node.id, box);
    return box;
  }

  const element = h('div', { class: 'statechart', id: 'statechart' }, draw(root, 0));

  /** The ids of the states a state value is in: `{ voice: 'active' }` under `session` is session.voice and session.voice.active. */
  function activeIds(value, prefix, into) {
    if (typeof value === 'string') into.add(`${prefix}.${value}`);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        into.add(`${prefix}.${key}`);
        activeIds(inner, `${prefix}.${key}`, into);
      }
    }
    return into;
  }

  return {
    element,
    highlight(value) {
      const active = activeIds(value, root.id, new Set([root.id]));
      for (const [id, box] of boxes) {
        const on = active.has(id);
        box.classList.toggle('current', on);
        if (on) box.setAttribute('aria-current', 'true');
        else box.removeAttribute('aria-current');
      }
    },
  };
}
