/**
 * One logical call, however many requests it takes. A mutation gets one Idempotency-Key (the
 * caller's, or a new random one) that every retry of it reuses, so the platform applies it once
 * and replays the first answer to a retry. What is retried, and when (docs/errors.md):
 *
 * - 429 and 503: after `Retry-After` (seconds or an HTTP date) when the answer has one, else
 *   after a backoff;
 * - a connection refused, reset or dropped before an answer, a request that timed out, and 500,
 *   502 and 504: after a backoff (504 is an outcome the gateway could not confirm: the same key
 *   answers it);
 * - 409 `idempotency.in_progress`: the first request with the key has not finished; after a backoff
 *   the same key replays its result.
 *
 * Backoff doubles from `baseDelayMs` up to `maxDelayMs`, with jitter (a random point in its upper
 * half). The call ends with the last error once `maxRetries` retries are spent, or at once when a
 * `Retry-After` asks for longer than `maxDelayMs`. Nothing else is retried: in particular 409
 * `partner.action_outcome_unknown` never is (see OutcomeUnknownError).
 */
import { ApiError, NetworkError, type ErrorCode } from "./errors.js";

export interface RetryPolicy {
  /** Retries after the first request; default 4 (so at most 5 requests per call). */
  maxRetries: number;
  /** The first backoff, in ms; default 250. It doubles with each retry. */
  baseDelayMs: number;
  /** The longest single wait, in ms (backoff and Retry-After alike); default 30 000. */
  maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { maxRetries: 4, baseDelayMs: 250, maxDelayMs: 30_000 };

export interface TransportOptions {
  /** The gateway's origin, e.g. `https://api.example.com` (no path). */
  baseUrl: string;
  /** An API key issued by the operator (`Authorization: Bearer <key>`). */
  apiKey: string;
  retry?: Partial<RetryPolicy>;
  /** How long one request may take before it counts as lost (and is retried); default 30 000 ms. */
  requestTimeoutMs?: number;
  /** Makes the Idempotency-Key of a mutation the caller gave none for; default a random UUID. */
  newIdempotencyKey?: () => string;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
  /** How to wait; default setTimeout. Tests pass their own to record the waits. */
  sleep?: (ms: number) => Promise<void>;
  /** A number in [0, 1) for the jitter; default Math.random. */
  random?: () => number;
}

export interface CallRequest {
  method: string;
  /** Path and query, starting with `/`. */
  path: string;
  /** How errors name the call (default `METHOD path`); the path template keeps ids and numbers out. */
  label?: string;
  body?: unknown;
  /** Mutations get an Idempotency-Key. */
  mutation: boolean;
  idempotencyKey?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface CallResponse {
  status: number;
  headers: Headers;
  body: unknown;
  /** The Idempotency-Key sent, for mutations. */
  idempotencyKey: string | undefined;
  attempts: number;
}

const retryableStatuses = new Set([429, 500, 502, 503, 504]);

/** Seconds of a Retry-After value (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

export class Transport {
  readonly policy: RetryPolicy;
  private readonly fetch: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly newKey: () => string;
  private readonly baseUrl: string;

  constructor(private readonly options: TransportOptions) {
    this.policy = { ...defaultRetryPolicy, ...options.retry };
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
    this.newKey = options.newIdempotencyKey ?? (() => globalThis.crypto.randomUUID());
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
  }

  /** The wait before retry number `retry` (0-based): the upper half of the doubled delay, at random. */
  backoff(retry: number): number {
    const ceiling = Math.min(this.policy.maxDelayMs, this.policy.baseDelayMs * 2 ** retry);
    return Math.round(ceiling / 2 + this.random() * (ceiling / 2));
  }

  /** Sends `request`, retrying as the module comment says; resolves with a 2xx or 304 answer. */
  async call(request: CallRequest): Promise<CallResponse> {
    const idempotencyKey = request.mutation ? (request.idempotencyKey ?? this.newKey()) : undefined;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      accept: "application/json, application/problem+json",
      ...request.headers,
    };
    if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey;
    if (request.body !== undefined) headers["content-type"] = "application/json";
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const timeoutMs = this.options.requestTimeoutMs ?? 30_000;

    for (let attempt = 1; ; attempt += 1) {
      const retriesLeft = attempt <= this.policy.maxRetries;
      let response: Response;
      try {
        const signals = [AbortSignal.timeout(timeoutMs), ...(request.signal ? [request.signal] : [])];
        response = await this.fetch(this.baseUrl + request.path, {
          method: request.method,
          headers,
          body,
          signal: AbortSignal.any(signals),
        });
      } catch (error) {
        if (request.signal?.aborted) throw error;
        if (!retriesLeft) {
          throw new NetworkError(
            `${request.label ?? `${request.method} ${request.path}`}: no answer after ${attempt} request(s): ${describe(error)}`,
            idempotencyKey,
            attempt,
            { cause: error },
          );
        }
        await this.sleep(this.backoff(attempt - 1));
        continue;
      }

      const parsed = await readBody(response);
      if ((response.status >= 200 && response.status < 300) || response.status === 304) {
        return { status: response.status, headers: response.headers, body: parsed, idempotencyKey, attempts: attempt };
      }
      const error = apiErrorOf(response, parsed, idempotencyKey, attempt);
      const inProgress = response.status === 409 && error.code === "idempotency.in_progress";
      if (!retriesLeft || !(retryableStatuses.has(response.status) || inProgress)) throw error;
      const asked = response.status === 429 || response.status === 503 ? error.retryAfterSeconds : undefined;
      if (asked !== undefined && asked * 1000 > this.policy.maxDelayMs) throw error;
      await this.sleep(asked !== undefined ? asked * 1000 : this.backoff(attempt - 1));
    }
  }
}

async function readBody(response: Response): Promise<unknown> {
  if (response.status === 204 || response.status === 304) return undefined;
  const text = await response.text();
  if (text === "") return undefined;
  const type = response.headers.get("content-type") ?? "";
  if (/json/i.test(type)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

function apiErrorOf(response: Response, body: unknown, idempotencyKey: string | undefined, attempts: number): ApiError {
  const fields = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof fields.code === "string" ? fields.code : `http_${response.status}`;
  const detail =
    typeof fields.detail === "string"
      ? fields.detail
      : typeof fields.message === "string"
        ? fields.message
        : response.statusText;
  const correlationId =
    typeof fields.correlationId === "string"
      ? fields.correlationId
      : (response.headers.get("x-request-id") ?? undefined);
  return new ApiError({
    status: response.status,
    code: code as ErrorCode,
    detail,
    correlationId,
    idempotencyKey,
    retryAfterSeconds: retryAfterSeconds(response.headers.get("retry-after")),
    attempts,
    body,
  });
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}
