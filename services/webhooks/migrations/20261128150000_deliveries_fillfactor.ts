import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261128150000_deliveries_fillfactor";

/**
 * Deliveries' day partitions keep a tenth of each page free (fillfactor 90), so that a delivery's
 * updates (pending, then succeeded or awaiting_retry) find room on the page its row was inserted
 * on. None of them can be a HOT update (`status`, `next_attempt_at` and `updated_at` are in the
 * partial indexes), but on its own page the new version changes no other heap page: at 10 million
 * deliveries each update went to another, older page of the day, and each such page's first change
 * after a checkpoint wrote the whole 8 kB page to the WAL (bench:growth run K: 14.6 kB of full-page
 * images per delivery from heap updates, 8.0 kB from inserts onto pages with a row's room left).
 *
 * Partitions made from now on (ensure_day_partitions, every janitor pass) are created with it;
 * the existing ones get it for the pages they fill from now on (`alter table … set`, a
 * share-update-exclusive lock: a running release keeps reading and writing). The function is
 * changed as Postgres holds it (pg_get_functiondef), so it stays the previous migration's but for
 * the one statement.
 */
const FUNCTION = "webhooks_history.ensure_day_partitions(date, date)";
const CREATE = `'create table webhooks_history.%I (like webhooks_history.%I including defaults including constraints)'`;
const CREATE_WITH_FILLFACTOR = `${CREATE} || case v_table when 'deliveries' then ' with (fillfactor = 90)' else '' end`;

async function replaceInFunction(db: Knex, from: string, to: string): Promise<void> {
  const { rows } = await db.raw<{ rows: { definition: string }[] }>(
    "select pg_get_functiondef(?::regprocedure) as definition",
    [FUNCTION],
  );
  const definition = rows[0]!.definition;
  if (!definition.includes(from)) throw new Error(`${FUNCTION} does not hold the statement this migration changes`);
  await db.raw(definition.replace(from, to).replaceAll("?", "\\?"));
}

async function deliveriesPartitions(db: Knex): Promise<string[]> {
  const { rows } = await db.raw<{ rows: { name: string }[] }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'webhooks_history.deliveries'::regclass order by 1`,
  );
  return rows.map((row) => row.name);
}

export async function up(db: Knex): Promise<void> {
  await replaceInFunction(db, CREATE, CREATE_WITH_FILLFACTOR);
  for (const partition of await deliveriesPartitions(db)) {
    await db.raw("alter table ?? set (fillfactor = 90)", [`webhooks_history.${partition}`]);
  }
}

export async function down(db: Knex): Promise<void> {
  await replaceInFunction(db, CREATE_WITH_FILLFACTOR, CREATE);
  for (const partition of await deliveriesPartitions(db)) {
    await db.raw("alter table ?? reset (fillfactor)", [`webhooks_history.${partition}`]);
  }
}
