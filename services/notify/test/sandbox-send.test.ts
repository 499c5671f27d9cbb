import { Metadata } from "@grpc/grpc-js";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createLogger } from "@platform/service-kit/logger";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import pg from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { createSandboxChannel } from "../src/channel/sandbox-channel.js";
import { NOTIFY_SCHEMA } from "../src/config.js";
import { createNotificationStore } from "../src/db/notification-store.js";
import { createTenantRepository } from "../src/db/tenant-repository.js";
import { activate } from "../src/domain/tenant.js";
import { createNotificationMetrics } from "../src/grpc/notification-metrics.js";
import { createNotificationService } from "../src/grpc/notification-service.js";

describe("a send through the sandbox channel (real Postgres)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let pool: pg.Pool;
  const context = () => ({
    requestId: "req-sandbox",
    logger: createLogger("notify", "silent"),
    metadata: new Metadata(),
  });

  beforeAll(async () => {
    scratch = await createScratchDatabase("sandbox");
    db = createDatabase({ url: scratch.url, schema: NOTIFY_SCHEMA, poolMax: 4 });
    await migrateToLatest(db, NOTIFY_SCHEMA, migrations);
    pool = new pg.Pool({ connectionString: scratch.url, max: 4, options: `-c search_path=${NOTIFY_SCHEMA}` });
    const tenants = createTenantRepository(db);
    await db.transaction(async (trx) => {
      await tenants.create(trx, { id: "acme", name: "Acme", plan: "testing" });
      await tenants.update(trx, "acme", activate);
    });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.destroy();
    await scratch?.drop();
  });

  it("accepts, records the rendered text and the sandbox's own message id, and sends nothing outside", async () => {
    const service = createNotificationService({
      store: createNotificationStore(db, pool),
      provider: createSandboxChannel(),
      metrics: createNotificationMetrics(new Registry()),
      leaseMs: 30_000,
      ttlMs: 60_000,
      testingAllowance: 1000,
    });
    const answer = await service.sendNotification(
      {
        tenantId: "acme",
        idempotencyKey: "sandbox-key-1",
        to: "+447700900123",
        type: "no_show",
        clientName: "Ana",
        serviceName: "grooming",
        actor: { actorReference: "crm", delegationReference: undefined },
        otherFields: [],
      },
      context(),
    );
    expect(answer).toMatchObject({ state: "sent", type: "no_show", replayed: false });
    const { messages } = await service.listConversationMessages(
      { tenantId: "acme", to: "447700900123", limit: 0, cursor: "" },
      context(),
    );
    expect(messages.map((m) => [m.text, m.state])).toEqual([
      ["Hi Ana, we missed you at your grooming appointment.", "sent"],
    ]);
    const provider = await db("provider_messages").first<{ provider: string; provider_message_id: string }>("*");
    expect(provider?.provider).toBe("sandbox");
    expect(provider?.provider_message_id).toMatch(/^sandbox\./);
  });
});
