// Data calls of the console: every one carries the key kept in sessionStorage for this tab.
const KEY_NAME = 'kyc-console-api-key';

export const storedKey = () => sessionStorage.getItem(KEY_NAME) ?? '';
export const storeKey = (key) => sessionStorage.setItem(KEY_NAME, key);

export class Unauthorized extends Error {}
/** An answer that is an error, with its status: a view tells "not there" (404) from a failure. */
export class HttpError extends Error {
  constructor(status, detail) {
    super(`${status}: ${detail}`);
    this.status = status;
  }
}
/** No answer at all (service down, network gone), as opposed to an answer that is an error. */
export class Unreachable extends Error {}

export function authHeaders() {
  const key = storedKey();
  return key ? { 'X-API-Key': key } : {};
}

async function detailOf(response) {
  try {
    const body = await response.json();
    return typeof body.detail === 'string' ? body.detail : response.statusText;
  } catch {
    return response.statusText;
  }
}

/** fetch, with a failure to reach the service thrown as Unreachable; an abort stays an abort. */
export async function reach(path, init) {
  try {
    return await fetch(path, init);
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new Unreachable('service unreachable');
  }
}

/** The JSON of an answer; a 401 becomes Unauthorized so the page can show the key problem. */
async function answerJson(response) {
  if (response.status === 401) throw new Unauthorized(await detailOf(response));
  if (!response.ok) throw new HttpError(response.status, await detailOf(response));
  return response.json();
}

/** GET a JSON resource. */
export async function getJson(path, { signal } = {}) {
  return answerJson(await reach(path, { headers: { Accept: 'application/json', ...authHeaders() }, signal }));
}

/** POST a JSON body and read the JSON answer. */
export async function postJson(path, body) {
  const headers = { Accept: 'application/json', 'Content-Type': 'application/json', ...authHeaders() };
  return answerJson(await reach(path, { method: 'POST', headers, body: JSON.stringify(body) }));
}

export { detailOf };

/**
 * Runs `load` now and again `everyMs` after each run ends, until stopped. A refused key stops it
 * and shows the 401 page; any other failure is reported (`onProblem(error)`) and retried on the
 * next round, and a round that succeeds reports `onProblem(null)`.
 */
export function poll(load, everyMs, { onUnauthorized, onProblem }) {
  let timer;
  let stopped = false;
  // A round started later supersedes one still in flight: the older one neither shows nor re-arms.
  let latest = 0;
  async function round() {
    clearTimeout(timer);
    const mine = ++latest;
    const superseded = () => stopped || mine !== latest;
    try {
      await load(superseded);
      if (!superseded()) onProblem(null);
    } catch (error) {
      if (error instanceof Unauthorized) {
        stopped = true;
        onUnauthorized(error);
        return;
      }
      if (!superseded()) onProblem(error);
    }
    if (!superseded()) timer = setTimeout(round, everyMs);
  }
  void round();
  return {
    /** Load again at once (filters changed). */
    now: () => void round(),
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
