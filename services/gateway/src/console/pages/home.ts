import { scopesOfRole } from "../../domain/console-role.js";
import { callService } from "../../http/api-error.js";
import { html } from "../html.js";
import { time } from "../layout.js";
import { page, type SignedInConsoleRoute } from "../route.js";

/** The console's home: who is signed in, for which tenant (read over gRPC as the user). */
export const homePages: SignedInConsoleRoute[] = [
  {
    method: "GET",
    path: "/console",
    role: "viewer",
    summary: "Home: the tenant and the signed-in user.",
    async handle({ viewer, call }, deps) {
      const { tenant } = await callService(deps.notify.getTenant({ tenantId: viewer.tenantId }, call));
      return page(
        "Home",
        html`<section aria-labelledby="tenant-heading">
            <h2 id="tenant-heading">Tenant</h2>
            <dl>
              <dt>Name</dt>
              <dd>${tenant?.name ?? viewer.tenantId}</dd>
              <dt>Id</dt>
              <dd><code>${viewer.tenantId}</code></dd>
              <dt>Created</dt>
              <dd>${time(tenant?.createdAt)}</dd>
            </dl>
          </section>
          <section aria-labelledby="user-heading">
            <h2 id="user-heading">You</h2>
            <dl>
              <dt>Email</dt>
              <dd>${viewer.email}</dd>
              <dt>Role</dt>
              <dd>${viewer.role}</dd>
              <dt>What the role allows</dt>
              <dd>${scopesOfRole[viewer.role].join(", ")}</dd>
            </dl>
          </section>`,
      );
    },
  },
];
