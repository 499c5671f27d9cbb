/**
 * Two notify processes on one database and event bus, sends spread over both by a round_robin
 * client (as the gateway's balanced clients do), and one process stopped with SIGTERM in the
 * middle of about 50 sends/s for 2 s (about 7 s in all): every send is answered "sent", and the
 * provider got each notification exactly once.
 */
import { startCloudApiStub, type CloudApiStub } from "@platform/local-stack/cloud-api-stub";
import { NotificationServiceService } from "@platform/proto/notify/v1";
import { CLIENT_CHANNEL_OPTIONS, createClient } from "@platform/service-kit/grpc-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "./stack.js";

describe("a notify process stopped with SIGTERM under sends, beside another", () => {
  let stub: CloudApiStub;
  let stack: TestStack;
  let tenant: string;
  beforeAll(async () => {
    stub = await startCloudApiStub();
    stack = await startTestStack(
      {},
      {
        NOTIFY_CHANNEL_PROVIDER: "whatsapp",
        WHATSAPP_API_BASE_URL: stub.url,
        WHATSAPP_ACCESS_TOKEN: "EAAG-drain-token",
        WHATSAPP_PHONE_NUMBER_ID: "106540352242922",
        WHATSAPP_TIMEOUT: "2s",
        SHUTDOWN_DRAIN_DELAY: "500ms",
        SHUTDOWN_GRACE: "3s",
      },
    );
    tenant = (await stack.admin("tenant", "create", "--name", "Drain", "--plan", "commercial")).id as string;
    await stack.admin("tenant", "activate", "--id", tenant);
  });
  afterAll(async () => {
    await stack?.stop();
    await stub?.close();
  });

  it("answers every send and sends each notification once", async () => {
    const second = await stack.startNotify();
    const stopping = stack.notify;
    const ports = [stopping, second].map((p) => `127.0.0.1:${p.listening.grpcPort as number}`);
    const client = createClient(NotificationServiceService, `ipv4:${ports.join(",")}`, {
      timeoutMs: 5_000,
      channelOptions: {
        ...CLIENT_CHANNEL_OPTIONS,
        "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
      },
    });
    const before = stub.requests.length;
    const outcomes: Promise<string>[] = []; // the state, or the error
    const sends = 100;
    try {
      await new Promise<void>((resolve) => {
        let n = 0;
        const tick = setInterval(() => {
          const i = n++;
          if (i === 30) stopping.child.kill("SIGTERM");
          outcomes.push(
            client
              .sendNotification(
                {
                  tenantId: tenant,
                  idempotencyKey: `drain-${i}`,
                  to: `+4477009${String(20000 + i)}`,
                  type: "reminder",
                  clientName: "Ana",
                  businessName: "Paws",
                  serviceName: "grooming",
                  when: "Mon 3 May 10:00",
                  actor: { actorReference: "crm-user-7" },
                  otherFields: [],
                },
                { requestId: `drain-${i}` },
              )
              .then(
                (answer) => answer.state,
                (error: Error) => error.message,
              ),
          );
          if (n === sends) {
            clearInterval(tick);
            resolve();
          }
        }, 20);
      });
      const states = await Promise.all(outcomes);
      expect(states.filter((s) => s !== "sent")).toEqual([]);
      expect(await stopping.exited).toBe(0);
      // Both processes took sends (the stack logs at debug: one "rpc handled" line per call).
      const handled = (p: typeof second) => p.logs.filter((l) => l.msg === "rpc handled").length;
      expect(handled(stopping)).toBeGreaterThan(10);
      expect(handled(second)).toBeGreaterThan(40);
      const sent = stub.requests.slice(before).map((r) => JSON.stringify(r.body));
      expect(sent).toHaveLength(sends);
      expect(new Set(sent).size).toBe(sends);
    } finally {
      client.close();
    }
  }, 30_000);
});
