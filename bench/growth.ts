/**
 * npm run bench:growth (= `npx tsc -b && node bench/dist/growth.js`): what the webhooks and notify
 * reads, the due sweep, the retention step and the delivery rate cost as the data grows (issue 36).
 *
 * For each size of GROWTH_SIZES (deliveries, default "0,10000000,50000000"), a scratch database of
 * its own (never `test`'s), migrated by the webhooks service's own migrations, filled in SQL with a
 * month of synthetic history (bench/growth-fill.ts: 200 Zipf-skewed tenants, 1-20 endpoints each,
 * events of the catalog's types with their deliveries and attempts, 97% / 2% / 0.5% / 0.5%
 * succeeded / awaiting_retry / dead_lettered / held, created over 30 days), VACUUM ANALYZE, then:
 *   - table and index bytes (pg_table_size, pg_indexes_size) and per million deliveries;
 *   - p50/p99 over GROWTH_REPS (default 300) of the ledger's first and a deep page, the console's
 *     message log (first page, by event id, by type, by day), one delivery's detail, the due sweep
 *     (rolled back), a recovery's dry-run count over a day: the product's own db/ functions, on
 *     targets drawn from a random sample of the deliveries (weighted like the data);
 *   - bench:webhooks's delivery rate on that database (bench/growth-pipeline.ts, GROWTH_EVENTS
 *     events, default 1500, 0 skips it);
 *   - the retention step: db/retention.ts removeExpired on the oldest day of the month (its day
 *     partitions dropped whole).
 * Size 0 is the "empty" database every ratio is against: GROWTH_SEED deliveries (default 20000)
 * filled the same way, so every read finds rows. For notify, GROWTH_NOTIFY_SIZES (notifications,
 * default "0,10000000"): a transcript page, the activity poll, a send. Every read whose p99 is
 * over 1.5x the empty database's gets EXPLAIN (ANALYZE, BUFFERS) of its statements printed.
 * GROWTH_KEEP=1 keeps the scratch databases (their URLs printed). GROWTH_REMEASURE=<url>,<url>...
 * measures only the webhooks reads again on kept databases, each against the first (the empty
 * one): the same data under other server settings.
 */
import { join } from "node:path";
import { recordResult } from "./load-generator.js";
import {
  label,
  postgresSettings,
  remeasureWebhooksReads,
  runNotifySize,
  runWebhooksSize,
  type GrowthOptions,
  type NotifySizeResult,
  type SizeResult,
} from "./growth-run.js";
import type { TableBytes, Timed } from "./growth-measure.js";

const repo = join(import.meta.dirname, "..", "..");
const list = (text: string) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map(Number);

const MB = 1024 * 1024;

function printTimings(rows: { label: string; timings: Timed[] }[]): void {
  const base = rows[0]!.timings;
  const table: Record<string, Record<string, string>> = {};
  for (const t of base) table[t.name] = {};
  for (const { label: size, timings } of rows) {
    for (const t of timings) {
      const b = base.find((x) => x.name === t.name)!;
      table[t.name]![`${size}: p50 ms`] = t.p50.toFixed(2);
      table[t.name]![`${size}: p99 ms`] = t.p99.toFixed(2);
      if (timings !== base) {
        table[t.name]![`${size}: p99 / empty`] = (t.p99 / b.p99).toFixed(2);
        table[t.name]![`${size}: p50 / empty`] = (t.p50 / b.p50).toFixed(2);
      }
    }
  }
  console.table(table);
}

/** A slow read's plan, as EXPLAIN (ANALYZE, BUFFERS) printed it. */
function printPlan(size: string, read: string, plan: string, against: string): void {
  console.log(`\n${size}: ${read}: p99 over 1.5x ${against}; EXPLAIN (ANALYZE, BUFFERS):\n${plan}\n`);
}

function printBytes(size: string, rowsOf: number, bytes: TableBytes[], unit: string): void {
  const perMillion = rowsOf / 1e6;
  console.log(`${size}: bytes per table (per million ${unit}: total / ${perMillion})`);
  console.table(
    Object.fromEntries(
      bytes.map((b) => [
        b.table,
        {
          rows: b.rows,
          "table MB": (b.tableBytes / MB).toFixed(1),
          "indexes MB": (b.indexBytes / MB).toFixed(1),
          "total MB": (b.totalBytes / MB).toFixed(1),
          [`MB per million ${unit}`]: (b.totalBytes / MB / perMillion).toFixed(1),
        },
      ]),
    ),
  );
  const total = bytes.reduce((s, b) => s + b.totalBytes, 0);
  const indexes = bytes.reduce((s, b) => s + b.indexBytes, 0);
  console.log(
    `${size}: all tables ${(total / MB).toFixed(0)} MB (indexes ${(indexes / MB).toFixed(0)} MB): ` +
      `${(total / MB / perMillion).toFixed(0)} MB per million ${unit} (indexes ${(indexes / MB / perMillion).toFixed(0)})`,
  );
}

