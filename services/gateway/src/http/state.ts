import type { Logger } from "pino";
import type { ApiKeyRecord } from "../domain/api-key.js";

/**
 * What the gateway's middleware leaves in `ctx.state`, declared once for every Koa context of the
 * gateway (a module augmentation of Koa's DefaultState): request-id sets `requestId`, the error and
 * log middleware `log`, authenticate `apiKey`, the router `idempotencyKey` (required on tenant
 * mutations, optional on catalog creates).
 */
export interface GatewayState {
  requestId: string;
  /** The W3C trace context of this request's span (trace-context), for the gRPC calls; absent when untraced. */
  traceparent: string | undefined;
  /** That span's trace id, for the log lines (`trace_id`); absent when untraced. */
  traceId: string | undefined;
  /**
   * The request's logger (request id and trace id bound), made on its first call: most requests
   * never log at LOG_LEVEL=warn. A function, not a getter: an accessor defined on each request's
   * state object would turn it into a slow dictionary-mode object.
   */
  log: () => Logger;
  /** Present behind authenticate (every /v1 and /api route). */
  apiKey: ApiKeyRecord;
  /** The request's Idempotency-Key, once the router has checked it. */
  idempotencyKey: string | undefined;
}

declare module "koa" {
  // Koa's own extension point for ctx.state; the members are GatewayState's.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface DefaultState extends GatewayState {}
}
