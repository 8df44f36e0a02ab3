import { h, time } from './dom.js';

const seconds = (ms) =>
  ms < 60_000 ? `${Math.round(ms / 1000)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;

/** One call: when, how it ended, its report, and its transcript as served (masked). */
function callItem(call) {
  const report = call.report;
  const heading = `${time(call.started_at)}${call.ended_at ? ` – ${time(call.ended_at)}` : ' (running)'}`;
  const transcript = call.transcript.length
    ? h(
        'ol',
        { class: 'transcript' },
        call.transcript.map((turn) =>
          h(
            'li',
            { class: `turn turn-${turn.role}` },
            h(
              'span',
              { class: 'turn-who' },
              `${turn.role === 'agent' ? 'Agent' : 'User'}${turn.channel === 'chat' ? ' (typed)' : ''}`,
            ),
            ' ',
            turn.text,
          ),
        ),
      )
    : h(
        'p',
        { class: 'muted' },
        call.transcript_kept
          ? 'No turn yet.'
          : `No transcript kept (no consent given): ${call.turns.user + call.turns.agent} turns said.`,
      );
  return h(
    'li',
    { class: 'call' },
    h(
      'h4',
      {},
      heading,
      ' ',
      report
        ? h('span', { class: `badge outcome-${report.outcome}` }, report.outcome)
        : h('span', { class: 'badge' }, 'running'),
    ),
    h(
      'p',
      { class: 'muted' },
      [
        `call ${call.call_id}`,
        call.start.step && `began on ${call.start.step}`,
        call.start.errors.length > 0 && `errors ${call.start.errors.join(', ')}`,
        call.ended_by && `ended by ${call.ended_by}`,
        report && seconds(report.duration_ms),
      ]
        .filter(Boolean)
        .join(' · '),
    ),
    report && h('p', { class: 'summary' }, report.summary),
    transcript,
  );
}

/** A session's calls, newest first; shown again only when they changed. */
export function callsList(id) {
  const element = h('ol', { class: 'calls', id });
  let shown = '';
  return {
    element,
    show(calls, unavailable) {
      const text = unavailable ?? JSON.stringify(calls);
      if (text === shown) return;
      shown = text;
      if (unavailable) element.replaceChildren(h('li', { class: 'muted' }, unavailable));
      else if (calls.length === 0) element.replaceChildren(h('li', { class: 'muted' }, 'No call in this session.'));
      else element.replaceChildren(...calls.map(callItem));
    },
  };
}
