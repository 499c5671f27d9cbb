/**
 * One interface of the gateway (the animal catalog under /v1, the tenant interface under /api/v1),
 * typed by its generated `paths`: `request` for any operation, `items`/`pages` to walk a cursor-paged
 * list, `poll`/`poller` for the poll-friendly reads that answer 304 to a matching If-None-Match.
 */
import { ApiError, isApiError, OutcomeUnknownError, type TranscriptMessage } from "./errors.js";
import type { CallResponse, Transport } from "./transport.js";
import type {
  CallOptions,
  HttpMethod,
  Operation,
  PagedPaths,
  PageItem,
  PathsWith,
  PollablePaths,
  RequestInit,
  SuccessBody,
} from "./typed.js";

/** A successful answer: its body, ETag, headers and the Idempotency-Key that was sent. */
export interface Answer<T> {
  status: number;
  data: T;
  etag: string | undefined;
  headers: Headers;
  idempotencyKey: string | undefined;
  /** Requests the call took (1 when no retry was needed). */
  attempts: number;
}

/** A poll's result: `unchanged` when the server answered 304 to the ETag sent. */
export type PollResult<T> = { unchanged: true; etag: string } | { unchanged: false; etag: string | undefined; data: T };

interface RawInit extends CallOptions {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
}

export class Surface<P> {
  constructor(
    private readonly transport: Transport,
    /** The document's server URL: `/v1` or `/api/v1`. */
    readonly prefix: string,
  ) {}

  /** Calls `method path` and resolves with the whole answer; throws an ApiError otherwise. */
  async call<M extends HttpMethod, K extends PathsWith<P, M>>(
    method: M,
    path: K,
    ...[init]: RequestInitArgs<Operation<P, K, M>>
  ): Promise<Answer<SuccessBody<Operation<P, K, M>>>> {
    const raw = (init ?? {}) as RawInit;
    const response = await this.send(method, path, raw);
    return answerOf(response) as Answer<SuccessBody<Operation<P, K, M>>>;
  }

  /** `call`, resolving with the body only. */
  async request<M extends HttpMethod, K extends PathsWith<P, M>>(
    method: M,
    path: K,
    ...init: RequestInitArgs<Operation<P, K, M>>
  ): Promise<SuccessBody<Operation<P, K, M>>> {
    return (await this.call(method, path, ...init)).data;
  }

  /** Every page of a cursor-paged list, first to last, following `nextCursor` (or the `Link` header). */
  async *pages<K extends PagedPaths<P> & PathsWith<P, "get">>(
    path: K,
    ...[init]: RequestInitArgs<Operation<P, K, "get">>
  ): AsyncGenerator<SuccessBody<Operation<P, K, "get">>, void, undefined> {
    const raw = (init ?? {}) as RawInit;
    let cursor: string | undefined;
    for (;;) {
      const query = { ...raw.query, ...(cursor === undefined ? {} : { cursor }) };
      const response = await this.send("get", path, { ...raw, query });
      yield response.body as SuccessBody<Operation<P, K, "get">>;
      cursor = nextCursorOf(response);
      if (cursor === undefined) return;
    }
  }

  /** Every item of a cursor-paged list, fetching pages as the loop needs them. */
  async *items<K extends PagedPaths<P> & PathsWith<P, "get">>(
    path: K,
    ...init: RequestInitArgs<Operation<P, K, "get">>
  ): AsyncGenerator<PageItem<SuccessBody<Operation<P, K, "get">>>, void, undefined> {
    for await (const page of this.pages(path, ...init)) {
      yield* itemsOf(page) as PageItem<SuccessBody<Operation<P, K, "get">>>[];
    }
  }

  /**
   * Reads `path` with `If-None-Match: etag` (when given): `{unchanged: true}` on 304, else the
   * body with its new ETag to pass next time.
   */
  async poll<K extends PollablePaths<P> & PathsWith<P, "get">>(
    path: K,
    etag: string | undefined,
    ...[init]: RequestInitArgs<Operation<P, K, "get">>
  ): Promise<PollResult<SuccessBody<Operation<P, K, "get">>>> {
    const raw = (init ?? {}) as RawInit;
    const headers = { ...raw.headers, ...(etag === undefined ? {} : { "if-none-match": etag }) };
    const response = await this.send("get", path, { ...raw, headers });
    if (response.status === 304) return { unchanged: true, etag: response.headers.get("etag") ?? etag ?? "" };
    return {
      unchanged: false,
      etag: response.headers.get("etag") ?? undefined,
      data: response.body as SuccessBody<Operation<P, K, "get">>,
    };
  }

