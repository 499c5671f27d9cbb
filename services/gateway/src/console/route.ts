import type { Context } from "koa";
import type { CallOptions } from "@platform/service-kit/grpc-client";
import type { ConsoleStore, Flash } from "../db/console-store.js";
import { consoleActorOf, type ConsoleRole, type ConsoleViewer } from "../domain/console-role.js";
import { logReplicaRetry, type TenantRouteDeps } from "../http/route.js";
import type { SafeHtml } from "./html.js";
import { ConsolePageError } from "./page-error.js";

/** The console's settings, from the gateway's configuration (config.ts CONSOLE_*). */
export interface ConsoleSettings {
  /** CONSOLE_BASE_URL: the console's public origin; absent, the request's own origin is used. */
  baseUrl: string | undefined;
  idleMs: number;
  absoluteMs: number;
  invitationTtlMs: number;
  linkTtlMs: number;
  login: { windowMs: number; accountLimit: number; addressLimit: number };
  /** CSP frame-ancestors: 'none' unless partners may frame the console. */
  frameAncestors: string;
}

/** What a console handler may use: the same gRPC clients as the API's routes, and the console's own store. */
export interface ConsoleDeps extends TenantRouteDeps {
  store: ConsoleStore;
  settings: ConsoleSettings;
}

/** A submitted form (application/x-www-form-urlencoded); "" for an absent field. */
export interface FormFields {
  get(name: string): string;
  /** Every value of a repeated field (checkboxes). */
  all(name: string): string[];
}

/** Sign-in and sign-out, for the handlers that do them (login, invitation, console link, logout). */
export interface SessionControl {
  /**
   * Starts a new session for the user: always a new id (any session the browser had is ended
   * first, so an id planted before sign-in is never the one after) and sets the cookie.
   */
  signIn(viewer: ConsoleViewer): Promise<void>;
  /** Ends the current session (if any) and clears the cookie. */
  signOut(): Promise<void>;
}

interface RequestBase {
  ctx: Context;
  /** The POSTed form (empty for GET). */
  form: FormFields;
  /** A path parameter of the route (":name"), "" when absent. */
  param(name: string): string;
  /** The CSRF token every form of the page carries (csrfField in layout.ts). */
  csrfToken: string;
  session: SessionControl;
}

/** A request to a signed-out route (login, invitation, console link). */
export interface PublicRequest extends RequestBase {
  /** The signed-in user, when the browser has a live session. */
  viewer: ConsoleViewer | undefined;
}

/** A request to a signed-in route: the role check has passed. */
export interface SignedInRequest extends RequestBase {
  viewer: ConsoleViewer;
  /**
   * Options for every gRPC call the page makes: the request id, the trace context and the actor
   * (`console:<userId>`), so the action is attributed to this user.
   */
  call: CallOptions & { actor: string };
  /** The message left by the action that redirected here (GET only). */
  flash: Flash | undefined;
}

/** A full page: the router wraps `body` in the layout (nav, skip link, <main>, flash). */
export interface PageAnswer {
  kind: "page";
  title: string;
  body: SafeHtml;
  status?: number;
  headers?: Record<string, string>;
}

/** POST-redirect-GET: 303 to `location` (a /console path), with a message for the next page. */
export interface RedirectAnswer {
  kind: "redirect";
  location: string;
  flash?: Flash;
}

export type ConsoleAnswer = PageAnswer | RedirectAnswer;

export const page = (
  title: string,
  body: SafeHtml,
  options: { status?: number; headers?: Record<string, string> } = {},
): PageAnswer => ({
  kind: "page",
  title,
  body,
  ...options,
});

export const redirect = (location: string, flash?: Flash): RedirectAnswer => ({ kind: "redirect", location, flash });

interface RowBase {
  method: "GET" | "POST";
  /** Koa-router path, always under /console. */
  path: string;
  /** What the page is, for readers of the table. */
  summary: string;
  /** The route's path holds a secret (a token): the request log shows `[redacted]` instead. */
  secretParam?: string;
}

/**
 * A page or action for signed-in users with at least `role` (viewer < admin < owner). The router
 * refuses anyone below it with 403, whatever the page shows or hides; unsafe methods also need the
 * session's CSRF token and a same-origin request.
 */
export interface SignedInConsoleRoute extends RowBase {
  role: ConsoleRole;
  handle(request: SignedInRequest, deps: ConsoleDeps): Promise<ConsoleAnswer>;
}

/** A page for anyone (sign-in, invitation, console link); unsafe methods still need CSRF and same origin. */
export interface PublicConsoleRoute extends RowBase {
  role: "public";
  handle(request: PublicRequest, deps: ConsoleDeps): Promise<ConsoleAnswer>;
}

/** One row of the console's route table (console/routes.ts). */
export type ConsoleRoute = SignedInConsoleRoute | PublicConsoleRoute;

/**
 * Call options attributing a gRPC call to the console user (the `call` of a SignedInRequest). A
 * page's read (GET) may be repeated on another replica when its connection dies (as the API's
 * reads: http/route.ts callOptionsOf); a form's mutation is not.
 */
export function consoleCallOptions(ctx: Context, viewer: ConsoleViewer): CallOptions & { actor: string } {
  return {
    requestId: ctx.state.requestId,
    traceparent: ctx.state.traceparent,
    actor: consoleActorOf(viewer),
    repeatable: ctx.method === "GET",
    onReplicaRetry: (retry) => logReplicaRetry(ctx, retry),
  };
}

export { CONSOLE_PREFIX, isConsoleLocation, isConsolePath } from "../domain/console-path.js";

/** The console's origin as the browser sees it: CONSOLE_BASE_URL, else this request's scheme and host. */
export const consoleOriginOf = (ctx: Context, settings: Pick<ConsoleSettings, "baseUrl">): string =>
  settings.baseUrl ?? `${ctx.protocol}://${ctx.host}`;

const IDEMPOTENCY_KEY = /^[A-Za-z0-9_.:-]{8,128}$/;

/**
 * The Idempotency-Key a mutating form carries (layout.ts idempotencyField), for the gRPC call's
 * `idempotencyKey`; a form without a well-formed one is refused with a 400 page.
 */
export function formIdempotencyKey(form: FormFields): string {
  const key = form.get("_idempotency");
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new ConsolePageError(
      400,
      "Form out of date",
      "This form is missing its request key. Reload the page and try again.",
    );
  }
  return key;
}
