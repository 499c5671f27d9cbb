import { credentials, makeGenericClientConstructor, type Client } from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";
import { grpcTarget, RECONNECT_BACKOFF, ROUND_ROBIN_SERVICE_CONFIG } from "./grpc-client.js";
import { GRPC_CHANNEL_OPTIONS } from "./grpc-server.js";

export type ServingStatus = "UNKNOWN" | "SERVING" | "NOT_SERVING" | "SERVICE_UNKNOWN" | "UNREACHABLE";

const HealthClient = makeGenericClientConstructor(healthService, "grpc.health.v1.Health");

type HealthCheck = (
  request: { service: string },
  options: { deadline: number },
  callback: (error: Error | null, response?: { status: string }) => void,
) => void;

/**
 * A `grpc.health.v1.Health/Check` client for one address, or the same targets the clients take
 * (an address list, a `dns:///` name): each check goes to one of the resolved processes, round
 * robin, so it answers SERVING while any of them serves. Used by the gateway's background checks
 * of its downstreams (DownstreamView, behind /readyz and fail-fast) and by tests; Kubernetes
 * probes use the same service through the kubelet's native grpc probe.
 */
export class HealthChecker {
  private readonly client: Client;
  constructor(readonly address: string) {
    this.client = new HealthClient(grpcTarget(address), credentials.createInsecure(), {
      ...GRPC_CHANNEL_OPTIONS,
      "grpc.service_config": ROUND_ROBIN_SERVICE_CONFIG,
      ...RECONNECT_BACKOFF,
    });
  }

  check(service = "", timeoutMs = 1_000): Promise<ServingStatus> {
    const check = (this.client as unknown as { check: HealthCheck }).check.bind(this.client);
    return new Promise((resolve) => {
      check({ service }, { deadline: Date.now() + timeoutMs }, (error, response) => {
        if (error) resolve((error as { code?: number }).code === 5 ? "SERVICE_UNKNOWN" : "UNREACHABLE");
        else resolve((response?.status ?? "UNKNOWN") as ServingStatus);
      });
    });
  }

  close(): void {
    this.client.close();
  }
}
