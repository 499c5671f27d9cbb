import { attentionRoutes } from "./pages/attention.js";
import { consoleLinkRoutes } from "./pages/console-link.js";
import { homeRoutes } from "./pages/home.js";
import { invitationRoutes } from "./pages/invitation.js";
import { signInRoutes } from "./pages/sign-in.js";
import { tenantRoutes } from "./pages/tenant.js";
import { userRoutes } from "./pages/users.js";
import { webhookDeliveryRoutes } from "./pages/webhook-deliveries.js";
import { webhookEndpointRoutes } from "./pages/webhook-endpoints.js";
import { webhookSecretRoutes } from "./pages/webhook-secret.js";
import type { ConsoleRoute } from "./route.js";

/**
 * Every page and action of the console, one table (like routes/index.ts for the API). A page is a
 * row: method, path under /console, the least role (or "public"), a handler returning a page or a
 * redirect. The router (router.ts) puts the session, same-origin, CSRF and role checks in front.
 */
export const consoleRoutes: readonly ConsoleRoute[] = [
  ...homeRoutes,
  ...signInRoutes,
  ...invitationRoutes,
  ...consoleLinkRoutes,
  ...attentionRoutes,
  ...tenantRoutes,
  ...userRoutes,
  ...webhookEndpointRoutes,
  ...webhookSecretRoutes,
  ...webhookDeliveryRoutes,
];

/** The paths before a secret segment (`/console/invitation/` of `/console/invitation/:token`). */
const secretPrefixes = [
  ...new Set(
    consoleRoutes
      .filter((route) => route.secretParam !== undefined)
      .map((route) => route.path.slice(0, route.path.indexOf(`:${route.secretParam}`))),
  ),
];

/**
 * The request log's view of a path: a secret path segment of a console route (the invitation and
 * console-link tokens, rows with `secretParam`) is replaced by [redacted].
 */
export function redactConsolePath(path: string): string {
  for (const prefix of secretPrefixes) {
    if (path.startsWith(prefix)) return `${prefix}[redacted]${path.slice(prefix.length).replace(/^[^/]*/, "")}`;
  }
  return path;
}
