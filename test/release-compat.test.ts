/**
 * Expand/contract, shown: one service's previous release (built from git at the commit
 * releases.json names) runs beside the current build of the others, against one database and one
 * set of NATS streams, and the README's notification and webhook loops pass. Both ways:
 *
 *   (a) the previous notify   with the current catalog, webhooks and gateway;
 *   (b) the previous webhooks with the current catalog, notify and gateway.
 *
 * As on Kubernetes, the schema is first brought to the current migrations by the current
 * build's migrate command (the chart's hook Job of the upgrade), and every service starts with
 * MIGRATE_ON_START=false: the previous release must work on the expanded schema (while a rollout
 * runs, and after a rollback of its Deployment, which never rolls a schema back).
 *
 * The previous release is built once per commit under .data/release-builds/ (git archive, npm ci
 * of the two services' workspaces, tsc -b --noCheck); the first build prints what it cost.
 */
import { execFile } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import { deleteNamespaceStreams, newNatsNamespace, testNatsUrl } from "@platform/local-stack/nats-namespace";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { releaseBuild, type ReleaseBuild } from "@platform/local-stack/release-build";
import { SAMPLE_REMINDER, SAMPLE_REMINDER_TEXT } from "@platform/local-stack/sample-requests";
import { baselineRelease, readReleases, type Release } from "@platform/local-stack/releases";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { verifyWebhook } from "@platform/webhook-verifier";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = join(import.meta.dirname, "..");
const current = (service: string, file = "main.js") => join(repo, "services", service, "dist", "src", file);
const services = ["catalog", "notify", "webhooks", "gateway"] as const;
type Service = (typeof services)[number];

const previousOnes = ["notify", "webhooks"] as const;

