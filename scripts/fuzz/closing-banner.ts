// Schemathesis closes its run on pytest's banner ("==== 1 warning in 106.36s ===="). CI reads a
// line of that shape as the closing line of a pytest run, and one that names no passed test as a
// run that executed none. The fuzz runner prints the same words without the frame; each run's
// verdict is Schemathesis's exit code, printed on the line after (docs/how-to/fuzzing.md).
const CLOSING_BANNER = /^=+ (.+ in [\d.]+s(?: \([^)]*\))?) =+$/;

export function unframed(line: string): string {
  const closing = CLOSING_BANNER.exec(line);
  return closing ? `Schemathesis closed: ${closing[1]}` : line;
}
