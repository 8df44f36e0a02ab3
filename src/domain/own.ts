/**
 * Own-property lookup for records keyed by client-chosen strings: a screen or component named
 * `constructor` or `__proto__` must find nothing rather than Object.prototype's members.
 */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
