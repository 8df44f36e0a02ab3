import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import type { OpenAPI3 } from 'openapi-typescript';
import { apiDocument } from '../src/http/api-document.js';

export const CLIENT_SCHEMA_FILE = new URL('../src/client/schema.ts', import.meta.url);

/**
 * The client's types as openapi-typescript writes them from the document the service builds.
 * Nothing but the document goes in (no date, no path), so the same code gives the same file.
 */
export async function clientSchemaSource(): Promise<string> {
  const ast = await openapiTS(apiDocument() as unknown as OpenAPI3, { alphabetize: true });
  return `${COMMENT_HEADER}// Regenerate with \`npm run generate:client\`; a test fails while this file is out of date.\n\n${astToString(ast)}`;
}
