import type { SummaryQuery, SummaryRow, SummarySelection } from './ports.js';

const primaryOf = (row: SummaryRow, query: SummaryQuery): number | string =>
  query.sort === 'last_activity' ? row.last_activity_at : row.session_id;

/** A row against a position (sort value, then id), without building one: the walk allocates nothing per row. */
function compareTo(row: SummaryRow, query: SummaryQuery, position: { primary: number | string; id: string }): number {
  const primary = primaryOf(row, query);
  if (primary !== position.primary) return primary < position.primary ? -1 : 1;
  const id = row.session_id;
  return id === position.id ? 0 : id < position.id ? -1 : 1;
}

const includes = (text: string | null, needle: string): boolean => text !== null && text.toLowerCase().includes(needle);

/** The filters of a listing; the SQLite store applies the same ones in SQL. */
export function matchesSummary(row: SummaryRow, query: SummaryQuery): boolean {
  if (query.voice !== undefined && (row.voice !== 'inactive') !== (query.voice === 'active')) return false;
  if (query.screen !== undefined && row.screen?.toLowerCase() !== query.screen) return false;
  const { q } = query;
  if (q !== undefined && !includes(row.session_id, q) && !includes(row.user_id, q) && !includes(row.screen, q))
    return false;
  return true;
}

/**
 * One page of rows for a store that keeps them in memory: a single pass keeps the page's worth of
 * best rows after the cursor (binary insertion into a sorted array of at most `limit`), so a page of
 * 100,000 sessions costs one walk, not a sort of them all.
 */
export function selectSummaries(rows: Iterable<SummaryRow>, query: SummaryQuery): SummarySelection {
  const direction = query.order === 'asc' ? 1 : -1;
  const best: SummaryRow[] = [];
  let total = 0;
  let afterCursor = 0;
  const position = (row: SummaryRow) => ({ primary: primaryOf(row, query), id: row.session_id });
  for (const row of rows) {
    if (!matchesSummary(row, query)) continue;
    total += 1;
    if (query.after !== undefined && compareTo(row, query, query.after) * direction <= 0) continue;
    afterCursor += 1;
    if (best.length === query.limit && compareTo(row, query, position(best[best.length - 1]!)) * direction >= 0)
      continue;
    let low = 0;
    let high = best.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareTo(row, query, position(best[middle]!)) * direction < 0) high = middle;
      else low = middle + 1;
    }
    best.splice(low, 0, row);
    if (best.length > query.limit) best.pop();
  }
  return { rows: best, total, more: afterCursor > best.length };
}
