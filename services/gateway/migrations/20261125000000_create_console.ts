import { createIdempotencyTable, IDEMPOTENCY_TABLE } from "@platform/service-kit/idempotency";
import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261125000000_create_console";

/**
 * The console (issue 18, docs/console.md): its users, their server-side sessions, the login
 * throttle and the one-time console links partners mint. Every token (session, invitation, link)
 * is stored as its SHA-256 digest only; passwords as argon2id PHC strings. The gateway's own
 * idempotency_keys table (service-kit idempotency) is for the one mutation the gateway itself owns:
 * POST .../console-links.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable("console_users", (table) => {
    table.text("id").primary();
    table.text("tenant_id").notNullable();
    // Lower-cased; unique per tenant (one person may be a user of several tenants).
    table.text("email").notNullable();
    table.text("role").notNullable();
    // argon2id PHC string; null until the invitation is accepted.
    table.text("password_hash").nullable();
    table.binary("invitation_digest").nullable().unique();
    table.timestamp("invitation_expires_at", { useTz: true }).nullable();
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.timestamp("disabled_at", { useTz: true }).nullable();
    table.unique(["tenant_id", "email"]);
  });
  await db.raw(
    `alter table console_users add constraint console_users_role check (role in ('owner', 'admin', 'viewer'))`,
  );

  await db.schema.createTable("console_sessions", (table) => {
    // SHA-256 of the cookie's value; the value itself is never stored.
    table.binary("id_digest").primary();
    table.text("user_id").notNullable().references("id").inTable("console_users").onDelete("cascade");
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.timestamp("last_seen_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.timestamp("ended_at", { useTz: true }).nullable();
    // logout, idle, absolute, disabled
    table.text("ended_reason").nullable();
    // One message shown on the next page (POST-redirect-GET), then cleared.
    table.jsonb("flash").nullable();
    table.index(["user_id"], undefined, { predicate: db.whereNull("ended_at") });
  });

  await db.schema.createTable("console_login_throttle", (table) => {
    // account:<tenant>:<email> or address:<client address>
    table.text("key").primary();
    table.integer("attempts").notNullable();
    table.timestamp("window_started_at", { useTz: true }).notNullable();
  });

  await db.schema.createTable("console_links", (table) => {
    table.binary("digest").primary();
    table.text("id").notNullable().unique();
    table.text("user_id").notNullable().references("id").inTable("console_users").onDelete("cascade");
    table.text("redirect_path").notNullable();
    // The API key that minted it.
    table.text("api_key_id").notNullable();
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.timestamp("expires_at", { useTz: true }).notNullable();
    table.timestamp("used_at", { useTz: true }).nullable();
  });

  await createIdempotencyTable(db);
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable(IDEMPOTENCY_TABLE);
  await db.schema.dropTable("console_links");
  await db.schema.dropTable("console_login_throttle");
  await db.schema.dropTable("console_sessions");
  await db.schema.dropTable("console_users");
}
