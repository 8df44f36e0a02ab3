import { redactText } from '../domain/event-redaction.js';

/**
 * How deep a client's JSON may nest. Every later step that walks client data (zod, stringify,
 * canonical JSON of schemas, clones, redaction, inspection, the response serializer) recurses,
 * so the bound is enforced once, where the body is parsed, before any of them sees it.
 * 32 is far beyond any SDK payload (the deepest, a screen schema, nests 6 levels).
 */
export const MAX_BODY_DEPTH = 32;

const MAX_KEY_SHOWN = 40;

/**
 * A path as the 422 names it, `properties.x.0.0`: each key masked, then cut if long, and the whole
 * masked again like any client text, so neither a key nor keys joined can carry an identity value
 * out. Masked before the cut: a cut first could leave `ABCDE1234` of a PAN, which no detector reads.
 */
function showPath(path: (string | number)[]): string {
  const shown = path.map((part) => (typeof part === 'string' ? shownKey(part) : String(part))).join('.');
  // The keys alone are what can spell a value between them; array indices (`x.0.0.0`) are the service's count.
  const keys = path.filter((part) => typeof part === 'string').map(shownKey).join('.');
  return redactText(keys) === keys ? shown : redactText(shown);
}

function shownKey(key: string): string {
  // Bounded before the scan: past four times the shown length nothing of it is shown anyway.
  const masked = redactText(key.slice(0, 4 * MAX_KEY_SHOWN));
  return masked.length > MAX_KEY_SHOWN ? `${masked.slice(0, MAX_KEY_SHOWN)}…` : masked;
}

/**
 * The path of the first container nested deeper than `limit` levels (the body itself is level 1),
 * or undefined. Iterative, with an explicit stack: the check itself must not overflow.
 */
export function tooDeepPath(value: unknown, limit: number = MAX_BODY_DEPTH): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const stack: { value: object; depth: number; path: (string | number)[] }[] = [{ value, depth: 1, path: [] }];
  const visit = (item: unknown, key: string | number, depth: number, path: (string | number)[]) => {
    if (item !== null && typeof item === 'object') stack.push({ value: item, depth: depth + 1, path: [...path, key] });
  };
  while (stack.length > 0) {
    const { value: container, depth, path } = stack.pop()!;
    if (depth > limit) return showPath(path);
    // Every request's body comes through here: keys are walked in place, with no entry pairs made.
    if (Array.isArray(container)) {
      for (let index = 0; index < container.length; index += 1) visit(container[index], index, depth, path);
    } else {
      for (const key in container) if (Object.hasOwn(container, key)) visit((container as Record<string, unknown>)[key], key, depth, path);
    }
  }
  return undefined;
}
