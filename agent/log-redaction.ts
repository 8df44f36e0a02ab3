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

type Write = typeof process.stdout.write;

function redacting(stream: NodeJS.WriteStream): void {
  const write = stream.write.bind(stream) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
  const patched = (chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (!text.includes('lk.pii.')) return write(chunk, ...rest);
    const lines = text.split('\n').map((line) => (line.trim() === '' ? line : redactLogLine(line)));
    return write(lines.join('\n'), ...rest);
  };
  stream.write = patched as Write;
}

let installed = false;

/** Redacts the framework's conversation fields on stdout and stderr of this process (idempotent). */
export function redactConversationLogs(): void {
  if (installed) return;
  installed = true;
  redacting(process.stdout);
  redacting(process.stderr);
}
