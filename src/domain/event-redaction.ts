import { hintShapeSize } from './hint-bytes.js';
import { JsonObjectSize, jsonNumberSize, jsonSize, jsonStringSize } from './json-size.js';
import type { SdkEvent } from './sdk-event.js';
import type { HintShape, RedactedHint } from '../privacy/hints.js';
import { matchesPattern, redactHint } from '../privacy/hints.js';
import { isIdentifier, patternSyntaxOnly } from '../privacy/identifier.js';
import type { ValueShape } from '../privacy/kinds.js';
import { shapeOf } from '../privacy/kinds.js';
import { MAX_SCAN_DEPTH, MAX_SHAPES } from '../privacy/limits.js';
import type { PiiRules } from '../privacy/rules.js';
import { DEFAULT_PII_RULES } from '../privacy/rules.js';
import { isIdField, isVersionField } from '../privacy/keys.js';
import { maskKeyed, mayHoldIdentity, scrubText } from '../privacy/scrub.js';

/**
 * The one redaction pass over a client-sent value, applied before anything stores, logs, returns
 * or streams it (docs/decisions/0001-identity-values-masked-on-arrival.md): the default-deny rule
 * (src/privacy/, docs/explanation/privacy.md) over every string, number and key at any depth, with each
 * masked value's shape kept so the agent still knows what was entered.
 */

/** Where a masked value was, and what it looked like. */
export interface RedactedField extends ValueShape {
  path: string;
}

declare const redacted: unique symbol;
/** An event that went through `redactEvent`: only such an event may reach a session. */
export type RedactedEvent = SdkEvent & { readonly [redacted]: true };

export const TOO_DEEP_MARK = '[dropped: too deep]';

/** A client's key as kept: an identifier as sent, anything else through the rule like any text. */
const shownKey = (key: string, mayHold: boolean): string => (!mayHold || isIdentifier(key) ? key : scrubText(key).text);

/** The pass's own fields on an event; a client-sent copy is replaced, never trusted. */
const OWN_FIELDS = new Set(['redacted_fields', 'masked_by', 'shape']);

/**
 * What V8's heap spends on parsed JSON beyond its text, in bytes (measured with Node 24 after a
 * full collection, docs/reference/limits.md "Nested data"; where it varies, the larger is counted): every
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
  /^(?:timestamp|ts|time)$/i.test(key) ||
  /[_-](?:at|ts|ms|time|timestamp)$/i.test(key) ||
  /[a-z](?:At|Ts|Ms|Time|Timestamp)$/.test(key);
/**
 * Documented numeric signals (docs/explanation/privacy.md, "What is kept"): a key named for a measure keeps a
 * number below ten million (a duration in ms, a count, a size in bytes or MiB); any other number of
 * four digits or more is read as text and masked.
 */
const isMeasureKey = (key: string) =>
  /(?:^|[_-])(?:ms|seconds|secs|count|total|index|chars|length|size|bytes|kb|kib|mb|mib|gb|gib|duration|attempts?|retries|percent|score|width|height)$/i.test(
    key,
  ) ||
  /[a-z](?:Ms|Seconds|Count|Total|Index|Chars|Length|Size|Bytes|Kb|KiB|Mb|MiB|Gb|GiB|Duration|Attempts)$/.test(key);
const MAX_MEASURE = 10_000_000;
/** Numbers below four digits hold no run the rule masks. */
const MIN_READ = 1_000;

/** Fields holding a field validator's regular expression (privacy/identifier.ts, `patternSyntaxOnly`). */
const PATTERN_FIELDS = new Set(['expected_pattern', 'pattern', 'regex', 'validation_pattern']);

