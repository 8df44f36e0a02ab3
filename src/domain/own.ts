/**
 * Own-property lookup for records keyed by client-chosen strings: a screen or component named
 * `constructor` or `__proto__` must find nothing rather than Object.prototype's members.
 */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/**
 * zod builds an object's output by assignment, and assigning `__proto__` sets the prototype: a key
 * JSON.parse kept as data would be lost (its values never read, but not kept either). Put it back
 * as data, so an event keeps every key it was acknowledged with.
 */
export function keepProtoKey<T extends object>(input: unknown, output: T): T {
  if (
    input === null ||
    typeof input !== 'object' ||
    !Object.hasOwn(input, '__proto__') ||
    Object.hasOwn(output, '__proto__')
  )
    return output;
  const value: unknown = (input as Record<string, unknown>)['__proto__'];
  Object.defineProperty(output, '__proto__', { value, enumerable: true, writable: true, configurable: true });
  return output;
}
