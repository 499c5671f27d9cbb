import { digestConsoleToken, isConsoleToken } from "../../domain/console-token.js";
import { ConsolePageError } from "../page-error.js";
import { html } from "../html.js";
import { page, redirect, type ConsoleRoute } from "../route.js";

/**
 * A console link minted by a partner's backend (POST /api/v1/tenants/{tenantId}/console-links):
 * single use, short-lived. Opening it consumes it, starts a session for its user and answers
 * 303 to the page it names, so the token leaves the address bar at once; the request log shows
 * it redacted and Referrer-Policy: same-origin keeps it out of Referer headers to other origins.
 */
export const consoleLinkPages: ConsoleRoute[] = [
  {
    method: "GET",
    path: "/console/link/:token",
    role: "public",
    secretParam: "token",
    summary: "Opens a console link: consumes it, signs in and redirects to a clean URL.",
    async handle(request, deps) {
      const token = request.param("token");
      if (!isConsoleToken(token)) throw new ConsolePageError(404, "Not found", "This console link is not valid.");
      // A HEAD (a link checker, a preview) must not use the link up: only a GET consumes it.
      if (request.ctx.method === "HEAD") return page("Console link", html`<p>Open this link to sign in.</p>`);
      const consumed = await deps.store.consumeLink(digestConsoleToken(token));
      switch (consumed.outcome) {
        case "consumed":
          await request.session.signIn(consumed.viewer);
          return redirect(consumed.redirectPath);
        case "used":
          throw new ConsolePageError(
            410,
            "Link already used",
            "This console link was already used: each link opens the console once. Go back to the product you came from and open the console again.",
          );
        case "expired":
          throw new ConsolePageError(
            410,
            "Link expired",
            "This console link has expired. Go back to the product you came from and open the console again.",
          );
        case "disabled":
          throw new ConsolePageError(403, "Account disabled", "The console account this link is for is disabled.");
        default:
          throw new ConsolePageError(404, "Not found", "This console link is not valid.");
      }
    },
  },
];