const VERSION = /^v?(?:20\d{2}|\d{1,3})(?:[.-]\d{1,3})*(?:[-+][A-Za-z0-9.]{1,32})?$/;
/** Longer than any id an app makes (the schemas allow 128): text, masked whole rather than named by a digest. */
const MAX_DIGESTED_ID = 256;
/** The service's own marks in place of a value it refused or withheld (`[invalid]`, `[redacted]`): no client text. */
const SERVICE_MARK = /^\[[a-z ]{1,32}\]$/;

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
  /**
   * @param component the event's component says it holds an identity value: its properties are
   * masked whole, but a count under a measure key (`attempt: 2`) says nothing of the value.
   */
  constructor(
    private readonly rules: PiiRules,
    private readonly component = false,
  ) {}

  note(path: string, shape: ValueShape): void {
    // Each key was masked on its own; joined, harmless keys can spell a value (`98765.43210`).
    if (this.fields.length < MAX_SHAPES) this.fields.push({ path: scrubText(path).text, ...shape });
  }

  /** Returns `value` itself when nothing in it changed, so a clean event costs no copies. */
  value(value: unknown, path: string, depth: number, sensitive: boolean, identifier: boolean, key = ''): unknown {
    this.structure += SLOT_HEAP_BYTES;
    if (typeof value === 'string') {
      this.structure += STRING_HEAP_BYTES;
      const text = sensitive
        ? this.text(value, path, true)
        : identifier
          ? this.identifier(value, path, key)
          : PATTERN_FIELDS.has(key)
            ? this.pattern(value, path)
            : this.text(value, path, false);
      this.size = jsonStringSize(text);
      return text;
    }
    if (typeof value === 'number') {
      if (!isSmallInteger(value)) this.structure += BOXED_NUMBER_HEAP_BYTES;
      const number = this.number(value, path, sensitive, key);
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
        const next = this.value(item, `${path}[${index}]`, depth + 1, sensitive, identifier);
        // An array's hole or undefined is written as null.
        size += next === undefined ? 4 : this.size;
        if (next !== item) (copy ??= value.slice())[index] = next;
      });
      this.size = size;
      return copy ?? value;
    }
    return this.object(value as Record<string, unknown>, path, depth, sensitive);
  }

  /** A value measured as it is: a primitive, or what no walk of its own counted. */
  private sized<T>(value: T): T {
    this.size = jsonSize(value);
    return value;
  }

  /** A log line's error: its message and stack are text like any other. */
  error(value: Error, path: string): Error | Record<string, unknown> {
    const message = this.text(value.message, `${path}.message`, false);
    const stack = value.stack === undefined ? undefined : this.text(value.stack, `${path}.stack`, false);
    if (message === value.message && stack === value.stack) return value;
    return { type: value.name, message, stack };
  }

  object(value: Record<string, unknown>, path: string, depth: number, sensitive: boolean): Record<string, unknown> {
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
      const keyBytes = jsonStringSize(key) + 1;
      if (facts.routing && depth === 0) {
        entries.push([key, item]);
        size.addKeyed(keyBytes, item, jsonSize(item));
        continue;
      }
      const safeKey = shownKey(key, facts.mayHoldIdentity);
      const itemPath = path === '' ? safeKey : `${path}.${safeKey}`;
      const next = this.value(item, itemPath, depth + 1, sensitive || facts.sensitive, facts.identifierField, key);
      if (next !== item || safeKey !== key) changed = true;
      if (safeKey !== key) renamed = true;
      entries.push([safeKey, next]);
      // A renamed key's share is not this; such an object is measured whole below.
      size.addKeyed(keyBytes, next, this.size);
    }
    this.structure += OBJECT_HEAP_BYTES + keys * (keys > FAST_PROPERTIES ? DICTIONARY_KEY_HEAP_BYTES : KEY_HEAP_BYTES);
    // fromEntries defines own properties, so even a `__proto__` key stays data.
    const result = changed ? Object.fromEntries(entries) : value;
    // Masked keys may coincide, and the later entry then replaces the earlier: measured whole.
    this.size = renamed ? jsonSize(result) : size.total;
    return result;
  }

  text(value: string, path: string, sensitive: boolean): string {
    if (sensitive) {
      const masked = maskKeyed(value);
      this.note(path, masked.shape);
      return masked.text;
    }
    if (!mayHoldIdentity(value)) return value;
    const scan = scrubText(value);
    // A value alone in its field is listed with the field's whole shape; values inside text each with their own.
    if (scan.whole !== undefined) this.note(path, shapeOf(value, scan.whole));
    else for (const finding of scan.findings) this.note(path, finding.shape);
    return scan.text;
  }

  /** A validator's pattern: as sent when its syntax aside it holds nothing the rule masks. */
  pattern(value: string, path: string): string {
    return mayHoldIdentity(value) && scrubText(patternSyntaxOnly(value)).findings.length > 0
      ? this.text(value, path, false)
      : value;
  }

  /**
   * An identifier-like field: as sent when it is an identifier (or a version, under a version's
   * key); else an id is keyed by its digest where the rules have one, and a name or code is masked
   * whole, each with its shape.
   */
  identifier(value: string, path: string, key = ''): string {
    if (isIdentifier(value) || (isVersionField(key) && VERSION.test(value)) || SERVICE_MARK.test(value)) return value;
    const masked = maskKeyed(value);
    this.note(path, masked.shape);
    const { idDigest } = this.rules;
    return idDigest !== undefined && isIdField(key) && value.length <= MAX_DIGESTED_ID ? idDigest(value) : masked.text;
  }

  number(value: number, path: string, sensitive: boolean, key: string): number | string {
    if (!Number.isFinite(value)) return value;
    if (sensitive && this.component && isMeasureKey(key) && Math.abs(value) < MIN_READ) return value;
    if (
      !sensitive &&
      (Math.abs(value) < MIN_READ ||
        (isEpochTime(value) && isTimeKey(key)) ||
        (isMeasureKey(key) && Math.abs(value) < MAX_MEASURE))
    )
      return value;
    const text = String(value);
    if (sensitive || Number.isInteger(value)) {
      const masked = this.text(text, path, sensitive);
      return masked === text ? value : masked;
    }
    // A fraction's whole part is read as the integer it is: `9876543210.5` carries a mobile number
    // as surely as `9876543210` (read whole, the digits and the dot look like a version).
    const whole = String(Math.trunc(value));
    const masked = this.text(whole, path, false);
    return masked === whole ? value : `${masked}${text.slice(whole.length)}`;
  }
}

