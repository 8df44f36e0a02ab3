/** Reads until `done` holds or the time is up; returns the last value read, so the assertion after it shows what was seen. */
export async function eventually<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) {
      // A list's length first: a list of participants runs past what is shown of it.
      const count = Array.isArray(value) ? ` (${value.length} items)` : '';
      throw new Error(`not within ${timeoutMs} ms; last seen${count}: ${JSON.stringify(value)?.slice(0, 2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
