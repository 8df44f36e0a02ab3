import { JsonObjectSize, jsonNumberSize, jsonSize, jsonStringSize } from './json-size.js';
import type { ValueShape } from './pii/kinds.js';
import { isOtpName } from './pii/keys.js';
import { MAX_SCAN_DEPTH, MAX_SHAPES } from './pii/limits.js';
import { mayHoldIdentity } from './pii/may-hold-identity.js';
import type { PiiRules } from './pii/rules.js';
import { DEFAULT_PII_RULES } from './pii/rules.js';
import { maskKeyed, scrubText } from './pii/scrub.js';
import type { RedactedHint } from './redaction.js';
import { hintShapeSize, matchesPattern, redactHint } from './redaction.js';
import type { SdkEvent } from './sdk-event.js';

/**
 * The one redaction pass over a client-sent value, applied before anything stores, logs, returns
 * or streams it (docs/decisions/0001-identity-values-masked-on-arrival.md): identity values are masked at any depth, in any field, with their
 * shape kept so the agent still knows what was entered.
 */

/** Where a masked value was, and what it looked like. */
export interface RedactedField extends ValueShape {
  path: string;
}

declare const redacted: unique symbol;
/** An event that went through `redactEvent`: only such an event may reach a session. */
export type RedactedEvent = SdkEvent & { readonly [redacted]: true };

export const TOO_DEEP_MARK = '[dropped: too deep]';

/** The pass's own fields on an event; a client-sent copy is replaced, never trusted. */
const OWN_FIELDS = new Set(['redacted_fields', 'masked_by', 'shape']);

/**
 * What V8's heap spends on parsed JSON beyond its text, in bytes (measured with Node 24 after a
 * full collection, docs/limits.md "Nested data"; where it varies, the larger is counted): every
 * value takes a slot of 8 in its array or object; a string adds its header (16 to 24), a number
 * that is not a small integer a 16-byte box, an array 36, an object 60; a key 24 (about 72 in an
 * object past V8's 1,020 fast properties), and a key new to the event up to 224 more (its
 * interned string and the object shape it makes). JSON counts `[]` and `""` as 2 bytes each, so
 * a session of such values costs the heap up to twenty times its JSON size: the memory budget
 * charges a session by this too (held-density.ts).
 */
const SLOT_HEAP_BYTES = 8;
const STRING_HEAP_BYTES = 24;
const BOXED_NUMBER_HEAP_BYTES = 16;
const OBJECT_HEAP_BYTES = 60;
const ARRAY_HEAP_BYTES = 36;
const KEY_HEAP_BYTES = 24;
const DICTIONARY_KEY_HEAP_BYTES = 72;
const NEW_KEY_HEAP_BYTES = 224;
/** Distinct keys an event may have before each new one is charged its own shape: an SDK's events share a few dozen. */
const SHARED_KEYS = 256;
const FAST_PROPERTIES = 1020;
/** V8 keeps integers of 31 bits in the slot itself; any other number is boxed. */
const isSmallInteger = (value: number) => Number.isInteger(value) && value >= -(2 ** 30) && value < 2 ** 30;

/** Unix seconds and milliseconds of this era under a key named for a time: a time, not an identifier. */
const isEpochTime = (value: number) => (value >= 1e9 && value < 5e9) || (value >= 1e12 && value < 5e12);
const isTimeKey = (key: string) =>
  /^(?:timestamp|ts|time)$/i.test(key) || /[_-](?:at|ts|ms|time|timestamp)$/i.test(key) || /[a-z](?:At|Ts|Ms|Time|Timestamp)$/.test(key);

/**
 * The pass visits every value it returns, so it also counts their JSON size: `size` is that of the
 * value `value()` returned last. The session budget reads an event's size from here rather than
 * stringifying what was just walked (docs/decisions/0015-checkpoints-on-a-worker-and-sizes-from-the-redaction-pass.md).
 */
