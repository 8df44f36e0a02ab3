import type { LatencySummary } from './request-stats.js';
import type { SimulationSummary } from './simulation.js';

/** What to do about a kind of failure, for the person reading the summary. */
const ADVICE: Record<string, string> = {
  network: 'no answer: is the service running at the --url?',
  timeout: 'no answer within --timeout: the service is overloaded or stuck',
  '401': 'the service wants an API key: pass --key or set API_KEY',
  '429':
    'rate limited per client IP: for load runs from another machine start the service with RATE_LIMIT_PER_MINUTE=0',
  '503': 'the service is shutting down or at its session cap (MAX_SESSIONS)',
};

const fixed = (value: number) => value.toFixed(1);
const latencyCells = (latency: LatencySummary) => [latency.p50, latency.p90, latency.p99, latency.max].map(fixed);

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) =>
    `  ${row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ')}`.trimEnd(),
  );
}

/** The plain-text summary printed at the end of a run. */
export function formatSummary(summary: SimulationSummary): string {
  const { journeys, flow, requests } = summary;
  const lines = [
    `Simulated ${journeys.started} KYC journeys against ${summary.url} in ${(summary.durationMs / 1000).toFixed(1)} s (seed ${summary.seed}, ${summary.rate} journeys/s)`,
    `  journeys  ${journeys.completed} completed, ${journeys.refused} met refusals, ${journeys.cut} cut short by the end of the run`,
    `  flow      ${flow.events} events, ${flow.validationFailures} validation failures, ${flow.triggerEvaluations} trigger evaluations (${flow.triggersFired} fired), ` +
      `${flow.voiceSessions} voice sessions, ${flow.conversationTurns} conversation turns, ${flow.contextFetches} context fetches`,
    `  requests  ${requests.total} in all, ${requests.perSecond.toFixed(1)}/s, ${requests.failed} failed`,
    '',
    ...table([
      ['endpoint', 'requests', 'failed', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
      ...Object.entries(summary.endpoints).map(([endpoint, entry]) => [
        endpoint,
        String(entry.requests),
        String(entry.failed),
        ...latencyCells(entry.latency),
      ]),
      ['all', String(requests.total), String(requests.failed), ...latencyCells(summary.latency)],
    ]),
    '',
  ];
  const errors = Object.entries(summary.errorsByStatus);
  if (errors.length === 0) {
    lines.push('  errors by status: none');
  } else {
    lines.push('  errors by status:');
    for (const [status, count] of errors)
      lines.push(`    ${status.padEnd(8)} ${String(count).padStart(6)}${ADVICE[status] ? `  ${ADVICE[status]}` : ''}`);
  }
  if (requests.failed > 0) {
    lines.push(
      '',
      `  NOT a clean run: ${requests.failed} of ${requests.total} requests were refused or unanswered (exit code 1)`,
    );
  }
  return `${lines.join('\n')}\n`;
}
