/**
 * `bench:webhooks`'s delivery rate against a given (filled) database: a reduced run of its pipeline
 * phase with its own machinery (bench/webhooks-bench-setup.ts, the receivers' process
 * bench/webhooks-receivers.ts): the webhooks service started on that database, 4 HTTPS receivers
 * (one endpoint each, every event matching all four), `events` booking.created events published
 * through EventService/PublishEvent 16 in flight, deliveries/s over the middle 80% of receipts
 * (p10 -> p90), after a warm-up burst and then a checkpoint. No floor, baseline, replicas, open
 * loop or counting.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { credentials } from "@grpc/grpc-js";
import { createTestCertificates } from "@platform/local-stack/https-receiver";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { EventServiceClient, WebhookServiceClient } from "@platform/proto/webhooks/v1";
import { connect } from "nats";
import pg from "pg";
import { percentile } from "./load-generator.js";
import { walDuring } from "./wal-during.js";
import {
  bookingPublisher,
  createReceiverEndpoints,
  forkReceivers,
  webhooksServiceEnv,
} from "./webhooks-bench-setup.js";

const repo = join(import.meta.dirname, import.meta.dirname.endsWith("dist") ? "../.." : "..");
/** The receivers' compiled script, relative to webhooks-bench-setup's folder (bench/ or bench/dist/). */
const receiversScript = import.meta.dirname.endsWith("dist") ? "webhooks-receivers.js" : "dist/webhooks-receivers.js";
const receiverCount = 4;
const publishConcurrency = 16;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface PipelineRate {
  deliveriesPerSecond: number;
  deliveries: number;
  /** WAL the server wrote during the measured burst, per delivery (pg_current_wal_lsn: the whole server's). */
  walBytesPerDelivery: number;
  /**
   * Of that WAL, the full-page images (a page's first change after a checkpoint writes the whole
   * page), per delivery, and the relations of this database whose pages they were with the kind of
   * record that wrote them ("deliveries_p20261128 (Heap/UPDATE)"; the largest first; a record's
   * images counted under its first block's relation), from pg_walinspect.
   */
  fpiBytesPerDelivery: number;
  fpiByRelation: { relation: string; bytesPerDelivery: number }[];
  /** Checkpoints that began during the burst (one is made just before it). */
  checkpoints: number;
}

/** The full-page images written between two WAL positions, per relation of the connected database. */
async function fullPageImages(
  c: pg.Client,
  from: string,
  to: string,
): Promise<{ total: number; byRelation: { relation: string; bytes: number }[] }> {
  const { rows } = await c.query<{ relation: string; bytes: string }>(
    `with images as (
       select (regexp_match(block_ref, 'rel (\\d+)/(\\d+)/(\\d+)')) as rel, fpi_length,
              resource_manager || '/' || record_type as record
         from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
        where fpi_length > 0
     )
     select case when rel[2]::oid = (select oid from pg_database where datname = current_database())
                 then coalesce(pg_filenode_relation(0, rel[3]::oid)::text, 'relation ' || rel[3])
                 else 'other databases' end || ' (' || record || ')' as relation,
            sum(fpi_length)::text as bytes
       from images group by 1 order by sum(fpi_length) desc`,
    [from, to],
  );
  const byRelation = rows.map((r) => ({ relation: r.relation, bytes: Number(r.bytes) }));
  return { total: byRelation.reduce((sum, r) => sum + r.bytes, 0), byRelation };
}

interface Drained {
  ids: string[];
  at: number[];
}

