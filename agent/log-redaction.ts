import fs from 'node:fs';

/**
 * The agents framework logs some conversation text (the agent's answer, the user's transcript)
 * under fields it names `lk.pii.*`. This process never logs a word of the conversation: every
 * such field in a JSON log line is replaced before the line is written. Lines that are not JSON
 * pass unchanged.
 */
const PII_FIELD = /"lk\.pii\.[^"]*"\s*:/;

export function redactLogLine(line: string): string {
  if (!PII_FIELD.test(line)) return line;
  try {
    const record = JSON.parse(line) as Record<string, unknown>;
    for (const key of Object.keys(record)) if (key.startsWith('lk.pii.')) record[key] = '[redacted]';
    return JSON.stringify(record);
  } catch {
    // Not one JSON record (a pretty-printed log, several lines in one write): drop it rather than risk it.
    return '{"msg":"log line with conversation text dropped"}';
  }
}

/**
 * A human-readable (pretty) record: each `lk.pii.` field's line says `[redacted]`, and the lines
 * of its value that follow it, indented deeper (an object printed over several lines), are dropped.
 */
function redactPrettyRecord(lines: string[]): string[] {
  const kept: string[] = [];
  let dropDeeperThan: number | undefined;
  for (const line of lines) {
    const indent = line.length - line.trimStart().length;
    if (dropDeeperThan !== undefined && line.trim() !== '' && indent > dropDeeperThan) continue;
    // The bracket that closes the value, at the field's own indent.
    if (dropDeeperThan !== undefined && indent === dropDeeperThan && /^[}\]],?$/.test(line.trim())) {
      dropDeeperThan = undefined;
      continue;
    }
    dropDeeperThan = undefined;
    const field = /^(\s*)(lk\.pii\.[^\s:]*)/.exec(line);
    if (field) {
      kept.push(`${field[1]}${field[2]}: [redacted]`);
      dropDeeperThan = indent;
    } else kept.push(line);
  }
  return kept;
}

/** Text on its way to stdout or stderr, with every `lk.pii.` field redacted: JSON lines one by one, anything else as a pretty record. */
export function redactLogText(text: string): string {
  if (!text.includes('lk.pii.')) return text;
  const lines = text.split('\n');
  if (lines.every((line) => line.trim() === '' || !line.includes('lk.pii.') || PII_FIELD.test(line))) {
    return lines.map((line) => (line.trim() === '' ? line : redactLogLine(line))).join('\n');
  }
  return redactPrettyRecord(lines).join('\n');
}

function redacting(stream: NodeJS.WriteStream): void {
  const write = stream.write.bind(stream) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
  const patched = (chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (!text.includes('lk.pii.')) return write(chunk, ...rest);
    return write(redactLogText(text), ...rest);
  };
  stream.write = patched;
}

type Chunk = string | NodeJS.ArrayBufferView;
const OUTPUTS = new Set([1, 2]);

/** What a write to a file descriptor would write: the chunk, or the part its offset and length name. */
function written(chunk: Chunk, rest: unknown[]): Buffer {
  if (typeof chunk === 'string')
    return Buffer.from(chunk, typeof rest[1] === 'string' ? (rest[1] as BufferEncoding) : 'utf8');
  const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const offset = typeof rest[0] === 'number' ? rest[0] : 0;
  const length = typeof rest[1] === 'number' ? rest[1] : bytes.length - offset;
  return bytes.subarray(offset, offset + length);
}

/**
 * Writers that go to the file descriptor itself rather than through `process.stdout` (pino-pretty,
 * which the framework logs through in `dev`, writes with `fs.write` on descriptor 1) are redacted
 * the same way. The caller is told its whole chunk was written once the redacted text is.
 */
function redactingDescriptorWrites(): void {
  const writeSync = fs.writeSync;
  const write = fs.write;
  fs.writeSync = (fd: number, chunk: Chunk, ...rest: unknown[]) => {
    if (!OUTPUTS.has(fd)) return (writeSync as (...args: unknown[]) => number)(fd, chunk, ...rest);
    const bytes = written(chunk, rest);
    const text = bytes.toString('utf8');
    if (!text.includes('lk.pii.')) return (writeSync as (...args: unknown[]) => number)(fd, chunk, ...rest);
    const out = Buffer.from(redactLogText(text));
    for (let done = 0; done < out.length;) done += writeSync(fd, out, done, out.length - done);
    return bytes.length;
  };
  fs.write = ((fd: number, chunk: Chunk, ...rest: unknown[]) => {
    const callback = rest.at(-1) as (error: NodeJS.ErrnoException | null, written: number, ...more: unknown[]) => void;
    const bytes = OUTPUTS.has(fd) ? written(chunk, rest.slice(0, -1)) : undefined;
    const text = bytes?.toString('utf8');
    if (bytes === undefined || !text!.includes('lk.pii.'))
      return (write as (...args: unknown[]) => void)(fd, chunk, ...rest);
    const out = Buffer.from(redactLogText(text!));
    const from = (done: number): void =>
      write(fd, out, done, out.length - done, null, (error, count) => {
        if (error) return callback(error, 0);
        if (done + count < out.length) return from(done + count);
        callback(null, bytes.length);
      });
    from(0);
  }) as typeof fs.write;
}

let installed = false;

/** Redacts the framework's conversation fields on stdout and stderr of this process, whoever writes them (idempotent). */
export function redactConversationLogs(): void {
  if (installed) return;
  installed = true;
  redacting(process.stdout);
  redacting(process.stderr);
  redactingDescriptorWrites();
}
