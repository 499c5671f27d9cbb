import Router from "@koa/router";
import type { Context, Middleware } from "koa";
import getRawBody from "raw-body";
import type { Flash } from "../db/console-store.js";
import { roleReaches, type ConsoleViewer } from "../domain/console-role.js";
import { sameSecret } from "../domain/console-token.js";
import { ApiError } from "../http/api-error.js";
import { EXACT_ROUTES } from "../http/router.js";
import { loadConsoleAssets, type ConsoleAsset, type ConsoleAssetName } from "./assets.js";
import { html } from "./html.js";
import { ConsolePageError, productWords } from "./page-error.js";
import { CSRF_FIELD, CSRF_HEADER, renderShell } from "./layout.js";
import {
  CONSOLE_PREFIX,
  consoleCallOptions,
  isConsoleLocation,
  isConsolePath,
  type ConsoleAnswer,
  type ConsoleDeps,
  type ConsoleRoute,
  type FormFields,
  type PublicRequest,
  type SignedInRequest,
} from "./route.js";
import { setConsoleSecurityHeaders } from "./security-headers.js";
import { BrowserSession } from "./session.js";

const MAX_FORM_BYTES = 64 * 1024;
const FAVICON_PATH = "/favicon.ico";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const emptyForm: FormFields = { get: () => "", all: () => [] };

async function readForm(ctx: Context): Promise<FormFields> {
  if (SAFE_METHODS.has(ctx.method)) return emptyForm;
  const type = ctx.get("content-type").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    // htmx and plain forms both send urlencoded; an empty POST (a button) has no body.
    if (ctx.request.length === undefined || ctx.request.length === 0) return emptyForm;
    throw new ConsolePageError(415, "Unsupported form", "Forms must be sent as application/x-www-form-urlencoded.");
  }
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit: MAX_FORM_BYTES, length: ctx.request.length, encoding: "utf-8" });
  } catch (error) {
    if ((error as { type?: string }).type === "entity.too.large") {
      throw new ConsolePageError(413, "Form too large", `A form may hold at most ${MAX_FORM_BYTES} bytes.`);
    }
    throw error;
  }
  const params = new URLSearchParams(text);
  return { get: (name) => params.get(name) ?? "", all: (name) => params.getAll(name) };
}

/**
 * Unsafe requests come from the console's own pages only: an Origin other than this origin (or
 * CONSOLE_BASE_URL's), "null", or Sec-Fetch-Site cross-site / same-site is refused before
 * anything else, whatever token the request carries.
 */
function checkSameOrigin(ctx: Context, baseUrl: string | undefined): void {
  const site = ctx.get("sec-fetch-site");
  if (site === "cross-site" || site === "same-site") {
    throw new ConsolePageError(403, "Request refused", "This form was sent from another site.");
  }
  const origin = ctx.get("origin");
  if (origin !== "" && origin !== `${ctx.protocol}://${ctx.host}` && origin !== baseUrl) {
    throw new ConsolePageError(403, "Request refused", "This form was sent from another origin.");
  }
}

function checkCsrf(ctx: Context, form: FormFields, expected: string | undefined): void {
  const presented = form.get(CSRF_FIELD) || ctx.get(CSRF_HEADER);
  if (expected === undefined || presented === "" || !sameSecret(presented, expected)) {
    throw new ConsolePageError(
      403,
      "Request refused",
      "The form's security token is missing or out of date. Go back, reload the page and try again.",
    );
  }
}

/** Where a signed-out visitor is sent, coming back to `path` after signing in. */
function signInLocation(ctx: Context): string {
  const back = SAFE_METHODS.has(ctx.method) ? ctx.path : "";
  return back && back !== CONSOLE_PREFIX ? `/console/login?next=${encodeURIComponent(back)}` : "/console/login";
}

/**
 * The console: security headers on every answer, its static assets, one router over the console's
 * route table with the session, same-origin, CSRF and role checks in front of every row, pages
 * wrapped in the layout, and console errors as pages. Mounted by app.ts for /console/**; nothing
 * under /console reaches the API's edge.
 */