class Walk {
  readonly fields: RedactedField[] = [];
  size = 0;
  /** What the values walked cost the heap beyond their JSON (SLOT_HEAP_BYTES and the rest). */
  structure = 0;
  /**
   * Keys met so far in this event, up to SHARED_KEYS: past them every key is charged as new (its
   * interned string and the object shape it makes), which a client sending a distinct key per
   * object makes V8 pay.
   */
  private readonly keysSeen = new Set<string>();
  constructor(
    private readonly rules: PiiRules,
    private readonly otp: boolean,
  ) {}

  note(path: string, shape: ValueShape): void {
    // Each key was masked on its own; joined, harmless keys can spell a value (`98765.43210`).
    if (this.fields.length < MAX_SHAPES) this.fields.push({ path: scrubText(path).text, ...shape });
  }

  /** Returns `value` itself when nothing in it changed, so a clean event costs no copies. */
  value(value: unknown, path: string, depth: number, sensitive: boolean, otp: boolean, key = ''): unknown {
    this.structure += SLOT_HEAP_BYTES;
    if (typeof value === 'string') {
      this.structure += STRING_HEAP_BYTES;
      const text = this.text(value, path, sensitive, otp);
      this.size = jsonStringSize(text);
      return text;
    }
    if (typeof value === 'number') {
      if (!isSmallInteger(value)) this.structure += BOXED_NUMBER_HEAP_BYTES;
      const number = this.number(value, path, sensitive, otp, key);
      this.size = typeof number === 'number' ? jsonNumberSize(number) : jsonStringSize(number);
      return number;
    }
    if (value === null || typeof value !== 'object') return this.sized(value);
    if (depth >= MAX_SCAN_DEPTH) {
      this.note(path, { length: 0, digits: 0, letters: 0, kind: 'dropped' });
      return this.sized(TOO_DEEP_MARK);
    }
    if (value instanceof Error) return this.sized(this.error(value, path));
    if (Array.isArray(value)) {
      this.structure += ARRAY_HEAP_BYTES;
      let copy: unknown[] | undefined;
      let size = value.length > 1 ? value.length + 1 : 2;
      value.forEach((item, index) => {
        const next = this.value(item, `${path}[${index}]`, depth + 1, sensitive, otp);
        // An array's hole or undefined is written as null.
        size += next === undefined ? 4 : this.size;
        if (next !== item) (copy ??= value.slice())[index] = next;
      });
      this.size = size;
      return copy ?? value;
    }
    return this.object(value as Record<string, unknown>, path, depth, sensitive, otp);
  }

  /** A value measured as it is: a primitive, or what no walk of its own counted. */
  private sized<T>(value: T): T {
    this.size = jsonSize(value);
    return value;
  }

  /** A log line's error: its message and stack are text like any other. */
  error(value: Error, path: string): Error | Record<string, unknown> {
    const message = this.text(value.message, `${path}.message`, false, false);
    const stack = value.stack === undefined ? undefined : this.text(value.stack, `${path}.stack`, false, false);
    if (message === value.message && stack === value.stack) return value;
    return { type: value.name, message, stack };
  }

