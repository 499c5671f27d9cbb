import type { Knex } from "@platform/service-kit/postgres";
import { recordSendV5 } from "./20261128140000_allowance_events_on_demand.js";

export const name = "20261128180000_record_send_without_perform";

function replaced(text: string, from: string, to: string): string {
  if (!text.includes(from))
    throw new Error(`${name}: record_send's text has changed; "${from.trim().slice(0, 60)}" was not found`);
  return text.split(from).join(to);
}

/**
 * record_send (the same 26 arguments, the same answers, the same locks in the same order) with
 * its function calls evaluated as PL/pgSQL's simple expressions instead of `perform` statements.
 *
 * bench:notify's BENCH_PG_PERF (perf samples of the backends; docs/operations.md) found PL/pgSQL's
 * own work about 11% of Postgres's CPU per send, the largest item floor (c) does not have. A
 * `perform f()` is a query run through SPI (a snapshot, an executor started, run and ended for a
 * one-row Result) where `v := f()` is evaluated in place; a send made five of them that touch no
 * table: the plan lock, the pace's lock, its setval and its unlock (twice written). And the
 * number's sequence is looked up in place (`to_regclass`) before pace_sequence, a nested PL/pgSQL
 * call, is asked to make it (a number's first send only).
 *
 * A void function's result is cast to text (''), so each call stays one expression.
 */
export const recordSendV6 = [
  [
    "      perform pg_advisory_xact_lock_shared(hashtextextended('notify.tenant_plan|' || p_tenant, 0));",
    "      v_void := pg_advisory_xact_lock_shared(hashtextextended('notify.tenant_plan|' || p_tenant, 0))::text;",
  ],
  [
    "        v_pace := pace_sequence(p_pace_key);",
    "        -- The number's sequence, made by pace_sequence on its first send only.\n" +
      "        v_pace := to_regclass('pace_' || md5(p_pace_key));\n" +
      "        if v_pace is null then\n" +
      "          v_pace := pace_sequence(p_pace_key);\n" +
      "        end if;",
  ],
  ["        perform pg_advisory_lock(v_pace_lock);", "        v_void := pg_advisory_lock(v_pace_lock)::text;"],
  [
    "            perform setval(v_pace, v_tat_us + ceil(p_pace_interval * 1000000)::bigint, true);",
    "            v_set := setval(v_pace, v_tat_us + ceil(p_pace_interval * 1000000)::bigint, true);",
  ],
  ["perform pg_advisory_unlock(v_pace_lock);", "v_unlocked := pg_advisory_unlock(v_pace_lock);"],
  [
    "      v_tat_us bigint;\n",
    "      v_tat_us bigint;\n      v_void text;\n      v_set bigint;\n      v_unlocked boolean;\n",
  ],
].reduce((text, [from, to]) => replaced(text, from!, to!), recordSendV5);

/** Replaces record_send in place (the same signature): the previous release calls it unchanged. */
export async function up(db: Knex): Promise<void> {
  await db.raw(recordSendV6);
}

export async function down(db: Knex): Promise<void> {
  await db.raw(recordSendV5);
}
