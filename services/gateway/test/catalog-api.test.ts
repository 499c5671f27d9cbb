import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenApiContract } from "./openapi-contract.js";
import { startTestStack, type TestStack } from "./stack.js";

/**
 * The animal interface end to end: HTTP -> gateway process -> gRPC -> catalog process -> Postgres.
 * Every response is checked against the OpenAPI document the gateway serves.
 */
describe("animal catalog over HTTP", () => {
  let stack: TestStack;
  let contract: OpenApiContract;
  let key: string;

  interface Answer {
    res: Response;
    body: unknown;
  }

  async function request(
    method: string,
    path: string,
    init: RequestInit & { auth?: string | null; gateway?: string } = {},
  ) {
    const headers = new Headers(init.headers);
    const auth = init.auth === undefined ? `Bearer ${key}` : init.auth;
    if (auth !== null) headers.set("authorization", auth);
    const res = await fetch(`${init.gateway ?? stack.url}${path}`, { ...init, method, headers });
    const text = await res.text();
    const body: unknown = res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text;
    expect(res.headers.get("x-request-id"), `${method} ${path} has X-Request-Id`).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    contract.check(method, path, res, body, "Error");
    return { res, body } satisfies Answer;
  }
  const post = (body: unknown, headers: Record<string, string> = { "content-type": "application/json" }) =>
    request("POST", "/v1/pets", { body: typeof body === "string" ? body : JSON.stringify(body), headers });
  /** POST /v1/pets with an Idempotency-Key (undefined: none), through a given gateway. */
  const create = (body: object, idempotencyKey: string | undefined, init: { gateway?: string; auth?: string } = {}) =>
    request("POST", "/v1/pets", {
      ...init,
      body: JSON.stringify(body),
      headers: {
        "content-type": "application/json",
        ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }),
      },
    });
  let database: pg.Client;
  const petsNamed = async (name: string) =>
    Number(
      (await database.query<{ n: string }>("select count(*) as n from catalog.pets where name = $1", [name])).rows[0]!
        .n,
    );
  let unique = 0;
  const uniqueName = (label: string) => `${label}-${Date.now()}-${unique++}`;
  const expectError = (answer: Answer, status: number, code: string, message?: RegExp) => {
    expect(answer.res.status).toBe(status);
    expect(answer.res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(answer.body).toEqual({ code, message: expect.any(String) as string, status });
    if (message) expect((answer.body as { message: string }).message).toMatch(message);
  };

  beforeAll(async () => {
    stack = await startTestStack();
    const doc = (await (await fetch(`${stack.url}/v1/openapi.json`)).json()) as ConstructorParameters<
      typeof OpenApiContract
    >[0];
    contract = new OpenApiContract(doc);
    key = (await stack.admin("key", "create", "--name", "e2e")).key as string;
    database = new pg.Client({ connectionString: stack.scratch.url });
    await database.connect();
  });
  afterAll(async () => {
    await database?.end();
    await stack?.stop();
  });

  describe("authentication", () => {
    it("serves the OpenAPI document without a key", async () => {
      const res = await fetch(`${stack.url}/v1/openapi.json`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { openapi: string }).openapi).toBe("3.1.0");
    });

    it.each([
      ["no Authorization header", null],
      ["another scheme", "Basic dXNlcjpwYXNz"],
      ["a malformed key", "Bearer not-a-key"],
      ["an unknown key", `Bearer sk_live_${"0".repeat(24)}_${"A".repeat(43)}`],
    ])("answers 401 to %s on every operation", async (_label, auth) => {
      for (const [method, path] of [
        ["GET", "/v1/pets"],
        ["POST", "/v1/pets"],
        ["GET", "/v1/pets/1"],
      ] as const) {
        const answer = await request(method, path, { auth });
        expectError(answer, 401, "unauthorized");
        expect(answer.res.headers.get("www-authenticate")).toMatch(/^Bearer realm="api"/);
      }
    });

    it("accepts a key with no tenants or scopes, and refuses it within moments of its revocation (not the cache TTL)", async () => {
      const created = await stack.admin("key", "create", "--name", "short-lived");
      expect(created).toMatchObject({
        id: expect.stringMatching(/^key_[0-9a-f]{24}$/) as string,
        tenants: [],
        scopes: [],
      });
      const auth = `Bearer ${created.key as string}`;
      expect((await request("GET", "/v1/pets", { auth })).res.status).toBe(200);
      expect((await request("GET", "/v1/pets", { auth })).res.status).toBe(200); // now served from the cache
      await stack.admin("key", "revoke", "--id", created.id as string);
      // The revocation reaches the gateway by Postgres NOTIFY, a moment after the revoke commits:
      // well within 2 s, where the cache alone would keep serving the key for API_KEY_CACHE_TTL (30 s).
      const deadline = Date.now() + 2_000;
      let answer = await request("GET", "/v1/pets", { auth });
      while (answer.res.status === 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        answer = await request("GET", "/v1/pets", { auth });
      }
      expectError(answer, 401, "unauthorized");
    });

    it("accepts the scheme word in any case", async () => {
      expect((await request("GET", "/v1/pets", { auth: `bearer ${key}` })).res.status).toBe(200);
    });
  });

  describe("createPet", () => {
    it("creates a pet with the default status and a Location", async () => {
      const { res, body } = await post({ name: "Rex", categoryId: 3 });
      expect(res.status).toBe(201);
      expect(body).toEqual({ id: expect.any(Number) as number, name: "Rex", categoryId: 3, status: "available" });
      expect(res.headers.get("location")).toBe(`/v1/pets/${(body as { id: number }).id}`);
    });

    it("keeps a given status and ignores unknown fields", async () => {
      const { res, body } = await post({ name: "Tom", categoryId: 1, status: "sold", id: 999, colour: "grey" });
      expect(res.status).toBe(201);
      expect(body).toMatchObject({ name: "Tom", status: "sold" });
      expect((body as { id: number }).id).not.toBe(999);
    });

    it.each([
      ["a missing name", { categoryId: 1 }, /name is required/],
      ["a numeric name", { name: 5, categoryId: 1 }, /name must be a string/],
      ["an empty name", { name: " ", categoryId: 1 }, /name must not be empty/],
      ["a 201-character name", { name: "x".repeat(201), categoryId: 1 }, /at most 200/],
      ["a missing categoryId", { name: "Rex" }, /categoryId is required/],
      ["a string categoryId", { name: "Rex", categoryId: "1" }, /categoryId must be an integer/],
      ["a fractional categoryId", { name: "Rex", categoryId: 1.5 }, /categoryId must be an integer/],
      ["a zero categoryId", { name: "Rex", categoryId: 0 }, /positive/],
      ["a huge categoryId", { name: "Rex", categoryId: 1e20 }, /categoryId/],
      ["an unknown status", { name: "Rex", categoryId: 1, status: "lost" }, /status must be one of/],
      ["a null status", { name: "Rex", categoryId: 1, status: null }, /status must be one of/],
      ["an array body", [{ name: "Rex", categoryId: 1 }], /JSON object/],
      ["a null body", null, /JSON object/],
      ["a string body", '"Rex"', /JSON object/],
      ["a non-JSON body", "{name: Rex}", /not valid JSON/],
      ["an empty body", "", /not valid JSON/],
    ])("answers 400 to %s", async (_label, body, message) => {
      expectError(await post(body), 400, "bad_request", message);
    });

    it.each([
      ["a lone high surrogate", '{"name":"\\ud800","categoryId":1}', /^name must be well-formed Unicode/],
      ["a lone low surrogate", '{"name":"Rex\\udc36","categoryId":1}', /^name must be well-formed Unicode/],
      ["a reversed pair", '{"name":"\\udc36\\ud83d","categoryId":1}', /^name must be well-formed Unicode/],
      ["one in an ignored field", '{"name":"Rex","categoryId":1,"note":["\\ud800"]}', /^note\[0\] must be/],
    ])("answers 400 naming the field to %s, never storing U+FFFD", async (_label, body, message) => {
      expectError(await post(body), 400, "bad_request", message);
      const replaced = await database.query("select 1 from catalog.pets where name like '%' || chr(65533) || '%'");
      expect(replaced.rowCount).toBe(0);
    });

    it("answers 400 to a body that is not valid UTF-8, rather than replacing bytes", async () => {
      const bytes = Buffer.concat([
        Buffer.from('{"name":"Re'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('x","categoryId":1}'),
      ]);
      const answer = await request("POST", "/v1/pets", {
        body: bytes,
        headers: { "content-type": "application/json" },
      });
      expectError(answer, 400, "bad_request", /not valid UTF-8/);
    });

    it("accepts an escaped surrogate pair as the character it spells", async () => {
      const { res, body } = await post('{"name":"Rex \\ud83d\\udc36","categoryId":1}');
      expect(res.status).toBe(201);
      expect((body as { name: string }).name).toBe("Rex 🐶");
    });

    it("names every problem at once", async () => {
      const { body } = await post({ name: 1, categoryId: "x", status: "lost" });
      expect((body as { message: string }).message).toBe(
        "name must be a string; categoryId must be an integer; status must be one of available, pending, sold",
      );
    });

    it("names every problem at once, shape and rules alike", async () => {
      const { body } = await post({ name: "", categoryId: 0, status: "dead" });
      expect((body as { message: string }).message).toBe(
        "name must not be empty; categoryId must be a positive integer; status must be one of available, pending, sold",
      );
    });

    it.each([
      ["text/plain", { "content-type": "text/plain" }],
      ["form data", { "content-type": "application/x-www-form-urlencoded" }],
      ["no content type", {}],
      ["a non-UTF-8 charset", { "content-type": "application/json; charset=latin1" }],
      ["gzip encoding", { "content-type": "application/json", "content-encoding": "gzip" }],
    ])("answers 415 to %s", async (_label, headers) => {
      expectError(await post({ name: "Rex", categoryId: 1 }, headers), 415, "unsupported_media_type");
    });

    it("answers 413 to a body over 1 MiB, declared or streamed", async () => {
      const big = JSON.stringify({ name: "Rex", categoryId: 1, padding: "x".repeat(1024 * 1024) });
      expectError(await post(big), 413, "payload_too_large");
      const chunks = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(big));
          controller.close();
        },
      });
      const streamed = await request("POST", "/v1/pets", {
        body: chunks,
        headers: { "content-type": "application/json" },
        duplex: "half",
      });
      expectError(streamed, 413, "payload_too_large");
    });

    it("accepts a body of just under 1 MiB", async () => {
      const body = JSON.stringify({ name: "Big", categoryId: 1, padding: "x".repeat(1024 * 1024 - 100) });
      expect((await post(body)).res.status).toBe(201);
    });
  });

  describe("createPet with an Idempotency-Key", () => {
    it("creates once and replays the same answer to a repeat, bare or quoted", async () => {
      const name = uniqueName("idem");
      const idempotencyKey = `once-${Date.now()}`;
      const first = await create({ name, categoryId: 5 }, idempotencyKey);
      expect(first.res.status).toBe(201);
      expect(first.res.headers.get("idempotent-replayed")).toBeNull();
      const again = await create({ name, categoryId: 5 }, `"${idempotencyKey}"`);
      expect(again.res.status).toBe(201);
      expect(again.res.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);
      expect(again.res.headers.get("location")).toBe(first.res.headers.get("location"));
      expect(await petsNamed(name)).toBe(1);
    });

    it("answers 422 idempotency_key_reused to the same key with another body", async () => {
      const name = uniqueName("reuse");
      const idempotencyKey = `reuse-${Date.now()}`;
      expect((await create({ name, categoryId: 1 }, idempotencyKey)).res.status).toBe(201);
      expectError(await create({ name, categoryId: 2 }, idempotencyKey), 422, "idempotency_key_reused");
      expect(await petsNamed(name)).toBe(1);
    });

    it("keeps API keys apart: another key's identical Idempotency-Key is another pet", async () => {
      const other = `Bearer ${(await stack.admin("key", "create", "--name", "other")).key as string}`;
      const name = uniqueName("scoped");
      const idempotencyKey = `scoped-${Date.now()}`;
      const mine = await create({ name, categoryId: 1 }, idempotencyKey);
      const theirs = await create({ name, categoryId: 1 }, idempotencyKey, { auth: other });
      expect(theirs.res.headers.get("idempotent-replayed")).toBeNull();
      expect((theirs.body as { id: number }).id).not.toBe((mine.body as { id: number }).id);
    });

    it.each(["short", "has space key", "x".repeat(129), "", '"unterminated-key'])(
      "answers 400 bad_request to the malformed key %j and creates nothing",
      async (idempotencyKey) => {
        const name = uniqueName("badkey");
        expectError(await create({ name, categoryId: 1 }, idempotencyKey), 400, "bad_request", /Idempotency-Key/);
        expect(await petsNamed(name)).toBe(0);
      },
    );

    it("creates exactly one pet for 20 concurrent requests with the same key", async () => {
      const name = uniqueName("burst");
      const idempotencyKey = `burst-${Date.now()}`;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => create({ name, categoryId: 1 }, idempotencyKey)),
      );
      for (const answer of answers) {
        if (answer.res.status !== 201) expectError(answer, 409, "idempotency_in_progress");
      }
      const applied = answers.filter((a) => a.res.status === 201 && a.res.headers.get("idempotent-replayed") === null);
      expect(applied).toHaveLength(1);
      const after = await create({ name, categoryId: 1 }, idempotencyKey);
      expect(after.res.headers.get("idempotent-replayed")).toBe("true");
      expect(after.body).toEqual(applied[0]!.body);
      expect(await petsNamed(name)).toBe(1);
    });
  });

  describe("when the catalog is slower than the gateway's deadline", () => {
    let slowGateway: string;
    let lock: pg.Client;

    beforeAll(async () => {
      const replica = await stack.startGateway({ UPSTREAM_TIMEOUT: "500ms" });
      slowGateway = `http://127.0.0.1:${replica.listening.port as number}`;
      lock = new pg.Client({ connectionString: stack.scratch.url });
      await lock.connect();
    });
    afterAll(async () => lock?.end());

    /** Inserts into catalog.pets wait until release(); reads go on. */
    const holdPets = () => lock.query("begin; lock table catalog.pets in exclusive mode");
    const release = () => lock.query("commit");
    const insertsWaiting = async () =>
      Number(
        (
          await database.query<{ n: string }>(
            "select count(*) as n from pg_locks where not granted and relation = 'catalog.pets'::regclass",
          )
        ).rows[0]!.n,
      );

    it("answers a create without a key 504 outcome_unknown (no Retry-After): the pet may exist", async () => {
      const name = uniqueName("unknown");
      await holdPets();
      try {
        const answer = await create({ name, categoryId: 1 }, undefined, { gateway: slowGateway });
        expectError(answer, 504, "outcome_unknown", /list pets.*Idempotency-Key/s);
        expect(answer.res.headers.get("retry-after")).toBeNull();
        await expect.poll(insertsWaiting, { timeout: 10_000 }).toBeGreaterThan(0); // the catalog is still at it
      } finally {
        await release();
      }
      // ...and the pet does appear once the catalog catches up: a blind retry would duplicate it.
      await expect.poll(() => petsNamed(name), { timeout: 10_000 }).toBe(1);
    });

    it("answers a create with a key 503 with Retry-After; the retry with the same key replays the one pet", async () => {
      const name = uniqueName("keyed");
      const idempotencyKey = `slow-${Date.now()}`;
      await holdPets();
      try {
        const answer = await create({ name, categoryId: 1 }, idempotencyKey, { gateway: slowGateway });
        expectError(answer, 503, "unavailable", /same Idempotency-Key/);
        expect(Number(answer.res.headers.get("retry-after"))).toBeGreaterThan(0);
        // While the first attempt is still waiting (its key claimed, its insert queued), a retry is
        // told so rather than creating another.
        await expect.poll(insertsWaiting, { timeout: 10_000 }).toBeGreaterThan(0);
        expectError(await create({ name, categoryId: 1 }, idempotencyKey), 409, "idempotency_in_progress");
      } finally {
        await release();
      }
      let retry = await create({ name, categoryId: 1 }, idempotencyKey);
      await expect
        .poll(
          async () => {
            if (retry.res.status !== 201) retry = await create({ name, categoryId: 1 }, idempotencyKey);
            return retry.res.status;
          },
          { timeout: 10_000 },
        )
        .toBe(201);
      expect(retry.res.headers.get("idempotent-replayed")).toBe("true");
      expect(retry.body).toMatchObject({ name, categoryId: 1, status: "available" });
      expect(await petsNamed(name)).toBe(1);
      const stored = await database.query<{ id: string }>("select id from catalog.pets where name = $1", [name]);
      expect((retry.body as { id: number }).id).toBe(Number(stored.rows[0]!.id));
    });
    it("answers 504 outcome_unknown when the connection drops after the create was sent", async () => {
      const patient = await stack.startGateway({ UPSTREAM_TIMEOUT: "60s" });
      const name = uniqueName("dropped");
      await holdPets();
      try {
        const pending = create({ name, categoryId: 1 }, undefined, {
          gateway: `http://127.0.0.1:${patient.listening.port as number}`,
        });
        await expect.poll(insertsWaiting, { timeout: 10_000 }).toBeGreaterThan(0);
        await stack.catalog.stop("SIGKILL"); // the gateway's call is in flight: its connection drops
        const answer = await pending;
        expectError(answer, 504, "outcome_unknown");
        expect(answer.res.headers.get("retry-after")).toBeNull();
      } finally {
        await release();
        stack.catalog = await stack.startCatalog();
      }
      // The insert the dead catalog had started still commits: the outcome really was unknown.
      await expect.poll(() => petsNamed(name), { timeout: 10_000 }).toBe(1);
      await expect
        .poll(async () => (await request("GET", "/v1/pets?limit=1")).res.status, { timeout: 10_000 })
        .toBe(200);
    });
  });

  describe("listPets", () => {
    let created: { id: number; status: string }[];

    beforeAll(async () => {
      created = [];
      for (let i = 0; i < 105; i++) {
        const status = ["available", "pending", "sold"][i % 3]!;
        created.push((await post({ name: `pet-${i}`, categoryId: 2, status })).body as { id: number; status: string });
      }
    });

    it("returns 20 by default, oldest first, with a next link", async () => {
      const { res, body } = await request("GET", "/v1/pets");
      expect(res.status).toBe(200);
      const ids = (body as { id: number }[]).map((p) => p.id);
      expect(ids).toHaveLength(20);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(res.headers.get("link")).toMatch(/^<\/v1\/pets\?limit=20&cursor=[A-Za-z0-9_-]+>; rel="next"$/);
    });

    it("follows next links through every pet of a status exactly once", async () => {
      const seen: number[] = [];
      let path: string | undefined = "/v1/pets?status=pending&limit=4";
      while (path) {
        const { res, body } = await request("GET", path);
        expect(res.status).toBe(200);
        for (const pet of body as { id: number; status: string }[]) {
          expect(pet.status).toBe("pending");
          seen.push(pet.id);
        }
        path = /^<([^>]+)>; rel="next"$/.exec(res.headers.get("link") ?? "")?.[1];
      }
      const pending = created.filter((p) => p.status === "pending").map((p) => p.id);
      expect(seen).toEqual(expect.arrayContaining(pending));
      expect(seen).toEqual([...new Set(seen)].sort((a, b) => a - b));
    });

    it("has no next link on the last page", async () => {
      const first = await request("GET", "/v1/pets?limit=100");
      expect(first.body as unknown[]).toHaveLength(100);
      const next = /^<([^>]+)>/.exec(first.res.headers.get("link") ?? "")?.[1];
      const last = await request("GET", next!);
      expect((last.body as unknown[]).length).toBeGreaterThan(0);
      expect((last.body as unknown[]).length).toBeLessThan(100);
      expect(last.res.headers.get("link")).toBeNull();
    });

    it.each(["1", "100"])("accepts limit=%s", async (limit) => {
      const { body } = await request("GET", `/v1/pets?limit=${limit}`);
      expect((body as unknown[]).length).toBe(Math.min(Number(limit), 100));
    });

    it.each([
      ["limit=0", /limit/],
      ["limit=101", /limit/],
      ["limit=abc", /limit/],
      ["limit=1.5", /limit/],
      ["limit=-1", /limit/],
      ["limit=", /limit/],
      ["limit=1&limit=2", /at most once/],
      ["limit=0&status=lost", /^limit must be an integer between 1 and 100; status must be one of/],
      ["status=lost", /status must be one of/],
      ["status=AVAILABLE", /status must be one of/],
      ["cursor=forged", /cursor/],
      ["cursor=%00", /cursor/],
    ])("answers 400 to %s", async (query, message) => {
      expectError(await request("GET", `/v1/pets?${query}`), 400, "bad_request", message);
    });

    it("refuses a cursor issued for another status filter", async () => {
      const { res } = await request("GET", "/v1/pets?status=sold&limit=1");
      const cursor = /cursor=([^&>]+)/.exec(res.headers.get("link") ?? "")?.[1];
      expect(cursor).toBeDefined();
      expectError(await request("GET", `/v1/pets?status=pending&cursor=${cursor}`), 400, "bad_request", /cursor/);
    });
  });

  describe("getPet (deprecated)", () => {
    it("answers the pet with Deprecation, Sunset and a successor link", async () => {
      const { body: pet } = await post({ name: "Old", categoryId: 9, status: "pending" });
      const { res, body } = await request("GET", `/v1/pets/${(pet as { id: number }).id}`);
      expect(res.status).toBe(200);
      expect(body).toEqual(pet);
      expect(res.headers.get("deprecation")).toMatch(/^@\d+$/);
      const deprecatedAt = Number(res.headers.get("deprecation")!.slice(1)) * 1000;
      expect(deprecatedAt).toBeLessThanOrEqual(Date.parse("2030-12-05T00:00:00Z"));
      expect(res.headers.get("sunset")).toBe("Thu, 05 Dec 2030 00:00:00 GMT");
      expect(res.headers.get("link")).toBe('</v1/pets>; rel="successor-version"');
    });

    it("announces the deprecation even when the key is refused", async () => {
      const answer = await request("GET", "/v1/pets/1", { auth: null });
      expectError(answer, 401, "unauthorized");
      expect(answer.res.headers.get("deprecation")).toMatch(/^@\d+$/);
      expect(answer.res.headers.get("link")).toBe('</v1/pets>; rel="successor-version"');
    });

    it("answers 404 for an unknown pet, still announcing the deprecation", async () => {
      const answer = await request("GET", "/v1/pets/9223372036854775807");
      expectError(answer, 404, "not_found");
      expect(answer.res.headers.get("sunset")).toBe("Thu, 05 Dec 2030 00:00:00 GMT");
    });

    it.each(["abc", "1.5", "9223372036854775808", "%F0%9F%90%B6", "01", "1e3", "%E0%A4%A", "0", "-1"])(
      "answers 400 to petId %s",
      async (petId) => {
        expectError(await request("GET", `/v1/pets/${petId}`), 400, "bad_request");
      },
    );
  });

  describe("everything else", () => {
    it("answers 405 with Allow to a method a path does not support", async () => {
      const answer = await request("DELETE", "/v1/pets/1");
      expectError(answer, 405, "method_not_allowed");
      expect(answer.res.headers.get("allow")).toMatch(/GET/);
      const put = await request("PUT", "/v1/pets", { body: "{}", headers: { "content-type": "application/json" } });
      expectError(put, 405, "method_not_allowed");
      expect(put.res.headers.get("allow")).toMatch(/GET.*POST|POST.*GET/);
    });

    it("answers 404 to an unknown path", async () => {
      expectError(await request("GET", "/v1/dogs"), 404, "not_found");
      expectError(await request("GET", "/v2/pets"), 404, "not_found");
    });

    it.each([
      ["GET", "/v1/pets/"],
      ["POST", "/v1/pets/"],
      ["GET", "/V1/PETS"],
      ["GET", "/v1/Pets"],
      ["GET", "/v1/pets/1/"],
      ["GET", "/v1//pets"],
      ["GET", "/v1/openapi.json/"],
    ])("matches routes exactly: %s %s is 404", async (method, path) => {
      const init =
        method === "POST"
          ? { body: '{"name":"Alias","categoryId":1}', headers: { "content-type": "application/json" } }
          : {};
      expectError(await request(method, path, init), 404, "not_found");
    });

    it("echoes a safe X-Request-Id and traces it through both services' logs", async () => {
      const id = `trace-${Date.now()}`;
      const { res } = await request("GET", "/v1/pets/1", { headers: { "x-request-id": id } });
      expect(res.headers.get("x-request-id")).toBe(id);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(stack.gateway.logs.some((l) => l.requestId === id && l.msg === "request")).toBe(true);
      expect(stack.catalog.logs.some((l) => l.requestId === id)).toBe(true);
    });

    it.each(["has space", "x".repeat(129), "<script>", "tab\there"])(
      "replaces the unsafe X-Request-Id %j with its own",
      async (unsafe) => {
        const { res } = await request("GET", "/v1/pets?limit=1", { headers: { "x-request-id": unsafe } });
        expect(res.headers.get("x-request-id")).not.toBe(unsafe);
        expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
      },
    );

    it("never logs the API key", () => {
      const everything = [...stack.gateway.logs, ...stack.catalog.logs].map((l) => JSON.stringify(l)).join("\n");
      expect(everything).not.toContain(key.slice(-43));
    });

    it("exposes liveness, readiness and Prometheus metrics", async () => {
      expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${stack.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({
        status: "ready",
        checks: { database: "ok", catalog: "SERVING", notify: "SERVING", webhooks: "SERVING", gateway: "ok" },
      });
      const metrics = await (await fetch(stack.metricsUrl)).text();
      expect(metrics).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/v1\/pets"[^}]*\} [1-9]/);
      expect(metrics).toMatch(
        /http_request_duration_seconds_count\{[^}]*route="\/v1\/pets\/:petId"[^}]*status_code="404"/,
      );
    });
  });

  describe("when the catalog is down", () => {
    it("answers 503 unavailable with Retry-After, stays ready naming the catalog's state, and recovers when it returns", async () => {
      await stack.catalog.stop();
      const answer = await request("GET", "/v1/pets");
      expectError(answer, 503, "unavailable");
      expect(Number(answer.res.headers.get("retry-after"))).toBeGreaterThan(0);
      // Nothing reached the catalog, so a create is certainly not done: a plain 503, key or not.
      const unkeyed = await create({ name: "Down", categoryId: 1 }, undefined);
      expectError(unkeyed, 503, "unavailable", /retry with backoff$/);
      expectError(
        await create({ name: "Down", categoryId: 1 }, "down-key-1"),
        503,
        "unavailable",
        /same Idempotency-Key/,
      );
      // Readiness is the gateway's own part (its database): the other capabilities go on serving.
      // The catalog's state is checked in the background: UNREACHABLE after two unanswered checks.
      await expect
        .poll(
          async () => {
            const ready = await fetch(`${stack.url}/readyz`);
            return `${ready.status} ${((await ready.json()) as { checks: { catalog: string } }).checks.catalog}`;
          },
          { timeout: 5_000, interval: 100 },
        )
        .toBe("200 UNREACHABLE");
      expect((await fetch(`${stack.url}/healthz`)).status).toBe(200); // the gateway itself stays up

      stack.catalog = await stack.startCatalog();
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = (await request("GET", "/v1/pets")).res.status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status).toBe(200);
    });
  });
});
