/**
 * The send stage of a delivery attempt: the endpoint's host resolved (a refused address fails the
 * attempt without a connection), then the signed POST to the address the resolver approved, all
 * within the attempt's deadline; the job's message is kept alive meanwhile. The stages in order:
 * delivery-attempt.ts.
 */
import type { AttemptResult } from "../domain/attempt-outcome.js";
import type { EndpointSecrets } from "../domain/signature.js";
import type { ClaimedAttempt, JobMessage } from "./claim-stage.js";
import type { DeliveryResponse, HttpsSender } from "./https-sender.js";
import { signedHeaders } from "./sign-stage.js";
import { TargetNotAllowedError, type ResolvedTarget, type TargetResolver } from "./target-resolver.js";

export interface SendDeps {
  targets: Pick<TargetResolver, "resolve">;
  sender: Pick<HttpsSender, "send">;
  /** The attempt's deadline, from resolving the host to the answer's last byte. */
  timeoutMs: number;
  /** The time between `working()` heartbeats of the job while its attempt runs. */
  heartbeatEveryMs: number;
}

/** The answer (or the failure) of one POST; its duration is the whole stage's. */
export async function sendDelivery(
  msg: JobMessage,
  claimed: ClaimedAttempt,
  secrets: EndpointSecrets,
  deps: SendDeps,
): Promise<DeliveryResponse> {
  const { delivery } = claimed;
  const started = performance.now();
  const heartbeat = setInterval(() => msg.working(), deps.heartbeatEveryMs);
  try {
    const url = new URL(delivery.url);
    const failed = (result: AttemptResult): DeliveryResponse => ({
      result,
      responseBody: Buffer.alloc(0),
      truncated: false,
      durationMs: Math.round(performance.now() - started),
    });
    let target: ResolvedTarget | "timeout";
    try {
      // Resolving the name counts toward the attempt's deadline.
      let timer: NodeJS.Timeout | undefined;
      target = await Promise.race([
        deps.targets.resolve(url),
        new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), deps.timeoutMs))),
      ]).finally(() => clearTimeout(timer));
    } catch (error) {
      if (!(error instanceof TargetNotAllowedError)) throw error;
      claimed.log.warn(
        { ...claimed.ids, refusal: error.refusal, address: error.address },
        "the endpoint's URL is not a target deliveries may reach; no connection made",
      );
      return failed({ kind: "target_not_allowed" });
    }
    const remainingMs = deps.timeoutMs - (performance.now() - started);
    if (target === "timeout" || remainingMs <= 0) return failed({ kind: "timeout" });
    const body = Buffer.from(delivery.payload, "utf8");
    const response = await deps.sender.send({
      url,
      target,
      body,
      timeoutMs: remainingMs,
      headers: signedHeaders(delivery, secrets, body, new Date()),
    });
    return { ...response, durationMs: Math.round(performance.now() - started) };
  } finally {
    clearInterval(heartbeat);
  }
}
