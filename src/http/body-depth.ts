import { showPath } from './shown-key-path.js';

/**
 * How deep a client's JSON may nest. Every later step that walks client data (zod, stringify,
 * canonical JSON of schemas, clones, redaction, inspection, the response serializer) recurses,
 * so the bound is enforced once, where the body is parsed, before any of them sees it.
 * 32 is far beyond any SDK payload (the deepest, a screen schema, nests 6 levels).
 */
export const MAX_BODY_DEPTH = 32;

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
      for (const key in container)
        if (Object.hasOwn(container, key)) visit((container as Record<string, unknown>)[key], key, depth, path);
    }
  }
  return undefined;
}
