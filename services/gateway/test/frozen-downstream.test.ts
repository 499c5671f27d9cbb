/**
 * Each downstream frozen in turn (SIGSTOP: its connections stay open and nothing answers, as with
 * a hung process), through one gateway checking them every 500 ms (DOWNSTREAM_CHECK_INTERVAL):
 * - /readyz answers 200 within 100 ms every time, before the gateway notices and after;
 * - the other capabilities' calls answer 200 throughout;
 * - once the gateway's view says the frozen service is UNREACHABLE, its calls (reads, keyed and
 *   keyless mutations) answer 503 with the code, Retry-After and within 100 ms instead of waiting
 *   out UPSTREAM_TIMEOUT (2 s here), and `gateway_downstream_up` says 0;
 * - after SIGCONT the view's pending probe is answered and the next call goes through.
 * The process is always sent SIGCONT (finally). About 15 s.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "./stack.js";

type Downstream = "catalog" | "notify" | "webhooks";
const FAST_MS = 100;
/** The check interval is 500 ms and two unanswered checks mark it down: about 1.5 s; far more on a loaded machine. */
const NOTICE_WITHIN_MS = 10_000;

interface Answer {
  status: number;
  ms: number;
  retryAfter: string | null;
  body: { code?: string; status?: number | string; checks?: Record<string, string> };
}

