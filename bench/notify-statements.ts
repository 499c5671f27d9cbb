/**
 * `npm run bench:notify-statements`: what a send's two statements cost Postgres itself, notify's
 * against floor (c)'s, with nothing else running on the database (no projector, relay or
 * callbacks pass, no other process): the Postgres share of bench:notify's gap, split into the
 * send's own statements and the rest.
 *
 * One scratch database with notify's schema (its migrations) and floor (c)'s (bench/notify-floor-c-schema.ts),
 * one tenant in each (activated, channel ready, commercial), one connection per path; sends one
 * after another, each a new Idempotency-Key:
 *
 * - notify: `record_send` (with the number's pace, as every send through a number takes it) and the
 *   outcome statement, through the product's own store (db/notification-store.ts);
 * - notify, pacing by lock: the same with record_send as migration 20261127120000 wrote it (the
 *   number's row read `for update`, then updated), the baseline of 20261128130000;
 * - floor (c): its claim and outcome statements (the same rows and indexes, nothing of ours).
 *
 * Per path, NOTIFY_STATEMENTS_SENDS sends (default 1 000) in each of NOTIFY_STATEMENTS_ROUNDS
 * rounds (default 6), the paths alternating so the machine's drift falls on all: the median
 * round's wall time per send, the CPU time of the connection's Postgres backend per send (its
 * /proc stat: Postgres on this machine) and the WAL written per send (pg_current_wal_lsn: the
 * whole cluster's, so only a quiet cluster gives a true figure).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { migrations } from "@platform/notify/migrations";
import { recordSendV3InPlace, recordSendV4 } from "@platform/notify/migrations/20261128130000_pace_without_row_lock";
import { createNotificationStore } from "@platform/notify/db/notification-store";
import pg from "pg";
import { FLOOR_C_SCHEMA, FLOOR_C_STATEMENTS } from "./notify-floor-c-schema.js";

export interface StatementOptions {
  sends: number;
  rounds: number;
}

export interface StatementFigure {
  path: string;
  /** Medians over the rounds, per send. */
  wallUs: number;
  backendCpuUs: number;
  walBytes: number;
}

const TENANT = "ten_statements";
const TEXT = "Hi Ana, a reminder of your grooming at Paws & Co on Mon 3 May 10:00.";

/** CPU time (user + system) of one process so far, in µs, from /proc (clock ticks of 10 ms). */
function processCpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

