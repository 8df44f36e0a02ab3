// Data calls of the console: every one carries the key kept in sessionStorage for this tab.
const KEY_NAME = 'kyc-console-api-key';

export const storedKey = () => sessionStorage.getItem(KEY_NAME) ?? '';
export const storeKey = (key) => sessionStorage.setItem(KEY_NAME, key);

export class Unauthorized extends Error {}

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

/** GET a JSON resource; a 401 becomes Unauthorized so the page can show the key problem. */
export async function getJson(path, { signal } = {}) {
  const response = await fetch(path, { headers: { Accept: 'application/json', ...authHeaders() }, signal });
  if (response.status === 401) throw new Unauthorized(await detailOf(response));
  if (!response.ok) throw new Error(`${response.status}: ${await detailOf(response)}`);
  return response.json();
}

export { detailOf };
