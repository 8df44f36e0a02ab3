/**
 * The key half of the one rule for events, logs and inspection (docs/explanation/privacy.md, "Keys and
 * components"): a key whose name says it holds an identity value has its value masked whole,
 * whatever the value looks like. A deployment adds keys with PII_EXTRA_KEYS.
 */
import {
  isIdentifierField,
  NAME_KEY,
  normalizeKey,
  ROUTING_KEYS,
  saysIdentity,
  SENSITIVE_KEYS,
  THING_NAME_KEYS,
  throughNameWord,
} from './keys.js';
import { readerView } from './plain-text.js';
import { mayHoldIdentity } from './scrub.js';

export interface PiiRules {
  /**
   * A listed identity key (the built-in list and PII_EXTRA_KEYS). Keys that hold a person's name
   * by their ending (`customer_name`) are masked in what clients send (`keyFacts`), but not read
   * so in the service's own state, where a `name` names a thing (an actor's readers).
   */
  isSensitiveKey(key: string): boolean;
  isRoutingKey(key: string): boolean;
  /** All the redaction pass asks of a key, worked out once per distinct key. */
  keyFacts(key: string): KeyFacts;
  /**
   * An id that is no identifier (a user id that is a mobile number) as the service keeps it: its
   * keyed digest, `h-<24 hex>`, the same for the same id so an operator can still follow it
   * (docs/explanation/privacy.md, "What is kept"). Undefined where no digest secret is at hand (the log, a
   * test's rules): such an id is masked whole.
   */
  idDigest: ((id: string) => string) | undefined;
}

/** What a key is to the redaction pass. Pure functions of the key, so remembered per key. */
export interface KeyFacts {
  routing: boolean;
  sensitive: boolean;
  /** The key itself could hold an identity value, so it is scanned like any text. */
  mayHoldIdentity: boolean;
  /**
   * The key names an identifier or a code (`*_id`, `screen`, `error_code`, a version): its value is
   * shown as sent when it is one (identifier.ts), else masked whole. Kept here so the pass tests
   * each distinct key's name once, not on every event (git show d1df1cf:docs/benchmark-history.md, 2026-11-29).
   */
  identifierField: boolean;
}

/** Distinct keys remembered per rule set: clients repeat the same few, and the bound keeps memory flat. */
const KEY_CACHE_SIZE = 4096;
const MAX_REMEMBERED_KEY = 64;

export function createPiiRules(extraKeys: readonly string[] = [], idDigest?: (id: string) => string): PiiRules {
  const sensitive = new Set([...SENSITIVE_KEYS, ...extraKeys].map(normalizeKey));
  const things = new Set(THING_NAME_KEYS.map(normalizeKey));
  // A name key names a thing only when the words up to its name are a thing's (`bank_name_en`).
  const namesAPerson = (key: string, normal: string) => {
    if (NAME_KEY.test(normal) && !things.has(normal)) return true;
    const named = throughNameWord(key);
    return named !== undefined && !things.has(named);
  };
  const isSensitive = (key: string, normal: string) =>
    sensitive.has(normal) || namesAPerson(key, normal) || saysIdentity(key);
  const routing = new Set(ROUTING_KEYS);
  // Normalising a key costs more than the rest of its check: each key is looked at once.
  const seen = new Map<string, KeyFacts>();
  const factsOf = (key: string): KeyFacts => {
    // A routing key is never also sensitive: it is passed through as sent.
    const isRouting = routing.has(key);
    // Read as a person reads it: `ｎａｍｅ`, `na\u200bme` and a Cyrillic `nаme` are `name`.
    const read = readerView(key);
    return {
      routing: isRouting,
      sensitive: !isRouting && isSensitive(read, normalizeKey(read)),
      mayHoldIdentity: mayHoldIdentity(key),
      identifierField: isIdentifierField(key),
    };
  };
  const keyFacts = (key: string): KeyFacts => {
    // A key longer than any field name is worked out each time: remembered, 4,096 of them could hold a client's 64 KiB bodies.
    if (key.length > MAX_REMEMBERED_KEY) return factsOf(key);
    let facts = seen.get(key);
    if (facts === undefined) {
      facts = factsOf(key);
      if (seen.size >= KEY_CACHE_SIZE) seen.clear();
      seen.set(key, facts);
    }
    return facts;
  };
  return {
    isSensitiveKey: (key) => !routing.has(key) && (sensitive.has(normalizeKey(key)) || saysIdentity(key)),
    isRoutingKey: (key) => keyFacts(key).routing,
    keyFacts,
    idDigest,
  };
}

export const DEFAULT_PII_RULES = createPiiRules();
