import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsoleBrowser, pathOf, type Page } from "./console-browser.js";
import { startTestStack, type TestStack } from "./stack.js";

/**
 * The console's webhook pages (issue 18) over HTTP against a real stack: the gateway, notify and
 * webhooks as processes, a local HTTPS receiver, fast retries. Each page is read as an admin and as
 * a viewer; each action's effect is checked through the API (the same gRPC calls); a viewer's
 * POSTs are refused with 403 and change nothing.
 */
describe("console webhook pages", () => {
  let stack: TestStack;
  let certs: TestCertificates;
  let receiver: TestReceiver;
  let db: pg.Client;
  let apiKey: string;
  let admin: ConsoleBrowser;
  let viewer: ConsoleBrowser;
  let adminId: string;
  let n = 0;
  const tenant = "t_console_hooks";
  const password = "correct horse battery staple";

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.url}/api/v1/tenants/${tenant}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(method === "GET" ? {} : { "idempotency-key": `console-test-${Date.now()}-${n++}` }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (res.status === 204 ? {} : await res.json()) as Record<string, unknown> };
  };

  async function signedInUser(email: string, role: string) {
    const created = await stack.admin("user", "create", "--tenant", tenant, "--email", email, "--role", role);
    const b = new ConsoleBrowser(() => stack.url);
    expect((await b.get(pathOf(created.invitationUrl as string))).status).toBe(200);
    const set = await b.post(pathOf(created.invitationUrl as string), { password, confirmation: password });
    expect(set.status).toBe(303);
    return { browser: b, id: created.id as string };
  }

  /** The hidden inputs of the form with this id on the page. */
  function formFields(page: Page, formId: string): Record<string, string> {
    const start = page.text.indexOf(`id="${formId}"`);
    expect(start, `form ${formId} on the page`).toBeGreaterThan(-1);
    const form = page.text.slice(start, page.text.indexOf("</form>", start));
    const fields: Record<string, string> = {};
    for (const match of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)" \/>/g)) {
      fields[match[1]!] = match[2]!;
    }
    return fields;
  }

  const createEndpoint = async (extra: Record<string, unknown> = {}) => {
    const created = await api("POST", "/webhooks", {
      url: receiver.url,
      description: `receiver ${n++}`,
      eventTypes: ["booking.*", "conversation.started"],
      ...extra,
    });
    expect(created.status).toBe(201);
    return created.body as { id: string; secret: string; version: number };
  };

  /** A delivery written straight into the ledger (status and age as given), as webhooks-api.test.ts does. */
  async function seedDelivery(endpointId: string, status: string, options: { ago?: string; type?: string } = {}) {
    const suffix = `${Date.now().toString(16).padStart(12, "0")}${(n++).toString(16).padStart(12, "0")}`.slice(-24);
    const eventId = `evt_${suffix}`;
    const id = `dlv_${suffix}`;
    const ago = options.ago ?? "1 minute";
    const type = options.type ?? "booking.created";
    await db.query(
      `insert into webhooks_history.events (id, tenant_id, type, occurred_at, data, livemode, received_at)
       values ($1, $2, $3, now() - $4::interval, '{"booking_id":"bkg_1"}', true, now() - $4::interval)`,
      [eventId, tenant, type, ago],
    );
    await db.query(
      `insert into webhooks_history.deliveries (id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status,
         attempts, attempts_total, generation, created_at, updated_at)
       values ($1, $2, $3, $4, $5, true, $6, $7, $8, $8, 1, now() - $9::interval, now() - $9::interval)`,
      [id, tenant, endpointId, eventId, type, `{"id":"${eventId}"}`, status, status === "dead_lettered" ? 8 : 1, ago],
    );
    return { id, eventId };
  }

  const rowsOf = (page: Page, attribute: string) =>
    [...page.text.matchAll(new RegExp(`<tr ${attribute}="([^"]+)"`, "g"))].map((m) => m[1]!);

  beforeAll(async () => {
    certs = await createTestCertificates();
    receiver = await startReceiver(certs, () => ({ status: 200, body: "thanks from the receiver" }));
    stack = await startTestStack(
      {},
      {},
      { NODE_EXTRA_CA_CERTS: certs.caPath, WEBHOOKS_RETRY_DELAYS: "50ms,50ms,50ms,50ms,50ms,50ms,50ms" },
    );
    db = new pg.Client({ connectionString: stack.scratch.url });
    await db.connect();
    await stack.admin("tenant", "create", "--name", "Console hooks", "--id", tenant);
    apiKey = (await stack.admin("key", "create", "--scopes", "webhook:manage,tenant:read", "--tenants", tenant))
      .key as string;
    const a = await signedInUser("admin@example.com", "admin");
    admin = a.browser;
    adminId = a.id;
    viewer = (await signedInUser("viewer@example.com", "viewer")).browser;
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
    await receiver?.close();
    await certs?.remove();
  });

  it("lists endpoints with health, 24 h success rate and attention for admin and viewer; text is inert", async () => {
    const hostile = await createEndpoint({ description: "<script>alert(1)</script>" });
    const flagged = await createEndpoint();
    await db.query(
      `update webhooks.endpoints set paused = true, attention_reason = 'webhook.endpoint_dead_lettered',
         attention_cause = 'http_5xx', attention_since = now() where id = $1`,
      [flagged.id],
    );
    for (const b of [admin, viewer]) {
      const list = await b.get("/console/webhooks");
      expect(list.status).toBe(200);
      expect(list.text).not.toContain("<script>alert(1)</script>");
      expect(list.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
      const row = (id: string) => list.text.slice(list.text.indexOf(`data-endpoint-id="${id}"`)).split("</tr>")[0]!;
      expect(row(hostile.id)).toContain('data-health="healthy"');
      expect(row(hostile.id)).toContain("no attempts");
      expect(row(flagged.id)).toContain('data-health="paused"');
      expect(row(flagged.id)).toContain('data-attention="webhook.endpoint_dead_lettered"');
      expect(row(flagged.id)).toContain('data-cause="http_5xx"');
      const page = await b.get(`/console/webhooks/${hostile.id}`);
      expect(page.status).toBe(200);
      expect(page.text).not.toContain("<script>alert(1)</script>");
      expect(page.text).toContain('<dd id="endpoint-description">&lt;script&gt;alert(1)&lt;/script&gt;</dd>');
    }
    expect((await admin.get("/console/webhooks")).text).toContain('id="new-endpoint"');
    const asViewer = await viewer.get(`/console/webhooks/${hostile.id}`);
    expect(asViewer.text).not.toContain('id="pause-form"');
    expect(asViewer.text).not.toContain('id="test-form"');
    expect((await viewer.get("/console/webhooks/new")).status).toBe(403);
  });

  it("creates an endpoint from the form and shows its secret exactly once", async () => {
    const form = await admin.get("/console/webhooks/new");
    expect(form.status).toBe(200);
    expect(form.text).toMatch(/<label for="url">/);
    const fields = formFields(form, "endpoint-form");
    const body = {
      ...fields,
      url: receiver.url,
      description: "made in the console",
      eventTypes: "booking.created",
    };
    const created = await admin.post("/console/webhooks", body);
    expect(created.status).toBe(200);
    const secret = /<code id="new-secret">(whsec_[^<]+)<\/code>/.exec(created.text)?.[1];
    expect(secret).toBeDefined();
    const again = await admin.post("/console/webhooks", body);
    expect(again.status).toBe(200);
    expect(again.text).not.toContain("whsec_");
    expect(again.text).toContain('id="replayed"');
    const listed = await api("GET", "/webhooks?limit=100");
    const made = (listed.body.data as { description: string; eventTypes: string[] }[]).filter(
      (e) => e.description === "made in the console",
    );
    expect(made).toHaveLength(1);
    expect(made[0]!.eventTypes).toEqual(["booking.created"]);

    const refused = await admin.post("/console/webhooks", {
      ...formFields(form, "endpoint-form"),
      url: "",
      description: "x",
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('id="form-error"');
  });

  it("edits with the version the form showed; a stale version answers 412 with the conflict and changes nothing", async () => {
    const endpoint = await createEndpoint();
    const form = await admin.get(`/console/webhooks/${endpoint.id}/edit`);
    expect(form.status).toBe(200);
    const fields = formFields(form, "endpoint-form");
    expect(fields.expectedVersion).toBe("1");
    const saved = await admin.post(`/console/webhooks/${endpoint.id}/edit`, {
      ...fields,
      url: receiver.url,
      description: "edited in the console",
      eventTypes: "booking.cancelled",
    });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/console/webhooks/${endpoint.id}`);
    const read = await api("GET", `/webhooks/${endpoint.id}`);
    expect(read.body).toMatchObject({
      description: "edited in the console",
      eventTypes: ["booking.cancelled"],
      version: 2,
    });

    // The same stale form again, as a second tab would send it (a new idempotency key).
    const stale = await admin.post(`/console/webhooks/${endpoint.id}/edit`, {
      ...fields,
      _idempotency: `stale-${Date.now()}`,
      url: receiver.url,
      description: "lost update",
      eventTypes: "booking.created",
    });
    expect(stale.status).toBe(412);
    expect(stale.text).toContain("Someone changed this endpoint while you were editing it");
    expect(formFields(stale, "endpoint-form").expectedVersion).toBe("2");
    expect((await api("GET", `/webhooks/${endpoint.id}`)).body).toMatchObject({
      description: "edited in the console",
      version: 2,
    });
  });

  it("sets, shows and clears an endpoint's rate limit from the edit form; a bad one is shown beside the form", async () => {
    const endpoint = await createEndpoint();
    const edit = async (rateLimit: string) => {
      const form = await admin.get(`/console/webhooks/${endpoint.id}/edit`);
      return admin.post(`/console/webhooks/${endpoint.id}/edit`, {
        ...formFields(form, "endpoint-form"),
        url: receiver.url,
        description: "limited",
        eventTypes: "booking.created",
        rateLimit,
      });
    };
    expect((await edit("12")).status).toBe(303);
    expect((await api("GET", `/webhooks/${endpoint.id}`)).body.rateLimit).toBe(12);
    expect((await admin.get(`/console/webhooks/${endpoint.id}/edit`)).text).toMatch(
      /<input\s+id="rate-limit"\s+name="rateLimit"[^>]*value="12"/,
    );
    expect((await admin.get(`/console/webhooks/${endpoint.id}`)).text).toContain(
      '<dd id="rate-limit">12 deliveries per second</dd>',
    );
    for (const bad of ["0", "2.5", "ten"]) {
      const refused = await edit(bad);
      expect(refused.status).toBe(400);
      expect(refused.text).toContain("rateLimit must be");
    }
    expect((await edit("")).status).toBe(303);
    expect((await api("GET", `/webhooks/${endpoint.id}`)).body.rateLimit).toBeNull();
    expect((await admin.get(`/console/webhooks/${endpoint.id}`)).text).toContain('<dd id="rate-limit">None</dd>');
  });

  it("pauses and resumes; a stale version is a 412 conflict page", async () => {
    const endpoint = await createEndpoint();
    const page = await admin.get(`/console/webhooks/${endpoint.id}`);
    const paused = await admin.post(`/console/webhooks/${endpoint.id}/pause`, formFields(page, "pause-form"));
    expect(paused.status).toBe(303);
    expect((await api("GET", `/webhooks/${endpoint.id}`)).body).toMatchObject({ paused: true, health: "paused" });
    const after = await admin.get(`/console/webhooks/${endpoint.id}`);
    expect(after.text).toContain("The endpoint is paused");
    const resumed = await admin.post(`/console/webhooks/${endpoint.id}/resume`, formFields(after, "resume-form"));
    expect(resumed.status).toBe(303);
    expect((await api("GET", `/webhooks/${endpoint.id}`)).body).toMatchObject({ paused: false, version: 3 });
    // The pause form of the first page carries version 1.
    const stale = await admin.post(`/console/webhooks/${endpoint.id}/pause`, {
      ...formFields(page, "pause-form"),
      _idempotency: `stale-pause-${Date.now()}`,
    });
    expect(stale.status).toBe(412);
    expect(stale.text).toContain('id="conflict"');
    expect((await api("GET", `/webhooks/${endpoint.id}`)).body).toMatchObject({ paused: false, version: 3 });
  });

  it("rotates the secret only with the user's password and shows the new one exactly once", async () => {
    const endpoint = await createEndpoint();
    const form = await admin.get(`/console/webhooks/${endpoint.id}/rotate-secret`);
    expect(form.status).toBe(200);
    expect(form.text).toMatch(/<label for="password">/);
    const fields = formFields(form, "rotate-form");
    const wrong = await admin.post(`/console/webhooks/${endpoint.id}/rotate-secret`, {
      ...fields,
      password: "not my password at all",
    });
    expect(wrong.status).toBe(400);
    expect(wrong.text).not.toContain("whsec_");
    expect((await api("GET", `/webhooks/${endpoint.id}`)).body).toMatchObject({
      version: 1,
      previousSecretExpiresAt: null,
    });

    const rotated = await admin.post(`/console/webhooks/${endpoint.id}/rotate-secret`, { ...fields, password });
    expect(rotated.status).toBe(200);
    const secrets = [...rotated.text.matchAll(/whsec_[A-Za-z0-9_-]+/g)].map((m) => m[0]);
    expect(secrets).toHaveLength(1);
    expect(secrets[0]).not.toBe(endpoint.secret);
    const read = await api("GET", `/webhooks/${endpoint.id}`);
    expect(read.body.version).toBe(2);
    expect(read.body.previousSecretExpiresAt).not.toBeNull();
    // The same form again replays without the secret.
    const replay = await admin.post(`/console/webhooks/${endpoint.id}/rotate-secret`, { ...fields, password });
    expect(replay.status).toBe(200);
    expect(replay.text).not.toContain("whsec_");
    // Nor is it on any page afterwards.
    expect((await admin.get(`/console/webhooks/${endpoint.id}`)).text).not.toContain("whsec_");
  });

  it("counts a rotation's password against the sign-in throttle: over the limit it answers 429, so does sign-in", async () => {
    const endpoint = await createEndpoint();
    const { browser: rotator } = await signedInUser("rotator@example.com", "admin");
    const form = await rotator.get(`/console/webhooks/${endpoint.id}/rotate-secret`);
    const fields = formFields(form, "rotate-form");
    // CONSOLE_LOGIN_ACCOUNT_LIMIT is 5 by default.
    for (let i = 0; i < 5; i++) {
      const wrong = await rotator.post(`/console/webhooks/${endpoint.id}/rotate-secret`, {
        ...fields,
        password: `guess ${i} is wrong`,
      });
      expect(wrong.status).toBe(400);
    }
    const throttled = await rotator.post(`/console/webhooks/${endpoint.id}/rotate-secret`, { ...fields, password });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(throttled.text).not.toContain("whsec_");
    expect((await api("GET", `/webhooks/${endpoint.id}`)).body).toMatchObject({
      version: 1,
      previousSecretExpiresAt: null,
    });
    const signIn = new ConsoleBrowser(() => stack.url);
    await signIn.get("/console/login");
    const refused = await signIn.post("/console/login", { tenant, email: "rotator@example.com", password });
    expect(refused.status).toBe(429);
  });

  it("sends a test event from the catalog and shows the receiver's answer; copy as curl has no secret", async () => {
    const endpoint = await createEndpoint();
    const page = await admin.get(`/console/webhooks/${endpoint.id}`);
    expect(page.text).toContain('<option value="booking.created">booking.created</option>');
    const sent = await admin.post(`/console/webhooks/${endpoint.id}/test`, {
      ...formFields(page, "test-form"),
      eventType: "booking.created",
    });
    expect(sent.status).toBe(303);
    const deliveryId = /\/deliveries\/(dlv_[0-9a-f]{24})$/.exec(sent.location)?.[1];
    expect(deliveryId).toBeDefined();
    const detail = await eventually("the receiver's answer", async () => {
      const d = await api("GET", `/webhooks/${endpoint.id}/deliveries/${deliveryId!}`);
      return d.body.status === "succeeded" && d.body;
    });
    for (const b of [admin, viewer]) {
      const shown = await b.get(sent.location);
      expect(shown.status).toBe(200);
      expect(shown.text).toContain('data-status="succeeded"');
      const attempt = (detail.attemptHistory as { durationMs: number }[])[0]!;
      expect(shown.text).toContain(`data-status-code="200"`);
      expect(shown.text).toContain(`data-duration-ms="${attempt.durationMs}"`);
      expect(shown.text).toMatch(
        /<div id="latest-answer-body"><pre class="response-body">thanks from the receiver<\/pre>/,
      );
      const unescape = (text: string) => text.replace(/&quot;/g, '"');
      // Shown indented for reading; the copy button's source is the payload exactly as sent.
      const pretty = unescape(/<code id="payload-body">([^<]*)<\/code>/.exec(shown.text)![1]!);
      expect(pretty).toBe(JSON.stringify(JSON.parse(detail.payload as string), null, 2));
      expect(pretty).toContain('\n  "type": "booking.created",');
      const exact = unescape(/<code id="payload-exact">([^<]*)<\/code>/.exec(shown.text)![1]!);
      expect(exact).toBe(detail.payload);
      expect(shown.text).toContain('<button type="button" data-copy="payload-exact" id="copy-payload" hidden>');
      const curl = /<code id="curl-command">([^<]*)<\/code>/.exec(shown.text)![1]!;
      expect(curl).toContain(`curl -X POST &#39;${receiver.url}&#39;`);
      expect(curl).toContain(`Service-Delivery-Id: ${deliveryId!}`);
      expect(curl).toContain("$WEBHOOK_SECRET");
      expect(curl).not.toContain(endpoint.secret);
      expect(shown.text).not.toContain(endpoint.secret);
      expect(shown.text).not.toContain("whsec_");
    }
    // The delivery the receiver got carries the same payload.
    expect(receiver.requests.some((r) => r.body.toString("utf8") === detail.payload)).toBe(true);
  });

  it("narrows the ledger exactly by the filters in the URL", async () => {
    const endpoint = await createEndpoint();
    const seeded = [
      await seedDelivery(endpoint.id, "dead_lettered"),
      await seedDelivery(endpoint.id, "succeeded"),
      await seedDelivery(endpoint.id, "dead_lettered", { type: "booking.cancelled" }),
      await seedDelivery(endpoint.id, "awaiting_retry", { type: "booking.cancelled" }),
    ];
    const ledger = async (query: string) => {
      const page = await viewer.get(`/console/webhooks/${endpoint.id}${query}`);
      expect(page.status).toBe(200);
      return rowsOf(page, "data-delivery-id");
    };
    const ids = (indexes: number[]) => indexes.map((i) => seeded[i]!.id);
    expect(await ledger("")).toEqual(ids([3, 2, 1, 0]));
    expect(await ledger("?status=dead_lettered")).toEqual(ids([2, 0]));
    expect(await ledger("?eventType=booking.cancelled")).toEqual(ids([3, 2]));
    expect(await ledger("?status=dead_lettered&eventType=booking.cancelled")).toEqual(ids([2]));
    expect(await ledger(`?eventId=${seeded[1]!.eventId}`)).toEqual(ids([1]));
    expect(await ledger("?status=held")).toEqual([]);
    // The filter form keeps what the URL says.
    const filtered = await admin.get(`/console/webhooks/${endpoint.id}?status=dead_lettered`);
    expect(filtered.text).toContain('<option value="dead_lettered" selected>');
    // The API agrees.
    const fromApi = await api(
      "GET",
      `/webhooks/${endpoint.id}/deliveries?status=dead_lettered&eventType=booking.cancelled`,
    );
    expect((fromApi.body.data as { id: string }[]).map((d) => d.id)).toEqual(ids([2]));
    const byEvent = await api("GET", `/webhooks/${endpoint.id}/deliveries?eventId=${seeded[3]!.eventId}`);
    expect((byEvent.body.data as { id: string }[]).map((d) => d.id)).toEqual(ids([3]));
  });

  it("draws one bar per hour whose heights match the attempts seeded in that hour", async () => {
    const endpoint = await createEndpoint();
    const { id } = await seedDelivery(endpoint.id, "awaiting_retry");
    // [hours ago (+30 min), succeeded, failed]
    const seeded: [number, number, number][] = [
      [0, 2, 1],
      [3, 0, 2],
      [10, 4, 0],
      [22, 1, 1],
    ];
    let number = 1;
    for (const [hoursAgo, ok, failed] of seeded) {
      for (let i = 0; i < ok + failed; i++) {
        await db.query(
          `insert into webhooks_history.attempts (delivery_id, endpoint_id, number, attempted_at, duration_ms, succeeded,
             status_code, error, response_body, response_body_truncated, delivery_created_at)
           values ($1, $2, $3, now() - $4::interval, 20, $5, $6, $7, 'x', false, (select created_at from webhooks_history.deliveries where id = $1))`,
          [
            id,
            endpoint.id,
            number++,
            `${hoursAgo} hours 30 minutes`,
            i < ok,
            i < ok ? 200 : 500,
            i < ok ? null : "non_2xx_status",
          ],
        );
      }
    }
    const page = await viewer.get(`/console/webhooks/${endpoint.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<svg\s+role="img"\s+aria-labelledby="delivery-chart-title delivery-chart-desc"/);
    expect(page.text).toContain('<title id="delivery-chart-title">');
    const bars = [
      ...page.text.matchAll(
        /<g\s+class="chart-hour"\s+data-hour="([^"]+)"\s+data-succeeded="(\d+)"\s+data-failed="(\d+)"/g,
      ),
    ].map((m) => ({ start: m[1]!, succeeded: Number(m[2]), failed: Number(m[3]) }));
    expect(bars).toHaveLength(24);
    for (const [hoursAgo, ok, failed] of seeded) expect(bars[23 - hoursAgo]).toMatchObject({ succeeded: ok, failed });
    const others = bars.filter((_, i) => !seeded.some(([hoursAgo]) => 23 - hoursAgo === i));
    expect(others.every((bar) => bar.succeeded === 0 && bar.failed === 0)).toBe(true);
    expect(page.text).toContain("7 succeeded, 4 failed");
    // The bars' heights are proportional to the busiest hour (4 attempts).
    const heights = [...page.text.matchAll(/<rect class="chart-succeeded"[^>]*height="([\d.]+)"/g)].map((m) =>
      Number(m[1]),
    );
    expect(heights[23 - 10]).toBeCloseTo(176, 0);
    expect(heights[23]).toBeCloseTo(88, 0);
    // The table alternative holds the same figures.
    expect(rowsOf(page, "data-hour")).toEqual(bars.map((bar) => bar.start));
  });

  it("redrives one delivery", async () => {
    const endpoint = await createEndpoint();
    const { id } = await seedDelivery(endpoint.id, "dead_lettered");
    const page = await admin.get(`/console/webhooks/${endpoint.id}/deliveries/${id}`);
    expect(page.status).toBe(200);
    const redriven = await admin.post(
      `/console/webhooks/${endpoint.id}/deliveries/${id}/redrive`,
      formFields(page, "redrive-form"),
    );
    expect(redriven.status).toBe(303);
    expect(redriven.location).toBe(`/console/webhooks/${endpoint.id}/deliveries/${id}`);
    await eventually("the redriven delivery to succeed", async () => {
      const d = await api("GET", `/webhooks/${endpoint.id}/deliveries/${id}`);
      return d.body.status === "succeeded";
    });
  });

  it("recovers: the dry run's count is the job's final done count, followed on a refreshing page", async () => {
    const endpoint = await createEndpoint();
    await seedDelivery(endpoint.id, "dead_lettered", { ago: "50 minutes" });
    await seedDelivery(endpoint.id, "awaiting_retry", { ago: "40 minutes" });
    await seedDelivery(endpoint.id, "dead_lettered", { ago: "30 minutes" });
    await seedDelivery(endpoint.id, "succeeded", { ago: "20 minutes" });
    await seedDelivery(endpoint.id, "dead_lettered", { ago: "3 hours" });
    const page = await admin.get(`/console/webhooks/${endpoint.id}`);
    const since = new Date(Date.now() - 2 * 3_600_000).toISOString().slice(0, 16);
    const preview = await admin.post(`/console/webhooks/${endpoint.id}/recover/preview`, {
      ...formFields(page, "recover-form"),
      since,
    });
    expect(preview.status).toBe(200);
    const count = Number(/id="would-recover" data-count="(\d+)"/.exec(preview.text)?.[1]);
    expect(count).toBe(3);
    const run = await admin.post(`/console/webhooks/${endpoint.id}/recover`, formFields(preview, "recover-run-form"));
    expect(run.status).toBe(303);
    const recoveryId = /\/recoveries\/(rcv_[0-9a-f]{24})$/.exec(run.location)?.[1];
    expect(recoveryId).toBeDefined();
    const first = await viewer.get(run.location);
    expect(first.status).toBe(200);
    expect(first.text).toContain('id="recovery-progress"');
    const finished = await eventually("the recovery to complete", async () => {
      const progress = await viewer.get(run.location);
      const state = /id="recovery-progress"[^>]*data-state="([a-z]+)"/.exec(progress.text)?.[1];
      return state === "completed" && progress;
    });
    expect(/data-done="(\d+)"/.exec(finished.text)?.[1]).toBe(String(count));
    expect(/data-total="(\d+)"/.exec(finished.text)?.[1]).toBe(String(count));
    expect(finished.text).not.toContain('hx-trigger="every 2s"');
    const fromApi = await api("GET", `/webhooks/${endpoint.id}/recoveries/${recoveryId!}`);
    // The endpoint's page lists it among its recent recoveries, for every reader.
    const endpointPage = await viewer.get(`/console/webhooks/${endpoint.id}`);
    expect(endpointPage.text).toContain(`data-recovery-id="${recoveryId!}" data-state="completed"`);
    expect(endpointPage.text).toContain(`href="/console/webhooks/${endpoint.id}/recoveries/${recoveryId!}"`);
    expect(fromApi.body).toMatchObject({
      state: "completed",
      done: count,
      redriven: count,
      actor: `console:${adminId}`,
    });
  });

  it("puts every action in the activity feed with the console user who did it", async () => {
    // Runs after the actions above; the API's calls name their key instead (api_key:<key id>).
    const expected = [
      "webhook.endpoint_created",
      "webhook.endpoint_updated",
      "webhook.endpoint_paused",
      "webhook.endpoint_resumed",
      "webhook.endpoint_secret_rotated",
      "webhook.test_delivery_sent",
      "webhook.delivery_redriven",
      "webhook.endpoint_recovery_started",
    ];
    const entries = await eventually("the console's actions in the activity feed", async () => {
      const all: { type: string; actor: string | null; subjectKind: string | null }[] = [];
      let cursor: string | null = "";
      while (cursor !== null) {
        const page = await api("GET", `/activity?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
        expect(page.status).toBe(200);
        all.push(...(page.body.data as typeof all));
        cursor = page.body.nextCursor as string | null;
      }
      const byUser = new Set(all.filter((e) => e.actor === `console:${adminId}`).map((e) => e.type));
      return expected.every((type) => byUser.has(type)) && all;
    });
    for (const entry of entries.filter((e) => e.actor === `console:${adminId}`)) {
      expect(["webhook_endpoint", "webhook_delivery"]).toContain(entry.subjectKind);
    }
    // The endpoints the test created through the API: in the feed, by the API key.
    expect(entries.some((e) => e.type === "webhook.endpoint_created" && /^api_key:/.test(e.actor ?? ""))).toBe(true);
  });

  it("refuses every action to a viewer with 403 and changes nothing", async () => {
    const endpoint = await createEndpoint();
    const { id } = await seedDelivery(endpoint.id, "dead_lettered");
    const before = await api("GET", `/webhooks/${endpoint.id}`);
    const ledgerBefore = await api("GET", `/webhooks/${endpoint.id}/deliveries?limit=100`);
    const listBefore = await api("GET", "/webhooks?limit=100");
    // The admin's forms, sent with the viewer's session and token.
    const page = await admin.get(`/console/webhooks/${endpoint.id}`);
    const key = (label: string) => ({ _idempotency: `viewer-${label}-${Date.now()}` });
    await viewer.get("/console/webhooks");
    const attempts: [string, Record<string, string>][] = [
      [
        "/console/webhooks",
        { ...key("create"), url: receiver.url, description: "viewer", eventTypes: "booking.created" },
      ],
      [
        `/console/webhooks/${endpoint.id}/edit`,
        {
          ...key("edit"),
          expectedVersion: "1",
          url: receiver.url,
          description: "viewer",
          eventTypes: "booking.created",
        },
      ],
      [`/console/webhooks/${endpoint.id}/pause`, { ...key("pause"), expectedVersion: "1" }],
      [`/console/webhooks/${endpoint.id}/resume`, { ...key("resume"), expectedVersion: "1" }],
      [`/console/webhooks/${endpoint.id}/rotate-secret`, { ...key("rotate"), expectedVersion: "1", password }],
      [`/console/webhooks/${endpoint.id}/test`, { ...key("test"), eventType: "booking.created" }],
      [`/console/webhooks/${endpoint.id}/deliveries/${id}/redrive`, key("redrive")],
      [`/console/webhooks/${endpoint.id}/delete`, { ...key("delete"), expectedVersion: "1" }],
      [
        `/console/webhooks/${endpoint.id}/recover/preview`,
        { ...key("preview"), since: formFields(page, "recover-form").since ?? "" },
      ],
      [
        `/console/webhooks/${endpoint.id}/recover`,
        { ...key("recover"), since: new Date(Date.now() - 3_600_000).toISOString() },
      ],
    ];
    for (const [path, form] of attempts) {
      const refused = await viewer.post(path, form);
      expect({ path, status: refused.status }).toEqual({ path, status: 403 });
    }
    expect((await api("GET", `/webhooks/${endpoint.id}`)).body).toEqual(before.body);
    expect((await api("GET", `/webhooks/${endpoint.id}/deliveries?limit=100`)).body).toEqual(ledgerBefore.body);
    expect(((await api("GET", "/webhooks?limit=100")).body.data as unknown[]).length).toBe(
      (listBefore.body.data as unknown[]).length,
    );
  });

  it("deletes an endpoint after a confirmation page, with the version it showed; a stale version deletes nothing", async () => {
    const endpoint = await createEndpoint();
    const page = await admin.get(`/console/webhooks/${endpoint.id}`);
    expect(page.text).toContain(`href="/console/webhooks/${endpoint.id}/delete" id="delete-endpoint"`);
    expect((await viewer.get(`/console/webhooks/${endpoint.id}`)).text).not.toContain('id="delete-endpoint"');
    expect((await viewer.get(`/console/webhooks/${endpoint.id}/delete`)).status).toBe(403);
    const confirm = await admin.get(`/console/webhooks/${endpoint.id}/delete`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain(`<dd id="delete-url">${receiver.url}</dd>`);
    const fields = formFields(confirm, "delete-form");
    expect(fields).toMatchObject({ expectedVersion: "1", _csrf: admin.csrf });
    // Changed meanwhile (version 2): nothing is deleted.
    expect((await api("PATCH", `/webhooks/${endpoint.id}`, { description: "changed" })).status).toBe(200);
    const stale = await admin.post(`/console/webhooks/${endpoint.id}/delete`, fields);
    expect(stale.status).toBe(412);
    expect(stale.text).toContain('id="conflict"');
    expect((await api("GET", `/webhooks/${endpoint.id}`)).status).toBe(200);
    // Without the CSRF token: refused.
    const fresh = formFields(await admin.get(`/console/webhooks/${endpoint.id}/delete`), "delete-form");
    expect((await admin.post(`/console/webhooks/${endpoint.id}/delete`, { ...fresh, _csrf: "" })).status).toBe(403);
    expect(fresh.expectedVersion).toBe("2");
    const deleted = await admin.post(`/console/webhooks/${endpoint.id}/delete`, fresh);
    expect(deleted.status).toBe(303);
    expect(deleted.location).toBe("/console/webhooks");
    expect((await admin.get("/console/webhooks")).text).toContain("The endpoint is deleted");
    expect((await api("GET", `/webhooks/${endpoint.id}`)).status).toBe(404);
    // The same form again (a double click) replays the deletion.
    expect((await admin.post(`/console/webhooks/${endpoint.id}/delete`, fresh)).status).toBe(303);
    // The endpoint's page now says so in the product's words, not the service's.
    const gone = await admin.get(`/console/webhooks/${endpoint.id}`);
    expect(gone.status).toBe(404);
    expect(gone.text).toContain("This webhook endpoint does not exist, or it was deleted.");
    expect(gone.text).not.toContain("no endpoint with this id");
  });

  it("shows the message log across endpoints: searched by event id and type, by status and time, paged", async () => {
    const [one, two] = [await createEndpoint(), await createEndpoint()];
    const a = await seedDelivery(one.id, "succeeded", { ago: "80 hours" });
    const b = await seedDelivery(two.id, "dead_lettered", { ago: "79 hours", type: "booking.cancelled" });
    const c = await seedDelivery(one.id, "succeeded", { ago: "78 hours" });
    const utc = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString().slice(0, 16);
    const window = { from: utc(81), to: utc(77) };
    for (const b2 of [admin, viewer]) {
      const log = await b2.get(`/console/webhooks/messages?${new URLSearchParams(window).toString()}`);
      expect(log.status).toBe(200);
      expect(rowsOf(log, "data-delivery-id")).toEqual([c.id, b.id, a.id]);
      expect(log.text).toContain(`href="/console/webhooks/${two.id}/deliveries/${b.id}"`);
    }
    const search = (query: Record<string, string>) =>
      viewer.get(`/console/webhooks/messages?${new URLSearchParams({ ...window, ...query }).toString()}`);
    expect(rowsOf(await search({ status: "succeeded" }), "data-delivery-id")).toEqual([c.id, a.id]);
    expect(rowsOf(await search({ eventType: "booking.cancelled" }), "data-delivery-id")).toEqual([b.id]);
    expect(rowsOf(await search({ eventId: a.eventId }), "data-delivery-id")).toEqual([a.id]);
    const none = await search({ eventId: "evt_000000000000000000000000" });
    expect(none.text).toContain("No messages match these filters.");
    const backwards = await viewer.get(`/console/webhooks/messages?from=${utc(1)}&to=${utc(2)}`);
    expect(backwards.status).toBe(400);
    expect(backwards.text).toContain("“Created from” must be before “Created before”.");
    expect((await viewer.get("/console/webhooks/messages?from=yesterday")).status).toBe(400);
    expect((await viewer.get("/console/webhooks/messages?status=lost")).status).toBe(400);
    const badCursor = await viewer.get("/console/webhooks/messages?cursor=not-a-cursor");
    expect(badCursor.status).toBe(400);
    expect(badCursor.text).toContain("This search could not be run.");
  });

  it("pages the message log with the service's cursor, keeping the filters", async () => {
    const endpoint = await createEndpoint();
    const ids: string[] = [];
    for (let i = 0; i < 27; i++) ids.push((await seedDelivery(endpoint.id, "held", { ago: "100 hours" })).id);
    const first = await viewer.get("/console/webhooks/messages?status=held");
    expect(rowsOf(first, "data-delivery-id")).toHaveLength(25);
    const next = /<a href="([^"]+)" rel="next" id="messages-next">/.exec(first.text)![1]!.replace(/&amp;/g, "&");
    expect(next).toMatch(/^\/console\/webhooks\/messages\?status=held&cursor=/);
    const second = await viewer.get(next);
    expect([...rowsOf(first, "data-delivery-id"), ...rowsOf(second, "data-delivery-id")].slice(0, 27)).toEqual(
      [...ids].reverse(),
    );
  });

  it("resends a succeeded delivery: a new run of attempts, told apart from the earlier one", async () => {
    const endpoint = await createEndpoint();
    const { id } = await seedDelivery(endpoint.id, "succeeded");
    await db.query(
      `insert into webhooks_history.attempts (delivery_id, endpoint_id, number, attempted_at, duration_ms, succeeded,
         status_code, error, response_body, response_body_truncated, delivery_created_at)
       values ($1, $2, 1, now() - interval '1 minute', 20, true, 200, null, 'ok', false, (select created_at from webhooks_history.deliveries where id = $1))`,
      [id, endpoint.id],
    );
    const page = await admin.get(`/console/webhooks/${endpoint.id}/deliveries/${id}`);
    expect(page.text).toContain("Resend this delivery");
    expect((await viewer.get(`/console/webhooks/${endpoint.id}/deliveries/${id}`)).text).not.toContain(
      'id="redrive-form"',
    );
    const resent = await admin.post(
      `/console/webhooks/${endpoint.id}/deliveries/${id}/redrive`,
      formFields(page, "redrive-form"),
    );
    expect(resent.status).toBe(303);
    const shown = await eventually("the resent delivery's second attempt", async () => {
      const detail = await admin.get(resent.location);
      return rowsOf(detail, "data-attempt").length === 2 && detail;
    });
    expect(shown.text).toContain('<tr data-attempt="1" data-run="earlier">');
    expect(shown.text).toContain('<tr data-attempt="2" data-run="current">');
    // Recorded as a redrive by this console user in the tenant's activity.
    await eventually("the resend in the activity feed", async () =>
      JSON.stringify((await api("GET", "/activity?limit=50")).body).includes("webhook.delivery_redriven"),
    );
  });

  it("offers only the endpoint's subscribed types for a test, wildcards expanded, the first one chosen", async () => {
    const endpoint = await createEndpoint({ eventTypes: ["conversation.started", "booking.*"] });
    const page = await admin.get(`/console/webhooks/${endpoint.id}`);
    const select = page.text.slice(page.text.indexOf('<select id="test-event-type"'));
    const offered = [...select.slice(0, select.indexOf("</select>")).matchAll(/<option value="([^"]+)"/g)].map(
      (m) => m[1],
    );
    const catalog = (await api("GET", "/webhooks/event-types")).body.data as { type: string; subscribable: boolean }[];
    const bookings = catalog.filter((t) => t.subscribable && t.type.startsWith("booking.")).map((t) => t.type);
    expect(bookings.length).toBeGreaterThan(1);
    expect(offered).toEqual(["conversation.started", ...bookings]);
  });

  it("answers /favicon.ico with the icon the pages link", async () => {
    const icon = await fetch(`${stack.url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/x-icon");
    const bytes = Buffer.from(await icon.arrayBuffer());
    expect([...bytes.subarray(0, 4)]).toEqual([0, 0, 1, 0]);
    const page = await viewer.get("/console/webhooks");
    const linked = /<link rel="icon" href="([^"]+)" sizes="32x32" type="image\/x-icon" \/>/.exec(page.text)![1]!;
    const asset = await fetch(`${stack.url}${linked}`);
    expect(Buffer.from(await asset.arrayBuffer()).equals(bytes)).toBe(true);
  });
});
