/**
 * Server-sent events wire format (WHATWG HTML, "Server-sent events"). Frames are built once as
 * bytes so one item fanned out to a thousand streams is serialized and encoded once.
 */

/** One message. `data` must not contain a line break: JSON.stringify output never does. */
export function sseMessage(message: { event: string; data: string; id?: string | undefined }): Buffer {
  const id = message.id === undefined ? '' : `id: ${message.id}\n`;
  return Buffer.from(`${id}event: ${message.event}\ndata: ${message.data}\n\n`, 'utf8');
}

/** A comment line: ignored by every client, but it keeps proxies from timing the stream out. */
export function sseComment(text: string): Buffer {
  return Buffer.from(`: ${text}\n\n`, 'utf8');
}

/** The reconnection delay a client should use after the stream drops. */
export function sseRetry(ms: number): Buffer {
  return Buffer.from(`retry: ${Math.round(ms)}\n\n`, 'utf8');
}
