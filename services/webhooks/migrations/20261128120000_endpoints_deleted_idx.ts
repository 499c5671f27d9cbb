import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261128120000_endpoints_deleted_idx";

/**
 * The console's message log leaves out the deliveries of the tenant's deleted endpoints
 * (db/ledger-store.ts `list` without an endpoint): it looks them up on every page, and the only
 * index on a tenant's endpoints holds the live ones, so the lookup read every endpoint of every
 * tenant (about 0.9 ms a page at 2 117 endpoints, bench:growth run G). A partial index on the
 * deleted ones, small as they are few, answers it. Built concurrently (a running release keeps
 * writing); an invalid index left by an interrupted build is dropped and built again.
 */
export const config = { transaction: false };

export async function up(db: Knex): Promise<void> {
  const { rows: invalid } = await db.raw<{ rows: unknown[] }>(
    `select 1 from pg_index i join pg_class c on c.oid = i.indexrelid
      where c.relname = 'endpoints_deleted_idx' and c.relnamespace = 'webhooks'::regnamespace and not i.indisvalid`,
  );
  if (invalid.length > 0) await db.raw("drop index concurrently webhooks.endpoints_deleted_idx");
  await db.raw(
    "create index concurrently if not exists endpoints_deleted_idx on webhooks.endpoints (tenant_id) where deleted_at is not null",
  );
}

export async function down(db: Knex): Promise<void> {
  await db.raw("drop index if exists webhooks.endpoints_deleted_idx");
}
