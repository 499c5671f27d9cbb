import { randomBytes } from "node:crypto";
import { DomainError } from "@platform/service-kit/errors";
import { fingerprintOf, runIdempotently, type IdempotencyOptions } from "@platform/service-kit/idempotency";
import type { Knex } from "@platform/service-kit/postgres";
import { consoleLinkToken, digestConsoleToken } from "../domain/console-token.js";
import type { ConsoleStore } from "./console-store.js";

/** What a partner's backend asks for: a link for one console user of the tenant. */
export interface ConsoleLinkOrder {
  tenantId: string;
  /** Exactly one of userId and email names the user. */
  userId?: string;
  email?: string;
  /** A /console path the link opens. */
  redirectPath: string;
  /** The API key that asks: its id scopes the Idempotency-Key, the key itself derives the token. */
  apiKeyId: string;
  apiKey: string;
  idempotencyKey: string;
}

export interface MintedConsoleLink {
  id: string;
  /** The link's token (never stored: derived from the API key and the link id). */
  token: string;
  expiresAt: Date;
  replayed: boolean;
}

/** Mints single-use console links, idempotently per API key and Idempotency-Key. */
export interface ConsoleLinks {
  mint(order: ConsoleLinkOrder): Promise<MintedConsoleLink>;
}

/**
 * The gateway's one mutation of its own: a console link. The link row and the key's recorded
 * result ({id, expiresAt}: no token) commit together (service-kit runIdempotently, the gateway's
 * idempotency_keys table); a repeat derives the same token from the same key and link id.
 */
export function createConsoleLinks(
  db: Knex,
  store: ConsoleStore,
  options: { ttlMs: number; idempotency: IdempotencyOptions },
): ConsoleLinks {
  return {
    async mint(order) {
      const fingerprint = fingerprintOf(
        "createConsoleLink",
        JSON.stringify([order.tenantId, order.userId ?? null, order.email ?? null, order.redirectPath]),
      );
      const command = {
        scope: `console-link:${order.apiKeyId}:${order.tenantId}`,
        key: order.idempotencyKey,
        fingerprint,
      };
      const outcome = await runIdempotently(
        db,
        command,
        async (trx) => {
          const user = await trx("console_users")
            .first<{ id: string; disabled_at: Date | null } | undefined>("id", "disabled_at")
            .where(
              order.userId !== undefined
                ? { tenant_id: order.tenantId, id: order.userId }
                : { tenant_id: order.tenantId, email: order.email },
            );
          if (!user) {
            throw new DomainError(
              "not_found",
              "console.user_not_found",
              "the tenant has no console user with this id or email",
            );
          }
          if (user.disabled_at !== null) {
            throw new DomainError("failed_precondition", "console.user_disabled", "this console user is disabled");
          }
          const id = `cl_${randomBytes(12).toString("hex")}`;
          const token = consoleLinkToken(order.apiKey, id);
          const expiresAt = await store.insertLink(trx, {
            id,
            digest: digestConsoleToken(token),
            userId: user.id,
            redirectPath: order.redirectPath,
            apiKeyId: order.apiKeyId,
            ttlMs: options.ttlMs,
          });
          return { id, expiresAt: expiresAt.toISOString() };
        },
        options.idempotency,
      );
      return {
        id: outcome.result.id,
        token: consoleLinkToken(order.apiKey, outcome.result.id),
        expiresAt: new Date(outcome.result.expiresAt),
        replayed: outcome.replayed,
      };
    },
  };
}
