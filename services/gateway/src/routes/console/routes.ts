import { DomainError } from "@platform/service-kit/errors";
import { ApiError, apiErrorFromDomain, callService } from "../../http/api-error.js";
import { readJsonBody } from "../../http/middleware/json-body.js";
import { callOptionsOf, idempotencyKeyOf, tenantIdOf, type TenantRoute } from "../../http/route.js";
import { parseConsoleLinkRequest } from "./shapes.js";

/** The bearer key as presented (authenticate has verified it). */
const presentedKey = (authorization: string) => /^bearer +(\S+)/i.exec(authorization)?.[1] ?? "";

/**
 * Console links: a partner's backend signs one of its users into the console (docs/console.md),
 * the way an embedded portal is opened from the partner's own product.
 */
export const consoleRoutes: TenantRoute[] = [
  {
    surface: "tenant",
    operationId: "createConsoleLink",
    method: "POST",
    path: "/api/v1/tenants/:tenantId/console-links",
    scope: "tenant:manage",
    mutation: true,
    tag: "console",
    summary: "Mint a short-lived, single-use console link for one of the tenant's console users.",
    description:
      "Answers 201 with a `url` that signs the user (named by `userId` or `email`) into the console once, " +
      "within `expiresAt` (5 minutes by default), and opens `redirectPath`. Opening it again, or after it " +
      "expired, shows a page saying so (410). The token is in the URL's path until it is used: send the user " +
      "there directly. A repeat with the same Idempotency-Key (and key) answers the same link.",
    successStatus: 201,
    requestSchema: "ConsoleLinkRequest",
    responseSchema: "ConsoleLink",
    problems: ["console.link_invalid", "console.user_not_found", "console.user_disabled"],
    async handle(ctx, deps) {
      const order = parseConsoleLinkRequest(await readJsonBody(ctx));
      if (!deps.console) throw new ApiError(500, "the console is not configured");
      // A granted tenant that does not exist answers like an ungranted one (notify's tenant.not_found).
      await callService(deps.notify.getTenant({ tenantId: tenantIdOf(ctx) }, callOptionsOf(ctx)));
      let minted;
      try {
        minted = await deps.console.links.mint({
          ...order,
          tenantId: tenantIdOf(ctx),
          apiKeyId: ctx.state.apiKey.id,
          apiKey: presentedKey(ctx.get("authorization")),
          idempotencyKey: idempotencyKeyOf(ctx),
        });
      } catch (error) {
        if (error instanceof DomainError) throw apiErrorFromDomain(error);
        throw error;
      }
      if (minted.replayed) ctx.set("Idempotent-Replayed", "true");
      ctx.body = {
        id: minted.id,
        url: `${deps.console.origin(ctx)}/console/link/${minted.token}`,
        expiresAt: minted.expiresAt.toISOString(),
      };
    },
  },
];
