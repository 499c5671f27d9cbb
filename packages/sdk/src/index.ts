/**
 * The partner SDK: `createClient({ baseUrl, apiKey })` gives
 *
 * - `catalog`: the animal catalog (/v1), typed by its OpenAPI document;
 * - `tenant`: the tenant interface (/api/v1), typed by its OpenAPI document;
 * - `webhooks.verify(rawBody, headers, secret)` for a receiver.
 *
 * Every call retries safely (src/transport.ts) and throws typed errors (src/errors.ts).
 */
import type { paths as CatalogPaths } from "./generated/catalog.js";
import type { paths as TenantPaths } from "./generated/tenant.js";
import { Surface } from "./surface.js";
import { Transport, type TransportOptions } from "./transport.js";
import { verify } from "./webhooks.js";

export type { components as CatalogComponents, paths as CatalogPaths } from "./generated/catalog.js";
export type { components as TenantComponents, paths as TenantPaths } from "./generated/tenant.js";
export { problemCodes } from "./generated/codes.js";
export * from "./errors.js";
export { Surface, type Answer, type PollResult, type RequestInitArgs } from "./surface.js";
export {
  defaultRetryPolicy,
  retryAfterSeconds,
  Transport,
  type RetryPolicy,
  type TransportOptions as ClientOptions,
} from "./transport.js";
export type * from "./typed.js";
export * from "./webhooks.js";

export interface Client {
  /** The animal catalog, `/v1`. */
  catalog: Surface<CatalogPaths>;
  /** The tenant interface, `/api/v1`. */
  tenant: Surface<TenantPaths>;
  webhooks: { verify: typeof verify };
}

export function createClient(options: TransportOptions): Client {
  const transport = new Transport(options);
  return {
    catalog: new Surface<CatalogPaths>(transport, "/v1"),
    tenant: new Surface<TenantPaths>(transport, "/api/v1"),
    webhooks: { verify },
  };
}
