/**
 * A dying pod costs no call (issue 31, item 3), notify's part: two notify processes behind one
 * gateway (NOTIFY_ADDR names both), keyed sends at 40 a second, one process killed with -9. Every
 * send is answered 200 `sent`, and the provider (a local stand-in of the WhatsApp Cloud API) got
 * each notification exactly once, with exactly one transcript message each.
 *
 * What "every send 200" can cover, by design: a send the dying process had not yet recorded
 * (its Idempotency-Key not claimed) is retried by the gateway on the other process and sent there
 * once. A send it had recorded and not completed may have reached the provider: a repeat never
 * sends it again and it is settled as unknown after NOTIFICATION_LEASE (409
 * `partner.action_outcome_unknown`; dying-for-good.test.ts). So that every run has sends of the
 * first kind and none of the second, the process is frozen (SIGSTOP) between two sends, while
 * none is in flight on it; the sends the gateway then gives it wait unread in its socket, as
 * sends do that reach a process in its last milliseconds, and die with it at the kill. About 10 s.
 */
import { startCloudApiStub, type CloudApiStub } from "@platform/local-stack/cloud-api-stub";
import type { ServiceProcess } from "@platform/local-stack/service-process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpcAddresses, startTestStack, type TestStack } from "./stack.js";

const PER_SECOND = 40;
/** Sends before the freeze, while frozen, and after the kill. */
const PHASE = 40;

describe("keyed sends through a notify process killed with -9 beside another", () => {
  let stub: CloudApiStub;
  let stack: TestStack;
  let victim: ServiceProcess;
  let gateway: ServiceProcess;
  let url: string;
  let tenant: string;
  let key: string;
  let db: pg.Client;

  beforeAll(async () => {
    stub = await startCloudApiStub();
    stack = await startTestStack(
      {},
      {
        NOTIFY_CHANNEL_PROVIDER: "whatsapp",
        WHATSAPP_API_BASE_URL: stub.url,
        WHATSAPP_ACCESS_TOKEN: "EAAG-replica-kill-token",
        WHATSAPP_PHONE_NUMBER_ID: "106540352242922",
        WHATSAPP_TIMEOUT: "2s",
      },
    );
    victim = await stack.startNotify();
    gateway = await stack.startGateway({ NOTIFY_ADDR: grpcAddresses(stack.notify, victim), UPSTREAM_TIMEOUT: "5s" });
    url = `http://127.0.0.1:${gateway.listening.port as number}`;
    tenant = (await stack.admin("tenant", "create", "--name", "Kill", "--plan", "commercial")).id as string;
    await stack.admin("tenant", "activate", "--id", tenant);
    key = (await stack.admin("key", "create", "--scopes", "notification:send,tenant:read", "--tenants", tenant))
      .key as string;
    db = new pg.Client({ connectionString: stack.scratch.url });
    await db.connect();
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
    await stub?.close();
  });

  const phone = (i: number) => `+4477008${String(10000 + i)}`;
  /** One keyed send, as a partner makes it; resolves with its status and body. */
  const send = async (i: number) => {
    const res = await fetch(`${url}/api/v1/tenants/${tenant}/notifications`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "idempotency-key": `replica-kill-${i}`,
      },
      body: JSON.stringify({
        to: phone(i),
        type: "reminder",
        clientName: "Ana",
        businessName: "Paws",
        serviceName: "grooming",
        when: "Mon 3 May 10:00",
        actor: { actorReference: "crm-user-7" },
      }),
    });
    return { status: res.status, body: (await res.json()) as { state?: string; code?: string } };
  };
  /** `count` sends from number `from`, one every 25 ms, none waiting for another. */
  const sendAtRate = async (from: number, count: number, answers: ReturnType<typeof send>[]) => {
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      await sleep(started + (i * 1_000) / PER_SECOND - performance.now());
      answers[from + i] = send(from + i);
    }
  };
  const retries = () => gateway.logs.filter((l) => String(l.msg).includes("retried on another replica"));
  const address = (p: ServiceProcess) => `127.0.0.1:${p.listening.grpcPort as number}`;
  const handled = (p: ServiceProcess) => p.logs.filter((l) => l.msg === "rpc handled").length;

  it("answers every send 200 sent, and the provider gets each exactly once", async () => {
    const answers: ReturnType<typeof send>[] = [];
    // Both processes send.
    await sendAtRate(0, PHASE, answers);
    await Promise.all(answers);
    expect(handled(victim)).toBeGreaterThan(0);

    // Frozen between two sends: none in flight on it. The next sends alternate between the two;
    // the frozen one's wait unread.
    process.kill(victim.pid, "SIGSTOP");
    await sendAtRate(PHASE, PHASE, answers);
    const settled = new Set<number>();
    answers.forEach((a, i) => void a.then(() => settled.add(i)));
    await sleep(200);
    // About half of them: those the frozen process got (a few of the other's may still be on their way).
    const waiting = answers.length - settled.size;
    expect(waiting).toBeGreaterThanOrEqual(PHASE / 4);
    await victim.stop("SIGKILL");
    // And sends go on after the kill.
    await sendAtRate(2 * PHASE, PHASE, answers);
    const outcomes = await Promise.all(answers);

    const total = 3 * PHASE;
    expect(outcomes).toHaveLength(total);
    expect(outcomes.filter((o) => o.status !== 200 || o.body.state !== "sent")).toEqual([]);
    // Each send the frozen process got was retried on the other, and answered there.
    const retried = retries();
    expect(retried.length).toBeGreaterThanOrEqual(PHASE / 4);
    for (const line of retried) {
      expect(line).toMatchObject({ from: address(victim), to: address(stack.notify), outcome: "OK" });
    }

    // The provider got every notification exactly once; one command and one transcript message each.
    const received = new Map<string, number>();
    for (const r of stub.requests) {
      const to = (r.body as { to?: string }).to ?? "";
      received.set(to, (received.get(to) ?? 0) + 1);
    }
    expect(received.size).toBe(total);
    expect([...received.values()].filter((n) => n !== 1)).toEqual([]);
    expect(stub.requests).toHaveLength(total);
    const messages = await db.query<{ recipient: string; n: string; states: string[] }>(
      `select recipient, count(*) as n, array_agg(state) as states from notify.conversation_messages
       where tenant_id = $1 group by recipient`,
      [tenant],
    );
    expect(messages.rows).toHaveLength(total);
    expect(messages.rows.filter((r) => r.n !== "1" || r.states[0] !== "sent")).toEqual([]);
    const commands = await db.query<{ n: string }>(
      "select count(*) as n from notify.notification_commands where tenant_id = $1 and state = 'sent'",
      [tenant],
    );
    expect(Number(commands.rows[0]!.n)).toBe(total);
    console.log(
      `[notify kill -9 under keyed sends] sends=${total} non_2xx=0 waiting_at_kill=${waiting} retried=${retried.length} ` +
        `first_failures=${[...new Set(retried.map((r) => (r.error as { details?: string }).details))].join(" | ")} ` +
        `provider_requests=${stub.requests.length} transcript_messages=${messages.rows.length}`,
    );
  }, 60_000);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
