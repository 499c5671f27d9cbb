import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { BusEvent } from "@platform/proto/webhooks/v1";
import { createLogger } from "@platform/service-kit/logger";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { parseSecretsKey, sealSecret } from "@platform/service-kit/secret-box";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import {
  applyInboundMessages,
  applyNumberUpdate,
  tenantOfPhoneNumber,
  type ChannelCallbackDeps,
  type CloudApiInboundMessage,
} from "../src/channel/channel-callbacks.js";
import { tokenContext } from "../src/channel/number-check.js";
import { NOTIFY_SCHEMA } from "../src/config.js";
import { createActivationRepository } from "../src/db/activation-repository.js";
import { createChannelRepository } from "../src/db/channel-repository.js";
import { createEventOutbox } from "../src/db/event-outbox.js";
import { createNotificationStore } from "../src/db/notification-store.js";
import { createTenantRepository } from "../src/db/tenant-repository.js";
import { applyCapabilityReport } from "../src/db/capability-reports.js";

/**
 * What the provider's callbacks do to a tenant's channel, applied directly on real Postgres (the
 * callback ingress calls these functions): number updates suspend and restore the
 * messaging_channel capability, STOP / START keywords opt the customer out and back in. The
 * provider retries and duplicates: every case is applied twice and must change things once.
 */
