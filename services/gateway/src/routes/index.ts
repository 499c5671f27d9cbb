import type { CatalogRoute, Route, TenantRoute } from "../http/route.js";
import { activationRoutes } from "./activation/routes.js";
import { catalogRoutes } from "./catalog/routes.js";
import { channelRoutes } from "./channel/routes.js";
import { consoleRoutes } from "./console/routes.js";
import { notificationRoutes } from "./notifications/routes.js";
import { pollRoutes } from "./polls/routes.js";
import { tenantRecordRoutes } from "./tenant/routes.js";
import { usageRoutes } from "./usage/routes.js";
import { webhookRoutes } from "./webhooks/routes.js";

export { catalogRoutes };

/** Every tenant-interface route: one table per capability. */
export const tenantRoutes: TenantRoute[] = [
  ...tenantRecordRoutes,
  ...channelRoutes,
  ...usageRoutes,
  ...activationRoutes,
  ...notificationRoutes,
  ...webhookRoutes,
  ...pollRoutes,
  ...consoleRoutes,
];

/** Every route of the gateway, both surfaces, in the order the router registers them. */
export const routes: readonly Route[] = [...(catalogRoutes satisfies CatalogRoute[]), ...tenantRoutes];
