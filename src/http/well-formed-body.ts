import { showPath } from './shown-key-path.js';

/**
 * JSON can escape half of a UTF-16 pair alone (`"\ud800"`), a string no UTF-8 store can keep:
 * SQLite keeps U+FFFD in its place, so a field keyed by such a string (a hint under its
 * component id) would no longer be found after a restart, and what was acknowledged would change.
 * Such a body is refused (422 naming where), as a body that is not UTF-8 is (docs/tutorial/api-walkthrough.md).
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** Whether JSON text may hold a lone surrogate at all: only an escape can put one there. */
export const mayHoldLoneSurrogate = (jsonText: string): boolean => SURROGATE_ESCAPE.test(jsonText);

/**
 * The path of the first string or key holding a lone surrogate, as a 422 names it, or undefined.
 * Iterative, like the depth check, so it cannot overflow on what that check has yet to refuse.
 */
export function loneSurrogatePath(value: unknown): string | undefined {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  const shown = (path: (string | number)[]) =>
    showPath(path.map((part) => (typeof part === 'string' ? part.toWellFormed() : part)));
  while (stack.length > 0) {
    const { value: item, path } = stack.pop()!;
    if (typeof item === 'string') {
      if (!item.isWellFormed()) return shown(path);
    } else if (Array.isArray(item)) {
      for (let index = 0; index < item.length; index += 1) stack.push({ value: item[index], path: [...path, index] });
    } else if (item !== null && typeof item === 'object') {
      for (const key in item) {
        if (!Object.hasOwn(item, key)) continue;
        if (!key.isWellFormed()) return shown([...path, key]);
        stack.push({ value: (item as Record<string, unknown>)[key], path: [...path, key] });
      }
    }
  }
  return undefined;
}
