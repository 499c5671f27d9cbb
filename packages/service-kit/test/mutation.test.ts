import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { Metadata } from "@grpc/grpc-js";
import { PauseEndpointRequest, WebhookServiceService } from "@platform/proto/webhooks/v1";
import type { Logger } from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DomainError, InvalidArgumentError } from "../src/errors.js";
import type { CallContext } from "../src/grpc-server.js";
import { createIdempotencyTable, fingerprintOf, IdempotencyKeyReusedError } from "../src/idempotency.js";
import { mutationFingerprint, mutationsOf, operationOf, type MutationSpec } from "../src/mutation.js";
import { createDatabase, type Knex } from "../src/postgres.js";

const SCHEMA = "mutation_test";
const method = WebhookServiceService.pauseEndpoint;
type Request = PauseEndpointRequest;

class RefusedError extends DomainError {
  constructor() {
    super("failed_precondition", "test.refused", "refused");
  }
}

describe("declareMutation (real Postgres, no gRPC)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let n = 0;
  /** Every step, in the order it ran, with what it could see. */
  let steps: string[];
  let kicks: number;
  let lines: unknown[][];
  let effectTrx: Knex.Transaction | undefined;

  const call = (): CallContext => ({
    requestId: "req-1",
    metadata: new Metadata(),
    logger: { info: (...args: unknown[]) => lines.push(args) } as unknown as Logger,
  });
  const declare = () =>
    mutationsOf({
      db,
      idempotency: { ttlMs: 60_000, leaseMs: 60_000 },
      tenantOf: ({ tenantId }) => {
        if (tenantId === "") throw new InvalidArgumentError("request.invalid", "tenant_id is required");
        return tenantId;
      },
      kick: () => {
        kicks++;
        steps.push(`kick (effect committed: ${effectTrx?.isCompleted() === true})`);
      },
    });
  const rows = async (tenantId: string) =>
    (await db("effects").where({ tenant: tenantId }).orderBy("id")).map((row: { endpoint: string }) => row.endpoint);
  const facts = async (tenantId: string) =>
    Number((await db("facts").where({ tenant: tenantId }).count<{ n: string }[]>({ n: "*" }))[0]!.n);

  /** A pause: one effect row, one fact row (or `factCount` of them), a log line, an after-commit step. */
  function pause(
    overrides: Partial<MutationSpec<Request, string, { id: number; endpoint: string }, { id: number }, unknown>> = {},
    factCount = 1,
  ) {
    return declare()(method, {
      prepare(request) {
        steps.push("prepare");
        if (request.endpointId === "bad") throw new InvalidArgumentError("request.invalid", "bad endpoint");
        return request.endpointId.toUpperCase();
      },
      async effect(trx, { tenantId, prepared }) {
        effectTrx = trx;
        steps.push("effect");
        const [row] = await trx("effects")
          .insert({ tenant: tenantId, endpoint: prepared })
          .returning<{ id: number }[]>("id");
        return { id: row!.id, endpoint: prepared };
      },
      async record(trx, effect, { tenantId }) {
        steps.push(`record (same transaction: ${trx === effectTrx}, open: ${!trx.isCompleted()})`);
        for (let i = 0; i < factCount; i++) await trx("facts").insert({ tenant: tenantId, effect: effect.id });
        return factCount;
      },
      keep: (effect) => ({ id: effect.id }),
      log: (effect, { tenantId }) => [{ tenantId, effectId: effect.id }, "endpoint paused"],
      async afterCommit() {
        await Promise.resolve();
        steps.push("afterCommit");
      },
      answer: (kept, replayed) => {
        steps.push("answer");
        return { ...kept, replayed };
      },
      ...overrides,
    });
  }
  const request = (tenantId: string, key: string, endpointId = "ep_1"): Request =>
    PauseEndpointRequest.fromPartial({ tenantId, endpointId, idempotencyKey: key, actor: "console:ana" });

  beforeAll(async () => {
    scratch = await createScratchDatabase("mutation");
    db = createDatabase({ url: scratch.url, schema: SCHEMA, poolMax: 5 });
    await db.raw("create schema ??", [SCHEMA]);
    await createIdempotencyTable(db);
    await db.schema.createTable("effects", (t) => {
      t.increments("id");
      t.text("tenant");
      t.text("endpoint");
    });
    await db.schema.createTable("facts", (t) => {
      t.increments("id");
      t.text("tenant");
      t.integer("effect");
    });
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });
  let tenant: string;
  beforeEach(() => {
    tenant = `ten_${n++}`;
    steps = [];
    kicks = 0;
    lines = [];
    effectTrx = undefined;
  });

  it("runs prepare, the effect and its record in one transaction, then logs, kicks after the commit, then afterCommit", async () => {
    const answer = await pause()(request(tenant, "k1"), call());
    expect(steps).toEqual([
      "prepare",
      "effect",
      "record (same transaction: true, open: true)",
      "kick (effect committed: true)",
      "afterCommit",
      "answer",
    ]);
    expect(answer).toEqual({ id: expect.any(Number) as number, replayed: false });
    expect(lines).toEqual([[{ tenantId: tenant, effectId: (answer as { id: number }).id }, "endpoint paused"]]);
    expect(await rows(tenant)).toEqual(["EP_1"]);
    expect(await facts(tenant)).toBe(1);
  });

  it("replays a repeat of the key from the kept answer: no effect, no record, no log, no kick, no afterCommit", async () => {
    const handler = pause();
    const first = await handler(request(tenant, "k1"), call());
    steps = [];
    lines = [];
    kicks = 0;
    const again = await handler(request(tenant, "k1"), call());
    expect(again).toEqual({ ...(first as object), replayed: true });
    expect(steps).toEqual(["prepare", "answer"]);
    expect(kicks).toBe(0);
    expect(lines).toEqual([]);
    expect(await rows(tenant)).toEqual(["EP_1"]);
    expect(await facts(tenant)).toBe(1);
  });

  it("rolls the effect back with a failed record: nothing committed, nothing kicked, the key free again", async () => {
    const failing = pause({
      async record() {
        await Promise.resolve();
        throw new RefusedError();
      },
    });
    await expect(failing(request(tenant, "k1"), call())).rejects.toBeInstanceOf(RefusedError);
    expect(await rows(tenant)).toEqual([]);
    expect(kicks).toBe(0);
    expect(lines).toEqual([]);
    // A domain refusal releases the claim: the same key runs the effect afterwards.
    await pause()(request(tenant, "k1"), call());
    expect(await rows(tenant)).toEqual(["EP_1"]);
  });

  it("kicks only when the record wrote a fact", async () => {
    await pause({}, 0)(request(tenant, "k1"), call());
    expect(kicks).toBe(0);
    expect(lines).toHaveLength(1); // the log line does not depend on facts
    expect(steps).toContain("afterCommit");
  });

  it("checks the tenant first and claims no key when the tenant or prepare refuses", async () => {
    await expect(pause()(request("", "k1"), call())).rejects.toMatchObject({ code: "request.invalid" });
    expect(steps).toEqual([]);
    await expect(pause()(request(tenant, "k1", "bad"), call())).rejects.toThrow("bad endpoint");
    expect(steps).toEqual(["prepare"]);
    // Neither claimed "k1": a different request under it runs (no idempotency.key_reused).
    await pause()(request(tenant, "k1", "ep_2"), call());
    expect(await rows(tenant)).toEqual(["EP_2"]);
  });

  it("fingerprints the method path and the request without key and actor, as the hand-written fingerprints did", async () => {
    const asked = request(tenant, "k1");
    expect(mutationFingerprint(method, asked)).toBe(
      fingerprintOf(
        "webhooks.v1.WebhookService/PauseEndpoint",
        PauseEndpointRequest.encode({ ...asked, idempotencyKey: "", actor: undefined }).finish(),
      ),
    );
    expect(mutationFingerprint(method, { ...asked, idempotencyKey: "k2", actor: "console:bo" })).toBe(
      mutationFingerprint(method, asked),
    );
    // The same key with another request is refused, not replayed.
    await pause()(asked, call());
    await expect(pause()(request(tenant, "k1", "ep_2"), call())).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
  });

  it("runs validate before the tenant check, so a request bad in both gets validate's refusal; nothing is claimed", async () => {
    const validated = pause({
      validate(request) {
        steps.push("validate");
        if (request.endpointId === "bad") throw new InvalidArgumentError("request.invalid", "validated first");
      },
    });
    await expect(validated(request("", "k1", "bad"), call())).rejects.toThrow("validated first");
    expect(steps).toEqual(["validate"]);
    await expect(validated(request("", "k1"), call())).rejects.toThrow("tenant_id is required");
    expect(steps).toEqual(["validate", "validate"]);
    await validated(request(tenant, "k1", "ep_2"), call());
    expect(steps.slice(2, 5)).toEqual(["validate", "prepare", "effect"]);
    expect(await rows(tenant)).toEqual(["EP_2"]);
  });

  it("names the operation by the generated path; needs the tenant check and the key options only where it uses them", () => {
    expect(operationOf(method)).toBe("webhooks.v1.WebhookService/PauseEndpoint");
    const bare = mutationsOf({ db });
    const spec = { effect: () => Promise.resolve(0), answer: () => ({}) };
    expect(() => bare(method, spec)).toThrow("needs the tenant check");
    expect(() => bare(method, { ...spec, tenant: false })).toThrow("needs a tenant to scope its key");
    expect(() => mutationsOf({ db, tenantOf: ({ tenantId }) => tenantId })(method, spec)).toThrow(
      "needs the idempotency options",
    );
    expect(() => bare(method, { ...spec, tenant: false, once: false })).not.toThrow();
  });

  it("runs a mutation with no tenant (tenant: false, once: false) with only the database: input.tenantId is empty", async () => {
    const seen: string[] = [];
    const unscoped = mutationsOf({ db })(method, {
      tenant: false,
      once: false,
      async effect(trx, { tenantId }) {
        seen.push(tenantId);
        await trx("effects").insert({ tenant: "unscoped", endpoint: "EP_0" });
        return 1;
      },
      log: () => [{ effects: 1 }, "unscoped"],
      answer: (kept, replayed): unknown => ({ kept, replayed }),
    });
    expect(await unscoped(request("", ""), call())).toEqual({ kept: 1, replayed: false });
    expect(seen).toEqual([""]);
    expect(lines).toEqual([[{ effects: 1 }, "unscoped"]]);
    expect(await rows("unscoped")).toEqual(["EP_0"]);
  });

  it("runs a keyless mutation (once: false) as one transaction on every call", async () => {
    const plain = pause({ once: false });
    await plain(request(tenant, ""), call());
    await plain(request(tenant, ""), call());
    expect(await rows(tenant)).toEqual(["EP_1", "EP_1"]);
    expect(kicks).toBe(2);
    expect(await db("idempotency_keys").where({ scope: tenant }).count<{ n: string }[]>({ n: "*" })).toEqual([
      { n: "0" },
    ]);
  });
});
