/**
 * The alerts read metrics the services really expose: the four services run as processes (the
 * compiled main.js, as in their images) over a scratch database and a NATS namespace of their
 * own, and their /metrics must name every metric an alerting rule reads, carry the database pool
 * gauges of every pool, and the JetStream lag gauges of the EVENTS consumers and of
 * WEBHOOK_DELIVERIES. A misspelt metric in a rule, or a gauge left unwired in a main.ts, fails here.
 */
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { deleteNamespaceStreams, newNatsNamespace, testNatsUrl } from "@platform/local-stack/nats-namespace";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = join(import.meta.dirname, "..");
const rulesDir = join(root, "deploy", "helm", "platform", "files", "prometheus");
const entry = (service: string) => join(root, "services", service, "dist", "src", "main.js");
type Service = "catalog" | "notify" | "webhooks" | "gateway";

/** One scrape: the metric families (`# TYPE` lines) and every sample line. */
async function scrape(process: ServiceProcess): Promise<{ families: Set<string>; samples: string[] }> {
  const response = await fetch(`http://127.0.0.1:${process.listening.metricsPort as number}/metrics`);
  const lines = (await response.text()).split("\n");
  return {
    families: new Set(lines.flatMap((l) => /^# TYPE (\S+) /.exec(l)?.[1] ?? [])),
    samples: lines.filter((l) => l !== "" && !l.startsWith("#")),
  };
}

/** Samples of `name` as label text -> value. */
function samplesOf(samples: string[], name: string): Record<string, number> {
  const found: Record<string, number> = {};
  for (const line of samples) {
    const match = new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`).exec(line);
    if (match) found[match[1]!] = Number(match[2]);
  }
  return found;
}

describe("the metrics the alerts read, scraped from the four running services", () => {
  let scratch: ScratchDatabase;
  const namespace = newNatsNamespace();
  const processes: Partial<Record<Service, ServiceProcess>> = {};

  beforeAll(async () => {
    scratch = await createScratchDatabase("alertmetrics");
    const common = {
      DATABASE_URL: scratch.url,
      METRICS_HOST: "127.0.0.1",
      METRICS_PORT: "0",
      NATS_URL: testNatsUrl(),
      NATS_NAMESPACE: namespace,
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: "0",
    };
    [processes.catalog, processes.notify, processes.webhooks] = await Promise.all([
      startServiceProcess({ name: "catalog", entry: entry("catalog"), env: common }),
      startServiceProcess({
        name: "notify",
        entry: entry("notify"),
        env: { ...common, SECRETS_KEY: randomBytes(32).toString("base64") },
      }),
      startServiceProcess({
        name: "webhooks",
        entry: entry("webhooks"),
        env: { ...common, SECRETS_KEY: randomBytes(32).toString("base64") },
      }),
    ]);
    const grpc = (service: Service) => `127.0.0.1:${processes[service]!.listening.grpcPort as number}`;
    processes.gateway = await startServiceProcess({
      name: "gateway",
      entry: entry("gateway"),
      env: {
        ...common,
        HOST: "127.0.0.1",
        PORT: "0",
        CATALOG_ADDR: grpc("catalog"),
        NOTIFY_ADDR: grpc("notify"),
        WEBHOOKS_ADDR: grpc("webhooks"),
      },
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(Object.values(processes).map((p) => p.stop()));
    await deleteNamespaceStreams(namespace).catch(() => undefined);
    await scratch?.drop();
  }, 60_000);

  it("name every metric an alerting rule reads", async () => {
    const exposed = new Set<string>();
    for (const process of Object.values(processes))
      for (const family of (await scrape(process)).families) exposed.add(family);
    const read = new Set<string>();
    for (const file of (await readdir(rulesDir)).filter((f) => /-alerts\.yaml$/.test(f))) {
      const doc = parse(await readFile(join(rulesDir, file), "utf8")) as { groups: { rules: { expr: string }[] }[] };
      for (const rule of doc.groups.flatMap((g) => g.rules)) {
        const names = rule.expr.match(/(?<![:\w])[a-z]+_[a-z_]+(?=\{|\[|\)|\s|$)(?!\s*[=!])/g) ?? [];
        for (const name of names) read.add(name.replace(/_(count|bucket|sum)$/, ""));
      }
    }
    // Sanity: the walk found the metrics of every kind of alert.
    expect([...read].sort()).toEqual([
      "db_pool_connections",
      "db_pool_max_connections",
      "grpc_server_handled_total",
      "http_request_duration_seconds",
      "jetstream_consumer_ack_pending_messages",
      "jetstream_consumer_max_ack_pending",
      "jetstream_consumer_pending_messages",
      "notify_outbox_lag_seconds",
      "notify_projected_events_total",
      "notify_projector_pending_events",
      "webhooks_dead_letters_total",
      "webhooks_deliveries_oldest_pending_age_seconds",
      "webhooks_delivery_attempts_total",
      "webhooks_outbox_lag_seconds",
      "webhooks_target_refusals_total",
    ]);
    expect([...read].filter((name) => !exposed.has(name))).toEqual([]);
    // Every service with an outbox has its outbox lag alerted on.
    const outboxes = [...exposed].filter((name) => name.endsWith("_outbox_lag_seconds")).sort();
    expect(outboxes).toEqual(["notify_outbox_lag_seconds", "webhooks_outbox_lag_seconds"]);
    for (const outbox of outboxes) expect(read.has(outbox), outbox).toBe(true);
  });

  it("report every database pool of every service", async () => {
    const pools = {
      catalog: ["main"],
      gateway: ["main"],
      notify: ["main", "send"],
      webhooks: ["main"],
    } satisfies Record<Service, string[]>;
    for (const [service, names] of Object.entries(pools) as [Service, string[]][]) {
      const { samples } = await scrape(processes[service]!);
      const max = samplesOf(samples, "db_pool_max_connections");
      expect(max, service).toEqual(
        Object.fromEntries(names.map((pool) => [`pool="${pool}",service="${service}"`, 10])),
      );
      const used = samplesOf(samples, "db_pool_connections");
      for (const pool of names) {
        expect(used[`pool="${pool}",state="used",service="${service}"`], `${service} ${pool}`).toBeGreaterThanOrEqual(
          0,
        );
      }
      expect(Object.keys(samplesOf(samples, "db_pool_pending_acquires")).length, service).toBe(names.length);
    }
  });

  it("report the lag of the EVENTS consumers and of WEBHOOK_DELIVERIES", async () => {
    const expected = {
      notify: [`${namespace}EVENTS/notify-projections/10000`],
      webhooks: [
        `${namespace}EVENTS/webhooks-fanout/10000`,
        `${namespace}WEBHOOK_DELIVERIES/webhooks-delivery/1000000`,
      ],
    };
    for (const [service, consumers] of Object.entries(expected) as ["notify" | "webhooks", string[]][]) {
      // The first poll runs at start; give it a moment when the scrape came first.
      const deadline = Date.now() + 10_000;
      let seen: string[] = [];
      for (;;) {
        const { samples } = await scrape(processes[service]!);
        const pending = samplesOf(samples, "jetstream_consumer_pending_messages");
        const ackPending = samplesOf(samples, "jetstream_consumer_ack_pending_messages");
        const max = samplesOf(samples, "jetstream_consumer_max_ack_pending");
        seen = Object.entries(max).map(([labels, value]) => {
          const [, stream, consumer] = /stream="([^"]+)",consumer="([^"]+)"/.exec(labels)!;
          expect(pending[labels]).toBe(0);
          expect(ackPending[labels]).toBe(0);
          return `${stream}/${consumer}/${value}`;
        });
        if (seen.length === consumers.length || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(seen.sort(), service).toEqual([...consumers].sort());
    }
  });
});
