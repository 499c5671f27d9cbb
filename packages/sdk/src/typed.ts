/**
 * Types that turn openapi-typescript's `paths` (src/generated) into typed calls: which paths have
 * a method, what a call takes (path parameters, query, body) and what its success answers.
 */
export type HttpMethod = "get" | "put" | "post" | "patch" | "delete";

/** The paths of `P` that have operation `M`. */
export type PathsWith<P, M extends HttpMethod> = {
  [K in keyof P]: P[K] extends { [X in M]: object } ? K : never;
}[keyof P] &
  string;

export type Operation<P, K extends keyof P, M extends HttpMethod> = P[K] extends { [X in M]: infer O } ? O : never;

type ParametersOf<O> = O extends { parameters: infer X } ? X : object;
export type PathParams<O> = ParametersOf<O> extends { path: infer X } ? X : never;
export type QueryParams<O> = ParametersOf<O> extends { query?: infer X } ? NonNullable<X> : never;
type JsonContent<R> = R extends { content: { "application/json": infer B } } ? B : never;
export type RequestBody<O> = O extends { requestBody: infer R }
  ? JsonContent<R>
  : O extends { requestBody?: infer R }
    ? IsNever<JsonContent<NonNullable<R>>> extends true
      ? never
      : JsonContent<NonNullable<R>> | undefined
    : never;

type JsonOf<R> = R extends { content: { "application/json": infer J } } ? J : undefined;
/** The body of the operation's 2xx answers. */
export type SuccessBody<O> = O extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 202 | 204 ? JsonOf<R[S]> : never }[keyof R]
  : never;

/** What every call may add. */
export interface CallOptions {
  /** A mutation's Idempotency-Key; default a new one per call, reused by its retries. */
  idempotencyKey?: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

type IsNever<T> = [T] extends [never] ? true : false;

/** The second argument of a typed call: path parameters, query and body where the operation has them. */
export type RequestInit<O> = CallOptions &
  (IsNever<PathParams<O>> extends true ? { path?: undefined } : { path: PathParams<O> }) &
  (IsNever<QueryParams<O>> extends true ? { query?: undefined } : { query?: QueryParams<O> }) &
  (IsNever<RequestBody<O>> extends true ? { body?: undefined } : { body: RequestBody<O> });

/** The item type of a paged answer: `{data: T[], nextCursor}`, `{messages: T[], nextCursor}` or `T[]`. */
export type PageItem<B> = B extends { data: (infer T)[]; nextCursor: string | null }
  ? T
  : B extends { messages: (infer T)[]; nextCursor: string | null }
    ? T
    : B extends (infer T)[]
      ? T
      : never;

/** The GET paths of `P` whose answer is a page and which take a `cursor`. */
export type PagedPaths<P> = {
  [K in PathsWith<P, "get">]: IsNever<PageItem<SuccessBody<Operation<P, K, "get">>>> extends true
    ? never
    : IsNever<QueryParams<Operation<P, K, "get">>> extends true
      ? never
      : QueryParams<Operation<P, K, "get">> extends { cursor?: unknown }
        ? K
        : never;
}[PathsWith<P, "get">];

/** The GET paths of `P` that answer 304 to a matching If-None-Match. */
export type PollablePaths<P> = {
  [K in PathsWith<P, "get">]: Operation<P, K, "get"> extends { responses: { 304: unknown } } ? K : never;
}[PathsWith<P, "get">];
