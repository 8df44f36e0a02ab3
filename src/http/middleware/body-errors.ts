import { HttpError } from '../http-error.js';

/** The largest request body taken, JSON or not. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * What a body that cannot be read is answered, by body-parser's error type. Answered in our words:
 * body-parser's own messages quote the raw body. The direct JSON reader (json-body.ts) uses the
 * same types, so a refusal reads the same whichever path read the body.
 */
export const BODY_ERRORS: Record<string, { status: number; detail: string }> = {
  'entity.parse.failed': { status: 400, detail: 'malformed JSON body' },
  'entity.too.large': { status: 413, detail: `request body exceeds ${BODY_LIMIT_BYTES / 1024} KiB` },
  'encoding.unsupported': { status: 415, detail: 'unsupported Content-Encoding' },
  'charset.unsupported': { status: 415, detail: 'unsupported charset; send UTF-8 JSON' },
  'body.not.utf8': { status: 415, detail: 'request body is not valid UTF-8; send UTF-8 JSON' },
  'request.aborted': { status: 400, detail: 'request body was aborted' },
  'request.size.invalid': { status: 400, detail: 'request body length does not match Content-Length' },
};

export type BodyErrorType =
  'entity.parse.failed' | 'entity.too.large' | 'request.aborted' | 'charset.unsupported' | 'body.not.utf8';

export function bodyError(type: BodyErrorType): HttpError {
  const { status, detail } = BODY_ERRORS[type]!;
  return new HttpError(status, detail);
}
