/**
 * The ledger's and the message log's first page read the first rows of their index in seq order,
 * whatever the planner thinks of the tenant: at 10 million deliveries (bench:growth), a page that
 * put both `tenant_id` and `endpoint_id` on the rows was planned as if the two were independent
 * (a few rows expected, hundreds per partition found) and read every delivery of the endpoint or
 * tenant through a BitmapAnd, then sorted them: 550 ms at p99 against 33 on the empty database.
 * The message log by a rare event type read the tenant's log in seq order and filtered the type on
 * every row (4.9 s p99 at 10 million); its own index (migration 20261128100000) reads only its rows.
 * The message log's list of the tenant's deleted endpoints (left out of it) comes from their own
 * index (migration 20261128120000), not from a read of every endpoint.
 */
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { createLedgerStore } from "../src/db/ledger-store.js";

const TENANTS = 40;
const ENDPOINTS_PER_TENANT = 5;
const DELIVERIES = 80_000;
/** One delivery in RARE is of a rare type, spread over every tenant. */
const RARE = 997;

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

describe("the ledger's page plan", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  const statements: { sql: string; bindings: unknown[] }[] = [];

  beforeAll(async () => {
    scratch = await createScratchDatabase("ledger_plan");
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 2 });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
    // 40 tenants of 5 endpoints each; every delivery of today, spread evenly over the endpoints.
    await db.raw(
      `insert into webhooks.endpoints (id, tenant_id, url, description, event_types, api_version, secret_sealed)
       select 'ep_' || lpad(e::text, 24, '0'), 'ten_' || lpad((e / ?)::text, 24, '0'), 'https://example.test/hook', '',
              array['pet.created'], '2026-11-01', 'v1.x'
         from generate_series(0, ? - 1) e`,
      [ENDPOINTS_PER_TENANT, TENANTS * ENDPOINTS_PER_TENANT],
    );
    await db.raw(
      `insert into deliveries (id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status)
       select 'dlv_' || lpad(n::text, 24, '0'), 'ten_' || lpad(((n % ?) / ?)::text, 24, '0'),
              'ep_' || lpad((n % ?)::text, 24, '0'), 'evt_' || lpad(n::text, 24, '0'),
              case when n % ? = 0 then 'pet.deleted' else 'pet.created' end, true, '{}', 'succeeded'
         from generate_series(1, ?) n`,
      [TENANTS * ENDPOINTS_PER_TENANT, ENDPOINTS_PER_TENANT, TENANTS * ENDPOINTS_PER_TENANT, RARE, DELIVERIES],
    );
    await db.raw("analyze");
    db.on("query", (query: { sql: string; bindings: unknown[] }) => statements.push(query));
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  /** The page's statement as the store ran it, and its plan with what each node really read. */
  async function pagePlan(
    endpointId: string | undefined,
    eventType?: string,
  ): Promise<{ rows: number; nodeTypes: string[]; read: number; endpointsRead: number }> {
    statements.length = 0;
    const tenant = `ten_${"7".padStart(24, "0")}`;
    const page = await createLedgerStore(db).list(tenant, endpointId, { limit: 20, afterSeq: undefined, eventType });
    const [statement] = statements.filter((s) => /from "deliveries"/.test(s.sql));
    const explained = await db.raw<{ rows: { "QUERY PLAN": { Plan: PlanNode }[] }[] }>(
      `explain (analyze, format json) ${statement!.sql.replace(/\$(\d+)/g, "?")}`,
      statement!.bindings as readonly Knex.Value[],
    );
    const plan = nodes(explained.rows[0]!["QUERY PLAN"][0]!.Plan);
    return {
      rows: page.deliveries.length,
      nodeTypes: plan.map((n) => n["Node Type"]),
      // What the scans of the deliveries' partitions read (returned or filtered out), over all
      // their loops.
      read: plan
        .filter((n) => n["Relation Name"]?.startsWith("deliveries"))
        .reduce((sum, n) => sum + (n["Actual Rows"] + (n["Rows Removed by Filter"] ?? 0)) * n["Actual Loops"], 0),
      endpointsRead: plan
        .filter((n) => n["Relation Name"] === "endpoints")
        .reduce((sum, n) => sum + (n["Actual Rows"] + (n["Rows Removed by Filter"] ?? 0)) * n["Actual Loops"], 0),
    };
  }

  it("an endpoint's first page reads its ledger index in seq order: no BitmapAnd, no sort, ~a page of rows", async () => {
    const { rows, nodeTypes, read } = await pagePlan(`ep_${"35".padStart(24, "0")}`);
    expect(rows).toBe(20);
    expect(nodeTypes).not.toContain("BitmapAnd");
    expect(nodeTypes).not.toContain("Sort");
    // The endpoint has 400 deliveries: what the scans returned is the page (21) and the partitions'
    // first rows, not all 400.
    expect(read).toBeLessThan(100);
  });

  it("a tenant's message log first page reads the tenant's index in seq order the same way", async () => {
    const { rows, nodeTypes, read } = await pagePlan(undefined);
    expect(rows).toBe(20);
    expect(nodeTypes).not.toContain("BitmapAnd");
    expect(nodeTypes).not.toContain("Sort");
    expect(read).toBeLessThan(100);
  });

  it("a tenant's message log by a rare event type reads only that type's rows, not the tenant's whole log", async () => {
    const [{ count }] = (
      await db.raw<{ rows: { count: number }[] }>(
        "select count(*)::int as count from deliveries where tenant_id = ? and event_type = 'pet.deleted'",
        [`ten_${"7".padStart(24, "0")}`],
      )
    ).rows as [{ count: number }];
    expect(count).toBeGreaterThan(0);
    const { rows, read } = await pagePlan(undefined, "pet.deleted");
    expect(rows).toBe(count);
    // The tenant has 2 000 deliveries, a couple of the rare type: filtering the tenant's log reads
    // them all; the type's index reads the type's rows.
    expect(read).toBe(count);
  });

  it("the message log finds the tenant's deleted endpoints by their index, not by reading every endpoint", async () => {
    // Other tenants' endpoints, as many as a busy database has (bench:growth: 2 117), a few deleted.
    await db.raw(
      `insert into webhooks.endpoints (id, tenant_id, url, description, event_types, api_version, secret_sealed,
                                       deleted_at)
       select 'ep_' || lpad((100000 + e)::text, 24, '0'), 'ten_other_' || (e % 400), 'https://example.test/hook', '',
              array['pet.created'], '2026-11-01', 'v1.x', case when e % 50 = 0 then now() end
         from generate_series(0, 2999) e`,
    );
    await db.raw("update webhooks.endpoints set deleted_at = now() where id = ?", [`ep_${"36".padStart(24, "0")}`]);
    await db.raw("analyze webhooks.endpoints");
    const { rows, endpointsRead } = await pagePlan(undefined);
    expect(rows).toBe(20);
    // The tenant's one deleted endpoint, read from the index; every endpoint (3 200) without it.
    expect(endpointsRead).toBe(1);
    await db.raw("update webhooks.endpoints set deleted_at = null where id = ?", [`ep_${"36".padStart(24, "0")}`]);
  });
});
