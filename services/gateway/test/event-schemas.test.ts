import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import { startCloudApiStub, statusNotification, type CloudApiStub } from "@platform/local-stack/cloud-api-stub";
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WHATSAPP_CALLBACK_PATH } from "../src/routes/provider-callbacks/callbacks.js";
import { OpenApiContract } from "./openapi-contract.js";
import { startTestStack, type TestStack } from "./stack.js";
import { tenantApiCall } from "./tenant-api-call.js";

interface CatalogEntry {
  type: string;
  emission: string;
  subscribable: boolean;
  schema: Record<string, unknown> | null;
  example: { data: { object: Record<string, unknown> } } | null;
}

interface Envelope {
  id: string;
  type: string;
  tenant: string;
  livemode: boolean;
  data: { object: Record<string, unknown> };
}

/**
 * The catalog's schemas against what receivers get (issue 34 item 4): catalog, notify, webhooks and
 * gateway as processes. Every subscribable type is emitted by its real producer (admin `event
 * emit` for the published families; activation and capability reports; usage limits and records;
 * sends on the testing plan and the provider's status callbacks; a plan change), delivered to one
 * HTTPS endpoint subscribed to every type, and each envelope the receiver got is validated with
 * ajv against the schema GET .../webhooks/event-types serves for its type.
 */
