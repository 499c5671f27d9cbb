import type { Context } from "koa";
import type { ConsoleStore, LiveSession } from "../db/console-store.js";
import type { ConsoleViewer } from "../domain/console-role.js";
import { csrfTokenOf, digestConsoleToken, isConsoleToken, issueConsoleToken } from "../domain/console-token.js";
import type { SessionControl } from "./route.js";

/**
 * The console's cookies. Over HTTPS (ctx.protocol, which reads X-Forwarded-Proto only when
 * TRUST_PROXY is on) they are `__Host-` prefixed and Secure: the browser then refuses them from
 * plain HTTP or from a sibling domain. Always HttpOnly, SameSite=Lax, Path=/, no Domain, no
 * Max-Age (the server ends sessions; the browser drops the cookie when it closes).
 */
const isHttps = (ctx: Context) => ctx.protocol === "https";
export const sessionCookieName = (ctx: Context) => (isHttps(ctx) ? "__Host-console_session" : "console_session");
/** A signed-out visitor's secret, from which the sign-in forms' CSRF token is derived. */
export const visitorCookieName = (ctx: Context) => (isHttps(ctx) ? "__Host-console_visitor" : "console_visitor");

function setCookie(ctx: Context, name: string, value: string | null): void {
  ctx.cookies.set(name, value, {
    httpOnly: true,
    sameSite: "lax",
    secure: isHttps(ctx),
    path: "/",
    overwrite: true,
    signed: false,
  });
}

/** The request's session cookie value when it is well-formed (anything else is ignored). */
function presentedToken(ctx: Context, name: string): string | undefined {
  const value = ctx.cookies.get(name, { signed: false });
  return value !== undefined && isConsoleToken(value) ? value : undefined;
}

/** The browser's session: found by its cookie, started and ended by the handlers that sign in or out. */
export class BrowserSession implements SessionControl {
  private token: string | undefined;
  /** The visitor secret of a signed-out browser, once read or issued. */
  private visitor: string | undefined;
  private live: LiveSession | undefined;

  private constructor(
    private readonly ctx: Context,
    private readonly store: ConsoleStore,
  ) {}

  /**
   * Looks the cookie up (and marks the session seen). A cookie that names no live session is
   * cleared: it was ended, timed out, its user disabled, or it never existed (a planted id).
   */
  static async open(
    ctx: Context,
    store: ConsoleStore,
    limits: { idleMs: number; absoluteMs: number },
  ): Promise<BrowserSession> {
    const session = new BrowserSession(ctx, store);
    const token = presentedToken(ctx, sessionCookieName(ctx));
    if (token !== undefined) {
      session.live = await store.touchSession(digestConsoleToken(token), limits);
      if (session.live) session.token = token;
    }
    if (!session.live && ctx.cookies.get(sessionCookieName(ctx)) !== undefined)
      setCookie(ctx, sessionCookieName(ctx), null);
    return session;
  }

  get viewer(): ConsoleViewer | undefined {
    return this.live?.viewer;
  }

  /** The digest of the live session's id (for its flash message). */
  get idDigest(): Buffer | undefined {
    return this.token === undefined ? undefined : digestConsoleToken(this.token);
  }

  /**
   * The CSRF token of this browser: derived from the session id when signed in, else from the
   * visitor cookie (set now when absent, so the sign-in form's token verifies on POST).
   */
  csrfToken(): string {
    if (this.token !== undefined) return csrfTokenOf(this.token);
    this.visitor ??= presentedToken(this.ctx, visitorCookieName(this.ctx));
    if (this.visitor === undefined) {
      this.visitor = issueConsoleToken();
      setCookie(this.ctx, visitorCookieName(this.ctx), this.visitor);
    }
    return csrfTokenOf(this.visitor);
  }

  /** The token a POST must carry, or undefined when the browser has neither session nor visitor cookie. */
  expectedCsrfToken(): string | undefined {
    if (this.token !== undefined) return csrfTokenOf(this.token);
    const visitor = presentedToken(this.ctx, visitorCookieName(this.ctx));
    return visitor === undefined ? undefined : csrfTokenOf(visitor);
  }

  async signIn(viewer: ConsoleViewer): Promise<void> {
    if (this.token !== undefined) await this.store.endSession(digestConsoleToken(this.token), "replaced");
    const token = issueConsoleToken();
    await this.store.startSession(viewer.userId, digestConsoleToken(token));
    this.token = token;
    this.live = { viewer, createdAt: new Date() };
    setCookie(this.ctx, sessionCookieName(this.ctx), token);
    // The visitor secret has done its job (the sign-in form); the session's token takes over.
    if (this.ctx.cookies.get(visitorCookieName(this.ctx)) !== undefined)
      setCookie(this.ctx, visitorCookieName(this.ctx), null);
  }

  async signOut(): Promise<void> {
    if (this.token !== undefined) await this.store.endSession(digestConsoleToken(this.token), "logout");
    this.token = undefined;
    this.live = undefined;
    setCookie(this.ctx, sessionCookieName(this.ctx), null);
  }
}