  /** A poll that remembers the last ETag: each `next()` answers `unchanged` until something changed. */
  poller<K extends PollablePaths<P> & PathsWith<P, "get">>(path: K, ...init: RequestInitArgs<Operation<P, K, "get">>) {
    let etag: string | undefined;
    return {
      next: async (): Promise<PollResult<SuccessBody<Operation<P, K, "get">>>> => {
        const result = await this.poll(path, etag, ...init);
        etag = result.etag;
        return result;
      },
      get etag() {
        return etag;
      },
    };
  }

  private async send(method: HttpMethod, template: string, init: RawInit): Promise<CallResponse> {
    const upper = method.toUpperCase();
    try {
      return await this.transport.call({
        method: upper,
        path: this.prefix + fillPath(template, init.path) + queryString(init.query),
        label: `${upper} ${this.prefix}${template}`,
        body: init.body,
        mutation: upper !== "GET",
        idempotencyKey: init.idempotencyKey,
        headers: init.headers,
        signal: init.signal,
      });
    } catch (error) {
      if (!isApiError(error, "partner.action_outcome_unknown")) throw error;
      throw new OutcomeUnknownError(
        {
          status: error.status,
          code: error.code,
          detail: error.detail,
          correlationId: error.correlationId,
          idempotencyKey: error.idempotencyKey,
          retryAfterSeconds: error.retryAfterSeconds,
          attempts: error.attempts,
          body: error.body,
        },
        await this.transcriptAfterUnknown(template, init),
      );
    }
  }

  /**
   * docs/errors.md for `partner.action_outcome_unknown`: "Check the conversation transcript before
   * acting again". For a send, the SDK reads the recipient's transcript (the newest page) so the
   * caller sees the entry whose state is `unknown`; it never sends again.
   */
  private async transcriptAfterUnknown(template: string, init: RawInit): Promise<TranscriptMessage[] | undefined> {
    const to = (init.body as { to?: unknown } | undefined)?.to;
    const tenantId = init.path?.tenantId;
    if (template !== "/tenants/{tenantId}/notifications" || typeof to !== "string" || typeof tenantId !== "string") {
      return undefined;
    }
    try {
      const response = await this.transport.call({
        method: "GET",
        path: `${this.prefix}${fillPath("/tenants/{tenantId}/conversations/{to}/messages", { tenantId, to })}`,
        mutation: false,
        signal: init.signal,
      });
      return (response.body as { messages: TranscriptMessage[] }).messages;
    } catch (error) {
      if (error instanceof ApiError) return undefined;
      throw error;
    }
  }
}

/** The optional second argument when the operation needs nothing, else required. */
export type RequestInitArgs<O> = object extends RequestInit<O> ? [init?: RequestInit<O>] : [init: RequestInit<O>];

function answerOf(response: CallResponse): Answer<unknown> {
  return {
    status: response.status,
    data: response.body,
    etag: response.headers.get("etag") ?? undefined,
    headers: response.headers,
    idempotencyKey: response.idempotencyKey,
    attempts: response.attempts,
  };
}

function fillPath(template: string, params: Record<string, unknown> | undefined): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (typeof value !== "string" && typeof value !== "number") {
      throw new TypeError(`path parameter ${name} is missing`);
    }
    return encodeURIComponent(String(value));
  });
}

function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return "";
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const one of Array.isArray(value) ? value : [value]) search.append(name, String(one as string | number));
  }
  const text = search.toString();
  return text === "" ? "" : `?${text}`;
}

/** `nextCursor` of a tenant page; for the catalog's pets, the cursor of the `Link: <…>; rel="next"` URL. */
function nextCursorOf(response: CallResponse): string | undefined {
  const body = response.body;
  if (typeof body === "object" && body !== null && !Array.isArray(body) && "nextCursor" in body) {
    const next = body.nextCursor;
    return typeof next === "string" && next !== "" ? next : undefined;
  }
  const link = response.headers.get("link");
  if (!link) return undefined;
  for (const part of link.split(",")) {
    const match = /<([^>]*)>\s*;\s*rel="?next"?/.exec(part);
    if (match) return new URL(match[1]!, "http://link.invalid").searchParams.get("cursor") ?? undefined;
  }
  return undefined;
}

function itemsOf(page: unknown): unknown[] {
  if (Array.isArray(page)) return page;
  const body = page as { data?: unknown[]; messages?: unknown[] };
  return body.data ?? body.messages ?? [];
}
