import { Metadata, status as Status } from "@grpc/grpc-js";
import type { DownstreamView } from "./downstream-view.js";
import { GrpcCallError } from "./grpc-client.js";

/**
 * A call refused by the caller itself, before anything was sent, because its DownstreamView says
 * the downstream is unreachable. Shaped like any failed call (UNAVAILABLE), and known for certain
 * not to have applied: safe to retry for every call, a mutation without an Idempotency-Key too.
 */
export class DownstreamUnreachableError extends GrpcCallError {
  override name = "DownstreamUnreachableError";
  /** Nothing of the call left this process. */
  readonly notSent = true;
  constructor(readonly downstream: string) {
    super(
      Status.UNAVAILABLE,
      `not sent: ${downstream} is unreachable (its health checks go unanswered)`,
      new Metadata(),
    );
  }
}

/**
 * The same client, each of whose calls is refused at once with a DownstreamUnreachableError while
 * `view` says its downstream is unreachable, instead of waiting out its deadline on a process that
 * does not answer. `close` and every call while the view says reachable are the client's own.
 */
export function failFastWhileUnreachable<C extends { close(): void }>(client: C, view: DownstreamView): C {
  const guarded: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(client as Record<string, unknown>)) {
    if (name === "close" || typeof method !== "function") {
      guarded[name] = method;
      continue;
    }
    // A client's method takes (request, options): two named parameters, no rest array per call.
    const call = method as (request: unknown, options: unknown) => Promise<unknown>;
    guarded[name] = (request: unknown, options: unknown) =>
      view.reachable ? call(request, options) : Promise.reject(new DownstreamUnreachableError(view.name));
  }
  return guarded as C;
}