async function main() {
  const options: GrowthOptions = {
    sizes: list(process.env.GROWTH_SIZES ?? "0,10000000,50000000"),
    notifySizes: list(process.env.GROWTH_NOTIFY_SIZES ?? "0,10000000"),
    seed: Number(process.env.GROWTH_SEED ?? 20_000),
    reps: Number(process.env.GROWTH_REPS ?? 300),
    pipelineEvents: Number(process.env.GROWTH_EVENTS ?? 1500),
    pipelineWarmup: Number(process.env.GROWTH_WARMUP_EVENTS ?? 200),
    explainOver: 1.5,
    keep: process.env.GROWTH_KEEP === "1",
    log: (line) => console.log(line),
  };
  if (options.sizes[0] !== 0) options.sizes.unshift(0);
  if (options.notifySizes.length > 0 && options.notifySizes[0] !== 0) options.notifySizes.unshift(0);
  const settings = await postgresSettings(
    process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  );
  console.log("Postgres settings of this run:");
  console.table(settings);

  if (process.env.GROWTH_REMEASURE) {
    const measured: { label: string; timings: Timed[] }[] = [];
    for (const url of process.env.GROWTH_REMEASURE.split(",")) {
      const result = await remeasureWebhooksReads(url, options, measured[0]?.timings);
      measured.push({ label: `${result.deliveries} (${new URL(url).pathname.slice(1)})`, timings: result.timings });
      printTimings(measured);
      for (const { name: read, plan } of result.plans) {
        printPlan(String(result.deliveries), read, plan, "the first database's");
      }
    }
    return;
  }

  const webhooks: SizeResult[] = [];
  for (const size of options.sizes) {
    const result = await runWebhooksSize(size, options, webhooks[0]?.timings);
    webhooks.push(result);
    const name = label(size, options.seed);
    printBytes(name, result.deliveries, result.bytes, "deliveries");
    console.log(
      `${name}: index sizes, MB per million deliveries: ` +
        result.indexes.map((i) => `${i.index} ${(i.bytes / MB / (result.deliveries / 1e6)).toFixed(1)}`).join(", "),
    );
    printTimings(webhooks.map((r) => ({ label: label(r.size, options.seed), timings: r.timings })));
    const empty = webhooks[0]!;
    if (result.pipeline) {
      console.log(
        `${name}: delivery rate ${result.pipeline.deliveriesPerSecond.toFixed(0)} deliveries/s ` +
          `(${result.pipeline.deliveries} deliveries; WAL ${result.pipeline.walBytesPerDelivery.toFixed(0)} bytes per delivery, ` +
          `${result.pipeline.fpiBytesPerDelivery.toFixed(0)} of them full-page images; ${result.pipeline.checkpoints} checkpoints began)` +
          (result !== empty && empty.pipeline
            ? `, ${(result.pipeline.deliveriesPerSecond / empty.pipeline.deliveriesPerSecond).toFixed(2)}x the empty database's (target >= 0.9)`
            : ""),
      );
      console.log(
        `${name}: full-page images per delivery, by relation: ` +
          result.pipeline.fpiByRelation
            .slice(0, 12)
            .map((r) => `${r.relation} ${r.bytesPerDelivery.toFixed(0)}`)
            .join(", "),
      );
    }
    if (result.retention) {
      const r = result.retention;
      console.log(
        `${name}: retention step (removeExpired: the oldest day's partitions dropped) on the oldest day: ` +
          `${r.seconds.toFixed(2)} s for ${r.deliveriesRemoved} deliveries and ${r.eventsRemoved} events ` +
          `(${r.partitionsDropped} partitions dropped, ${r.rowsDeleted} rows deleted) ` +
          `(${((r.seconds * 1e6) / Math.max(1, r.deliveriesRemoved)).toFixed(1)} us per delivery; target < 1 s a day)`,
      );
    }
    for (const { name: read, plan } of result.plans) {
      printPlan(name, read, plan, "the empty database's");
    }
  }

  const notify: NotifySizeResult[] = [];
  for (const size of options.notifySizes) {
    const result = await runNotifySize(size, options, notify[0]?.timings);
    notify.push(result);
    const name = `notify ${label(size, options.seed)}`;
    printBytes(name, result.notifications, result.bytes, "notifications");
    printTimings(notify.map((r) => ({ label: label(r.size, options.seed), timings: r.timings })));
    for (const { name: read, plan } of result.plans) {
      printPlan(name, read, plan, "the empty database's");
    }
  }

  const strip = (timings: Timed[]) =>
    timings.map((t) => ({ name: t.name, p50: t.p50, p99: t.p99, reps: t.reps, writes: t.writes }));
  await recordResult(repo, "growth", {
    bench: "growth",
    settings,
    options: { ...options, log: undefined },
    webhooks: webhooks.map((r) => ({ ...r, timings: strip(r.timings), plans: r.plans.map((p) => p.name) })),
    notify: notify.map((r) => ({ ...r, timings: strip(r.timings), plans: r.plans.map((p) => p.name) })),
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
