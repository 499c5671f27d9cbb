/**
 * The steps of `npm run bench:growth` (bench/growth.ts), as functions a test can run at a tiny size
 * (bench/growth.test.ts): per size a scratch database of its own, migrated by the service's own
 * migrations, filled (bench/growth-fill.ts), measured (bench/growth-measure.ts,
 * bench/growth-pipeline.ts), and dropped.
 */
import { createScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { migrations as notifyMigrations } from "@platform/notify/migrations";
import { migrations as webhooksMigrations } from "@platform/webhooks/migrations";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "@platform/webhooks/config";
import pg from "pg";
import { fillNotify, fillWebhooks, SPAN_DAYS, type FillResult } from "./growth-fill.js";
import {
  explain,
  indexBytes,
  measureNotify,
  measureRetention,
  measureWebhooksReads,
  tableBytes,
  type RetentionStep,
  type TableBytes,
  type Timed,
} from "./growth-measure.js";
import { measurePipelineRate, type PipelineRate } from "./growth-pipeline.js";

export interface GrowthOptions {
  /** Deliveries per size; 0 is the "empty" database: `seed` deliveries, so the reads find rows. */
  sizes: number[];
  notifySizes: number[];
  seed: number;
  reps: number;
  /** 0: no pipeline run. */
  pipelineEvents: number;
  pipelineWarmup: number;
  /** A read whose p99 exceeds this many times the empty database's gets its EXPLAIN printed. */
  explainOver: number;
  keep: boolean;
  log: (line: string) => void;
}

export interface SizeResult {
  size: number;
  deliveries: number;
  fill: FillResult;
  bytes: TableBytes[];
  indexes: { index: string; bytes: number }[];
  timings: Timed[];
  rowsFound: number;
  pipeline: PipelineRate | undefined;
  retention: RetentionStep | undefined;
  /** EXPLAIN (ANALYZE, BUFFERS) of the reads above `explainOver` x the empty database's p99. */
  plans: { name: string; plan: string }[];
}

/** How a size is named in the output: 0 is the empty database (a seed). */
export const label = (size: number, seed: number) => (size === 0 ? `empty (seed of ${seed})` : `${size}`);

const client = async (url: string) => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
};

/** The Postgres settings a run had (what docs/operations.md states next to the figures). */
export const settingNames = [
  "server_version",
  "shared_buffers",
  "work_mem",
  "effective_cache_size",
  "maintenance_work_mem",
  "random_page_cost",
  "effective_io_concurrency",
  "synchronous_commit",
  "checkpoint_timeout",
  "max_wal_size",
  "checkpoint_completion_target",
  "wal_compression",
  "full_page_writes",
  "autovacuum",
  "autovacuum_vacuum_scale_factor",
  "autovacuum_vacuum_cost_limit",
];

export async function postgresSettings(url: string): Promise<Record<string, string>> {
  const c = await client(url);
  try {
    const { rows } = await c.query<{ name: string; setting: string }>(
      "select name, current_setting(name) as setting from pg_settings where name = any($1) order by name",
      [settingNames],
    );
    return Object.fromEntries(rows.map((r) => [r.name, r.setting]));
  } finally {
    await c.end();
  }
}

/** Plans of the timings above `over` x the baseline's p99 of the same name. */
async function slowPlans(
  c: pg.ClientBase,
  timings: readonly Timed[],
  baseline: readonly Timed[] | undefined,
  over: number,
): Promise<{ name: string; plan: string }[]> {
  const plans: { name: string; plan: string }[] = [];
  if (!baseline) return plans;
  for (const t of timings) {
    const base = baseline.find((b) => b.name === t.name);
    if (base && t.p99 > over * base.p99 && t.statements.length > 0) {
      plans.push({ name: t.name, plan: await explain(c, t.statements) });
    }
  }
  return plans;
}

/** The service's own connection to a webhooks database (its schema and search path). */
const webhooksDatabase = (url: string): Knex =>
  createDatabase({ url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 4 });

/**
 * The reads again on a database an earlier run kept (GROWTH_KEEP=1), with the plans of those over
 * `explainOver` x the baseline's p99: to read the same data under other server settings.
 */
