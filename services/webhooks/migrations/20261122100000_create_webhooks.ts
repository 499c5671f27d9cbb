import { createIdempotencyTable } from "@platform/service-kit/idempotency";
import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261122100000_create_webhooks";

/**
 * The webhooks schema. Endpoints with their sealed secrets; the events received from the bus
 * (and synthetic test events); one delivery per (event, endpoint); every attempt of a delivery;
 * the outbox of events published through the internal contract; idempotency keys.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable("endpoints", (table) => {
    table.text("id").primary();
    // Keyset paging, newest first.
    table.bigIncrements("seq", { primaryKey: false }).notNullable().unique();
    table.text("tenant_id").notNullable();
    table.text("url").notNullable();
    table.text("description").notNullable();
    table.specificType("event_types", "text[]").notNullable();
    table.text("api_version").notNullable();
    // secret-box.ts `v1.<keyId>.<iv>.<tag>.<ciphertext>`; never the plaintext.
    table.text("secret_sealed").notNullable();
    table.text("previous_secret_sealed").nullable();
    // The previous secret signs until this moment (24 h after the latest rotation).
    table.timestamp("previous_secret_expires_at", { useTz: true }).nullable();
    table.boolean("paused").notNullable().defaultTo(false);
    table.text("attention_reason").nullable();
    table.bigInteger("version").notNullable().defaultTo(1);
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    // Deleted endpoints stay (their deliveries reference them) but are invisible and receive nothing.
    table.timestamp("deleted_at", { useTz: true }).nullable();
    table.check("version >= 1", [], "endpoints_version_check");
  });
  await db.raw("create index endpoints_tenant_idx on endpoints (tenant_id, seq desc) where deleted_at is null");

  // Events as they entered the webhooks service (from the EVENTS stream, or synthetic tests).
  await db.schema.createTable("events", (table) => {
    table.text("id").primary();
    table.text("tenant_id").notNullable();
    table.text("type").notNullable();
    table.timestamp("occurred_at", { useTz: true }).notNullable();
    // data.object: the snapshot, snake_case keys.
    table.jsonb("data").notNullable();
    table.boolean("livemode").notNullable();
    table.timestamp("received_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.index(["received_at"], "events_received_at_idx");
  });

  await db.schema.createTable("deliveries", (table) => {
    table.text("id").primary();
    table.bigIncrements("seq", { primaryKey: false }).notNullable().unique();
    table.text("tenant_id").notNullable();
    table.text("endpoint_id").notNullable().references("id").inTable("endpoints");
    table.text("event_id").notNullable().references("id").inTable("events").onDelete("cascade");
    table.text("event_type").notNullable();
    table.boolean("livemode").notNullable();
    // The exact request body (UTF-8 JSON envelope): signed and sent as is on every attempt.
    table.text("payload").notNullable();
    table.text("status").notNullable();
    // Attempts in the current run (a redrive starts a new one) and in all runs.
    table.integer("attempts").notNullable().defaultTo(0);
    table.integer("attempts_total").notNullable().defaultTo(0);
    table.timestamp("next_attempt_at", { useTz: true }).nullable();
    // Bumped whenever a new job message is enqueued for the delivery; a job message carrying an
    // older generation is stale and is acked without effect.
    table.integer("generation").notNullable().defaultTo(0);
    // A worker making an attempt holds the delivery until then.
    table.timestamp("leased_until", { useTz: true }).nullable();
    table.integer("last_status_code").nullable();
    table.text("last_error").nullable();
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.unique(["event_id", "endpoint_id"], { indexName: "deliveries_event_endpoint_key" });
    table.check(
      "status in ('pending', 'succeeded', 'awaiting_retry', 'dead_lettered', 'held')",
      [],
      "deliveries_status_check",
    );
    table.index(["created_at"], "deliveries_created_at_idx");
  });
  await db.raw("create index deliveries_ledger_idx on deliveries (endpoint_id, seq desc)");
  await db.raw(
    "create index deliveries_due_idx on deliveries (next_attempt_at) where status in ('pending', 'awaiting_retry')",
  );
  await db.raw("create index deliveries_held_idx on deliveries (endpoint_id) where status = 'held'");

  await db.schema.createTable("attempts", (table) => {
    table.bigIncrements("id").primary();
    table.text("delivery_id").notNullable().references("id").inTable("deliveries").onDelete("cascade");
    table.text("endpoint_id").notNullable();
    // 1 for the delivery's first attempt, counting across runs.
    table.integer("number").notNullable();
    table.timestamp("attempted_at", { useTz: true }).notNullable();
    table.integer("duration_ms").notNullable();
    table.boolean("succeeded").notNullable();
    table.integer("status_code").nullable();
    table.text("error").nullable();
    // The first 4 KiB of the receiver's answer.
    table.binary("response_body").nullable();
    table.boolean("response_body_truncated").notNullable().defaultTo(false);
    table.unique(["delivery_id", "number"], { indexName: "attempts_delivery_number_key" });
    table.index(["endpoint_id", "attempted_at"], "attempts_endpoint_time_idx");
  });

  await createIdempotencyTable(db);
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable("idempotency_keys");
  await db.schema.dropTable("attempts");
  await db.schema.dropTable("deliveries");
  await db.schema.dropTable("events");
  await db.schema.dropTable("endpoints");
}