describe("a frozen downstream (SIGSTOP) through the gateway", () => {
  let stack: TestStack;
  let key: string;
  let tenant: string;
  let n = 0;
  const figures: string[] = [];

  beforeAll(async () => {
    stack = await startTestStack({ DOWNSTREAM_CHECK_INTERVAL: "500ms", LOG_LEVEL: "info" });
    tenant = (await stack.admin("tenant", "create", "--name", "Frozen", "--plan", "commercial")).id as string;
    await stack.admin("tenant", "activate", "--id", tenant);
    const scopes = "notification:send,tenant:read,webhook:manage";
    key = (await stack.admin("key", "create", "--scopes", scopes, "--tenants", tenant)).key as string;
  }, 60_000);
  afterAll(async () => {
    if (figures.length > 0) console.log(figures.join("\n"));
    await stack?.stop();
  });

  const call = async (method: string, path: string, init: { headers?: Record<string, string>; body?: object } = {}) => {
    const started = performance.now();
    const res = await fetch(`${stack.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(init.body ? { "content-type": "application/json" } : {}),
        ...init.headers,
      },
      ...(init.body ? { body: JSON.stringify(init.body) } : {}),
    });
    const body = (await res.json()) as Answer["body"];
    return { status: res.status, ms: performance.now() - started, retryAfter: res.headers.get("retry-after"), body };
  };
  const readyz = () => call("GET", "/readyz");
  const tenantPath = () => `/api/v1/tenants/${tenant}`;
  const send = () =>
    call("POST", `${tenantPath()}/notifications`, {
      headers: { "idempotency-key": `frozen-send-${n++}` },
      body: {
        to: `+4477009${String(40000 + n)}`,
        type: "reminder",
        clientName: "Ana",
        businessName: "Paws",
        serviceName: "grooming",
        when: "Mon 3 May 10:00",
        actor: { actorReference: "crm-user-7" },
      },
    });

  /** Each capability's calls: reads, and mutations with and without a key where the surface allows both. */
  const callsOf: Record<Downstream, { name: string; ok: number; run: () => Promise<Answer> }[]> = {
    catalog: [
      { name: "GET /v1/pets", ok: 200, run: () => call("GET", "/v1/pets?limit=1") },
      // Keyless: were it sent and lost this would be a 504 outcome_unknown; refused unsent it is a 503.
      {
        name: "POST /v1/pets (no key)",
        ok: 201,
        run: () => call("POST", "/v1/pets", { body: { name: "Rex", categoryId: 1 } }),
      },
    ],
    notify: [
      { name: "GET tenant", ok: 200, run: () => call("GET", tenantPath()) },
      { name: "POST notifications", ok: 200, run: send },
    ],
    webhooks: [
      { name: "GET webhooks", ok: 200, run: () => call("GET", `${tenantPath()}/webhooks`) },
      {
        name: "POST webhooks",
        ok: 201,
        run: () =>
          call("POST", `${tenantPath()}/webhooks`, {
            headers: { "idempotency-key": `frozen-hook-${n++}` },
            body: { url: `https://localhost:9/frozen/${n}`, description: "frozen", eventTypes: ["capability.*"] },
          }),
      },
    ],
  };
  /** What answers while `frozen` is frozen: every capability that does not need it (webhook routes also ask notify). */
  const othersOf: Record<Downstream, Downstream[]> = {
    catalog: ["notify", "webhooks"],
    notify: ["catalog"],
    webhooks: ["catalog", "notify"],
  };
  const gauge = async (d: Downstream) => {
    const text = await (await fetch(stack.metricsUrl)).text();
    return new RegExp(`^gateway_downstream_up\\{[^}]*downstream="${d}"[^}]*\\} (\\d)$`, "m").exec(text)?.[1];
  };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it.each(["catalog", "notify", "webhooks"] as const)(
    "%s frozen: /readyz within 100 ms every time, the others 200, its calls 503 at once, the first call after SIGCONT 200",
    async (frozen) => {
      const victim = stack[frozen];
      await expect
        .poll(async () => (await readyz()).body.checks, { timeout: 10_000, interval: 100 })
        .toMatchObject({ catalog: "SERVING", notify: "SERVING", webhooks: "SERVING" });
      for (const d of ["catalog", "notify", "webhooks"] as const) {
        for (const { name, ok, run } of callsOf[d]) expect((await run()).status, name).toBe(ok);
      }

      const readyzMs: number[] = [];
      const failFastMs: number[] = [];
      process.kill(victim.pid, "SIGSTOP");
      const frozenAt = performance.now();
      let noticedMs: number;
      try {
        // From the freeze until the gateway's view says so, and on: /readyz never waits.
        for (;;) {
          const ready = await readyz();
          readyzMs.push(ready.ms);
          expect(ready.status).toBe(200);
          expect(ready.body.checks?.database).toBe("ok");
          if (ready.body.checks?.[frozen] === "UNREACHABLE") break;
          expect(performance.now() - frozenAt, "the gateway noticed the freeze").toBeLessThan(NOTICE_WITHIN_MS);
          await sleep(50);
        }
        noticedMs = performance.now() - frozenAt;
        expect(await gauge(frozen)).toBe("0");

        for (const other of othersOf[frozen]) {
          for (const { name, ok, run } of callsOf[other]) {
            expect((await run()).status, `${name} while ${frozen} is frozen`).toBe(ok);
          }
        }
        for (let round = 0; round < 3; round++) {
          for (const { name, run } of callsOf[frozen]) {
            const answer = await run();
            failFastMs.push(answer.ms);
            expect(answer.status, name).toBe(503);
            expect(answer.body.code, name).toBe(frozen === "catalog" ? "unavailable" : "service.unavailable");
            expect(answer.retryAfter, name).toBe("1");
            expect(answer.ms, name).toBeLessThan(FAST_MS);
          }
          const ready = await readyz();
          readyzMs.push(ready.ms);
          expect(ready.status).toBe(200);
        }
      } finally {
        process.kill(victim.pid, "SIGCONT");
      }
      const resumedAt = performance.now();

      // The probe in flight when it resumed is answered: the view says SERVING within the round
      // trip (bounded here generously), and the next call goes through.
      await expect
        .poll(async () => (await readyz()).body.checks?.[frozen], { timeout: 3_000, interval: 10 })
        .toBe("SERVING");
      const recoveredMs = performance.now() - resumedAt;
      for (const { name, ok, run } of callsOf[frozen]) expect((await run()).status, name).toBe(ok);
      expect(await gauge(frozen)).toBe("1");
      expect(Math.max(...readyzMs)).toBeLessThan(FAST_MS);
      figures.push(
        `${frozen}: noticed after ${Math.round(noticedMs)} ms; /readyz max ${Math.max(...readyzMs).toFixed(1)} ms ` +
          `over ${readyzMs.length}; fail-fast max ${Math.max(...failFastMs).toFixed(1)} ms over ${failFastMs.length}; ` +
          `SERVING again ${Math.round(recoveredMs)} ms after SIGCONT`,
      );
    },
    30_000,
  );
});
