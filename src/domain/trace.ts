import { randomFillSync, randomUUID } from 'node:crypto';

// W3C Trace Context level 1: version-traceid-parentid-flags, lowercase hex. An all-zero trace id is invalid.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
export const SAFE_ID_PATTERN = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The trace id of a valid traceparent header, or undefined. */
export function traceIdFromTraceparent(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const match = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!match || match[1] === 'ff') return undefined;
  const traceId = match[2]!;
  return /^0+$/.test(traceId) ? undefined : traceId;
}

/** Client-supplied correlation ids are echoed and logged, so only plain tokens are accepted. */
export function acceptableId(value: string | undefined): string | undefined {
  return value !== undefined && SAFE_ID_PATTERN.test(value) ? value : undefined;
}

export const newRequestId = (): string => randomUUID();
// Random bytes drawn 4 KiB at a time: a draw per id would ask the CSPRNG on every request, as
// randomUUID already avoids with its own cache (git show d1df1cf:docs/benchmark-history.md has the measurement).
const TRACE_ID_BYTES = 16;
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/** A W3C trace id: 16 random bytes as lowercase hex. */
export function newTraceId(): string {
  if (poolOffset + TRACE_ID_BYTES > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const id = pool.toString('hex', poolOffset, poolOffset + TRACE_ID_BYTES);
  poolOffset += TRACE_ID_BYTES;
  return id;
}
