import { DownstreamView, type DownstreamCheck } from "@platform/service-kit/downstream-view";
import { HealthChecker } from "@platform/service-kit/grpc-health";
import type { Logger } from "pino";
import { Gauge, type Registry } from "prom-client";

/** A `grpc.health.v1` check of one service at an address (a list of addresses, a dns:/// name): one process answers it, round robin. */
export function healthCheckOf(checker: HealthChecker, service: string): DownstreamCheck {
  return (timeoutMs) => checker.check(service, timeoutMs);
}

/** The gateway's view of each thing it depends on, kept current in the background (DownstreamView). */
export interface Downstreams<N extends string> {
  views: Record<N, DownstreamView>;
  /** Starts every check; resolves once each has had its first answer or `waitMs` has passed. */
  start(waitMs: number): Promise<void>;
  stop(): void;
}

/**
 * One DownstreamView per check, each change logged, and the gauge `gateway_downstream_up`
 * (label `downstream`): 0 while the view says unreachable, when its calls are refused at once,
 * else 1.
 */
export function watchDownstreams<N extends string>(
  checks: Record<N, DownstreamCheck>,
  options: { intervalMs: number; logger: Logger; registry: Registry },
): Downstreams<N> {
  const { logger } = options;
  const entries = Object.entries(checks) as [N, DownstreamCheck][];
  const views = Object.fromEntries(
    entries.map(([name, check]) => [
      name,
      new DownstreamView(name, check, {
        intervalMs: options.intervalMs,
        onChange(status, previous) {
          if (status === "UNREACHABLE") {
            logger.warn(
              { downstream: name, status, previous },
              "downstream unreachable: its calls are refused at once",
            );
          } else if (previous === "UNREACHABLE") {
            logger.info({ downstream: name, status, previous }, "downstream answers again");
          } else if (previous !== "UNKNOWN" || status !== "SERVING") {
            logger.info({ downstream: name, status, previous }, "downstream status changed");
          }
        },
      }),
    ]),
  ) as Record<N, DownstreamView>;
  new Gauge({
    name: "gateway_downstream_up",
    help: "The gateway's view of each downstream (gRPC service or its database): 0 while its health checks go unanswered and its calls are refused at once with 503, else 1.",
    labelNames: ["downstream"],
    registers: [options.registry],
    collect() {
      for (const [name, view] of Object.entries<DownstreamView>(views))
        this.set({ downstream: name }, view.reachable ? 1 : 0);
    },
  });
  return {
    views,
    async start(waitMs) {
      await Promise.all(Object.values<DownstreamView>(views).map((view) => view.start(waitMs)));
    },
    stop() {
      for (const view of Object.values<DownstreamView>(views)) view.stop();
    },
  };
}