  object(value: Record<string, unknown>, path: string, depth: number, sensitive: boolean, otp: boolean): Record<string, unknown> {
    let changed = false;
    let renamed = false;
    const entries: [string, unknown][] = [];
    const size = new JsonObjectSize();
    let keys = 0;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      keys += 1;
      if (this.keysSeen.size <= SHARED_KEYS && !this.keysSeen.has(key)) this.keysSeen.add(key);
      else if (this.keysSeen.size > SHARED_KEYS) this.structure += NEW_KEY_HEAP_BYTES;
      const item = value[key];
      const facts = this.rules.keyFacts(key);
      // Only the top level's routing id is the service's own; one nested anywhere is client data.
      if (facts.routing && depth === 0) {
        entries.push([key, item]);
        size.addKeyed(facts.jsonBytes, item, jsonSize(item));
        continue;
      }
      const safeKey = facts.mayHoldIdentity ? scrubText(key).text : key;
      const itemPath = path === '' ? safeKey : `${path}.${safeKey}`;
      const next = this.value(item, itemPath, depth + 1, sensitive || facts.sensitive, otp || facts.otp, key);
      if (next !== item || safeKey !== key) changed = true;
      if (safeKey !== key) renamed = true;
      entries.push([safeKey, next]);
      // A renamed key's share is not this; such an object is measured whole below.
      size.addKeyed(facts.jsonBytes, next, this.size);
    }
    this.structure += OBJECT_HEAP_BYTES + keys * (keys > FAST_PROPERTIES ? DICTIONARY_KEY_HEAP_BYTES : KEY_HEAP_BYTES);
    // fromEntries defines own properties, so even a `__proto__` key stays data.
    const result = changed ? Object.fromEntries(entries) : value;
    // Masked keys may coincide, and the later entry then replaces the earlier: measured whole.
    this.size = renamed ? jsonSize(result) : size.total;
    return result;
  }

  text(value: string, path: string, sensitive: boolean, otp: boolean): string {
    if (sensitive) {
      const masked = maskKeyed(value);
      this.note(path, masked.shape);
      return masked.text;
    }
    if (!mayHoldIdentity(value, otp || this.otp)) return value;
    const scan = scrubText(value, otp || this.otp);
    for (const finding of scan.findings) this.note(path, finding.shape);
    return scan.text;
  }

  number(value: number, path: string, sensitive: boolean, otp: boolean, key: string): number | string {
    if (!Number.isFinite(value)) return value;
    // Read as text from 8 digits (a date of birth as 19950615 or 15061995), and in an OTP's event
    // from 4 (the OTP sent as a number); below that no identity value fits.
    const unread = Math.abs(value) < (otp || this.otp ? 1_000 : 10_000_000);
    if (!sensitive && (unread || (isEpochTime(value) && isTimeKey(key)))) return value;
    const text = String(value);
    if (sensitive || Number.isInteger(value)) {
      const masked = this.text(text, path, sensitive, otp);
      return masked === text ? value : masked;
    }
    // A fraction's whole part is read as the integer it is: `9876543210.5` carries a mobile number
    // as surely as `9876543210` (read whole, the digits and the dot look like a version).
    const whole = String(Math.trunc(value));
    const masked = this.text(whole, path, false, false);
    return masked === whole ? value : `${masked}${text.slice(whole.length)}`;
  }
}

/** A redacted event and what the session budget needs to know of it. */
export interface SizedEvent extends EventSizes {
  event: RedactedEvent;
}

/**
 * Masks every identity value in `event`: value detectors on every string and large integer at
 * any depth (keys too), key rules on identity-named fields, the hint rule on `hint`. The result
 * lists what was masked under `redacted_fields` (path and shape, at most 32). `session_id` is the
 * routing key and is left as sent. Pure; never mutates `event`.
 */
export function redactEvent(event: SdkEvent, rules: PiiRules = DEFAULT_PII_RULES): RedactedEvent {
  return redactSizedEvent(event, rules).event;
}

