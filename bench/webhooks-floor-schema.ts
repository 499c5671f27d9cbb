/**
 * bench:webhooks's floor (bench/webhooks-floor.ts), its tables: the schema `webhooks_floor` with the
 * rows the chain writes (endpoints, events, outbox, deliveries, attempts), the same columns,
 * constraints, foreign keys and indexes as services/webhooks/migrations puts on those tables (so
 * each insert and update maintains as many index entries as the product's). Written plainly with
 * pg; nothing of ours. Also the sealing of endpoint secrets (AES-256-GCM), opened once when the
 * floor loads its endpoints.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type pg from "pg";

export const floorSchema = "webhooks_floor";

const ddl = `
create schema if not exists ${floorSchema};
create table if not exists ${floorSchema}.endpoints (
  id text primary key,
  seq bigserial not null unique,
  tenant_id text not null,
  url text not null,
  description text not null,
  event_types text[] not null,
  api_version text not null,
  secret_sealed text not null,
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  paused boolean not null default false,
  attention_reason text,
  attention_cause text,
  attention_since timestamptz,
  version bigint not null default 1 check (version >= 1),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz
);
create index if not exists endpoints_tenant_idx on ${floorSchema}.endpoints (tenant_id, seq desc) where deleted_at is null;
create table if not exists ${floorSchema}.events (
  id text primary key,
  tenant_id text not null,
  type text not null,
  occurred_at timestamptz not null,
  data jsonb not null,
  livemode boolean not null,
  received_at timestamptz not null default now()
);
create index if not exists events_received_at_idx on ${floorSchema}.events (received_at);
create table if not exists ${floorSchema}.outbox (
  seq bigserial primary key,
  event_id text not null unique,
  subject text not null,
  payload bytea not null,
  created_at timestamptz not null default now(),
  published_at timestamptz,
  traceparent text
);
create table if not exists ${floorSchema}.deliveries (
  id text primary key,
  seq bigserial not null unique,
  tenant_id text not null,
  endpoint_id text not null references ${floorSchema}.endpoints (id),
  event_id text not null references ${floorSchema}.events (id) on delete cascade,
  event_type text not null,
  livemode boolean not null,
  payload text not null,
  status text not null check (status in ('pending', 'succeeded', 'awaiting_retry', 'dead_lettered', 'held')),
  attempts integer not null default 0,
  attempts_total integer not null default 0,
  next_attempt_at timestamptz,
  generation integer not null default 0,
  leased_until timestamptz,
  last_status_code integer,
  last_error text,
  traceparent text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint deliveries_event_endpoint_key unique (event_id, endpoint_id)
);
create index if not exists deliveries_created_at_idx on ${floorSchema}.deliveries (created_at);
create index if not exists deliveries_ledger_idx on ${floorSchema}.deliveries (endpoint_id, seq desc);
create index if not exists deliveries_due_idx on ${floorSchema}.deliveries (next_attempt_at)
  where status in ('pending', 'awaiting_retry');
create index if not exists deliveries_held_idx on ${floorSchema}.deliveries (endpoint_id) where status = 'held';
create index if not exists deliveries_recoverable_idx on ${floorSchema}.deliveries (endpoint_id, created_at)
  where status in ('awaiting_retry', 'dead_lettered');
create table if not exists ${floorSchema}.attempts (
  id bigserial primary key,
  delivery_id text not null references ${floorSchema}.deliveries (id) on delete cascade,
  endpoint_id text not null,
  number integer not null,
  attempted_at timestamptz not null,
  duration_ms integer not null,
  succeeded boolean not null,
  status_code integer,
  error text,
  response_body bytea,
  response_body_truncated boolean not null default false,
  constraint attempts_delivery_number_key unique (delivery_id, number)
);
create index if not exists attempts_endpoint_time_idx on ${floorSchema}.attempts (endpoint_id, attempted_at);
`;

/** Creates the floor's schema and tables (idempotent). */
export async function createFloorSchema(client: pg.ClientBase): Promise<void> {
  await client.query(ddl);
}

/** `<iv>.<tag>.<ciphertext>` (base64url), AES-256-GCM under `key`. */
export function sealSecret(key: Buffer, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return [iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString("base64url")).join(".");
}

export function openSecret(key: Buffer, sealed: string): string {
  const [iv, tag, ciphertext] = sealed.split(".").map((part) => Buffer.from(part, "base64url"));
  const decipher = createDecipheriv("aes-256-gcm", key, iv!);
  decipher.setAuthTag(tag!);
  return Buffer.concat([decipher.update(ciphertext!), decipher.final()]).toString("utf8");
}

/** Adds an endpoint of `tenant` at `url` subscribed to `eventTypes`; returns its id and secret. */
export async function addFloorEndpoint(
  client: pg.ClientBase,
  key: Buffer,
  endpoint: { tenant: string; url: string; eventTypes: string[] },
): Promise<{ id: string; secret: string }> {
  const id = `ep_${randomBytes(12).toString("hex")}`;
  const secret = `whsec_${randomBytes(24).toString("base64url")}`;
  await client.query(
    `insert into ${floorSchema}.endpoints (id, tenant_id, url, description, event_types, api_version, secret_sealed)
     values ($1, $2, $3, 'bench receiver', $4, '2026-07-01', $5)`,
    [id, endpoint.tenant, endpoint.url, endpoint.eventTypes, sealSecret(key, secret)],
  );
  return { id, secret };
}
