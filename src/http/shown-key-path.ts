import { redactText } from '../privacy/scrub.js';
import { shownCut } from '../privacy/shown-cut.js';

const MAX_KEY_SHOWN = 40;

/**
 * A path as the 422 names it, `properties.x.0.0`: each key masked, then cut if long, and the whole
 * masked again like any client text, so neither a key nor keys joined can carry an identity value
 * out (shown-cut.ts).
 */
export function showPath(path: (string | number)[]): string {
  const parts = path.map((part) => (typeof part === 'string' ? shownCut(part, MAX_KEY_SHOWN) : part));
  const shown = parts.join('.');
  // The keys alone are what can spell a value between them; array indices (`x.0.0.0`) are the service's count.
  const keys = parts.filter((part) => typeof part === 'string').join('.');
  return redactText(keys) === keys ? shown : redactText(shown);
}
