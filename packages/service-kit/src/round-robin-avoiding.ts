import { experimental, Metadata, status as Status, type ChannelOptions } from "@grpc/grpc-js";

/**
 * round_robin, plus one thing a retry needs: a call can name a replica it must not go to. The
 * client's retry on another replica (grpc-client.ts) sets AVOID_REPLICA_METADATA to the address
 * of the replica whose connection died under the first attempt; this policy's picker then takes
 * the next ready replica that is not that one, or fails the call at once (UNAVAILABLE,
 * NO_OTHER_REPLICA) when no other is ready. Without it, a retry made in the few milliseconds
 * between a connection's death and grpc-js noticing it (its streams close before its session
 * does) could be picked onto the same dead connection.
 *
 * Everything else is grpc-js's own round_robin, run as this policy's child: the same connections,
 * reconnection and rotation. The metadata is removed in the picker, so services never see it.
 */
export const ROUND_ROBIN_AVOIDING = "round_robin_avoiding";

/** The address (`ip:port`, as grpc-js names a subchannel and a call's peer) a call must not go to. */
export const AVOID_REPLICA_METADATA = "x-avoid-replica";

/** The details of a call that named a replica to avoid when no other replica was ready. */
export const NO_OTHER_REPLICA = "no other replica is ready";

type Picker = experimental.Picker;
type PickArgs = experimental.PickArgs;
type PickResult = experimental.PickResult;

const pickedReplica = (result: PickResult, address: string) =>
  result.pickResultType === experimental.PickResultType.COMPLETE && result.subchannel?.getAddress() === address;

/** round_robin's picker, skipping the replica a call names in AVOID_REPLICA_METADATA. */
class AvoidingPicker implements Picker {
  constructor(private readonly roundRobin: Picker) {}

  pick(args: PickArgs): PickResult {
    const avoid = args.metadata.get(AVOID_REPLICA_METADATA)[0];
    if (typeof avoid !== "string") return this.roundRobin.pick(args);
    // Each pick gets its own copy of the call's metadata: removing it here only keeps it off the wire.
    args.metadata.remove(AVOID_REPLICA_METADATA);
    const first = this.roundRobin.pick(args);
    if (!pickedReplica(first, avoid)) return first;
    // round_robin hands out the ready replicas in turn: the next pick is another one if any is ready.
    const second = this.roundRobin.pick(args);
    if (!pickedReplica(second, avoid)) return second;
    return {
      pickResultType: experimental.PickResultType.TRANSIENT_FAILURE,
      subchannel: null,
      status: { code: Status.UNAVAILABLE, details: NO_OTHER_REPLICA, metadata: new Metadata() },
      onCallStarted: null,
      onCallEnded: null,
    };
  }
}

class RoundRobinAvoidingConfig implements experimental.TypedLoadBalancingConfig {
  getLoadBalancerName(): string {
    return ROUND_ROBIN_AVOIDING;
  }
  toJsonObject(): object {
    return { [ROUND_ROBIN_AVOIDING]: {} };
  }
  static createFromJson(): RoundRobinAvoidingConfig {
    return new RoundRobinAvoidingConfig();
  }
}

class RoundRobinAvoiding implements experimental.LoadBalancer {
  private readonly roundRobin: experimental.ChildLoadBalancerHandler;
  private readonly roundRobinConfig = experimental.parseLoadBalancingConfig({ round_robin: {} });

  constructor(helper: experimental.ChannelControlHelper) {
    this.roundRobin = new experimental.ChildLoadBalancerHandler(
      experimental.createChildChannelControlHelper(helper, {
        updateState: (state, picker, errorMessage) =>
          helper.updateState(state, new AvoidingPicker(picker), errorMessage),
      }),
    );
  }

  updateAddressList(
    endpoints: Parameters<experimental.LoadBalancer["updateAddressList"]>[0],
    _config: experimental.TypedLoadBalancingConfig,
    options: ChannelOptions,
    resolutionNote: string,
  ): boolean {
    return this.roundRobin.updateAddressList(endpoints, this.roundRobinConfig, options, resolutionNote);
  }
  exitIdle(): void {
    this.roundRobin.exitIdle();
  }
  resetBackoff(): void {
    this.roundRobin.resetBackoff();
  }
  destroy(): void {
    this.roundRobin.destroy();
  }
  getTypeName(): string {
    return ROUND_ROBIN_AVOIDING;
  }
}

/**
 * Makes the policy known to grpc-js (its registry of policies is process-wide); createChannel
 * calls it before opening a channel whose service config names the policy. Idempotent.
 */
export function registerRoundRobinAvoiding(): void {
  if (experimental.isLoadBalancerNameRegistered(ROUND_ROBIN_AVOIDING)) return;
  experimental.registerLoadBalancerType(ROUND_ROBIN_AVOIDING, RoundRobinAvoiding, RoundRobinAvoidingConfig);
}
