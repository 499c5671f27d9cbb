import { credentials, makeGenericClientConstructor, type ChannelInterface, type Client } from "@grpc/grpc-js";
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
 *
 * Given a channel instead of an address, the checks go over that channel, whose connections and
 * reconnect backoff are then the calls' own: a check fails at once only while the calls would too.
 * Over a channel of its own, a check could fail at once in that channel's backoff while the calls'
 * channel had already reconnected (the gateway's view then refused calls that would have been
 * answered). `close` leaves a channel passed in open: it is its opener's to close.
 */
export class HealthChecker {
  private readonly client: Client;
  private readonly ownChannel: boolean;
  constructor(addressOrChannel: string | ChannelInterface) {
    this.ownChannel = typeof addressOrChannel === "string";
    this.client =
      typeof addressOrChannel === "string"
        ? new HealthClient(grpcTarget(addressOrChannel), credentials.createInsecure(), {
            ...GRPC_CHANNEL_OPTIONS,
            "grpc.service_config": ROUND_ROBIN_SERVICE_CONFIG,
            ...RECONNECT_BACKOFF,
          })
        : new HealthClient("unused", credentials.createInsecure(), { channelOverride: addressOrChannel });
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
    if (this.ownChannel) this.client.close();
  }
}