/** `redactEvent`, with the JSON size of what it returns, counted as it walks. */
export function redactSizedEvent(event: SdkEvent, rules: PiiRules = DEFAULT_PII_RULES): SizedEvent {
  const walk = new Walk(rules, isOtpName(event.component_id) || isOtpName(event.component_type));
  const out: Record<string, unknown> = {};
  const size = new JsonObjectSize();
  let propertiesBytes = 0;
  let renamed = false;
  // Keys walked in place, with no `Object.entries` pairs: every SDK event comes through here.
  for (const key in event) {
    if (!Object.hasOwn(event, key)) continue;
    const item = (event as Record<string, unknown>)[key];
    if (OWN_FIELDS.has(key) || (key === 'hint' && typeof item === 'string')) continue;
    const facts = rules.keyFacts(key);
    if (facts.routing) {
      out[key] = item;
      size.addKeyed(facts.jsonBytes, item, jsonSize(item));
      continue;
    }
    const safeKey = facts.mayHoldIdentity ? scrubText(key).text : key;
    const value = walk.value(item, safeKey, 1, facts.sensitive, facts.otp, key);
    if (safeKey !== key) renamed = true;
    // A `__proto__` key must stay data, not become the prototype.
    if (safeKey === '__proto__') Object.defineProperty(out, safeKey, { value, enumerable: true, writable: true, configurable: true });
    else out[safeKey] = value;
    size.addKeyed(facts.jsonBytes, value, walk.size);
    if (safeKey === 'properties') propertiesBytes = walk.size;
  }
  if (typeof event.hint === 'string') {
    const fields = hintFields(event);
    size.add('hint', fields.hint, jsonStringSize(fields.hint));
    if ('masked' in fields) {
      // `masked` as sent is replaced in place.
      if (Object.hasOwn(out, 'masked')) size.remove('masked', out.masked);
      size.add('masked', true, 4);
      if (fields.masked_by !== undefined) size.add('masked_by', fields.masked_by, jsonStringSize(fields.masked_by));
      if (fields.shape !== undefined) size.add('shape', fields.shape, hintShapeSize(fields.shape));
    }
    Object.assign(out, fields);
  }
  if (walk.fields.length > 0) {
    out.redacted_fields = walk.fields;
    size.add('redacted_fields', walk.fields, jsonSize(walk.fields));
  }
  // Masked keys may coincide, the later replacing the earlier: such an event is measured whole.
  const bytes = renamed ? jsonSize(out) : size.total;
  if (renamed) propertiesBytes = jsonSize(out.properties);
  return { event: out as RedactedEvent, bytes, propertiesBytes, structureBytes: walk.structure };
}

function hintFields(event: SdkEvent): RedactedHint | { hint: string } {
  const hint = event.hint as string;
  const pattern = typeof event.expected_pattern === 'string' ? event.expected_pattern : undefined;
  return redactHint({ hint, masked: event.masked ?? undefined, componentType: event.component_type ?? undefined, pattern }) ?? { hint };
}

/**
 * The one question a session may still ask of a hint it never sees raw: does it match the pattern
 * of this component's registered schema? Undefined when the hint was not masked by the server.
 * The raw value lives only in this closure, which no log, inspection or response serialises.
 */
export function hintMatcher(event: SdkEvent, stored: RedactedEvent): ((pattern: string) => boolean | undefined) | undefined {
  if (typeof event.hint !== 'string' || stored.masked_by !== 'server') return undefined;
  const hint = event.hint;
  return (pattern) => matchesPattern(hint, pattern);
}

export interface IngestInput {
  event: RedactedEvent;
  matchHint: ((pattern: string) => boolean | undefined) | undefined;
  /** The event's JSON sizes, for the session budget. */
  sizes: EventSizes;
}

/** What the session budget knows of an event before it reaches the session. */
export interface EventSizes {
  /** `JSON.stringify(event).length`. */
  bytes: number;
  /** The same of its `properties` (0 when it has none). */
  propertiesBytes: number;
  /** What its values (slots, strings, boxed numbers, objects, arrays, keys) cost V8's heap beyond their JSON: the memory budget's density. */
  structureBytes?: number;
}

/** What a `session.ingest` command carries, from an event as received: every ingest path calls this. */
export function redactForIngest(received: SdkEvent, rules: PiiRules = DEFAULT_PII_RULES): IngestInput {
  const { event, bytes, propertiesBytes, structureBytes } = redactSizedEvent(received, rules);
  return { event, matchHint: hintMatcher(received, event), sizes: { bytes, propertiesBytes, structureBytes } };
}

/** For any other client-sent text the service keeps or logs (a screen name, a trigger signal). */
export function redactText(value: string): string {
  return scrubText(value).text;
}

/**
 * Any other client-sent value (a trigger body, a voice start body): the same detectors and key
 * rules as `redactEvent`, without the hint rule. Returns the value itself when nothing changed.
 */
export function redactValue<T>(value: T, rules: PiiRules = DEFAULT_PII_RULES): T {
  return new Walk(rules, false).value(value, '', 0, false, false) as T;
}
