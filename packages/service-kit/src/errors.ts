/**
 * The one error type domain code throws. It carries a stable machine-readable `code` and a
 * `kind` that says what went wrong in transport-neutral words; the gRPC layer maps the kind to a
 * status in one table (grpc-server.ts) and the gateway maps that status to HTTP in another.
 * This module imports nothing, so domain code may use it.
 */
export type ErrorKind =
  | "invalid_argument"
  | "not_found"
  | "already_exists"
  | "conflict"
  | "failed_precondition"
  | "permission_denied"
  | "unauthenticated"
  | "resource_exhausted"
  | "unavailable";

export class DomainError extends Error {
  override name = "DomainError";
  /**
   * For a refusal that lifts by itself (`resource_exhausted`): whole seconds until a retry can
   * succeed. It travels as the trailing metadata `retry-after` (grpc-server.ts) and becomes the
   * HTTP `Retry-After` header at the gateway.
   */
  readonly retryAfterSeconds: number | undefined;
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    options?: { cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

export class InvalidArgumentError extends DomainError {
  override name = "InvalidArgumentError";
  constructor(code: string, message: string) {
    super("invalid_argument", code, message);
  }
}

export class NotFoundError extends DomainError {
  override name = "NotFoundError";
  constructor(code: string, message: string) {
    super("not_found", code, message);
  }
}

export class UnavailableError extends DomainError {
  override name = "UnavailableError";
  constructor(message: string, cause?: unknown) {
    super("unavailable", "service.unavailable", message, { cause });
  }
}
