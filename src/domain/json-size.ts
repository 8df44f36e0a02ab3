/**
 * The length of `JSON.stringify(value)`, or 0 where it gives `undefined`, without building the
 * string. The session budget measures every event and hint this way; stringifying them built
 * strings per event only to read their length
 * (docs/decisions/0015-checkpoints-on-a-worker-and-sizes-from-the-redaction-pass.md).
 *
 * Exact for what a session holds (JSON parsed from a request, and objects the service builds of
 * it); a value with a `toJSON` is measured by stringifying it, as that is what it would become.
 */
export function jsonSize(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return jsonStringSize(value);
    case 'number':
      return jsonNumberSize(value);
    case 'boolean':
      return value ? 4 : 5;
    case 'object':
      if (value === null) return 4;
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(value)?.length ?? 0;
      return Array.isArray(value) ? arraySize(value) : objectSize(value as Record<string, unknown>);
    default:
      // undefined, a function, a symbol: JSON.stringify gives undefined; a bigint throws there.
      if (typeof value === 'bigint') throw new TypeError('Do not know how to serialize a BigInt');
      return 0;
  }
}

/** A value JSON.stringify leaves out of an object, and writes as `null` in an array. */
const omitted = (value: unknown): boolean =>
  value === undefined || typeof value === 'function' || typeof value === 'symbol';

function objectSize(object: Record<string, unknown>): number {
  let size = 2;
  let entries = 0;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const item = object[key];
    if (omitted(item)) continue;
    size += jsonStringSize(key) + 1 + jsonSize(item);
    entries += 1;
  }
  return entries > 1 ? size + entries - 1 : size;
}

function arraySize(array: readonly unknown[]): number {
  let size = 2;
  for (let index = 0; index < array.length; index += 1) {
    const item = array[index];
    size += omitted(item) ? 4 : jsonSize(item);
  }
  return array.length > 1 ? size + array.length - 1 : size;
}

/**
 * A string's JSON length: its own, two quotes, and what escaping adds (a quote, a backslash, a
 * control character, a lone surrogate). One pass of char codes: cheaper than a regex test for the
 * short strings events are made of, and it is run on every key and string of every event.
 */
export function jsonStringSize(text: string): number {
  let size = text.length + 2;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code >= 0x20 && code !== 0x22 && code !== 0x5c && (code < 0xd800 || code > 0xdfff)) continue;
    if (
      code === 0x22 ||
      code === 0x5c ||
      code === 0x08 ||
      code === 0x09 ||
      code === 0x0a ||
      code === 0x0c ||
      code === 0x0d
    )
      size += 1;
    else if (code < 0x20) size += 5;
    else if (code <= 0xdbff && index + 1 < text.length && isLowSurrogate(text.charCodeAt(index + 1))) index += 1;
    // A surrogate without its pair is written as \uXXXX.
    else size += 5;
  }
  return size;
}

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

export function jsonNumberSize(value: number): number {
  if (!Number.isFinite(value)) return 4;
  // Integers below 1e21 print as their digits; anything else as String() does, built only then.
  if (Number.isInteger(value) && Math.abs(value) < 1e21) {
    let digits = 1;
    for (let rest = Math.abs(value); rest >= 10; rest = Math.floor(rest / 10)) digits += 1;
    return value < 0 ? digits + 1 : digits;
  }
  return String(value).length;
}

/** An object's JSON size, entry by entry, from the sizes of its values (known or measured apart). */
export class JsonObjectSize {
  private size = 2;
  private entries = 0;

  add(key: string, value: unknown, valueSize: number): void {
    this.addKeyed(jsonStringSize(key) + 1, value, valueSize);
  }

  /** An entry whose key's share (quoted, with its colon) is known. */
  addKeyed(keyBytes: number, value: unknown, valueSize: number): void {
    if (omitted(value)) return;
    this.size += keyBytes + valueSize;
    this.entries += 1;
  }

  /** An entry given before is replaced: its share comes off (its value measured here). */
  remove(key: string, value: unknown): void {
    if (omitted(value)) return;
    this.size -= jsonStringSize(key) + 1 + jsonSize(value);
    this.entries -= 1;
  }

  get total(): number {
    return this.entries > 1 ? this.size + this.entries - 1 : this.size;
  }
}
