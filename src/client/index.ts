import createFetchClient from 'openapi-fetch';
import type { Client as FetchClient } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };
/** The request and response bodies by component name, e.g. `Schemas['EventIn']`. */
export type Schemas = components['schemas'];

export interface ServiceClientOptions {
  /** The service's root, e.g. `http://127.0.0.1:8080` (no `/v1`: the paths carry it). */
  baseUrl: string;
  /** Sent as X-API-Key on every request when set. */
  apiKey?: string | undefined;
  /** Another fetch (a test double, a fetch with a proxy agent). */
  fetch?: typeof globalThis.fetch;
}

export type ServiceClient = FetchClient<paths>;

/**
 * A typed client of the service: `client.POST('/v1/events', { body })` checks the path, the
 * body, the parameters and the answer against the OpenAPI document at compile time.
 */
export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  return createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: options.apiKey ? { 'X-API-Key': options.apiKey } : {},
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