describe("channel callbacks (number updates, STOP and START) on real Postgres", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let deps: ChannelCallbackDeps;
  const secrets = parseSecretsKey(Buffer.alloc(32, 3).toString("base64"));
  let kicks = 0;
  let n = 0;

  beforeAll(async () => {
    scratch = await createScratchDatabase("channel_callbacks");
    db = createDatabase({ url: scratch.url, schema: NOTIFY_SCHEMA, poolMax: 4 });
    await migrateToLatest(db, NOTIFY_SCHEMA, migrations);
    deps = {
      db,
      tenants: createTenantRepository(db),
      activation: createActivationRepository(db),
      channels: createChannelRepository(db),
      events: createEventOutbox({ namespace: "test.", kick: () => kicks++ }),
      requiredCapabilities: ["messaging_channel"],
      logger: createLogger("notify", "silent"),
    };
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  /** A live tenant whose channel passed its check, with a connected number. */
  async function liveTenant(options: { stopKeywords?: string[]; startKeywords?: string[] } = {}) {
    const tenantId = `t_${++n}`;
    const phoneNumberId = `10654035224${String(n).padStart(4, "0")}`;
    await db("tenants").insert({ id: tenantId, name: tenantId, plan: "commercial" });
    await db.transaction((trx) =>
      applyCapabilityReport(trx, deps, tenantId, { capability: "messaging_channel", passed: true, reasonCode: null }),
    );
    await db.transaction((trx) =>
      deps.channels!.connect(
        trx,
        tenantId,
        {
          wabaId: `20${n}`,
          phoneNumberId,
          accessTokenSealed: sealSecret(secrets, "EAAtoken-abcdefghijkl", tokenContext(tenantId)),
          templates: {},
          messagesPerSecond: 80,
          stopKeywords: options.stopKeywords ?? ["STOP", "UNSUBSCRIBE"],
          startKeywords: options.startKeywords ?? ["START"],
        },
        undefined,
      ),
    );
    await db("tenant_channels")
      .update({ display_phone_number: `+1 555-01${String(n).padStart(2, "0")}` })
      .where({
        tenant_id: tenantId,
      });
    return { tenantId, phoneNumberId, wabaId: `20${n}`, digits: `155501${String(n).padStart(2, "0")}` };
  }

  async function eventTypesOf(tenantId: string): Promise<string[]> {
    const rows = await db("outbox").select<{ payload: Buffer }[]>("payload").orderBy("seq");
    return rows
      .map((row) => BusEvent.decode(row.payload))
      .filter((event) => event.tenantId === tenantId)
      .map((event) => event.type);
  }
  async function eventsOf(tenantId: string) {
    const rows = await db("outbox").select<{ payload: Buffer }[]>("payload").orderBy("seq");
    return rows
      .map((row) => BusEvent.decode(row.payload))
      .filter((event) => event.tenantId === tenantId)
      .map((event) => ({ type: event.type, object: JSON.parse(event.dataJson) as Record<string, unknown> }));
  }
  const readiness = async (tenantId: string) => {
    const tenant = await db("tenants")
      .first<{ channel_ready: boolean; last_error_code: string | null }>("channel_ready", "last_error_code")
      .where({ id: tenantId });
    const capability = await db("tenant_capabilities")
      .first<{ state: string; reason_code: string | null }>("state", "reason_code")
      .where({ tenant_id: tenantId, name: "messaging_channel" });
    return { ready: tenant.channel_ready, state: capability.state, reason: capability.reason_code };
  };
  const optedOut = async (tenantId: string, recipient: string) =>
    (await db("recipient_opt_outs").where({ tenant_id: tenantId, recipient })).length === 1;

  it("tenantOfPhoneNumber finds the tenant whose connected channel owns a number, and no other", async () => {
    const a = await liveTenant();
    const b = await liveTenant();
    expect(await tenantOfPhoneNumber(db, a.phoneNumberId)).toBe(a.tenantId);
    expect(await tenantOfPhoneNumber(db, b.phoneNumberId)).toBe(b.tenantId);
    expect(await tenantOfPhoneNumber(db, "999999999")).toBeUndefined();
  });

  it("a FLAGGED quality update suspends the channel once; a repeat changes nothing; UNFLAGGED restores it once", async () => {
    const { tenantId, phoneNumberId } = await liveTenant();
    const flagged = {
      field: "phone_number_quality_update" as const,
      value: { phone_number_id: phoneNumberId, event: "FLAGGED", current_limit: "TIER_1K" },
    };
    await applyNumberUpdate(deps, flagged);
    await applyNumberUpdate(deps, flagged);
    expect(await readiness(tenantId)).toEqual({ ready: false, state: "off", reason: "capability.channel_quality_low" });
    expect(await eventTypesOf(tenantId)).toEqual(["capability.suspended"]);
    expect(
      (await db("tenant_channels").first<{ number_status: string }>("number_status").where({ tenant_id: tenantId }))
        .number_status,
    ).toBe("FLAGGED");

    const unflagged = {
      field: "phone_number_quality_update" as const,
      value: { phone_number_id: phoneNumberId, event: "UNFLAGGED" },
    };
    await applyNumberUpdate(deps, unflagged);
    await applyNumberUpdate(deps, unflagged);
    expect(await readiness(tenantId)).toEqual({ ready: true, state: "on", reason: null });
    expect(await eventTypesOf(tenantId)).toEqual(["capability.suspended", "capability.restored"]);
  });

  it("finds the number by its displayed digits when the update names no phone number id", async () => {
    const { tenantId, digits } = await liveTenant();
    await applyNumberUpdate(deps, {
      field: "phone_number_quality_update",
      value: { display_phone_number: digits, event: "FLAGGED" },
    });
    expect((await readiness(tenantId)).reason).toBe("capability.channel_quality_low");
  });

  it("an UNFLAGGED does not lift a failure of another kind (a revoked token stays revoked)", async () => {
    const { tenantId, phoneNumberId } = await liveTenant();
    await db.transaction((trx) =>
      applyCapabilityReport(trx, deps, tenantId, {
        capability: "messaging_channel",
        passed: false,
        reasonCode: "capability.credentials_revoked",
      }),
    );
    await applyNumberUpdate(deps, {
      field: "phone_number_quality_update",
      value: { phone_number_id: phoneNumberId, event: "UNFLAGGED" },
    });
    expect(await readiness(tenantId)).toEqual({ ready: false, state: "off", reason: "capability.credentials_revoked" });
    expect(await eventTypesOf(tenantId)).toEqual(["capability.suspended"]);
  });

  it("an account_update ban of the WhatsApp Business Account suspends its channel; the reinstatement restores it, once each", async () => {
    const { tenantId, wabaId } = await liveTenant();
    const ban = {
      field: "account_update" as const,
      value: { event: "DISABLED_UPDATE", ban_info: { waba_ban_state: "DISABLE", waba_ban_date: "2026-11-27" } },
      wabaId,
    };
    await applyNumberUpdate(deps, ban);
    await applyNumberUpdate(deps, ban);
    expect(await readiness(tenantId)).toEqual({ ready: false, state: "off", reason: "capability.channel_restricted" });
    const reinstate = { ...ban, value: { event: "DISABLED_UPDATE", ban_info: { waba_ban_state: "REINSTATE" } } };
    await applyNumberUpdate(deps, reinstate);
    await applyNumberUpdate(deps, reinstate);
    expect(await readiness(tenantId)).toEqual({ ready: true, state: "on", reason: null });
    expect(await eventTypesOf(tenantId)).toEqual(["capability.suspended", "capability.restored"]);
  });

  it("an update for a number no tenant connected changes nothing", async () => {
    const before = await db("outbox").count<{ count: string }[]>("* as count");
    await applyNumberUpdate(deps, {
      field: "phone_number_quality_update",
      value: { phone_number_id: "424242", event: "FLAGGED" },
    });
    await applyInboundMessages(deps, "424242", [
      { from: "447700900123", id: "wamid.none", timestamp: "1790000000", type: "text", text: { body: "STOP" } },
    ]);
    expect(await db("outbox").count<{ count: string }[]>("* as count")).toEqual(before);
  });

  const text = (id: string, body: string, timestamp: number, from = "447700900123"): CloudApiInboundMessage => ({
    from,
    id,
    timestamp: String(timestamp),
    type: "text",
    text: { body },
  });

  it("STOP opts the customer out once (a duplicate callback changes nothing), shows on the transcript and the feed; START lifts it", async () => {
    const { tenantId, phoneNumberId } = await liveTenant();
    const stop = text("wamid.stop1", "  stop ", 1_790_000_000);
    await applyInboundMessages(deps, phoneNumberId, [stop]);
    await applyInboundMessages(deps, phoneNumberId, [stop, text("wamid.hello", "hello there", 1_790_000_001)]);
    expect(await optedOut(tenantId, "447700900123")).toBe(true);
    const events = await eventsOf(tenantId);
    expect(events.map((e) => e.type)).toEqual(["recipient.opted_out"]);
    expect(events[0]!.object).toEqual({
      tenant_id: tenantId,
      recipient_ref: expect.stringMatching(/^rcp_[0-9a-f]{24}$/) as string,
      state: "opted_out",
      reason_code: "consent.stop_keyword",
      actor: "customer",
      occurred_at: new Date(1_790_000_000_000).toISOString(),
    });
    expect(JSON.stringify(events)).not.toContain("447700900123");
    expect(await db("inbound_messages").where({ tenant_id: tenantId })).toHaveLength(1);

    const store = createNotificationStore(db, {} as pg.Pool);
    const transcript = await store.listTranscript(tenantId, "447700900123", 10, undefined);
    expect(transcript.map((e) => [e.type, e.text, e.state, e.notificationId, e.actorReference])).toEqual([
      ["inbound", "stop", "received", "", "customer"],
    ]);

    const start = text("wamid.start1", "Start", 1_790_000_100);
    await applyInboundMessages(deps, phoneNumberId, [start]);
    await applyInboundMessages(deps, phoneNumberId, [start]);
    expect(await optedOut(tenantId, "447700900123")).toBe(false);
    expect(await eventTypesOf(tenantId)).toEqual(["recipient.opted_out", "recipient.opted_in"]);

    // A STOP sent before the START but delivered after it is kept on the transcript, and changes nothing.
    await applyInboundMessages(deps, phoneNumberId, [text("wamid.late", "UNSUBSCRIBE", 1_790_000_050)]);
    expect(await optedOut(tenantId, "447700900123")).toBe(false);
    expect(await eventTypesOf(tenantId)).toEqual(["recipient.opted_out", "recipient.opted_in"]);
    expect((await store.listTranscript(tenantId, "447700900123", 10, undefined)).map((e) => e.text)).toEqual([
      "UNSUBSCRIBE",
      "Start",
      "stop",
    ]);
    expect(kicks).toBeGreaterThan(0);
  });

  it("uses the tenant's own keywords: its stop word opts out, the defaults it replaced do nothing", async () => {
    const { tenantId, phoneNumberId } = await liveTenant({ stopKeywords: ["PARAR"], startKeywords: ["VOLVER"] });
    await applyInboundMessages(deps, phoneNumberId, [text("wamid.x1", "STOP", 1_790_000_000, "5511999990000")]);
    expect(await optedOut(tenantId, "5511999990000")).toBe(false);
    await applyInboundMessages(deps, phoneNumberId, [text("wamid.x2", "parar", 1_790_000_001, "5511999990000")]);
    expect(await optedOut(tenantId, "5511999990000")).toBe(true);
    await applyInboundMessages(deps, phoneNumberId, [
      { from: "5511999990000", id: "wamid.x3", timestamp: "1790000002", type: "button", button: { text: "Volver" } },
    ]);
    expect(await optedOut(tenantId, "5511999990000")).toBe(false);
  });
});
