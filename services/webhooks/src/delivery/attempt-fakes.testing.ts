/**
 * Fakes for the tests of a delivery attempt's stages (no NATS, no Postgres): a job message that
 * records its answers, a store, a resolver and a sender that record their calls, metrics in a
 * registry of their own, log lines captured.
 */
import { randomBytes } from "node:crypto";
import { createLogger } from "@platform/service-kit/logger";
import { noTracing } from "@platform/service-kit/tracing";
import { Registry } from "prom-client";
import type { AttemptStore, ClaimedDelivery, ClaimResult, RecordedAttempt } from "../db/attempt-store.js";
import { generateSigningSecret, parseSecretsKey, sealSecret } from "../domain/secret-box.js";
import type { ClaimedAttempt, JobMessage } from "./claim-stage.js";
import type { AttemptDeps } from "./delivery-attempt.js";
import type { DeliveryRequest, DeliveryResponse } from "./https-sender.js";
import { createPipelineMetrics } from "./pipeline-metrics.js";

export const ring = parseSecretsKey(randomBytes(32).toString("base64"));
/** A ring without the key the secret was sealed with (a SECRETS_KEY entry missing). */
export const otherRing = parseSecretsKey(`k9:${randomBytes(32).toString("base64")}`);
export const endpointId = "ep_0123456789abcdef01234567";
export const secret = generateSigningSecret();
export const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

export type Answer = ["ack"] | ["nak", number | undefined] | ["term"];

/** A job message that records how it was answered and how often it was kept alive. */
export function jobMessage(data: unknown = { deliveryId: "dlv_1", generation: 3 }) {
  const answers: Answer[] = [];
  const seen = { heartbeats: 0 };
  const msg: JobMessage = {
    data: Buffer.from(typeof data === "string" ? data : JSON.stringify(data)),
    subject: `webhooks.deliveries.${endpointId}`,
    seq: 42,
    ack: () => answers.push(["ack"]),
    nak: (delay?: number) => answers.push(["nak", delay]),
    term: () => answers.push(["term"]),
    working: () => (seen.heartbeats += 1),
  };
  return { msg, answers, seen };
}

export function claimedDelivery(fields: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
  return {
    id: "dlv_1",
    eventId: "evt_1",
    endpointId,
    payload: '{"id":"evt_1","type":"booking.created"}',
    generation: 3,
    traceparent: null,
    dueInMs: -5,
    url: "https://hooks.example.com/in",
    paused: false,
    deleted: false,
    secretSealed: sealSecret(ring, secret, endpointId),
    previousSecretSealed: null,
    previousSecretExpiresAt: null,
    now: new Date("2026-03-01T12:00:00Z"),
    rateLimit: null,
    rateSlotHeld: false,
    ...fields,
  };
}

export const createdAt = new Date(Date.now() - 1_500);

/** What the store answers for a recorded attempt: a first attempt that succeeded, unless told otherwise. */
export function recordedAttempt(recorded: Partial<RecordedAttempt> = {}): RecordedAttempt {
  return { number: 1, status: "succeeded", nextAttemptAt: null, deadLettered: false, createdAt, ...recorded };
}

/** A store that records its calls and answers what it is told to. */
export function fakeStore(
  claim: ClaimResult,
  recorded: Partial<RecordedAttempt> | Promise<RecordedAttempt> = {},
  rateWaitMs = 0,
) {
  const calls: unknown[][] = [];
  const store: AttemptStore = {
    claim(job, leaseMs) {
      calls.push(["claim", job, leaseMs]);
      return Promise.resolve(claim);
    },
    reserveRateSlot(delivery, rateLimit) {
      calls.push(["reserveRateSlot", delivery.id, rateLimit]);
      return Promise.resolve(rateWaitMs);
    },
    release(id) {
      calls.push(["release", id]);
      return Promise.resolve();
    },
    holdClaimed(id) {
      calls.push(["holdClaimed", id]);
      return Promise.resolve();
    },
    abandonClaimed(id) {
      calls.push(["abandonClaimed", id]);
      return Promise.resolve();
    },
    recordAttempt(id, attempt, delaysMs) {
      calls.push(["recordAttempt", id, attempt, delaysMs]);
      if (recorded instanceof Promise) return recorded;
      return Promise.resolve(recordedAttempt(recorded));
    },
  };
  return { store, calls };
}

/** Log lines as objects, at debug level. */
export function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger("webhooks", "debug", {
    write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  return { logger, lines };
}

export function answered(status: number, durationMs = 30): DeliveryResponse {
  return { result: { kind: "response", status }, responseBody: Buffer.from("ok"), truncated: false, durationMs };
}

/** Every dependency of the stages, each a fake that records what it was asked. */
export function stageDeps(
  claim: ClaimResult,
  options: { recorded?: Partial<RecordedAttempt> | Promise<RecordedAttempt>; rateWaitMs?: number } = {},
) {
  const { store, calls } = fakeStore(claim, options.recorded, options.rateWaitMs);
  const { logger, lines } = capturedLogger();
  const registry = new Registry();
  const requests: DeliveryRequest[] = [];
  let respond: (request: DeliveryRequest) => Promise<DeliveryResponse> = () => Promise.resolve(answered(200));
  const all: AttemptDeps = {
    store,
    keyRing: ring,
    targets: { resolve: () => Promise.resolve({ address: "93.184.216.34", family: 4 }) },
    sender: {
      send(request) {
        requests.push(request);
        calls.push(["send"]);
        return respond(request);
      },
    },
    metrics: createPipelineMetrics(registry),
    logger,
    tracer: noTracing.tracer,
    retryDelaysMs: [1_000, 2_000],
    timeoutMs: 2_000,
    leaseMs: 60_000,
    heartbeatEveryMs: 5_000,
  };
  return {
    deps: all,
    calls,
    lines,
    requests,
    registry,
    respondWith: (fn: (request: DeliveryRequest) => Promise<DeliveryResponse>) => {
      respond = fn;
    },
  };
}

export const claimed = (delivery = claimedDelivery()) => ({ kind: "claimed", delivery }) as const;

export function attemptOf(delivery: ClaimedDelivery, logger = capturedLogger().logger): ClaimedAttempt {
  return {
    delivery,
    ids: { eventId: delivery.eventId, deliveryId: delivery.id, endpointId: delivery.endpointId },
    log: logger,
  };
}
