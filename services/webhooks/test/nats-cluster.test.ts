/**
 * JetStream replicas (NATS_STREAM_REPLICAS): a three-server nats-server cluster of the test's own
 * on loopback (free ports, its own stores in a temp dir, unique cluster and server names), with the
 * webhooks and notify processes on it through a NATS_URL naming all three servers.
 *
 * - Declared at every start: webhooks first runs with one replica (as every deployment did before
 *   the setting), then restarts with NATS_STREAM_REPLICAS=3, which brings its existing streams and
 *   durable consumers to three replicas in place; notify declares its consumer with three.
 * - The server that leads the EVENTS stream is killed with -9 in the middle of a burst and never
 *   started again. Every (endpoint, event) delivery reaches its HTTPS receiver and the ledger agrees
 *   (burst.ts's checks, as the single-server restart test in crash-infrastructure.test.ts); a
 *   receiver gets a request twice only for an attempt the ledger records as failed (delivery is at
 *   least once, docs/webhooks.md), never for a job NATS handed out again after the kill. notify's
 *   projector applies every event of the burst exactly once.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createTestCertificates, eventually, type TestCertificates } from "@platform/local-stack/https-receiver";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { ensureDurableConsumer, ensureStream } from "@platform/service-kit/nats";
import { AckPolicy, connect, RetentionPolicy, StorageType, type JetStreamManager, type NatsConnection } from "nats";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELIVERY_CONSUMER, FANOUT_CONSUMER } from "../src/events/streams.js";
import {
  burstEvents,
  expectNothingLost,
  fastRecoveryEnv,
  publishBurst,
  receivedCount,
  startBurstRig,
  type Burst,
  type BurstRig,
} from "./burst.js";
import { startNatsCluster, stopNatsServer, type NatsCluster } from "./nats-server.js";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-process.js";

const EVENTS = 300;
const notifyEntry = join(import.meta.dirname, "..", "..", "notify", "dist", "src", "main.js");

interface Replication {
  replicas: number | undefined;
  /** The servers that keep a copy besides the leader. */
  followers: number;
}

async function streamReplication(jsm: JetStreamManager, stream: string): Promise<Replication> {
  const info = await jsm.streams.info(stream);
  return { replicas: info.config.num_replicas, followers: info.cluster?.replicas?.length ?? 0 };
}

/**
 * Moves the leadership of a stream (`consumer` undefined) or of a durable consumer to `server`:
 * asks its leader to step down until the election lands there (each step picks one of the others).
 */
async function leadOn(nc: NatsConnection, jsm: JetStreamManager, server: string, stream: string, consumer?: string) {
  const leader = async () =>
    consumer === undefined
      ? (await jsm.streams.info(stream)).cluster?.leader
      : (await jsm.consumers.info(stream, consumer)).cluster?.leader;
  const subject =
    consumer === undefined
      ? `$JS.API.STREAM.LEADER.STEPDOWN.${stream}`
      : `$JS.API.CONSUMER.LEADER.STEPDOWN.${stream}.${consumer}`;
  for (let step = 0; step < 20; step++) {
    const current = await eventually(`a leader of ${stream} ${consumer ?? ""}`, () => leader().catch(() => undefined));
    if (current === server) return;
    await nc.request(subject, undefined, { timeout: 5_000 });
    await eventually(`a new leader of ${stream} ${consumer ?? ""}`, async () => {
      const next = await leader().catch(() => undefined);
      return next !== undefined && next !== current;
    });
  }
  throw new Error(`the leadership of ${stream} ${consumer ?? ""} never landed on ${server}`);
}

async function consumerReplication(jsm: JetStreamManager, stream: string, consumer: string): Promise<Replication> {
  const info = await jsm.consumers.info(stream, consumer);
  return { replicas: info.config.num_replicas, followers: info.cluster?.replicas?.length ?? 0 };
}

