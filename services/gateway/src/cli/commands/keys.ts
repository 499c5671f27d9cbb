/** API keys in the gateway's database: issued (shown only here) and revoked. */
import { createApiKeyStore } from "../../db/api-key-store.js";
import { isScope, issueApiKey, scopes, type Scope } from "../../domain/api-key.js";
import { UsageError } from "../errors.js";
import { requireTenants } from "../reach-service.js";
import { adminCommand } from "../resources.js";

export const keyCommands = [
  adminCommand({
    name: "key create",
    options: {
      tenants: { type: "string", list: true, value: "ID" },
      scopes: { type: "string", list: true, value: "S" },
      name: { type: "string", value: "N" },
    },
    does: `issues an API key (printed only here) granted these tenants and scopes (${scopes.join(", ")})`,
    async run({ tenants: tenantIds, scopes: requested, name }, resources) {
      const unknown = requested.filter((scope) => !isScope(scope));
      if (unknown.length > 0) {
        throw new UsageError(`unknown scope ${unknown.join(", ")}; known scopes: ${scopes.join(", ")}`);
      }
      await requireTenants(resources, tenantIds);
      if (tenantIds.length > 0 && requested.length === 0) {
        resources.warn(
          "the key is granted tenants but no scopes: it can use the catalog but no tenant operation; add --scopes",
        );
      }
      const issued = issueApiKey();
      const details = { name: name ?? "unnamed", scopes: requested as Scope[], tenantIds };
      await createApiKeyStore(await resources.db()).insert(issued, details);
      return { id: issued.id, key: issued.key, name: details.name, scopes: details.scopes, tenants: tenantIds };
    },
  }),
  adminCommand({
    name: "key revoke",
    options: { id: { type: "string", required: true, value: "KEYID" } },
    does: "revokes a key; every gateway refuses it at once",
    async run({ id }, resources) {
      if (!(await createApiKeyStore(await resources.db()).revoke(id))) throw new UsageError(`no key ${id}`);
      return { id, revoked: true };
    },
  }),
];
