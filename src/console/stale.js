import { Unreachable } from './api.js';
import { time } from './dom.js';

/**
 * The `onProblem` of a polled view. A failed load leaves the last data on the page, so it says
 * since when loads fail and dims `content` (class `stale`) until one succeeds again: without it,
 * a frozen page read as a live one (Health said "status ok" beside the failure).
 */
export function staleness(problem, content, what) {
  let since;
  let loadedAt;
  return (error) => {
    let text = '';
    if (!error) {
      since = undefined;
      loadedAt = new Date().toISOString();
    } else {
      since ??= new Date().toISOString();
      const cause =
        error instanceof Unreachable
          ? `Service unreachable since ${time(since)}`
          : `Could not load ${what} since ${time(since)} (${error.message})`;
      text = `${cause}; ${loadedAt ? `showing the last data, loaded at ${time(loadedAt)}` : 'nothing loaded yet'}.`;
    }
    // Set only when it changes: an alert set again at each failed round would be read out again.
    if (problem.textContent !== text) problem.textContent = text;
    content.classList.toggle('stale', Boolean(error));
  };
}