/** A redacted event and what the session budget needs to know of it. */
export interface SizedEvent extends EventSizes {
  event: RedactedEvent;
}

/**
 * Masks every identity value in `event`: the default-deny rule on every string and number of four digits or more at
 * any depth (keys too), key rules on identity-named fields, the hint rule on `hint`. The result
 * lists what was masked under `redacted_fields` (path and shape, at most 32). `session_id` is the
 * routing key and is left as sent. Pure; never mutates `event`.
 */
export function redactEvent(event: SdkEvent, rules: PiiRules = DEFAULT_PII_RULES): RedactedEvent {
  return redactSizedEvent(event, rules).event;
}

/** `redactEvent`, with the JSON size of what it returns, counted as it walks. */
export function redactSizedEvent(event: SdkEvent, rules: PiiRules = DEFAULT_PII_RULES): SizedEvent {
  // A component whose name or type says it holds an identity value (`otp_input`, `account_type`): what it sends is masked whole.
  const component = componentSensitive(event, rules);
  const walk = new Walk(rules, component);
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
    const keyBytes = jsonStringSize(key) + 1;
    // The routing id (the session key is made from it, docs/explanation/privacy.md) and the time, an integer the schema checked.
    if (facts.routing || (key === 'timestamp' && typeof item === 'number')) {
      out[key] = item;
      size.addKeyed(keyBytes, item, jsonSize(item));
      continue;
    }
    const safeKey = shownKey(key, facts.mayHoldIdentity);
    const sensitive = facts.sensitive || (component && key === 'properties');
    const value = walk.value(item, safeKey, 1, sensitive, facts.identifierField, key);
    if (safeKey !== key) renamed = true;
    // A `__proto__` key must stay data, not become the prototype.
    if (safeKey === '__proto__')
      Object.defineProperty(out, safeKey, { value, enumerable: true, writable: true, configurable: true });
    else out[safeKey] = value;
    size.addKeyed(keyBytes, value, walk.size);
    if (safeKey === 'properties') propertiesBytes = walk.size;
  }
  if (typeof event.hint === 'string') {
    const fields = hintFields(event, component);
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

function hintFields(event: SdkEvent, sensitive: boolean): RedactedHint | { hint: string } {
  const hint = event.hint as string;
  const pattern = typeof event.expected_pattern === 'string' ? event.expected_pattern : undefined;
  return (
    redactHint({
      hint,
      masked: event.masked ?? undefined,
      componentType: event.component_type ?? undefined,
      pattern,
      sensitive,
    }) ?? { hint }
  );
}

/** Whether the event's component says by its id or type that it holds an identity value. */
function componentSensitive(event: SdkEvent, rules: PiiRules): boolean {
  const named = (name: unknown) => typeof name === 'string' && name !== '' && rules.keyFacts(name).sensitive;
  return named(event.component_id) || named(event.component_type);
}

/**
 * The one question a session may still ask of a hint it never sees raw: does it match the pattern
 * of this component's registered schema? Undefined when the hint was not masked by the server.
 * The raw value lives only in this closure, which no log, inspection or response serialises.
 */
export function hintMatcher(
  event: SdkEvent,
  stored: RedactedEvent,
): ((pattern: string) => boolean | undefined) | undefined {
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

/**
 * Any other client-sent value (a trigger body, a voice start body): the same rule and key
 * rules as `redactEvent`, without the hint rule. Returns the value itself when nothing changed.
 */
export function redactValue<T>(value: T, rules: PiiRules = DEFAULT_PII_RULES): T {
  return new Walk(rules).value(value, '', 0, false, false) as T;
}

const SHAPE_KINDS: ReadonlySet<string> = new Set([
  'email',
  'upi',
  'date',
  'aadhaar',
  'vid',
  'card',
  'phone',
  'number',
  'gstin',
  'pan',
  'driving_licence',
  'vehicle',
  'voter_id',
  'passport',
  'ifsc',
  'address',
  'name',
  'otp',
  'text',
  'dropped',
]);
const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 0;

/** A shape as the pass writes one: counts, a kind it knows, whether a pattern matched. Anything else is no shape. */
function wellFormedShape(value: unknown): HintShape | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { length, digits, letters, kind, matches_pattern: matches } = value as Record<string, unknown>;
  if (!isCount(length) || !isCount(digits) || !isCount(letters)) return undefined;
  if (kind !== undefined && !(typeof kind === 'string' && SHAPE_KINDS.has(kind))) return undefined;
  if (matches !== undefined && typeof matches !== 'boolean') return undefined;
  const shape: HintShape = { length, digits, letters };
  if (kind !== undefined) shape.kind = kind as HintShape['kind'];
  if (matches !== undefined) shape.matches_pattern = matches;
  return shape;
}

/**
 * An event that reached a session from outside this process (the cluster's session object, whose
 * ingress anyone on its network can call): the pass run again over all of it, so nothing raw is
 * kept whoever sent it. The pass's own fields from the first pass are kept where they are
 * well-formed and say nothing but counts and kinds (a hint's `masked_by` and `shape`, the
 * `redacted_fields` list with each path masked again), since the hint they describe is gone.
 * Idempotent on what the pass wrote: a mask's stars and kept last four read as masked.
 */
export function remaskEvent(received: SdkEvent): { event: RedactedEvent; sizes: EventSizes } {
  const first = redactSizedEvent(received).event as SdkEvent & Record<string, unknown>;
  const event: Record<string, unknown> = { ...first };
  const shape = wellFormedShape(received.shape);
  if (first.masked === true && received.hint === first.hint && received.masked_by === 'server') {
    event.masked_by = 'server';
    if (shape !== undefined) event.shape = shape;
  }
  const earlier = Array.isArray(received.redacted_fields) ? received.redacted_fields : [];
  const kept: RedactedField[] = [];
  for (const field of earlier) {
    const fieldShape = wellFormedShape(field);
    const path = (field as { path?: unknown } | null)?.path;
    if (fieldShape !== undefined && typeof path === 'string' && kept.length < MAX_SHAPES)
      kept.push({ path: scrubText(path).text, ...fieldShape });
  }
  const fields = [...kept, ...((first.redacted_fields as RedactedField[] | undefined) ?? [])].slice(0, MAX_SHAPES);
  if (fields.length > 0) event.redacted_fields = fields;
  const properties = event.properties;
  return {
    event: event as RedactedEvent,
    sizes: { bytes: jsonSize(event), propertiesBytes: properties === undefined ? 0 : jsonSize(properties) },
  };
}
