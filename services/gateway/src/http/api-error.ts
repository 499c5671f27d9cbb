import { status as GrpcStatus } from "@grpc/grpc-js";
import type { DomainError } from "@platform/service-kit/errors";
import { DownstreamUnreachableError } from "@platform/service-kit/fail-fast-client";
import { RETRY_AFTER_METADATA, statusForErrorKind } from "@platform/service-kit/grpc-server";

/**
 * The one error the gateway's HTTP layer throws. `status` is the HTTP status; `code` a stable
 * machine-readable code when the surface has one more specific than the status's default;
 * `message` is safe to show a partner. The cause (if any) is logged, never sent.
 */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    message: string,
    readonly options: { code?: string; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
  }
}

/** The one table from gRPC status codes (what a service answered) to HTTP statuses. */
export const httpStatusForGrpc: Record<GrpcStatus, number> = {
  [GrpcStatus.OK]: 200,
  [GrpcStatus.CANCELLED]: 503,
  [GrpcStatus.UNKNOWN]: 500,
  [GrpcStatus.INVALID_ARGUMENT]: 400,
  [GrpcStatus.DEADLINE_EXCEEDED]: 503,
  [GrpcStatus.NOT_FOUND]: 404,
  [GrpcStatus.ALREADY_EXISTS]: 409,
  [GrpcStatus.PERMISSION_DENIED]: 403,
  [GrpcStatus.RESOURCE_EXHAUSTED]: 429,
  [GrpcStatus.FAILED_PRECONDITION]: 409,
  [GrpcStatus.ABORTED]: 409,
  [GrpcStatus.OUT_OF_RANGE]: 400,
  [GrpcStatus.UNIMPLEMENTED]: 500,
  [GrpcStatus.INTERNAL]: 500,
  [GrpcStatus.UNAVAILABLE]: 503,
  [GrpcStatus.DATA_LOSS]: 500,
  [GrpcStatus.UNAUTHENTICATED]: 401,
};

/**
 * Codes whose HTTP status is more specific than their gRPC status's row above (HTTP has
 * statuses gRPC has no code for). Part of the same one place.
 */
export const httpStatusForErrorCode: Record<string, number> = {
  "idempotency.key_reused": 422,
  "webhook.version_mismatch": 412,
  "usage.version_mismatch": 412,
  "tenant.version_mismatch": 412,
};

/** Seconds a caller should wait before retrying a 503 caused by a downstream outage. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

interface GrpcFailure {
  code: GrpcStatus;
  details?: string;
  metadata?: { get(key: string): unknown[] };
}

function isGrpcFailure(error: unknown): error is GrpcFailure {
  return (
    typeof error === "object" &&
    error !== null &&
    typeof (error as { code?: unknown }).code === "number" &&
    "details" in error
  );
}

/**
 * What the gateway tells a caller about retrying a mutation that failed. A read may always be
 * repeated. A mutation with an Idempotency-Key may always be repeated with the same key (an
 * applied one replays). A mutation without one may be repeated only when it certainly did not
 * happen; when its outcome is unknown the caller must check first.
 */
export interface MutationRetry {
  /** The request's Idempotency-Key, if it carries one. */
  idempotencyKey: string | undefined;
  /** For a caller without a key, how to find out whether the mutation happened. */
  howToCheck: string;
}

/**
 * Whether a failed call may nevertheless have taken effect. An answer from the service itself
 * (it carries an error-code) is definite. DEADLINE_EXCEEDED means the gateway stopped waiting,
 * not that the service stopped working; CANCELLED and a transport UNAVAILABLE (connection
 * dropped, stream reset) after the call left the gateway are just as ambiguous. The one transport
 * failure known to happen before anything was sent is grpc-js's "No connection established": no
 * connection could be picked for the call; and a call the gateway refused itself because its view
 * says the service is unreachable (DownstreamUnreachableError) was never sent at all. Anything not
 * recognised counts as unknown, the safe side.
 */
export function outcomeMayHaveApplied(error: unknown): boolean {
  if (error instanceof DownstreamUnreachableError) return false;
  if (!isGrpcFailure(error)) return false;
  if (typeof error.metadata?.get("error-code")[0] === "string") return false;
  if (error.code === GrpcStatus.DEADLINE_EXCEEDED || error.code === GrpcStatus.CANCELLED) return true;
  return error.code === GrpcStatus.UNAVAILABLE && !(error.details ?? "").includes("No connection established");
}

/**
 * Maps a failed gRPC call to an ApiError through httpStatusForGrpc. Client errors keep the
 * service's message and its stable code (trailing metadata "error-code"); server-side failures
 * become a generic message with the cause kept for the log. For a mutation, a 503 says how to
 * retry safely, and an unknown outcome without an Idempotency-Key is a 504 that says to check
 * first (no Retry-After: a blind retry could apply it twice).
 */
export function apiErrorFromGrpc(error: unknown, mutation?: MutationRetry): ApiError {
  if (!isGrpcFailure(error)) return new ApiError(500, "internal error", { cause: error });
  const code = error.metadata?.get("error-code")[0];
  const status =
    (typeof code === "string" ? httpStatusForErrorCode[code] : undefined) ?? httpStatusForGrpc[error.code] ?? 500;
  if (mutation && mutation.idempotencyKey === undefined && outcomeMayHaveApplied(error)) {
    return new ApiError(
      504,
      `the outcome is unknown: the service did not confirm it in time. ${mutation.howToCheck}. ` +
        "Send an Idempotency-Key so that a retry is always safe",
      { code: "request.outcome_unknown", cause: error },
    );
  }
  if (status === 503) {
    const advice =
      mutation?.idempotencyKey !== undefined
        ? "retry with backoff and the same Idempotency-Key: if the first attempt was applied, the retry replays its result instead of applying it again"
        : "retry with backoff";
    return new ApiError(503, `the service is temporarily unavailable; ${advice}`, {
      code: "service.unavailable",
      headers: { "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      cause: error,
    });
  }
  if (status >= 500) return new ApiError(status, "internal error", { cause: error });
  // A refusal that lifts by itself says when (a DomainError's retryAfterSeconds): Retry-After.
  const retryAfter = status === 429 ? error.metadata?.get(RETRY_AFTER_METADATA)[0] : undefined;
  return new ApiError(status, error.details ?? "request failed", {
    ...(typeof code === "string" ? { code } : {}),
    ...(typeof retryAfter === "string" && /^[1-9][0-9]{0,8}$/.test(retryAfter)
      ? { headers: { "retry-after": retryAfter } }
      : {}),
    cause: error,
  });
}

/**
 * Awaits a gRPC call, turning its failure into the ApiError the HTTP layer writes. Mutations
 * pass how they may be retried.
 */
export async function callService<T>(promise: Promise<T>, mutation?: MutationRetry): Promise<T> {
  try {
    return await promise;
  } catch (error) {
    throw apiErrorFromGrpc(error, mutation);
  }
}

/**
 * A refusal of the gateway's own domain (console links: the one effect the gateway owns), mapped
 * through the same tables as a service's: its kind's gRPC status, then HTTP.
 */
export function apiErrorFromDomain(error: DomainError): ApiError {
  const status = httpStatusForErrorCode[error.code] ?? httpStatusForGrpc[statusForErrorKind[error.kind]] ?? 500;
  if (status >= 500) return new ApiError(status, "internal error", { cause: error });
  return new ApiError(status, error.message, { code: error.code, cause: error });
}