/** The delivery rate of the webhooks pipeline on `databaseUrl` (its schema migrated and filled). */
export async function measurePipelineRate(
  databaseUrl: string,
  options: { events: number; warmupEvents: number; logLevel?: string },
): Promise<PipelineRate> {
  const certs = await createTestCertificates();
  const namespace = `growth${process.pid}_${randomBytes(3).toString("hex")}_`;
  const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
  const { child, ports } = await forkReceivers(receiversScript, {
    receivers: receiverCount,
    keyPath: join(certs.dir, "server.key"),
    certPath: join(certs.dir, "server.pem"),
  });
  const drain = () =>
    new Promise<Drained>((resolve) => {
      child.once("message", (m: Drained) => resolve(m));
      child.send({ type: "drain" });
    });
  let service: ServiceProcess | undefined;
  const tenant = `growth-bench-${randomBytes(3).toString("hex")}`;
  try {
    service = await startServiceProcess({
      name: "webhooks",
      entry: join(repo, "services", "webhooks", "dist", "src", "main.js"),
      env: webhooksServiceEnv({
        databaseUrl,
        secretsKey: randomBytes(32).toString("base64"),
        natsUrl,
        namespace,
        logLevel: options.logLevel ?? "warn",
        caPath: certs.caPath,
        // The fill's oldest rows are 30 days old: the service's janitor leaves them to the bench.
        defaults: { WEBHOOKS_RETENTION: "60d" },
      }),
      timeoutMs: 60_000,
    });
    const address = `127.0.0.1:${service.listening.grpcPort as number}`;
    const hooks = new WebhookServiceClient(address, credentials.createInsecure());
    await createReceiverEndpoints(hooks, tenant, ports);
    hooks.close();
    const events = new EventServiceClient(address, credentials.createInsecure());
    const publish = bookingPublisher([events], tenant);
    let sequence = 0;
    const burst = async (count: number) => {
      const ids = Array.from({ length: count }, () => `evt_growth_${process.pid}_${sequence++}`);
      const wanted = new Set(ids);
      let next = 0;
      const publishing = Promise.all(
        Array.from({ length: publishConcurrency }, async () => {
          while (next < ids.length) await publish(ids[next++]!);
        }),
      );
      const times: number[] = [];
      const deadline = Date.now() + 300_000;
      while (times.length < count * receiverCount) {
        if (Date.now() > deadline)
          throw new Error(`only ${times.length} of ${count * receiverCount} deliveries arrived`);
        await sleep(100);
        const drained = await drain();
        drained.ids.forEach((id, i) => {
          if (wanted.has(id)) times.push(drained.at[i]!);
        });
      }
      await publishing;
      times.sort((a, b) => a - b);
      const span = (percentile(times, 90) - percentile(times, 10)) / 1000;
      return { deliveriesPerSecond: (0.8 * times.length) / Math.max(span, 1e-3), deliveries: times.length };
    };
    await burst(options.warmupEvents);
    const wal = new pg.Client({ connectionString: databaseUrl });
    await wal.connect();
    try {
      // The burst starts right after a checkpoint at every size: without it the WAL per delivery
      // would follow whether a timed checkpoint fell between the fill and the burst (at 10 M it
      // does, at 1 M mostly not), not the database's size.
      const walSpan = await walDuring(wal, () => burst(options.events), { checkpointFirst: true });
      const measured = walSpan.result;
      const images = await fullPageImages(wal, walSpan.from, walSpan.to);
      events.close();
      return {
        ...measured,
        walBytesPerDelivery: walSpan.walBytes / measured.deliveries,
        fpiBytesPerDelivery: images.total / measured.deliveries,
        fpiByRelation: images.byRelation.map((r) => ({
          relation: r.relation,
          bytesPerDelivery: r.bytes / measured.deliveries,
        })),
        checkpoints: walSpan.checkpoints,
      };
    } finally {
      await wal.end();
    }
  } finally {
    await service?.stop();
    child.kill();
    const nc = await connect({ servers: natsUrl });
    const jsm = await nc.jetstreamManager();
    for (const name of [`${namespace}EVENTS`, `${namespace}WEBHOOK_DELIVERIES`]) {
      await jsm.streams.delete(name).catch(() => undefined);
    }
    await nc.close();
    await certs.remove();
  }
}