describe("a three-server NATS cluster under webhooks and notify (NATS_STREAM_REPLICAS=3)", () => {
  let certs: TestCertificates;
  let cluster: NatsCluster;
  let service: WebhooksUnderTest;
  let rig: BurstRig;
  let notifyDb: ScratchDatabase;
  let notify: ServiceProcess | undefined;
  let notifyPg: pg.Client | undefined;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  /** What webhooks declared with NATS_STREAM_REPLICAS=1, before its restart with 3. */
  let withOne: Record<string, Replication>;

  beforeAll(async () => {
    certs = await createTestCertificates();
    cluster = await startNatsCluster(3);
    nc = await connect({ servers: cluster.url.split(","), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    jsm = await nc.jetstreamManager();
    service = await startWebhooks({
      name: "whcluster",
      caPath: certs.caPath,
      natsUrl: cluster.url,
      env: { ...fastRecoveryEnv, NATS_STREAM_REPLICAS: "1" },
    });
    const { events, deliveries } = service.names;
    withOne = {
      events: await streamReplication(jsm, events),
      deliveries: await streamReplication(jsm, deliveries),
      fanout: await consumerReplication(jsm, events, FANOUT_CONSUMER),
      delivery: await consumerReplication(jsm, deliveries, DELIVERY_CONSUMER),
    };
    await service.restart("SIGTERM", { NATS_STREAM_REPLICAS: "3" });
    rig = await startBurstRig(service, certs, "cluster");
    notifyDb = await createScratchDatabase("ntcluster");
    notify = await startServiceProcess({
      name: "notify",
      entry: notifyEntry,
      env: {
        DATABASE_URL: notifyDb.url,
        SECRETS_KEY: randomBytes(32).toString("base64"),
        NATS_URL: cluster.url,
        NATS_NAMESPACE: service.names.namespace,
        NATS_STREAM_REPLICAS: "3",
        // Events a fetch held on the dead server's side come back after this (default 30 s).
        PROJECTIONS_ACK_WAIT: "2s",
        GRPC_HOST: "127.0.0.1",
        GRPC_PORT: "0",
        METRICS_PORT: "0",
      },
      timeoutMs: 60_000,
    });
    notifyPg = new pg.Client({ connectionString: notifyDb.url });
    await notifyPg.connect();
  }, 180_000);

  afterAll(async () => {
    await notifyPg?.end().catch(() => undefined);
    await notify?.stop().catch(() => undefined);
    await notifyDb?.drop().catch(() => undefined);
    await service?.stop().catch(() => undefined);
    await nc?.close().catch(() => undefined);
    await rig?.close();
    await cluster?.stop();
    await certs?.remove();
  }, 60_000);

  it("declares at every start: streams and consumers kept by one server are kept by three after a restart with 3", async () => {
    const one = { replicas: 1, followers: 0 };
    expect(withOne).toEqual({ events: one, deliveries: one, fanout: one, delivery: one });
    const three = { replicas: 3, followers: 2 };
    const { events, deliveries } = service.names;
    expect({
      events: await streamReplication(jsm, events),
      deliveries: await streamReplication(jsm, deliveries),
      fanout: await consumerReplication(jsm, events, FANOUT_CONSUMER),
      delivery: await consumerReplication(jsm, deliveries, DELIVERY_CONSUMER),
      projections: await consumerReplication(jsm, events, "notify-projections"),
    }).toEqual({ events: three, deliveries: three, fanout: three, delivery: three, projections: three });
  });

  it("scales a stream and its durable consumer down and up again in place (ensureStream, ensureDurableConsumer)", async () => {
    const stream = `${service.names.namespace}SCALED`;
    const declare = async (replicas: number) => {
      await ensureStream(jsm, {
        name: stream,
        subjects: [`${service.names.namespace}scaled.>`],
        storage: StorageType.File,
        retention: RetentionPolicy.Workqueue,
        num_replicas: replicas,
      });
      await ensureDurableConsumer(jsm, stream, {
        durable_name: "worker",
        ack_policy: AckPolicy.Explicit,
        num_replicas: replicas,
      });
    };
    const js = nc.jetstream();
    try {
      await declare(3);
      await js.publish(`${service.names.namespace}scaled.a`, new Uint8Array([1]));
      for (const replicas of [1, 3]) {
        await declare(replicas);
        const followers = replicas - 1;
        // (An info request may go unanswered while the new peers elect a leader.)
        await eventually(`the stream and its consumer at ${replicas}`, async () => {
          const s = await streamReplication(jsm, stream).catch(() => undefined);
          const c = await consumerReplication(jsm, stream, "worker").catch(() => undefined);
          return (
            s?.replicas === replicas &&
            s.followers === followers &&
            c?.replicas === replicas &&
            c.followers === followers
          );
        });
        // Nothing lost on the way: the message is still there for the consumer.
        expect((await jsm.streams.info(stream)).state.messages).toBe(1);
      }
    } finally {
      await jsm.streams.delete(stream).catch(() => undefined);
    }
  });

  it("loses nothing when the EVENTS leader is killed with -9 mid-burst and never restarted: every delivery once, every event projected once", async () => {
    const { events: eventsStream, deliveries } = service.names;
    // The worst case: the server that leads EVENTS leads everything else too, so the kill takes
    // every leader at once (the fan-out's, the delivery worker's and the projector's consumers).
    const leader = (await jsm.streams.info(eventsStream)).cluster?.leader;
    expect(cluster.servers.map((server) => server.name)).toContain(leader);
    await leadOn(nc, jsm, leader!, deliveries);
    await leadOn(nc, jsm, leader!, eventsStream, FANOUT_CONSUMER);
    await leadOn(nc, jsm, leader!, deliveries, DELIVERY_CONSUMER);
    await leadOn(nc, jsm, leader!, eventsStream, "notify-projections");

    // Half the burst before the kill; the other half published from the moment of the kill on,
    // while the two servers left elect new leaders.
    const events = burstEvents("cl", EVENTS);
    const ids = events.map((event) => event.eventId);
    const startedAt = Date.now();
    const before = publishBurst(service, rig, events.slice(0, EVENTS / 2));
    await eventually("deliveries under way", () => receivedCount(rig) >= 30, 60_000);
    expect((await jsm.streams.info(eventsStream)).cluster?.leader).toBe(leader);
    await stopNatsServer(cluster.server(leader!).process, "SIGKILL");
    const killedAt = Date.now();
    const receivedAtKill = receivedCount(rig);
    const acceptedAtKill = before.accepted.size;
    const after = publishBurst(service, rig, events.slice(EVENTS / 2));
    const burst: Burst = {
      accepted: new Set(),
      retriedPublishes: 0,
      done: Promise.all([before.done, after.done]).then(() => {
        for (const id of [...before.accepted, ...after.accepted]) burst.accepted.add(id);
        burst.retriedPublishes = before.retriedPublishes + after.retriedPublishes;
      }),
    };

    const newLeader = await eventually("a new EVENTS leader", async () => {
      const next = (await jsm.streams.info(eventsStream).catch(() => undefined))?.cluster?.leader;
      return next !== undefined && next !== leader && next;
    });
    const electedAfterMs = Date.now() - killedAt;

    const summary = await expectNothingLost("EVENTS leader killed", service, rig, burst, events, startedAt, 90_000);
    const settledAt = Date.now();
    // The kill was mid-burst: deliveries were still to come.
    expect(receivedAtKill).toBeLessThan(summary.deliveries);

    // A receiver got a request twice only for an attempt recorded as failed: the requests they got
    // are exactly the attempts of the ledger (expectNothingLost checked one succeeded attempt per
    // delivery), so no job redelivered by NATS after the kill was attempted again.
    const [attempts] = await service
      .db("attempts")
      .join("deliveries", "deliveries.id", "attempts.delivery_id")
      .whereIn("deliveries.event_id", ids)
      .count<{ count: string }[]>();
    expect(summary.received).toBe(Number(attempts?.count));
    expect(summary.duplicates).toBe(Number(attempts?.count) - summary.deliveries);

    // notify's projector applied every event of the burst, each once.
    // (projection_events records an event id at most once; each recorded event has its activity row.)
    const projected = async () =>
      (
        await notifyPg!.query<{ event_id: string; activity: string }>(
          `select e.event_id,
                  (select count(*) from notify.projection_activity a where a.event_id = e.event_id) as activity
             from notify.projection_events e where e.event_id = any($1)`,
          [ids],
        )
      ).rows;
    await eventually("notify projected every event", async () => (await projected()).length === ids.length, 60_000);
    const rows = await projected();
    expect(rows.map((row) => row.event_id).sort()).toEqual([...ids].sort());
    expect(rows.filter((row) => row.activity !== "1")).toEqual([]);

    // The stream lives on with a new leader among the two servers left, still at three replicas.
    const survived = await jsm.streams.info(eventsStream);
    expect(survived.config.num_replicas).toBe(3);
    expect(survived.cluster?.leader).not.toBe(leader);
    expect(survived.cluster?.replicas?.find((peer) => peer.name === leader)?.current).toBe(false);
    console.log(
      `[EVENTS leader ${leader} killed] accepted_at_kill=${acceptedAtKill} received_at_kill=${receivedAtKill} ` +
        `new_leader=${newLeader} elected_after_s=${Math.round(electedAfterMs / 100) / 10} ` +
        `settled_after_s=${Math.round((settledAt - killedAt) / 100) / 10}`,
    );
  }, 150_000);
});