async function backendPid(run: (sql: string) => Promise<{ rows: { pid: number }[] }>): Promise<number> {
  return (await run("select pg_backend_pid() as pid")).rows[0]!.pid;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function measureSendStatements(options: StatementOptions): Promise<StatementFigure[]> {
  const scratch = await createScratchDatabase("notify_statements");
  // One connection each: its backend is the one whose CPU is read.
  const db: Knex = createDatabase({ url: scratch.url, schema: "notify", poolMax: 1 });
  const floor = new pg.Client({ connectionString: scratch.url });
  try {
    await migrateToLatest(db, "notify", migrations);
    await db.raw(
      `insert into tenants (id, name, status, activated, channel_ready, plan, activation_state, activated_at, created_at, updated_at)
       values (?, 'Statements', 'active', true, true, 'commercial', 'live', now(), now(), now())`,
      [TENANT],
    );
    await floor.connect();
    await floor.query(FLOOR_C_SCHEMA);
    await floor.query("insert into bench_floor_c.tenants (id, activated, channel_ready) values ($1, true, true)", [
      TENANT,
    ]);
    const store = createNotificationStore(db, db as unknown as pg.Pool);
    const notifyPid = await backendPid((sql) => db.raw(sql));
    const floorPid = await backendPid((sql) => floor.query(sql));
    let serial = 0;

    const notifySend = async () => {
      const n = serial++;
      const key = `statements-${n}`;
      const notificationId = `ntf_${randomBytes(12).toString("hex")}`;
      const owner = randomUUID();
      const recorded = await store.record({
        tenantId: TENANT,
        idempotencyKey: key,
        fingerprint: "statements",
        owner,
        notificationId,
        transcriptEntryId: `msg_${randomBytes(12).toString("hex")}`,
        recipient: "+447700900123",
        type: "reminder",
        text: TEXT,
        actorReference: "crm-user-7",
        delegationReference: null,
        requestId: `req_${n}`,
        leaseMs: 30_000,
        ttlMs: 86_400_000,
        testingAllowance: 1000,
        // A pace no run reaches: every send takes a slot of the number, none is refused.
        pace: { key: "whatsapp:statements", perSecond: 1_000_000, burst: 1_000_000 },
      });
      if (!recorded.recorded) throw new Error(`notify's send was not recorded: ${JSON.stringify(recorded)}`);
      await store.complete(
        { tenantId: TENANT, idempotencyKey: key, owner, notificationId },
        { kind: "sent", providerMessageId: `wamid.${randomBytes(12).toString("hex")}` },
        "whatsapp",
        { notificationId, state: "sent", type: "reminder", createdAt: recorded.createdAt.toISOString() },
      );
    };
    const floorSend = async () => {
      const n = serial++;
      const key = `statements-${n}`;
      const notificationId = `ntf_${randomUUID()}`;
      const { rows } = await floor.query<{ created_at: Date | null }>({
        ...FLOOR_C_STATEMENTS.claim,
        values: [
          TENANT,
          key,
          "statements",
          randomUUID(),
          "+447700900123",
          notificationId,
          "reminder",
          `msg_${randomUUID()}`,
          TEXT,
          "crm-user-7",
          null,
        ],
      });
      const createdAt = rows[0]?.created_at;
      if (!createdAt) throw new Error("floor (c)'s send was not claimed");
      const result = { notificationId, state: "sent", type: "reminder", createdAt: createdAt.toISOString() };
      const eventId = `evt_${randomUUID()}`;
      await floor.query({
        ...FLOOR_C_STATEMENTS.outcome,
        values: [
          notificationId,
          "sent",
          `sandbox.${randomUUID()}`,
          TENANT,
          key,
          JSON.stringify(result),
          eventId,
          `events.${TENANT}.notification.sent`,
          Buffer.from(JSON.stringify({ id: eventId, type: "notification.sent", tenantId: TENANT, object: result })),
        ],
      });
    };
    const walLsn = async () =>
      BigInt((await floor.query<{ b: string }>("select (pg_current_wal_lsn() - '0/0'::pg_lsn)::text as b")).rows[0]!.b);

    const paths: { path: string; pid: number; before?: () => Promise<unknown>; send: () => Promise<void> }[] = [
      { path: "notify (record_send, outcome)", pid: notifyPid, before: () => db.raw(recordSendV4), send: notifySend },
      {
        path: "notify, pacing by lock then update (before 20261128130000)",
        pid: notifyPid,
        before: () => db.raw(recordSendV3InPlace),
        send: notifySend,
      },
      { path: "floor (c) (claim, outcome)", pid: floorPid, send: floorSend },
    ];
    const rounds = new Map<string, { wallUs: number; backendCpuUs: number; walBytes: number }[]>();
    for (let round = 0; round < options.rounds + 1; round++) {
      for (const path of paths) {
        await path.before?.();
        // Warm: the statements prepared and planned on this connection, the function compiled.
        for (let i = 0; i < Math.min(50, options.sends); i++) await path.send();
        const cpu0 = processCpuUs(path.pid);
        const wal0 = await walLsn();
        const started = performance.now();
        for (let i = 0; i < options.sends; i++) await path.send();
        const wallUs = ((performance.now() - started) * 1000) / options.sends;
        const backendCpuUs = (processCpuUs(path.pid) - cpu0) / options.sends;
        const walBytes = Number((await walLsn()) - wal0) / options.sends;
        // Round 0 warms every path up; it is not counted.
        if (round > 0) rounds.set(path.path, [...(rounds.get(path.path) ?? []), { wallUs, backendCpuUs, walBytes }]);
      }
    }
    // The product's function back in place (the database is dropped anyway).
    await db.raw(recordSendV4);
    return paths.map(({ path }) => {
      const measured = rounds.get(path)!;
      return {
        path,
        wallUs: median(measured.map((m) => m.wallUs)),
        backendCpuUs: median(measured.map((m) => m.backendCpuUs)),
        walBytes: median(measured.map((m) => m.walBytes)),
      };
    });
  } finally {
    await floor.end().catch(() => undefined);
    await db.destroy();
    await scratch.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const options: StatementOptions = {
    sends: Number(process.env.NOTIFY_STATEMENTS_SENDS ?? 1000),
    rounds: Number(process.env.NOTIFY_STATEMENTS_ROUNDS ?? 6),
  };
  const figures = await measureSendStatements(options);
  const floorFigure = figures.find((f) => f.path.startsWith("floor"))!;
  console.log(
    `a send's two statements, one after another on one connection each: ${options.sends} sends a round, median of ${options.rounds} rounds`,
  );
  console.table(
    figures.map((f) => ({
      path: f.path,
      "wall µs/send": f.wallUs.toFixed(0),
      "Postgres backend CPU µs/send": f.backendCpuUs.toFixed(0),
      "÷ floor (c)": (f.backendCpuUs / floorFigure.backendCpuUs).toFixed(2),
      "WAL bytes/send": f.walBytes.toFixed(0),
    })),
  );
  console.log(JSON.stringify({ bench: "notify-statements", options, figures }));
}
