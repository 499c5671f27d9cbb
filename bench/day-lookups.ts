/**
 * `npm run bench:day-lookups`: what finding deliveries by id costs over the day partitions of the
 * history, with the day the id names (the product since delivery ids carry their day:
 * services/webhooks/src/domain/ids.ts) against without it (the statements of the release before,
 * kept here as the baseline), in one scratch database of DAY_LOOKUPS_ROWS deliveries (default
 * 300 000) spread over 30 days, each day its partition as the janitor makes them (36 in all).
 *
 * - The worker's batched claim (db/claim-batcher.ts through `withBatchedClaims`: the claims of one
 *   turn of the event loop in one statement) for batches of DAY_LOOKUPS_BATCHES (default 1,16,64)
 *   of the last hour's deliveries, against the claim statement without the day. Postgres plans a claim
 *   anew for most runs (its `unnest` of the ids is estimated at 100 rows in a generic plan): without
 *   the day, over every partition.
 * - GetDelivery's read of the delivery (ledger-store `inspect`, its attempts included) against the
 *   same row read by id alone.
 *
 * p50 and p90 in ms of DAY_LOOKUPS_REPS runs each (default 500), in alternating blocks of 50 so
 * the machine's drift falls on both, on one connection; the ratio is without ÷ with the day.
 */
import { createScratchDatabase } from "@platform/local-stack/postgres-databases";
import {
  createDatabase,
  migrateToLatest,
  preparedStatement,
  queryRows,
  type Knex,
} from "@platform/service-kit/postgres";
import { migrations } from "@platform/webhooks/migrations";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "@platform/webhooks/config";
import { createAttemptStore } from "@platform/webhooks/db/attempt-store";
import { withBatchedClaims } from "@platform/webhooks/db/claim-batcher";
import { createLedgerStore } from "@platform/webhooks/db/ledger-store";
import { utcDay } from "@platform/webhooks/domain/ids";

export interface DayLookupOptions {
  rows: number;
  batches: number[];
  reps: number;
}

export interface DayLookupFigure {
  lookup: string;
  everyDay: { p50: number; p90: number };
  idsDay: { p50: number; p90: number };
}

const TENANT = "ten_day_lookups";
const ENDPOINT = `ep_${"b".repeat(24)}`;
const BLOCK = 50;

/** The claim of the release before: the deliveries found by id in every day partition. */
const claimEveryDay = preparedStatement(
  "bench_claim_every_day",
  `with jobs as (select * from unnest(?::text[], ?::int[]) as j(id, generation)),
        free as (
          select d.id from deliveries d join jobs j on j.id = d.id and j.generation = d.generation
           where d.status in ('pending', 'awaiting_retry')
             and (d.leased_until is null or d.leased_until < now())
           order by d.id
             for update of d skip locked)
   update deliveries d
      set leased_until = now() + make_interval(secs => ?::double precision / 1000)
     from free, endpoints e
    where d.id = free.id and e.id = d.endpoint_id
returning d.id`,
);

/** GetDelivery's reads as the release before made them: the row by id alone, then its attempts in its day. */
const rowEveryDay = preparedStatement(
  "bench_delivery_every_day",
  "select *, payload from deliveries where tenant_id = ? and endpoint_id = ? and id = ? limit 1",
);
const attemptsOfDay = preparedStatement(
  "bench_delivery_attempts",
  `select number, attempted_at, duration_ms, succeeded, status_code, error, response_body, response_body_truncated
     from attempts where delivery_id = ? and delivery_created_at >= ? and delivery_created_at < ?
    order by number`,
);

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!;
const summary = (xs: number[]) => ({ p50: quantile(xs, 0.5), p90: quantile(xs, 0.9) });

/** `a` and `b` run `reps` times each in alternating blocks; their times in ms. */
async function alternate(
  reps: number,
  a: () => Promise<void>,
  b: () => Promise<void>,
): Promise<{ a: number[]; b: number[] }> {
  const times = { a: [] as number[], b: [] as number[] };
  for (let done = 0; done < reps; done += BLOCK) {
    for (const [work, into] of [
      [a, times.a],
      [b, times.b],
    ] as const) {
      for (let i = 0; i < Math.min(BLOCK, reps - done); i++) {
        const started = performance.now();
        await work();
        into.push(performance.now() - started);
      }
    }
  }
  return times;
}

