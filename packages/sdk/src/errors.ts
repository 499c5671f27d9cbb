/**
 * What the SDK throws. An answer of the API becomes an ApiError typed by its code: on the tenant
 * interface a catalogue code (`components["schemas"]["ProblemCode"]`) with the catalogue's meaning
 * and advice; on the animal catalog its one-code-per-status `code`, with the advice of its status.
 * Every ApiError carries the `correlationId` to quote to support and the Idempotency-Key the call
 * used, so a caller who retries by hand retries with the same key.
 */
import type { components as CatalogComponents } from "./generated/catalog.js";
import { problemCodes, statusAdvice } from "./generated/codes.js";
import type { components as TenantComponents } from "./generated/tenant.js";

/** A tenant-interface problem code (the catalogue's). */
export type ProblemCode = TenantComponents["schemas"]["ProblemCode"];
/** An animal-catalog error code (one per status). */
export type CatalogErrorCode = CatalogComponents["schemas"]["Error"]["code"];
/** `http_<status>` stands for an answer without a code (a proxy's HTML 502, say). */
export type ErrorCode = ProblemCode | CatalogErrorCode | `http_${number}`;

export interface ApiErrorDetails<C extends ErrorCode = ErrorCode> {
  status: number;
  code: C;
  /** The problem's `detail` (tenant) or `message` (catalog). */
  detail: string;
  /** The problem's `correlationId`, else the answer's X-Request-Id: quote it to support. */
  correlationId: string | undefined;
  /** The Idempotency-Key the call sent (mutations), to retry by hand with the same one. */
  idempotencyKey: string | undefined;
  /** Seconds from the answer's Retry-After, when it had one. */
  retryAfterSeconds: number | undefined;
  /** How many requests the call made before giving up with this answer. */
  attempts: number;
  /** The parsed body as received. */
  body: unknown;
}

/** Base of everything the SDK throws. */
export class SdkError extends Error {
  override name = "SdkError";
}

/** An answer of the API that is not a success. Branch on `code`; read `advice` for what to do. */
export class ApiError<C extends ErrorCode = ErrorCode> extends SdkError {
  override name = "ApiError";
  readonly status: number;
  readonly code: C;
  readonly detail: string;
  readonly correlationId: string | undefined;
  readonly idempotencyKey: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly attempts: number;
  readonly body: unknown;
  /** The catalogue's title for the code (tenant interface), else the status's meaning. */
  readonly title: string;
  /** What the code means (docs/errors.md). */
  readonly meaning: string;
  /** What the client does about it (docs/errors.md, "Client reaction"). */
  readonly advice: string;

  constructor(details: ApiErrorDetails<C>) {
    const entry = adviceFor(details.code, details.status);
    super(`${details.status} ${details.code}: ${details.detail}`);
    this.status = details.status;
    this.code = details.code;
    this.detail = details.detail;
    this.correlationId = details.correlationId;
    this.idempotencyKey = details.idempotencyKey;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.attempts = details.attempts;
    this.body = details.body;
    this.title = entry.title;
    this.meaning = entry.meaning;
    this.advice = entry.advice;
  }
}

/** One message of the conversation transcript (GET .../conversations/{to}/messages). */
export type TranscriptMessage = TenantComponents["schemas"]["ConversationMessages"]["messages"][number];

/**
 * 409 `partner.action_outcome_unknown`: the channel's answer was lost, the message may or may not
 * have gone out. The SDK never sends again (a repeat with the same key would only answer this
 * again; a new key could send twice). As docs/errors.md advises, it read the conversation
 * transcript: `transcript` holds the recipient's newest messages as they were right after, among
 * them the entry of this send with `state: "unknown"`.
 */
export class OutcomeUnknownError extends ApiError<"partner.action_outcome_unknown"> {
  override name = "OutcomeUnknownError";
  constructor(
    details: ApiErrorDetails<"partner.action_outcome_unknown">,
    /** The recipient's transcript page read after the answer (undefined when that read failed). */
    readonly transcript: readonly TranscriptMessage[] | undefined,
  ) {
    super(details);
  }
}

/** The request never got an answer (connection refused, reset or dropped) after every retry. */
export class NetworkError extends SdkError {
  override name = "NetworkError";
  constructor(
    message: string,
    /** The Idempotency-Key sent: a later retry with this key is safe. */
    readonly idempotencyKey: string | undefined,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Whether `error` is an ApiError, optionally with exactly `code` (narrows `error.code`). */
export function isApiError<C extends ErrorCode>(error: unknown, code?: C): error is ApiError<C> {
  return error instanceof ApiError && (code === undefined || error.code === code);
}

/** The catalogue's entry for a tenant code; for anything else, its status's row. */
export function adviceFor(code: string, status: number): { title: string; meaning: string; advice: string } {
  const entry = (problemCodes as Record<string, { title: string; meaning: string; advice: string } | undefined>)[code];
  if (entry) return { title: entry.title, meaning: entry.meaning, advice: entry.advice };
  const row = statusAdvice[status] ?? (status >= 500 ? statusAdvice[500] : statusAdvice[400]);
  return { title: row?.meaning ?? `status ${status}`, meaning: row?.meaning ?? "", advice: row?.advice ?? "" };
}
