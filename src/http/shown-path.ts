import { redactText } from '../privacy/scrub.js';

/**
 * A request path as an error detail or a log line shows it: decoded first, since a client that
 * puts an e-mail or a spaced number in a URL sends `%40` and `%20`, which no detector would read,
 * then masked like any client text. A path that is not valid percent-encoding is masked as sent.
 */
export function shownPath(path: string): string {
  let decoded = path;
  if (path.includes('%')) {
    try {
      decoded = decodeURIComponent(path);
    } catch {
      // Left encoded: the rule still reads what is plain in it.
    }
  }
  return redactText(decoded);
}