export function consoleMiddleware(routes: readonly ConsoleRoute[], deps: ConsoleDeps): Middleware {
  const assets = loadConsoleAssets();
  const router = new Router(EXACT_ROUTES);
  registerAssets(router, assets);
  const limits = { idleMs: deps.settings.idleMs, absoluteMs: deps.settings.absoluteMs };

  for (const route of routes) {
    if (!isConsolePath(route.path)) throw new Error(`console route ${route.path} is outside ${CONSOLE_PREFIX}`);
    router.register(
      route.path,
      [route.method],
      [
        async (ctx) => {
          const unsafe = !SAFE_METHODS.has(ctx.method);
          if (unsafe) checkSameOrigin(ctx, deps.settings.baseUrl);
          const session = await BrowserSession.open(ctx, deps.store, limits);
          // A refusal past this point is shown inside the signed-in user's shell.
          ctx.state.consoleShell = { viewer: session.viewer, csrfToken: () => session.csrfToken() };
          const form = await readForm(ctx);
          const param = (name: string) => String((ctx.params as Record<string, string | undefined>)[name] ?? "");
          let answer: ConsoleAnswer;
          let flash: Flash | undefined;
          if (route.role === "public") {
            if (unsafe) checkCsrf(ctx, form, session.expectedCsrfToken());
            const request: PublicRequest = {
              ctx,
              form,
              param,
              csrfToken: session.csrfToken(),
              session,
              viewer: session.viewer,
            };
            answer = await route.handle(request, deps);
          } else {
            const viewer = session.viewer;
            if (viewer === undefined) {
              answer = { kind: "redirect", location: signInLocation(ctx) };
            } else {
              if (unsafe) checkCsrf(ctx, form, session.expectedCsrfToken());
              if (!roleReaches(viewer.role, route.role)) {
                throw new ConsolePageError(
                  403,
                  "Not allowed",
                  `This needs the ${route.role} role; you are ${viewer.role === "admin" ? "an" : "a"} ${viewer.role}.`,
                );
              }
              if (ctx.method === "GET") flash = await deps.store.takeFlash(session.idDigest!);
              const request: SignedInRequest = {
                ctx,
                form,
                param,
                csrfToken: session.csrfToken(),
                session,
                viewer,
                call: consoleCallOptions(ctx, viewer),
                flash,
              };
              answer = await route.handle(request, deps);
            }
          }
          await respond(ctx, answer, { session, flash, deps, assets });
        },
      ],
    );
  }

  const dispatch = router.routes() as Middleware;
  const methods = router.allowedMethods() as Middleware;
  const serve = async (ctx: Context): Promise<void> => {
    setConsoleSecurityHeaders(ctx, deps.settings.frameAncestors);
    ctx.set("cache-control", "no-store");
    try {
      await dispatch(ctx, async () => {
        await methods(ctx, () => Promise.resolve());
      });
      if (ctx.status === 405) throw new ConsolePageError(405, "Not allowed", `${ctx.method} is not allowed here.`);
      if (ctx.body === undefined || ctx.body === null) {
        throw new ConsolePageError(404, "Not found", "There is no such page in the console.");
      }
    } catch (thrown) {
      renderError(ctx, thrown, assets);
    }
  };
  const favicon = assets["favicon.ico"];
  const serveFavicon = (ctx: Context): Promise<void> => {
    // Where browsers look for a site's icon by themselves (the pages also link the hashed asset).
    setConsoleSecurityHeaders(ctx, deps.settings.frameAncestors);
    ctx.set("cache-control", "public, max-age=86400");
    ctx.type = favicon.contentType;
    ctx.body = favicon.body;
    return Promise.resolve();
  };
  // Every other request passes straight on (no async frame of its own: this runs on every request).
  return (ctx, next) =>
    isConsolePath(ctx.path)
      ? serve(ctx)
      : ctx.path === FAVICON_PATH && (ctx.method === "GET" || ctx.method === "HEAD")
        ? serveFavicon(ctx)
        : next();
}

async function respond(
  ctx: Context,
  answer: ConsoleAnswer,
  { session, flash, deps, assets }: RespondWith,
): Promise<void> {
  if (answer.kind === "redirect") {
    if (!isConsoleLocation(answer.location))
      throw new Error(`console redirect outside the console: ${answer.location}`);
    const digest = session.idDigest;
    if (answer.flash && digest) await deps.store.setFlash(digest, answer.flash);
    ctx.status = 303;
    ctx.set("location", answer.location);
    ctx.body = "";
    return;
  }
  for (const [name, value] of Object.entries(answer.headers ?? {})) ctx.set(name, value);
  ctx.status = answer.status ?? 200;
  ctx.type = "text/html; charset=utf-8";
  ctx.body = renderShell({
    title: answer.title,
    body: answer.body,
    viewer: session.viewer,
    csrfToken: session.csrfToken(),
    flash,
    path: ctx.path,
    assets,
  });
}

interface RespondWith {
  session: BrowserSession;
  flash: Flash | undefined;
  deps: ConsoleDeps;
  assets: Record<ConsoleAssetName, ConsoleAsset>;
}

function renderError(ctx: Context, thrown: unknown, assets: Record<ConsoleAssetName, ConsoleAsset>): void {
  const shell = (ctx.state as { consoleShell?: { viewer: ConsoleViewer | undefined; csrfToken(): string } })
    .consoleShell;
  let status = 500;
  let title = "Something went wrong";
  let message = "The console could not complete this request. Try again; if it persists, contact support.";
  let headers: Record<string, string> = {};
  if (thrown instanceof ConsolePageError) {
    ({ status, title, headers } = thrown);
    message = thrown.message;
  } else if (thrown instanceof ApiError && thrown.status < 500) {
    status = thrown.status;
    title = thrown.status === 404 ? "Not found" : thrown.status === 403 ? "Not allowed" : "Request refused";
    message = productWords(thrown.status, thrown.options.code);
    headers = thrown.options.headers ?? {};
  } else if (thrown instanceof ApiError && thrown.status === 503) {
    status = 503;
    title = "Temporarily unavailable";
    message = "A service the console needs is not answering. Try again in a moment.";
    headers = { "retry-after": thrown.options.headers?.["retry-after"] ?? "1" };
  } else {
    ctx.state.log().error({ err: thrown instanceof ApiError ? (thrown.cause ?? thrown) : thrown }, "console error");
  }
  for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.body = renderShell({
    title,
    body: html`<p>${message}</p>
      <p><a href="/console">Back to the console</a></p>`,
    viewer: shell?.viewer,
    csrfToken: shell?.viewer ? shell.csrfToken() : "",
    flash: undefined,
    path: ctx.path,
    assets,
  });
}

function registerAssets(router: Router, assets: Record<ConsoleAssetName, ConsoleAsset>): void {
  for (const asset of Object.values(assets)) {
    router.get(asset.path, (ctx) => {
      ctx.set("cache-control", "public, max-age=31536000, immutable");
      ctx.type = asset.contentType;
      ctx.body = asset.body;
    });
  }
}