export async function remeasureWebhooksReads(
  url: string,
  options: Pick<GrowthOptions, "reps" | "explainOver">,
  baseline: readonly Timed[] | undefined,
): Promise<{ deliveries: number; timings: Timed[]; plans: { name: string; plan: string }[] }> {
  const db = webhooksDatabase(url);
  const c = await client(url);
  try {
    // The plans' connection reads what the service reads (a fill's connection sets the same).
    await c.query(`set search_path = ${WEBHOOKS_SEARCH_PATH.join(", ")}`);
    const [{ n }] = (await db("deliveries").count({ n: "*" })) as [{ n: string }];
    const reads = await measureWebhooksReads(db, options.reps);
    return {
      deliveries: Number(n),
      timings: reads.timings,
      plans: await slowPlans(c, reads.timings, baseline, options.explainOver),
    };
  } finally {
    await c.end();
    await db.destroy();
  }
}

/** One webhooks size: fill, bytes, reads, pipeline rate, retention step; the database dropped after. */
export async function runWebhooksSize(
  size: number,
  options: GrowthOptions,
  baseline: readonly Timed[] | undefined,
): Promise<SizeResult> {
  const deliveries = size === 0 ? options.seed : size;
  const scratch = await createScratchDatabase("growth");
  const db = webhooksDatabase(scratch.url);
  const c = await client(scratch.url);
  try {
    await migrateToLatest(db, "webhooks", webhooksMigrations);
    const now = new Date();
    const fill = await fillWebhooks(c, deliveries, now, (done) => {
      if (deliveries >= 1_000_000) options.log(`  filled ${done} deliveries`);
    });
    options.log(
      `${label(size, options.seed)}: filled in ${fill.seconds.toFixed(1)} s (incl. VACUUM ANALYZE): ` +
        Object.entries(fill.rows)
          .map(([table, n]) => `${table} ${n}`)
          .join(", "),
    );
    const bytes = await tableBytes(c, WEBHOOKS_SEARCH_PATH);
    const indexes = await indexBytes(c, WEBHOOKS_SEARCH_PATH);
    const reads = await measureWebhooksReads(db, options.reps);
    const plans = await slowPlans(c, reads.timings, baseline, options.explainOver);
    const pipeline =
      options.pipelineEvents > 0
        ? await measurePipelineRate(scratch.url, {
            events: options.pipelineEvents,
            warmupEvents: options.pipelineWarmup,
          })
        : undefined;
    const retention = await measureRetention(db, now, SPAN_DAYS);
    return {
      size,
      deliveries,
      fill,
      bytes,
      indexes,
      timings: reads.timings,
      rowsFound: reads.rowsFound,
      pipeline,
      retention,
      plans,
    };
  } finally {
    await c.end();
    await db.destroy();
    if (options.keep) options.log(`kept ${scratch.url}`);
    else await scratch.drop();
  }
}

export interface NotifySizeResult {
  size: number;
  notifications: number;
  fill: FillResult;
  bytes: TableBytes[];
  timings: Timed[];
  plans: { name: string; plan: string }[];
}

/** One notify size: fill, bytes, transcript page, activity poll, send. */
export async function runNotifySize(
  size: number,
  options: GrowthOptions,
  baseline: readonly Timed[] | undefined,
): Promise<NotifySizeResult> {
  const notifications = size === 0 ? options.seed : size;
  const scratch = await createScratchDatabase("growthn");
  const db: Knex = createDatabase({ url: scratch.url, schema: "notify", poolMax: 4 });
  const c = await client(scratch.url);
  try {
    await migrateToLatest(db, "notify", notifyMigrations);
    const fill = await fillNotify(c, notifications, new Date(), (done) => {
      if (notifications >= 1_000_000) options.log(`  filled ${done} notifications`);
    });
    options.log(
      `notify ${label(size, options.seed)}: filled in ${fill.seconds.toFixed(1)} s (incl. VACUUM ANALYZE): ` +
        Object.entries(fill.rows)
          .map(([table, n]) => `${table} ${n}`)
          .join(", "),
    );
    const bytes = await tableBytes(c, "notify");
    const timings = await measureNotify(db, options.reps);
    const plans = await slowPlans(c, timings, baseline, options.explainOver);
    return { size, notifications, fill, bytes, timings, plans };
  } finally {
    await c.end();
    await db.destroy();
    if (options.keep) options.log(`kept ${scratch.url}`);
    else await scratch.drop();
  }
}
