import { readingOf } from './reading.js';
import { compactOf } from './text-rule.js';

/**
 * What an identifier-like field (a session, user, request or message id, a screen or component
 * name, an error or reason code) may hold and still be shown as sent (docs/privacy.md, "What is
 * kept"): a UUID, a ULID, a hex id, or a token of `[A-Za-z0-9_.:/-]` with no run of six digits
 * across its separators (numbers in words read as digits) and no document's shape.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/i;
/** A hex id as digests and trace ids are written: 16 to 64 hex digits, some of them letters. */
const HEX_ID = /^(?:0x)?(?=[0-9a-f]*[a-f])[0-9a-f]{16,64}$/i;
const ID_TOKEN = /^[A-Za-z0-9_.:/-]{1,128}$/;
/** Six digits or more with only separators between them: a phone, an account, an OTP, a date. */
const LONG_RUN = /\d(?:[_.:/-]{0,3}\d){5}/;
/** A PAN anywhere in the letters and digits run together (`ABCDE-1234-F`, `user_ABCDE1234F`), a vehicle's registration in one piece. */
const PAN_INSIDE = /[A-Z]{5}\d{4}[A-Z]/i;
const VEHICLE = /^[A-Z]{2}\d{1,2}[A-Z]{1,3}\d{4}$/i;

export function isIdentifier(text: string): boolean {
  if (UUID.test(text)) return true;
  if (!ID_TOKEN.test(text)) return false;
  if (ULID.test(text) || HEX_ID.test(text)) return !/\d{10}/.test(text);
  const read = readingOf(text)?.text ?? text;
  if (LONG_RUN.test(read)) return false;
  const compact = compactOf(read);
  if (PAN_INSIDE.test(compact) || VEHICLE.test(compact)) return false;
  return !read.split(/[_.:/-]/).some((part) => VEHICLE.test(part));
}
