import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261127160000_endpoint_rate_limit";

/**
 * A rate limit per endpoint (docs/webhooks.md, "Rate limits per endpoint"), held for every webhooks
 * replica together by one GCRA row per limited endpoint with the database's clock:
 *
 * - `endpoints.rate_limit`: deliveries per second, null for none.
 * - `endpoint_rate_limits`: the endpoint's theoretical arrival time `tat` (GCRA), created on its
 *   first limited claim.
 * - `deliveries.rate_slot_at` and `rate_slot_attempt`: the slot the limiter gave the delivery's
 *   attempt number `rate_slot_attempt + 1` (attempts_total when it was given). A slot is spent by
 *   one attempt: a claim given back before its attempt keeps it, a retry needs a new one.
 * - `webhooks_rate_reserve(delivery, endpoint, interval, tolerance)`: gives the claimed delivery
 *   the endpoint's next slot and advances `tat`; a slot in the future also reschedules the delivery
 *   to it and gives the claim back. Answers the milliseconds until the slot (zero or less: now).
 *
 * Expand only: a webhooks of the previous release ignores the columns and does not limit.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable("endpoints", (table) => {
    table.integer("rate_limit").nullable();
  });
  await db.raw(
    "alter table endpoints add constraint endpoints_rate_limit_range check (rate_limit between 1 and 10000)",
  );
  await db.schema.alterTable("deliveries", (table) => {
    table.timestamp("rate_slot_at", { useTz: true }).nullable();
    table.integer("rate_slot_attempt").nullable();
  });
  await db.schema.createTable("endpoint_rate_limits", (table) => {
    table.text("endpoint_id").primary().references("id").inTable("endpoints").onDelete("cascade");
    table.timestamp("tat", { useTz: true }).notNullable();
  });
  await db.raw(`
    create function webhooks_rate_reserve(
      p_delivery text, p_endpoint text, p_interval double precision, p_tolerance double precision)
      returns double precision
    language plpgsql as $$
    declare
      v_tat timestamptz;
      v_now timestamptz;
      v_slot timestamptz;
    begin
      insert into endpoint_rate_limits (endpoint_id, tat) values (p_endpoint, '-infinity')
      on conflict (endpoint_id) do nothing;
      select tat into v_tat from endpoint_rate_limits where endpoint_id = p_endpoint for update;
      -- The clock after the row lock: what another replica's slot left is already in v_tat.
      v_now := clock_timestamp();
      v_slot := greatest(v_now, v_tat - make_interval(secs => p_tolerance));
      update endpoint_rate_limits set tat = greatest(v_tat, v_now) + make_interval(secs => p_interval)
       where endpoint_id = p_endpoint;
      if v_slot > v_now then
        update deliveries
           set rate_slot_at = v_slot, rate_slot_attempt = attempts_total, next_attempt_at = v_slot,
               leased_until = null, updated_at = v_now
         where id = p_delivery;
      else
        update deliveries set rate_slot_at = v_slot, rate_slot_attempt = attempts_total where id = p_delivery;
      end if;
      return extract(epoch from (v_slot - v_now)) * 1000;
    end;
    $$`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw("drop function webhooks_rate_reserve(text, text, double precision, double precision)");
  await db.schema.dropTable("endpoint_rate_limits");
  await db.schema.alterTable("deliveries", (table) => {
    table.dropColumn("rate_slot_at");
    table.dropColumn("rate_slot_attempt");
  });
  await db.raw("alter table endpoints drop constraint endpoints_rate_limit_range");
  await db.schema.alterTable("endpoints", (table) => {
    table.dropColumn("rate_limit");
  });
}
