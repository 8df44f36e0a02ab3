import { deflateSync, inflateSync } from 'node:zlib';
import type { Serde } from '@restatedev/restate-sdk';

/** The first byte of a value kept as JSON text, as every release before deflating wrote it: `{`. */
const JSON_OBJECT_START = 0x7b;

/** A kept value whose bytes could not be read back (damaged in storage), with why. */
export class UnreadableKeptValue {
  constructor(readonly reason: string) {}
}

/**
 * How the `session` value is kept in Restate: its JSON, deflated (zlib, whose first byte is 0x78,
 * never `{`). Restate reads the whole value out and writes it back on every invocation, and spends
 * CPU on each byte both ways; a session's JSON deflates to between a third and a seventh of it
 * (docs/decisions/0023-kept-session-deflated.md). A value an earlier release kept as plain JSON is
 * read as it is, and kept deflated from its next write on.
 *
 * A value that cannot be read back is not thrown on, which would fail the invocation and have
 * Restate retry it forever, holding the session's turn: it reads as an UnreadableKeptValue, which
 * the session object discards with its reason logged, before any migration step sees it.
 */
export function keptSessionSerde<T>(): Serde<T | UnreadableKeptValue> {
  return {
    contentType: 'application/octet-stream',
    serialize: (value: T | UnreadableKeptValue): Uint8Array => deflateSync(JSON.stringify(value), { level: 1 }),
    deserialize: (bytes: Uint8Array): T | UnreadableKeptValue => {
      try {
        const text =
          bytes[0] === JSON_OBJECT_START
            ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
            : inflateSync(bytes);
        return JSON.parse(text.toString('utf8')) as T;
      } catch (error) {
        return new UnreadableKeptValue(`the kept session value could not be read: ${(error as Error).message}`);
      }
    },
  };
}
