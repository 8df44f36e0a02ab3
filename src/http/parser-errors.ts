import type { Socket } from 'node:net';

/**
 * What Node's HTTP parser refuses before any route sees the request (a malformed request line,
 * headers past the size limit, a request that took too long), answered in the service's `{detail}`
 * form. Without a `clientError` listener Node writes these with an empty body.
 */
const ANSWERS: Record<string, { status: number; reason: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: 'Request Header Fields Too Large',
    detail: 'request line and headers too large (at most 16 KiB together)',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    reason: 'Request Timeout',
    detail: 'request not received in time: send the headers and body within REQUEST_TIMEOUT_SECONDS',
  },
};
const MALFORMED = {
  status: 400,
  reason: 'Bad Request',
  detail: 'malformed HTTP request: not a valid HTTP/1.1 request line or headers',
};

interface ParserError extends Error {
  code?: string;
}

/** The response Node's parser error gets, as raw bytes: the connection is closed after it. */
export function parserErrorResponse(error: ParserError): string {
  const answer = (error.code && ANSWERS[error.code]) || MALFORMED;
  const body = JSON.stringify({ detail: answer.detail });
  return (
    `HTTP/1.1 ${answer.status} ${answer.reason}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** The server's `clientError` listener: answers what can still be answered, then closes. */
export function answerParserError(error: ParserError, socket: Socket): void {
  // A reset or a closed socket has no one left to answer; once bytes went out, another response would garble them.
  if (error.code === 'ECONNRESET' || !socket.writable || socket.bytesWritten > 0) {
    socket.destroy();
    return;
  }
  socket.end(parserErrorResponse(error));
}