describe("event schemas against real deliveries", () => {
  let stack: TestStack;
  let stub: CloudApiStub;
  let certs: TestCertificates;
  let receiver: TestReceiver;
  let contract: OpenApiContract;
  let tenant: string;
  let endpointId: string;
  let catalog: CatalogEntry[];
  const validators = new Map<string, ValidateFunction>();
  const keys: Record<string, string> = {};
  const APP_SECRET = "app-secret-never-logged-0123456789";
  const PHONE_NUMBER_ID = "106540352242922";
  let n = 0;

  const call = tenantApiCall({ gatewayUrl: () => stack.url, defaultKey: () => keys.full!, contract: () => contract });
  const mutate = (method: string, path: string, body?: unknown) =>
    call(method, `/api/v1/tenants/${tenant}${path}`, {
      headers: {
        "idempotency-key": `schemas-${Date.now()}-${n++}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const received = (): Envelope[] =>
    receiver.requests
      .map((request) => JSON.parse(request.body.toString("utf8")) as Envelope)
      .filter((envelope) => envelope.tenant === tenant);
  const liveTypes = () =>
    new Set(
      received()
        .filter((e) => e.livemode)
        .map((e) => e.type),
    );
  const report = (...args: string[]) =>
    stack.admin("capability", "report", "--tenant", tenant, "--capability", "messaging_channel", ...args);
  const emit = (type: string, data: Record<string, unknown>) =>
    stack.admin("event", "emit", "--tenant", tenant, "--type", type, "--data", JSON.stringify(data));

  /** Sends one notification through the stand-in; answers its message id (wamid). */
  async function send(): Promise<string> {
    const { res, body } = await mutate("POST", "/notifications", {
      to: `+4477009${String(30000 + n++).padStart(5, "0")}`,
      type: "no_show",
      clientName: "Ana",
      serviceName: "grooming",
      actor: { actorReference: "crm-user-7" },
    });
    expect(res.status, JSON.stringify(body)).toBe(200);
    return stub.accepted.at(-1)!.id;
  }
  const callback = async (id: string, status: "delivered" | "read" | "failed") => {
    const body = JSON.stringify(statusNotification(PHONE_NUMBER_ID, [{ id, status }]));
    const answer = await stub.postCallback(
      { url: `${stack.url}${WHATSAPP_CALLBACK_PATH}`, appSecret: APP_SECRET },
      body,
    );
    expect(answer.status).toBe(200);
  };
  const validate = (envelope: Envelope) => {
    const validator = validators.get(envelope.type);
    expect(validator, `a schema for ${envelope.type}`).toBeDefined();
    return validator!(envelope) ? [] : (validator!.errors ?? []);
  };

  beforeAll(async () => {
    certs = await createTestCertificates();
    receiver = await startReceiver(certs);
    stub = await startCloudApiStub();
    stack = await startTestStack(
      { WHATSAPP_APP_SECRET: APP_SECRET, WHATSAPP_VERIFY_TOKEN: "verify-token-never-logged-42" },
      {
        NOTIFY_CHANNEL_PROVIDER: "whatsapp",
        WHATSAPP_API_BASE_URL: stub.url,
        WHATSAPP_ACCESS_TOKEN: "EAAG-secret-access-token",
        WHATSAPP_PHONE_NUMBER_ID: PHONE_NUMBER_ID,
        PROVIDER_CALLBACK_PASS_INTERVAL: "200ms",
        NOTIFY_TESTING_ALLOWANCE: "5",
      },
      { NODE_EXTRA_CA_CERTS: certs.caPath },
    );
    contract = new OpenApiContract(
      (await (await fetch(`${stack.url}/api/v1/openapi.json`)).json()) as ConstructorParameters<
        typeof OpenApiContract
      >[0],
    );
    tenant = (await stack.admin("tenant", "create", "--name", "Schemas")).id as string;
    keys.full = (
      await stack.admin(
        "key",
        "create",
        "--scopes",
        "tenant:read,tenant:manage,webhook:manage,usage:manage,notification:send",
        "--tenants",
        tenant,
      )
    ).key as string;
    const listed = await call("GET", `/api/v1/tenants/${tenant}/webhooks/event-types`);
    expect(listed.res.status).toBe(200);
    catalog = listed.body.data as CatalogEntry[];
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    formats.default(ajv);
    for (const entry of catalog) if (entry.schema) validators.set(entry.type, ajv.compile(entry.schema));
    const created = await mutate("POST", "/webhooks", {
      url: receiver.url,
      description: "every type",
      eventTypes: catalog.filter((entry) => entry.subscribable).map((entry) => entry.type),
    });
    expect(created.res.status, JSON.stringify(created.body)).toBe(201);
    endpointId = created.body.id as string;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await stub?.close();
    await receiver?.close();
    await certs?.remove();
  });

  it("serves a 2020-12 schema and a valid example for each subscribable type, null for the others", () => {
    expect(catalog.length).toBeGreaterThan(0);
    for (const entry of catalog) {
      if (!entry.subscribable) {
        expect([entry.schema, entry.example], entry.type).toEqual([null, null]);
        continue;
      }
      expect(entry.schema?.$schema, entry.type).toBe("https://json-schema.org/draft/2020-12/schema");
      const validator = validators.get(entry.type)!;
      expect(validator(entry.example), JSON.stringify(validator.errors)).toBe(true);
    }
  });

  it("states the catalog's true counts in the operation's description", async () => {
    const doc = (await (await fetch(`${stack.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, { get: { description: string } }>;
    };
    const description = doc.paths["/tenants/{tenantId}/webhooks/event-types"]!.get.description;
    const subscribable = catalog.filter((entry) => entry.subscribable).length;
    expect(description).toContain(
      `All ${catalog.length} event types: ${subscribable} subscribable, each with \`schema\``,
    );
    expect(description).toContain(`and ${catalog.length - subscribable} \`coming_soon\``);
  });

  it("every type, emitted by its producer, reaches the receiver valid against its served schema", async () => {
    // Activation: a failing check stalls it, a passing one makes the tenant live (and restores).
    expect((await mutate("POST", "/activation")).res.status).toBe(200);
    await report("--result", "fail", "--reason", "capability.credentials_revoked");
    await report("--result", "pass");
    // The published families.
    await emit("conversation.started", { conversation_id: "conv_1", channel: "sms", started_at: new Date() });
    await emit("booking.created", { booking_id: "bkg_1", status: "confirmed", starts_at: "2026-12-01T09:00:00Z" });
    await emit("booking.cancelled", { booking_id: "bkg_1", reason_code: "booking.cancelled_by_customer" });
    await emit("escalation.raised", { escalation_id: "esc_1", reason_code: "escalation.complaint" });
    await emit("escalation.resolved", { escalation_id: "esc_1", resolution_code: "escalation.resolved_by_ai" });
    // Usage metering past the soft cap.
    expect((await mutate("PUT", "/usage/limits", { softCap: 100, hardCap: 200, expectedVersion: 0 })).res.status).toBe(
      200,
    );
    await stack.admin("usage", "record", "--tenant", tenant, "--tokens", "150");
    // Four sends of the testing plan's five: 80% of the allowance; three get a status callback.
    const delivered = await send();
    const read = await send();
    const failed = await send();
    await send();
    await callback(delivered, "delivered");
    await callback(read, "read");
    await callback(failed, "failed");
    await stack.admin("tenant", "plan", "--id", tenant, "--plan", "commercial", "--reason", "agreement_signed");
    // A failing check of the live tenant suspends the capability.
    await report("--result", "fail", "--reason", "capability.channel_disconnected");

    const deliverable = catalog.filter((e) => e.subscribable && e.emission === "emitted").map((e) => e.type);
    await eventually("every deliverable type at the receiver", () =>
      deliverable.every((type) => liveTypes().has(type)),
    );
    expect([...liveTypes()].sort()).toEqual([...deliverable].sort());
    const invalid = received()
      .filter((envelope) => envelope.livemode)
      .map((envelope) => ({ type: envelope.type, errors: validate(envelope) }))
      .filter((result) => result.errors.length > 0);
    expect(invalid).toEqual([]);

    // The same check rejects an envelope that is not what the service sends.
    const sample = structuredClone(received().find((e) => e.type === "tenant.validation_failed")!);
    expect(validate(sample)).toEqual([]);
    delete sample.data.object.blocking_reasons;
    expect(validate(sample).map((error) => error.params)).toContainEqual({ missingProperty: "blocking_reasons" });
  }, 120_000);

  it("a test delivery of each type carries the type's example data, valid against its schema", async () => {
    const subscribable = catalog.filter((entry) => entry.subscribable);
    for (const entry of subscribable) {
      const sent = await mutate("POST", `/webhooks/${endpointId}/test`, { eventType: entry.type });
      expect(sent.res.status).toBe(202);
    }
    const tests = () => received().filter((envelope) => !envelope.livemode);
    await eventually("every test delivery at the receiver", () => tests().length >= subscribable.length);
    expect(
      tests()
        .map((envelope) => envelope.type)
        .sort(),
    ).toEqual(subscribable.map((entry) => entry.type).sort());
    for (const envelope of tests()) {
      const entry = subscribable.find((e) => e.type === envelope.type)!;
      expect(envelope.data, envelope.type).toEqual(entry.example!.data);
      expect(validate(envelope), envelope.type).toEqual([]);
    }
  }, 60_000);
});
