/**
 * What the send store's tests on real Postgres share: a scratch database with notify's schema,
 * the tenants a test names (activated unless said otherwise), a pg pool on the schema as the send
 * path's own, and new sends to record.
 */
import { randomUUID } from "node:crypto";
import { createScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import pg from "pg";
import { migrations } from "../migrations/index.js";
import { NOTIFY_SCHEMA } from "../src/config.js";
import type { NewSend } from "../src/db/notification-store.js";
import { createTenantRepository, type TenantRepository } from "../src/db/tenant-repository.js";
import { activate, type TenantPlan } from "../src/domain/tenant.js";

export interface SendDatabase {
  db: Knex;
  pool: pg.Pool;
  close(): Promise<void>;
}

export async function openSendDatabase(
  name: string,
  tenants: { id: string; plan: TenantPlan; activated?: boolean }[],
  more?: (trx: Knex.Transaction, repository: TenantRepository) => Promise<void>,
): Promise<SendDatabase> {
  const scratch = await createScratchDatabase(name);
  const db = createDatabase({ url: scratch.url, schema: NOTIFY_SCHEMA, poolMax: 2 });
  await migrateToLatest(db, NOTIFY_SCHEMA, migrations);
  const repository = createTenantRepository(db);
  await db.transaction(async (trx) => {
    for (const { id, plan, activated = true } of tenants) {
      await repository.create(trx, { id, name: id, plan });
      if (activated) await repository.update(trx, id, activate);
    }
    await more?.(trx, repository);
  });
  const pool = new pg.Pool({ connectionString: scratch.url, max: 4, options: `-c search_path=${NOTIFY_SCHEMA}` });
  return {
    db,
    pool,
    async close() {
      await pool.end();
      await db.destroy();
      await scratch.drop();
    },
  };
}

/** A new send of each call (keys in the order made), on a testing plan of `testingAllowance` sends a month. */
export function sendsOf(testingAllowance: number): (tenantId: string, overrides?: Partial<NewSend>) => NewSend {
  let serial = 0;
  return (tenantId, overrides = {}) => {
    const n = serial++;
    return {
      tenantId,
      idempotencyKey: `key-${String(n).padStart(4, "0")}`,
      fingerprint: "fp",
      owner: randomUUID(),
      notificationId: `ntf_${randomUUID().replaceAll("-", "").slice(0, 24)}`,
      transcriptEntryId: `msg_${randomUUID().replaceAll("-", "").slice(0, 24)}`,
      recipient: "+447700900123",
      type: "reminder",
      text: "Hi Ana",
      actorReference: "crm-user-7",
      delegationReference: null,
      requestId: `req_${n}`,
      leaseMs: 30_000,
      ttlMs: 86_400_000,
      testingAllowance,
      ...overrides,
    };
  };
}