async function fill(db: Knex, rows: number): Promise<void> {
  await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
  await db.raw("select webhooks_history.ensure_day_partitions(current_date - 30, current_date + 3)");
  await db("endpoints").insert({
    id: ENDPOINT,
    tenant_id: TENANT,
    url: "https://hooks.example.test/x",
    description: "",
    event_types: ["booking.created"],
    api_version: "2026-11-01",
    secret_sealed: "v1.k1.x.y.z",
  });
  // Ids as the service makes them (the day, then random hex); as many rows on each of the 30 days
  // before now, the last day's within 10-18 minutes before now; all pending, generation 0.
  await db.raw(
    `insert into deliveries (id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status,
                             next_attempt_at, created_at)
     select 'dlv_' || lpad(to_hex(floor(extract(epoch from at) / 86400)::int), 4, '0') || left(md5(n::text), 20),
            ?, ?, 'evt_' || n, 'booking.created', true, '{}', 'pending', now(), at
       from (select n, now() - interval '10 minutes' - make_interval(secs => (n % 30) * 86400.0 + (n % 997) * 0.5) as at
               from generate_series(1, ?) n) s`,
    [TENANT, ENDPOINT, rows],
  );
  await db.raw("analyze");
}

export async function measureDayLookups(options: DayLookupOptions): Promise<DayLookupFigure[]> {
  const scratch = await createScratchDatabase("day_lookups");
  // One connection: every run on the same prepared statements.
  const db = createDatabase({
    url: scratch.url,
    schema: WEBHOOKS_SCHEMA,
    searchPath: WEBHOOKS_SEARCH_PATH,
    poolMax: 1,
  });
  try {
    await fill(db, options.rows);
    const recent = (
      await db.raw<{ rows: { id: string }[] }>(
        "select id from deliveries where created_at > now() - interval '1 hour' order by id limit ?",
        [Math.max(...options.batches, 1)],
      )
    ).rows.map((row) => row.id);
    const store = withBatchedClaims(createAttemptStore(db), db);
    const figures: DayLookupFigure[] = [];
    for (const size of options.batches) {
      const ids = recent.slice(0, size);
      if (ids.length < size) throw new Error(`only ${ids.length} deliveries of the last hour for a batch of ${size}`);
      // A lease of 0 ms: the next run finds them free again.
      const times = await alternate(
        options.reps,
        async () => {
          const rows = await queryRows(db, claimEveryDay, [ids, ids.map(() => 0), 0]);
          if (rows.length !== size) throw new Error(`the claim without the day claimed ${rows.length} of ${size}`);
        },
        async () => {
          const results = await Promise.all(ids.map((id) => store.claim({ deliveryId: id, generation: 0 }, 0)));
          const claimed = results.filter((r) => r.kind === "claimed").length;
          if (claimed !== size) throw new Error(`the claim by the ids' day claimed ${claimed} of ${size}`);
        },
      );
      figures.push({ lookup: `claim, batch of ${size}`, everyDay: summary(times.a), idsDay: summary(times.b) });
    }
    const ledger = createLedgerStore(db);
    const id = recent[0]!;
    const times = await alternate(
      options.reps,
      async () => {
        const [row] = await queryRows<{ created_at: Date }>(db, rowEveryDay, [TENANT, ENDPOINT, id]);
        if (!row) throw new Error("the delivery was not found by id alone");
        const day = utcDay(row.created_at);
        await queryRows(db, attemptsOfDay, [id, day.start, day.end]);
      },
      async () => {
        await ledger.inspect(TENANT, ENDPOINT, id);
      },
    );
    figures.push({ lookup: "GetDelivery (with its attempts)", everyDay: summary(times.a), idsDay: summary(times.b) });
    return figures;
  } finally {
    await db.destroy();
    await scratch.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const options: DayLookupOptions = {
    rows: Number(process.env.DAY_LOOKUPS_ROWS ?? 300_000),
    batches: (process.env.DAY_LOOKUPS_BATCHES ?? "1,16,64").split(",").map(Number),
    reps: Number(process.env.DAY_LOOKUPS_REPS ?? 500),
  };
  const figures = await measureDayLookups(options);
  const ms = (n: number) => n.toFixed(3);
  console.log(`${options.rows} deliveries over 30 days (36 day partitions), ${options.reps} runs each, ms:`);
  console.table(
    figures.map((f) => ({
      lookup: f.lookup,
      "every day p50 / p90": `${ms(f.everyDay.p50)} / ${ms(f.everyDay.p90)}`,
      "the id's day p50 / p90": `${ms(f.idsDay.p50)} / ${ms(f.idsDay.p90)}`,
      "p50 ratio (every day / the id's day)": (f.everyDay.p50 / f.idsDay.p50).toFixed(2),
    })),
  );
  console.log(JSON.stringify({ bench: "day-lookups", options, figures }));
}
