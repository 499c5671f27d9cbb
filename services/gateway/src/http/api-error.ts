import { status as GrpcStatus } from "@grpc/grpc-js";

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
 * Maps a failed gRPC call to an ApiError through httpStatusForGrpc. Client errors keep the
 * service's message and its stable code (trailing metadata "error-code"); server-side failures
 * become a generic message with the cause kept for the log.
 */
export function apiErrorFromGrpc(error: unknown): ApiError {
  if (!isGrpcFailure(error)) return new ApiError(500, "internal error", { cause: error });
  const code = error.metadata?.get("error-code")[0];
  const status =
    (typeof code === "string" ? httpStatusForErrorCode[code] : undefined) ?? httpStatusForGrpc[error.code] ?? 500;
  if (status === 503) {
    return new ApiError(503, "the service is temporarily unavailable; retry with backoff", {
      code: "service.unavailable",
      headers: { "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      cause: error,
    });
  }
  if (status >= 500) return new ApiError(status, "internal error", { cause: error });
  return new ApiError(status, error.details ?? "request failed", {
    ...(typeof code === "string" ? { code } : {}),
    cause: error,
  });
}

/** Awaits a gRPC call, turning its failure into the ApiError the HTTP layer writes. */
export async function callService<T>(promise: Promise<T>): Promise<T> {
  try {
    return await promise;
  } catch (error) {
    throw apiErrorFromGrpc(error);
  }
}
