/**
 * `JSON.stringify(value).length` without building the string: the session budget measures every
 * event, hint and properties object it holds, and the strings those measurements built were
 * thrown away at once. Exact for what `JSON.parse` and the service build (plain objects, arrays,
 * strings, finite numbers, booleans, null, `toJSON`); a value JSON leaves out (undefined, a
 * function, a symbol) counts 0 at the top, as `null` in an array, and not at all as a property.
 */
export function jsonLength(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return stringLength(value);
    case 'number':
      return numberLength(value);
    case 'boolean':
      return value ? 4 : 5;
    case 'object':
      return objectLength(value);
    case 'bigint':
      // As JSON.stringify does: a bigint has no JSON form.
      throw new TypeError('Do not know how to serialize a BigInt');
    default:
      return 0;
  }
}

const omitted = (value: unknown): boolean => value === undefined || typeof value === 'function' || typeof value === 'symbol';

function numberLength(value: number): number {
  if (!Number.isFinite(value)) return 4;
  // Integers of safe size by their digits; the rest through their own (short) string form.
  if (Number.isSafeInteger(value) && !Object.is(value, -0)) {
    let digits = value < 0 ? 2 : 1;
    for (let rest = Math.abs(value); rest >= 10; rest = Math.floor(rest / 10)) digits += 1;
    return digits;
  }
  return Object.is(value, -0) ? 1 : String(value).length;
}

/** Quotes plus each code unit as JSON escapes it (well-formed JSON.stringify: lone surrogates as `\uXXXX`). */
function stringLength(text: string): number {
  let length = text.length + 2;
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit >= 0x20 && unit !== 0x22 && unit !== 0x5c && (unit < 0xd800 || unit > 0xdfff)) continue;
    if (unit === 0x22 || unit === 0x5c || unit === 0x08 || unit === 0x09 || unit === 0x0a || unit === 0x0c || unit === 0x0d) length += 1;
    else if (unit < 0x20) length += 5;
    else if (unit <= 0xdbff) {
      // A high surrogate stands as itself only before a low one; the pair is then passed over whole.
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index += 1;
      else length += 5;
    } else length += 5;
  }
  return length;
}

function objectLength(value: object | null): number {
  if (value === null) return 4;
  const { toJSON } = value as { toJSON?: unknown };
  if (typeof toJSON === 'function') return jsonLength((toJSON as (key: string) => unknown).call(value, ''));
  if (Array.isArray(value)) {
    let length = 2 + Math.max(0, value.length - 1);
    for (const item of value) length += omitted(item) ? 4 : jsonLength(item);
    return length;
  }
  let length = 2;
  let fields = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const field = (value as Record<string, unknown>)[key];
    if (omitted(field)) continue;
    length += stringLength(key) + 1 + jsonLength(field);
    fields += 1;
  }
  return length + Math.max(0, fields - 1);
}
