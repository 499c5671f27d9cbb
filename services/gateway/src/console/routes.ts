import { attentionPages } from "./pages/attention.js";
import { consoleLinkPages } from "./pages/console-link.js";
import { homePages } from "./pages/home.js";
import { invitationPages } from "./pages/invitation.js";
import { signInPages } from "./pages/sign-in.js";
import { tenantPages } from "./pages/tenant.js";
import { userPages } from "./pages/users.js";
import { webhookDeletePages } from "./pages/webhook-delete.js";
import { webhookDeliveryPages } from "./pages/webhook-deliveries.js";
import { webhookEndpointPages } from "./pages/webhook-endpoints.js";
import { webhookMessagePages } from "./pages/webhook-messages.js";
import { webhookSecretPages } from "./pages/webhook-secret.js";
import type { ConsoleRoute } from "./route.js";

/**
 * Every page and action of the console, one table (like routes/index.ts for the API). A page is a
 * row: method, path under /console, the least role (or "public"), a handler returning a page or a
 * redirect. The router (router.ts) puts the session, same-origin, CSRF and role checks in front.
 */
export const consolePages: readonly ConsoleRoute[] = [
  ...homePages,
  ...signInPages,
  ...invitationPages,
  ...consoleLinkPages,
  ...attentionPages,
  ...tenantPages,
  ...userPages,
  // Before the endpoint pages: `/console/webhooks/messages` is not an endpoint id.
  ...webhookMessagePages,
  ...webhookEndpointPages,
  ...webhookDeletePages,
  ...webhookSecretPages,
  ...webhookDeliveryPages,
];

/** The paths before a secret segment (`/console/invitation/` of `/console/invitation/:token`). */
const secretPrefixes = [
  ...new Set(
    consolePages
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