describe.each(previousOnes)("the previous release of %s beside the current others", (previous) => {
  let release: Release;
  let build: ReleaseBuild;
  let scratch: ScratchDatabase;
  let namespace: string;
  let certificates: TestCertificates;
  let receiver: TestReceiver;
  const processes = {} as Record<Service, ServiceProcess>;
  let gatewayUrl: string;
  let adminEnv: Record<string, string>;

  beforeAll(async () => {
    const releases = await readReleases(repo);
    release = await baselineRelease(repo, releases, previous);
    // The previous releases at this same commit compile in one tsc -b (their shared workspaces
    // once): the first block builds them all, a later one finds its service built.
    const atThisCommit: string[] = [];
    for (const service of previousOnes)
      if ((await baselineRelease(repo, releases, service)).commit === release.commit) atThisCommit.push(service);
    build = await releaseBuild(repo, release.commit, atThisCommit, {
      log: (line) => console.log(`release build: ${line}`),
    });
    if (build.built)
      console.log(
        `release build of ${atThisCommit.join(" and ")} ${release.version} (${release.commit.slice(0, 12)}): git archive ` +
          `${build.built.exportMs} ms, npm ci ${build.built.installMs} ms, tsc -b ${build.built.compileMs} ms`,
      );
    const entry = (service: Service, file = "main.js") =>
      service === previous ? build.entry(service, file) : current(service, file);

    scratch = await createScratchDatabase("relcompat");
    namespace = newNatsNamespace("relcompat");
    certificates = await createTestCertificates();
    receiver = await startReceiver(certificates);
    const common = {
      DATABASE_URL: scratch.url,
      NATS_URL: testNatsUrl(),
      NATS_NAMESPACE: namespace,
      METRICS_PORT: "0",
      METRICS_HOST: "127.0.0.1",
      MIGRATE_ON_START: "false",
    };
    const grpc = { GRPC_HOST: "127.0.0.1", GRPC_PORT: "0" };
    // notify (a tenant's WhatsApp token) and webhooks (endpoint secrets) seal with SECRETS_KEY;
    // a release before notify needed it ignores it.
    const secretsKey = randomBytes(32).toString("base64");
    const envOf: Record<Exclude<Service, "gateway">, Record<string, string>> = {
      catalog: grpc,
      notify: { ...grpc, SECRETS_KEY: secretsKey },
      webhooks: {
        ...grpc,
        SECRETS_KEY: secretsKey,
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
        WEBHOOKS_ALLOWED_PORTS: "1024-65535",
        NODE_EXTRA_CA_CERTS: certificates.caPath,
      },
    };
    // The upgrade's hook Jobs: the current migrations of every service, before any pod starts.
    for (const service of services)
      await run(process.execPath, [current(service, "migrate.js")], {
        env: { PATH: process.env.PATH ?? "", ...common, ...(service === "gateway" ? {} : envOf[service]) },
      });
    const start = (service: Service, env: Record<string, string>) =>
      startServiceProcess({
        name: service === previous ? `${service}@${release.version}` : service,
        entry: entry(service),
        env: { ...common, ...env },
        timeoutMs: 60_000,
      });
    try {
      [processes.catalog, processes.notify, processes.webhooks] = await Promise.all([
        start("catalog", envOf.catalog),
        start("notify", envOf.notify),
        start("webhooks", envOf.webhooks),
      ]);
      const addresses = {
        CATALOG_ADDR: `127.0.0.1:${processes.catalog.listening.grpcPort as number}`,
        NOTIFY_ADDR: `127.0.0.1:${processes.notify.listening.grpcPort as number}`,
        WEBHOOKS_ADDR: `127.0.0.1:${processes.webhooks.listening.grpcPort as number}`,
      };
      processes.gateway = await start("gateway", { HOST: "127.0.0.1", PORT: "0", ...addresses });
      gatewayUrl = `http://127.0.0.1:${processes.gateway.listening.port as number}`;
      adminEnv = { PATH: process.env.PATH ?? "", DATABASE_URL: scratch.url, ...addresses };
    } catch (error) {
      await Promise.all(Object.values(processes).map((p) => p.stop("SIGKILL")));
      throw error;
    }
  }, 600_000);

  afterAll(async () => {
    await Promise.all(Object.values(processes).map((p) => p.stop()));
    await receiver?.close();
    await certificates?.remove();
    if (namespace) await deleteNamespaceStreams(namespace).catch(() => undefined);
    await scratch?.drop();
  });

  /** The operator CLI of the current gateway, as the README runs it; its JSON answer. */
  const admin = async (...args: string[]) =>
    JSON.parse(
      (await run(process.execPath, [current("gateway", "cli/admin.js"), ...args], { env: adminEnv })).stdout,
    ) as Record<string, unknown>;
  const call = async (key: string, method: string, path: string, body?: unknown, idempotencyKey?: string) => {
    const response = await fetch(`${gatewayUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(method === "GET" ? {} : { "idempotency-key": idempotencyKey ?? `compat-${randomUUID()}` }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it("runs the release it was told to, from its own tree", () => {
    expect(processes[previous].listening.service).toBe(previous);
    expect(build.entry(previous)).toContain(join(".data", "release-builds", release.commit.slice(0, 12)));
    // The others are this tree's build: they announce their version; a release before it may not.
    for (const service of services.filter((s) => s !== previous))
      expect(processes[service].listening.version, service).toBe(
        (JSON.parse(readFileSync(join(repo, "services", service, "package.json"), "utf8")) as { version: string })
          .version,
      );
  });

  it("passes the README's notification loop: tenant, activation, key, send, transcript, replay", async () => {
    const tenant = (await admin("tenant", "create", "--name", "Acme")).id as string;
    await admin("tenant", "activate", "--id", tenant);
    const key = (await admin("key", "create", "--tenants", tenant, "--scopes", "notification:send,tenant:read"))
      .key as string;
    const to = SAMPLE_REMINDER.to;
    const notification = SAMPLE_REMINDER;
    const sent = await call(key, "POST", `/api/v1/tenants/${tenant}/notifications`, notification, "crm-42-reminder");
    expect(sent).toEqual({
      status: 200,
      body: {
        notificationId: expect.stringMatching(/^ntf_[0-9a-f]{24}$/) as string,
        state: "sent",
        type: "reminder",
        createdAt: expect.any(String) as string,
        idempotencyStatus: "applied",
      },
    });
    const transcript = await call(
      key,
      "GET",
      `/api/v1/tenants/${tenant}/conversations/${encodeURIComponent(to)}/messages`,
    );
    expect(transcript).toEqual({
      status: 200,
      body: {
        messages: [
          {
            id: expect.stringMatching(/^msg_[0-9a-f]{24}$/) as string,
            notificationId: sent.body.notificationId,
            type: "reminder",
            text: SAMPLE_REMINDER_TEXT,
            state: "sent",
            // The delivery status (issue 32) comes from notify: the previous one knows none (null).
            deliveryStatus: previous === "notify" ? null : "accepted",
            actor: { actorReference: "crm-user-7", delegationReference: null },
            createdAt: sent.body.createdAt,
            updatedAt: expect.any(String) as string,
          },
        ],
        nextCursor: null,
      },
    });
    const replayed = await call(
      key,
      "POST",
      `/api/v1/tenants/${tenant}/notifications`,
      notification,
      "crm-42-reminder",
    );
    expect(replayed).toEqual({ status: 200, body: { ...sent.body, idempotencyStatus: "replayed" } });
  });

  it("passes the README's webhook loop: endpoint to an HTTPS receiver, event emit, a verified delivery", async () => {
    const tenant = (await admin("tenant", "create", "--name", "Acme")).id as string;
    const key = (await admin("key", "create", "--tenants", tenant, "--scopes", "webhook:manage")).key as string;
    const created = await call(key, "POST", `/api/v1/tenants/${tenant}/webhooks`, {
      url: receiver.url,
      description: "my laptop",
      eventTypes: ["booking.*"],
    });
    expect(created.status).toBe(201);
    const endpoint = created.body as { id: string; secret: string };
    expect(endpoint.secret).toMatch(/^whsec_/);
    const emitted = await admin(
      ...["event", "emit", "--tenant", tenant, "--type", "booking.created"],
      ...["--data", JSON.stringify({ booking_id: "bk_1", status: "confirmed" })],
    );
    expect(emitted).toMatchObject({
      id: expect.stringMatching(/^evt_/) as string,
      tenant,
      type: "booking.created",
      duplicate: false,
    });
    const request = await eventually("the event at the receiver", () =>
      receiver.requests.find((r) => (JSON.parse(r.body.toString()) as { id: string }).id === emitted.id),
    );
    const event = verifyWebhook({
      payload: request.body,
      header: request.headers["service-signature"],
      secrets: endpoint.secret,
    });
    expect(event).toMatchObject({
      id: emitted.id,
      type: "booking.created",
      tenant,
      livemode: true,
      data: { object: { booking_id: "bk_1", status: "confirmed" } },
    });
    const ledger = await eventually("the ledger to show the delivery succeeded", async () => {
      const page = await call(key, "GET", `/api/v1/tenants/${tenant}/webhooks/${endpoint.id}/deliveries`);
      const data = page.body.data as { eventId: string; status: string; attempts: number }[];
      return data[0]?.status === "succeeded" ? data : undefined;
    });
    expect(ledger).toEqual([expect.objectContaining({ eventId: emitted.id, status: "succeeded", attempts: 1 })]);
  });

  /**
   * What a contract step too early does: a column the previous release writes, renamed in one
   * step. The same loop then fails on the previous release, and passes again once it is undone,
   * so the loops above do exercise the previous release's SQL against the current schema.
   */
  it("fails once a migration renames in one step a column the previous release writes", async () => {
    const [schema, table, column] =
      previous === "notify" ? ["notify", "notification_commands", "recipient"] : ["webhooks", "endpoints", "url"];
    const tenant = (await admin("tenant", "create", "--name", "Acme")).id as string;
    await admin("tenant", "activate", "--id", tenant);
    const key = (await admin("key", "create", "--tenants", tenant, "--scopes", "notification:send,webhook:manage"))
      .key as string;
    const write = () =>
      previous === "notify"
        ? call(key, "POST", `/api/v1/tenants/${tenant}/notifications`, {
            to: "+447700900124",
            type: "reminder",
            clientName: "Ana",
            businessName: "Paws & Co",
            serviceName: "grooming",
            when: "Mon 3 May 10:00",
            actor: { actorReference: "crm-user-7" },
          })
        : call(key, "POST", `/api/v1/tenants/${tenant}/webhooks`, {
            url: receiver.url,
            description: "x",
            eventTypes: ["booking.*"],
          });
    const client = new pg.Client({ connectionString: scratch.url });
    await client.connect();
    try {
      await client.query(`alter table ${schema}.${table} rename column ${column} to ${column}_renamed`);
      try {
        expect(await write()).toMatchObject({ status: 500, body: { code: "service.internal_error" } });
      } finally {
        await client.query(`alter table ${schema}.${table} rename column ${column}_renamed to ${column}`);
      }
      expect((await write()).status).toBe(previous === "notify" ? 200 : 201);
    } finally {
      await client.end();
    }
  });
});
